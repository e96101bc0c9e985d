"""Each node's kubelet is a copy of its group's freshly started template kubelet."""

from __future__ import annotations

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.sim.kubelets import kubelet_for
from kubetwin.sim.scenario import SimNode


def _node():
    cfg = KubeletConfiguration.from_dict({"cpuManagerPolicy": "static", "memoryManagerPolicy": "Static",
                                          "topologyManagerPolicy": "single-numa-node",
                                          "kubeReserved": {"cpu": "1", "memory": "1Gi"},
                                          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}]})
    return SimNode(node=None, machine=load_machine("2s2n4c2t"), kubelet=cfg)  # type: ignore[arg-type]  # no Node object: not read here


def _pods(n):
    return [pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{k}", "uid": f"u{k}"},
                           "spec": {"containers": [{"name": "c", "resources": {
                               "requests": {"cpu": "3", "memory": "2Gi"}, "limits": {"cpu": "3", "memory": "2Gi"}}}]}})
            for k in range(n)]


def test_a_copied_kubelet_decides_exactly_as_a_freshly_built_one():
    sn = _node()
    kubelet_for(sn)                  # builds the template
    copied, fresh = kubelet_for(sn), NodeAdmission(sn.machine, sn.kubelet)
    for p in _pods(6):
        a, b = copied.admit(p), fresh.admit(p)
        assert (a.admitted, a.reason, a.message) == (b.admitted, b.reason, b.message)
        assert copied.cpu.state.entries.get(p.uid) == fresh.cpu.state.entries.get(p.uid)
        assert copied.memory.numa_nodes_for(p.uid, "c") == fresh.memory.numa_nodes_for(p.uid, "c")


def test_copies_do_not_share_state():
    sn = _node()
    a, b = kubelet_for(sn), kubelet_for(sn)
    p = _pods(1)[0]
    assert a.admit(p).admitted
    assert b.cpu.state.entries.get(p.uid) is None and not b.admitted
    assert b.admit(p).admitted and a.cpu.state.entries[p.uid] == b.cpu.state.entries[p.uid]


#: immutable values a copy may share with its template
_IMMUTABLE = ("Machine", "KubeletConfiguration", "CPUTopology", "TopoMasks", "FeatureGates", "NUMAInfo", "Policy", "BestEffortPolicy", "RestrictedPolicy", "SingleNumaNodePolicy",
              "TopologyManagerOptions", "StaticPolicyOptions", "TakeStrategy", "Quantity", "CPUSet", "NUMANode",
              "CPUInfo", "TopologyHint", "Block", "Device", "DeviceInventory", "SharedMemo", "function",
              "Pod")  # pods are frozen inputs


def _mutables(root):
    """id -> object of every mutable value reachable from ``root``."""
    out, stack = {}, [root]
    while stack:
        o = stack.pop()
        if id(o) in out or isinstance(o, (int, float, str, bytes, type(None))) or type(o).__name__ in _IMMUTABLE:
            continue
        if isinstance(o, (tuple, frozenset)):
            stack.extend(o)
            continue
        out[id(o)] = o
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, set)):
            stack.extend(o)
        elif hasattr(o, "__self__") and hasattr(o, "__func__"):
            stack.append(o.__self__)
        else:
            stack.extend(getattr(o, "__dict__", {}).values())
            for klass in type(o).__mro__:
                for slot in klass.__dict__.get("__slots__", ()):
                    if hasattr(o, slot) and slot not in ("__dict__", "__weakref__"):
                        stack.append(getattr(o, slot))
    return out


def test_a_copy_shares_no_mutable_object_with_its_template():
    from kubetwin.sim.kubelets import _TEMPLATES

    sn = _node()
    copied = kubelet_for(sn)
    tmpl = _TEMPLATES[(id(sn.machine), id(sn.kubelet), id(sn.devices))].kubelet
    assert not _mutables(copied).keys() & _mutables(tmpl).keys()


def test_a_copy_of_a_busy_kubelet_shares_no_mutable_object_with_it():
    sn = _node()
    busy = kubelet_for(sn)
    for p in _pods(3):
        busy.admit(p)
    copied = busy.fork()
    assert not _mutables(copied).keys() & _mutables(busy).keys()
    assert copied.cpu.state.snapshot() == busy.cpu.state.snapshot()


def test_a_copys_managers_ask_the_copys_topology_manager_for_affinities():
    copied = kubelet_for(_node())
    assert copied.cpu.policy.affinity.__self__ is copied.topology
    assert copied.memory.policy.affinity.__self__ is copied.topology
    assert copied.device_manager.affinity.__self__ is copied.topology
    assert [p for _, p in copied.topology.providers] == [copied.device_manager, copied.cpu, copied.memory]
