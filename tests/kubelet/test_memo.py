"""Remembered hints and CPU picks (``kubelet.memo``) give exactly the answers computed afresh.

Kubelets copied from one template share their memos, so a state met on one node is answered
from the table on the next; these properties drive random admissions and removals and compare
every remembered answer with the calculation it stands for.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.memo import SharedMemo
from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.sim.kubelets import kubelet_for
from kubetwin.sim.scenario import SimNode

MACHINE = load_machine("2s2n4c2t")  # 4 NUMA nodes x 16 GiB, 4 CPUs each
GI = 1 << 30
POLICIES = ["single-numa-node", "restricted", "best-effort"]


def _config(policy: str, scope: str = "container") -> KubeletConfiguration:
    return KubeletConfiguration.from_dict({
        "cpuManagerPolicy": "static", "memoryManagerPolicy": "Static", "topologyManagerPolicy": policy,
        "topologyManagerScope": scope, "kubeReserved": {"cpu": "1", "memory": "1Gi"},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}], "maxPods": 500})


def _without_memos(node: NodeAdmission) -> NodeAdmission:
    """Memos that never keep anything: every answer is calculated."""
    node.memory.policy.memo = SharedMemo(limit=0)
    node.cpu.policy.memo = SharedMemo(limit=0)
    object.__setattr__(node.topology.policy, "memo", SharedMemo(limit=0))
    return node


@st.composite
def pods(draw, index: int):
    """Guaranteed (exclusive CPUs, pinned memory) or Burstable pods, with init containers at times."""
    def res(cpu: int, mem: int, guaranteed: bool) -> dict:
        r = {"cpu": str(cpu), "memory": f"{mem}Gi"}
        return {"requests": dict(r), "limits": dict(r)} if guaranteed else {"requests": r}

    guaranteed = draw(st.booleans()) or draw(st.booleans())
    conts = [{"name": f"c{i}", "resources": res(draw(st.integers(1, 4)), draw(st.integers(1, 20)), guaranteed)}
             for i in range(draw(st.integers(1, 2)))]
    spec: dict = {"containers": conts}
    if draw(st.integers(0, 3)) == 0:
        spec["initContainers"] = [{"name": "init", "resources": res(draw(st.integers(1, 4)),
                                                                    draw(st.integers(1, 20)), guaranteed)}]
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"p{index}", "namespace": "default", "uid": f"p{index}"},
                          "spec": spec})


@st.composite
def histories(draw):
    """Pods to admit, interleaved with removals of earlier ones (by position among the admitted)."""
    steps = []
    for i in range(draw(st.integers(1, 12))):
        steps.append(("admit", draw(pods(i))))
        if draw(st.integers(0, 3)) == 0:
            steps.append(("remove", draw(st.integers(0, 20))))
    return steps


def _replay(node: NodeAdmission, steps, after_each=None) -> list[tuple]:
    admitted, out = [], []
    for what, arg in steps:
        if what == "admit":
            d = node.admit(arg)
            out.append((arg.uid, d.admitted, d.reason, d.message))
            if d.admitted:
                admitted.append(arg)
        elif admitted:
            node.remove(admitted.pop(arg % len(admitted)))
        if after_each is not None:
            after_each(node)
    return out


def _allocations(node: NodeAdmission) -> tuple:
    mem = node.memory.policy.state
    return (node.cpu.state.snapshot(),
            {uid: {c: list(bs) for c, bs in conts.items()} for uid, conts in mem.entries.items()},
            {n: [(r, t.free, t.reserved) for r, t in ns.memory_map.items()] + [ns.number_of_assignments, ns.cells]
             for n, ns in mem.machine_state.items()},
            dict(node.topology.affinities))


PROBE_REQUESTS = [{"memory": g * GI} for g in (1, 3, 9, 15, 17, 33, 50, 70)]


def _memory_hints_agree(node: NodeAdmission) -> None:
    p = node.memory.policy
    for req in PROBE_REQUESTS:
        for reusable in (None, {(1, "memory"): 2 * GI, (3, "memory"): 20 * GI}):
            assert p._calculate_hints(req, reusable) == p._calculate_hints_uncached(req, reusable)


def _cpu_answers_agree(node: NodeAdmission) -> None:
    p, s = node.cpu.policy, node.cpu.state
    available = p.available(s)
    for reusable in (CPUSet.from_mask(0), CPUSet.from_mask(0b11 << 4)):
        for n in (1, 2, 3, 5, 8):
            assert p.generate_hints(available, reusable, n) == p._generate_hints(available, reusable, n)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.sampled_from(POLICIES))
def test_remembered_memory_hints_equal_the_calculation_in_every_state(steps, policy):
    _replay(NodeAdmission(MACHINE, _config(policy)), steps, _memory_hints_agree)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.sampled_from(POLICIES))
def test_remembered_cpu_hints_equal_the_calculation_in_every_state(steps, policy):
    _replay(NodeAdmission(MACHINE, _config(policy)), steps, _cpu_answers_agree)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), histories(), st.sampled_from(POLICIES), st.sampled_from(["container", "pod"]))
def test_copies_sharing_memos_decide_and_allocate_as_kubelets_without_memos(first, second, policy, scope):
    sn = SimNode(node=None, machine=MACHINE, kubelet=_config(policy, scope))  # type: ignore[arg-type]  # no Node object: not read here
    for steps in (first, second, first):  # the second copy of `first` answers from the table
        copy, plain = kubelet_for(sn), _without_memos(NodeAdmission(MACHINE, sn.kubelet))
        assert _replay(copy, steps) == _replay(plain, steps)
        assert _allocations(copy) == _allocations(plain)


def test_a_memo_past_its_limit_starts_over():
    memo = SharedMemo(limit=2)
    memo.put("a", 1)
    memo.put("b", 2)
    memo.put("c", 3)
    assert dict(memo) == {"c": 3}


def test_a_memo_with_no_room_keeps_nothing_but_returns_the_answer():
    memo = SharedMemo(limit=0)
    assert memo.put("a", 1) == 1 and not memo
