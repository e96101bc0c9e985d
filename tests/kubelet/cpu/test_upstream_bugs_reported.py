"""Known upstream bugs are reproduced and reported, never hidden (docs/upstream-bugs.md)."""

from __future__ import annotations

from kubetwin.kubelet.admission import HANG_REASON, NodeAdmission
from kubetwin.kubelet.cpu.assignment import TakeStrategy
from kubetwin.kubelet.cpu.options import StaticPolicyOptions
from kubetwin.kubelet.cpu.policy_static import StaticPolicy
from kubetwin.kubelet.cpu.state import CPUState
from kubetwin.machine import load_machine
from kubetwin.machine.cputopology import CPUDetails, CPUInfo, CPUTopology, _Index
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.features import default_for, gates_for
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


def _pod_level_pod(name: str, budget: int, container_cpus: int) -> object:
    pod_r = {"cpu": str(budget), "memory": "1Gi"}
    c_r = {"cpu": str(container_cpus), "memory": "512Mi"}
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name},
                          "spec": {"resources": {"requests": pod_r, "limits": pod_r},
                                   "containers": [{"name": "c", "resources": {"requests": c_r, "limits": c_r}}]}})


def _hybrid_pod_level_policy(version: str) -> tuple[StaticPolicy, CPUState]:
    index = _Index({0: CPUInfo(0, 0, 0, 0), 2: CPUInfo(0, 0, 0, 0), 1: CPUInfo(0, 0, 1, 0)})
    topo = CPUTopology(num_cpus=3, num_cores=2, num_sockets=1, num_numa_nodes=1, num_uncore_cache=1,
                       details=CPUDetails(index, index.all))
    gates = gates_for(version, {"PodLevelResources": True, "PodLevelResourceManagers": True})
    policy = StaticPolicy(topo, StaticPolicyOptions(), CPUSet([]), gates)
    state = CPUState(policy_name="static")
    policy.validate_state(state)
    return policy, state


def test_v1_36_pod_level_bubble_with_a_busy_cpu_is_flagged() -> None:
    policy, state = _hybrid_pod_level_policy("1.36")
    state.default_cpuset = CPUSet([0, 1])  # CPU 2 already belongs to another container
    policy.allocate_pod(state, _pod_level_pod("p", 2, 2))
    assert state.pod_entries["p"] == CPUSet([0, 2])
    assert len(policy.bug_notes) == 1
    assert "kubernetes/kubernetes#140495" in policy.bug_notes[0] and "pod p" in policy.bug_notes[0]


def test_v1_37_pod_level_bubble_takes_only_free_cpus() -> None:
    policy, state = _hybrid_pod_level_policy("1.37")
    state.default_cpuset = CPUSet([0, 1])
    policy.allocate_pod(state, _pod_level_pod("p", 2, 2))
    assert state.pod_entries["p"] == CPUSet([0, 1]) and not policy.bug_notes


def _uneven_sockets() -> CPUTopology:
    # socket 0: CPUs 0-2 (one-thread cores 0-2), socket 1: CPU 3; one NUMA node; CPUsPerSocket() = 4 / 2 = 2
    index = _Index({0: CPUInfo(0, 0, 0, 0), 1: CPUInfo(0, 0, 1, 0), 2: CPUInfo(0, 0, 2, 0), 3: CPUInfo(0, 1, 3, 0)})
    return CPUTopology(num_cpus=4, num_cores=4, num_sockets=2, num_numa_nodes=1, num_uncore_cache=1,
                       details=CPUDetails(index, index.all))


def test_v1_36_takes_a_socket_whose_free_cpus_equal_cpus_per_socket_whole() -> None:
    strategy = TakeStrategy(own_size_check=default_for("cpuManagerFreeUnitCheck", "1.36") == "ownSize")
    assert strategy.take(_uneven_sockets(), CPUSet([0, 1, 3]), 3) == CPUSet([0, 1, 2])  # CPU 2 was busy


def test_v1_37_judges_a_socket_free_by_its_own_size() -> None:
    # kubernetes#140498 changed isSocketFree along with isCoreFree (its review thread's diff)
    strategy = TakeStrategy(own_size_check=default_for("cpuManagerFreeUnitCheck", "1.37") == "ownSize")
    assert strategy.take(_uneven_sockets(), CPUSet([0, 1, 3]), 3) == CPUSet([0, 1, 3])
