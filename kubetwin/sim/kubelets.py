"""The kubelet of each simulated node: its admission pipeline, built on first use.

Nodes of one group share a machine and a KubeletConfiguration, so their kubelets start from
the same state: the managers' start-up (CPU topology discovery, topology masks, reserved CPUs,
the NUMA memory table, policy options) is done once per (machine, configuration), and each node
gets a copy of that freshly started kubelet (``NodeAdmission.fork``). The copy shares what never
changes after start-up — the machine, the configuration, the CPU topology and its masks, feature
gates, options — and the managers' memos (``kubelet.memo``: a state one node met is answered
from the table on the others); it duplicates only the managers' state.

Not an upstream module: kubetwin's own simulation plumbing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .scenario import SimNode

if TYPE_CHECKING:
    from ..kubelet.admission import NodeAdmission
    from ..kubelet.devices import DeviceInventory
    from ..machine.model import Machine
    from ..model.kubelet_config import KubeletConfiguration


class _Template:
    __slots__ = ("machine", "config", "devices", "kubelet")

    def __init__(self, machine: Machine, config: KubeletConfiguration, devices: DeviceInventory | None = None):
        from ..kubelet.admission import NodeAdmission

        self.machine, self.config, self.devices = machine, config, devices
        self.kubelet = NodeAdmission(machine, config, devices=devices)

    def fork(self) -> NodeAdmission:
        return self.kubelet.fork()


_TEMPLATES: dict[tuple[int, int, int], _Template] = {}


def template_for(machine: Machine, config: KubeletConfiguration, devices: DeviceInventory | None = None) -> _Template:
    """The started kubelet of a (machine, configuration, device plugins) triple, started once per process."""
    key = (id(machine), id(config), id(devices))
    tmpl = _TEMPLATES.get(key)
    if tmpl is None or tmpl.machine is not machine or tmpl.config is not config or tmpl.devices is not devices:
        if len(_TEMPLATES) > 64:
            _TEMPLATES.clear()
        tmpl = _Template(machine, config, devices)
        _TEMPLATES[key] = tmpl
    return tmpl


def kubelet_for(node: SimNode) -> NodeAdmission:
    """A freshly started kubelet for ``node`` (a copy of its group's template)."""
    if node.machine is None or node.kubelet is None:
        raise ValueError(f"node {node.group!r}: no machine or kubelet configuration to simulate a kubelet on")
    kubelet = template_for(node.machine, node.kubelet, node.devices).fork()
    if node.node is not None:   # the name its traces carry (``--trace``)
        kubelet.node_name = node.node.metadata.name
    return kubelet
