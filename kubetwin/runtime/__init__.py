"""The runtime side of a node: what sits below the kubelet.

The CRI messages the kubelet sends (:mod:`.cri`, :mod:`.kubelet_sequence`), what containerd and
runc make of them (:mod:`.containerd`, :mod:`.cgroupv2`, :mod:`.runtime_state`), and the
goresctrl resource classes the runtime applies: Intel RDT (:mod:`.rdt`, :mod:`.resctrl`) and
Block I/O (:mod:`.blockio`); the Node Resource Interface (:mod:`.nri`), the nri-plugins resource-manager
core (:mod:`.resmgr`) and its policies (:mod:`.policies`), run by ``kubetwin runtime`` (:mod:`.run`).
Modules are imported by their full names; this package re-exports nothing.
"""
