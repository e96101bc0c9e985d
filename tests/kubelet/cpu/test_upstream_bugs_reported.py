"""Known upstream bugs are reproduced and reported, never hidden (docs/upstream-bugs.md)."""

from __future__ import annotations

from kubetwin.kubelet.admission import HANG_REASON, NodeAdmission
from kubetwin.kubelet.cpu.options import StaticPolicyOptions
from kubetwin.kubelet.cpu.policy_static import StaticPolicy
from kubetwin.kubelet.cpu.state import CPUState
from kubetwin.machine import load_machine
from kubetwin.machine.cputopology import CPUDetails, CPUInfo, CPUTopology, _Index
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.features import gates_for
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict

# 4 NUMA nodes x 3 cores x 2 threads; one thread of a core reserved on each NUMA node leaves 5 free
# CPUs per node: a 14-CPU request in groups of 2 makes upstream's remainder loop spin forever.
HANG_CONFIG = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,3,6,9",
               "cpuManagerPolicyOptions": {"full-pcpus-only": "true", "distribute-cpus-across-numa": "true"}}


def _pod(name: str, cpus: int) -> object:
    r = {"cpu": str(cpus), "memory": "1Gi"}
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name},
                          "spec": {"containers": [{"name": "c", "resources": {"requests": r, "limits": r}}]}})


def _hang_node() -> NodeAdmission:
    return NodeAdmission(load_machine("1s4n3c2t"), KubeletConfiguration.from_dict(HANG_CONFIG))


def test_an_endless_take_by_topology_is_a_hang_verdict() -> None:
    d = _hang_node().admit(_pod("big", 14))
    assert d.hang and not d.admitted and d.reason == HANG_REASON
    assert "the kubelet would hang in takeByTopology" in d.message


def test_a_hung_kubelet_admits_no_later_pod() -> None:
    node = _hang_node()
    node.admit(_pod("big", 14))
    later = node.admit(_pod("small", 2))
    assert later.hang and not later.admitted and "hung earlier" in later.message


def _hybrid_policy(version: str) -> tuple[StaticPolicy, CPUState]:
    # one 2-thread core (CPUs 0,2) and one 1-thread core (CPU 1): CPUsPerCore() = 3 / 2 = 1
    index = _Index({0: CPUInfo(0, 0, 0, 0), 2: CPUInfo(0, 0, 0, 0), 1: CPUInfo(0, 0, 1, 0)})
    topo = CPUTopology(num_cpus=3, num_cores=2, num_sockets=1, num_numa_nodes=1, num_uncore_cache=1,
                       details=CPUDetails(index, index.all))
    policy = StaticPolicy(topo, StaticPolicyOptions(), CPUSet([]), gates_for(version))
    state = CPUState(policy_name="static")
    policy.validate_state(state)
    return policy, state


def test_v1_36_hands_out_a_busy_cpu_of_a_half_free_core_and_flags_it() -> None:
    policy, state = _hybrid_policy("1.36")
    state.default_cpuset = CPUSet([0, 1])  # CPU 2 already belongs to another container
    policy.allocate(state, _pod("a", 2), _pod("a", 2).spec.containers[0])
    assert state.get("a", "c") == CPUSet([0, 2])
    assert policy.bug_notes and "kubernetes/kubernetes#140495" in policy.bug_notes[0]


def test_v1_37_takes_only_free_cpus_on_hybrid_cores() -> None:
    policy, state = _hybrid_policy("1.37")
    state.default_cpuset = CPUSet([0, 1])
    policy.allocate(state, _pod("a", 2), _pod("a", 2).spec.containers[0])
    assert state.get("a", "c") == CPUSet([0, 1]) and not policy.bug_notes
