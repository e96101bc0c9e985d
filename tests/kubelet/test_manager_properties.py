"""Invariants of the Memory and Device Managers over random admission/removal sequences (hypothesis).

Memory: no NUMA node's memory is ever over-committed (reserved + free == allocatable, free >= 0,
and the machine state's reservations add up to the container/bubble blocks that take memory);
admitting a pod and removing it again restores the state exactly. Devices: no device is ever
held by two containers, and every held device is a healthy one of the inventory.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.checkpoint.memory_manager_state import memory_state_to_json
from kubetwin.kubelet.devices import inventory_from_dict
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict

MACHINE = load_machine("/work/shared/examples/pod-level/machine.json")  # 2 NUMA x 64 GiB, 32 CPUs
GI = 1 << 30
GPU = "example.com/gpu"


def memory_node(policy: str, scope: str) -> NodeAdmission:
    cfg = KubeletConfiguration.from_dict({
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
        "cpuManagerPolicy": "none", "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1100Mi"}}],
        "kubeReserved": {"memory": "500Mi"}, "systemReserved": {"memory": "500Mi"},
        "evictionHard": {"memory.available": "100Mi"},
        "topologyManagerPolicy": policy, "topologyManagerScope": scope})
    return NodeAdmission(MACHINE, cfg)


def _res(cpu: int, mem_gi: int) -> dict:
    r = {"cpu": str(cpu), "memory": f"{mem_gi}Gi"}
    return {"requests": dict(r), "limits": dict(r)}


@st.composite
def pods(draw, index: int):
    """Guaranteed pods, container-level or pod-level (a budget with exclusive and shared containers)."""
    name = f"p{index}"
    if draw(st.booleans()):
        conts = [{"name": f"c{i}", "image": "x", "resources": _res(1, draw(st.integers(1, 40)))}
                 for i in range(draw(st.integers(1, 3)))]
        spec = {"containers": conts}
    else:
        exclusive = draw(st.lists(st.integers(1, 20), max_size=2))
        budget = sum(exclusive) + draw(st.integers(1, 20))
        conts = [{"name": f"e{i}", "image": "x", "resources": _res(1, g)} for i, g in enumerate(exclusive)]
        conts.append({"name": "shared", "image": "x"})
        spec = {"resources": _res(len(exclusive) + 1, budget), "containers": conts}
        if draw(st.booleans()):
            spec["initContainers"] = [{"name": "side", "image": "x", "restartPolicy": "Always"}]
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "uid": name}, "spec": spec})


@st.composite
def scenarios(draw):
    n = draw(st.integers(1, 6))
    return [draw(pods(i)) for i in range(n)], draw(st.lists(st.integers(0, 5), max_size=3))


def _check_memory(node: NodeAdmission) -> None:
    policy = node.memory.policy
    taken: dict[tuple[int, str], int] = {}
    for conts in policy.state.entries.values():
        for name, blocks in conts.items():
            if not policy._counts(conts, name):
                continue
            for b in blocks:
                # single-node blocks only here: a multi-node block may spread over its group
                if len(b.numa_affinity) == 1:
                    key = (b.numa_affinity[0], b.type)
                    taken[key] = taken.get(key, 0) + b.size
    for nid, ns in policy.state.machine_state.items():
        for r, t in ns.memory_map.items():
            assert t.free >= 0
            assert t.reserved + t.free == t.allocatable
            if len(ns.cells) == 1:
                assert t.reserved == taken.get((nid, r), 0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.sampled_from([("single-numa-node", "pod"), ("best-effort", "pod"),
                                     ("single-numa-node", "container"), ("restricted", "container")]))
def test_numa_memory_is_never_over_committed(scenario, topology):
    pod_list, removals = scenario
    node = memory_node(*topology)
    admitted = []
    for p in pod_list:
        if node.admit(p).admitted:
            admitted.append(p)
        _check_memory(node)
    for i in removals:
        if admitted:
            node.remove(admitted.pop(i % len(admitted)))
            _check_memory(node)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.sampled_from([("single-numa-node", "pod"), ("best-effort", "container")]))
def test_admitting_then_removing_a_pod_restores_the_memory_state_exactly(scenario, topology):
    pod_list, _ = scenario
    node = memory_node(*topology)
    for p in pod_list[:-1]:
        node.admit(p)
    before = memory_state_to_json(node.memory.policy.state, "v2")
    last = pod_list[-1]
    node.admit(last)
    node.remove(last)
    assert memory_state_to_json(node.memory.policy.state, "v2") == before


def device_node(numa_of_devices: list[int], unhealthy: set[int], policy: str) -> NodeAdmission:
    inv = inventory_from_dict({"resources": {GPU: [
        {"id": f"d{i}", "numaNodes": [n], **({"health": "Unhealthy"} if i in unhealthy else {})}
        for i, n in enumerate(numa_of_devices)]}})
    cfg = KubeletConfiguration.from_dict({"apiVersion": "kubelet.config.k8s.io/v1beta1",
                                          "kind": "KubeletConfiguration", "topologyManagerPolicy": policy})
    return NodeAdmission(load_machine("2s2n4c2t"), cfg, devices=inv)


def device_pod(name: str, per_container: list[int], init: list[int]):
    def cont(cname, n):
        return {"name": cname, "image": "x", "resources": {"limits": {GPU: str(n)}, "requests": {GPU: str(n)}}}
    spec = {"containers": [cont(f"c{i}", n) for i, n in enumerate(per_container)]}
    if init:
        spec["initContainers"] = [cont(f"i{i}", n) for i, n in enumerate(init)]
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "uid": name}, "spec": spec})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=1, max_size=8), st.sets(st.integers(0, 7), max_size=2),
       st.lists(st.tuples(st.lists(st.integers(1, 3), min_size=1, max_size=2), st.lists(st.integers(1, 3), max_size=1)),
                min_size=1, max_size=5),
       st.lists(st.integers(0, 4), max_size=2), st.sampled_from(["none", "best-effort", "single-numa-node"]))
def test_no_device_is_ever_held_by_two_containers(numa, unhealthy, shapes, removals, policy):
    node = device_node(numa, unhealthy, policy)
    healthy = {f"d{i}" for i in range(len(numa)) if i not in unhealthy}
    admitted = []

    def check():
        seen: dict[str, tuple[str, str]] = {}
        dm = node.device_manager
        for uid, conts in dm.pod_devices.items():
            held_by_pod: set[str] = set()
            running: set[str] = set()
            for cname in conts:
                ids = dm.container_devices(uid, cname, GPU) or set()
                assert ids <= healthy
                held_by_pod |= ids
                if cname.startswith("c"):  # app containers run together: never the same device
                    assert not ids & running
                    running |= ids
            for d in held_by_pod:  # init containers of one pod may hand devices on to its app containers
                assert d not in seen, f"{d} held by {seen[d]} and {uid}"
                seen[d] = (uid, "")

    for i, (apps, init) in enumerate(shapes):
        p = device_pod(f"p{i}", apps, init)
        if node.admit(p).admitted:
            admitted.append(p)
        check()
    for r in removals:
        if admitted:
            node.remove(admitted.pop(r % len(admitted)))
            check()
