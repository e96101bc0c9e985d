"""CPU and Topology Manager metrics as v1.36 moves them per admission and release.

Upstream: ``cpumanager/policy_static.go`` (``initializeMetrics``, ``updateMetricsOnAllocate``,
``updateMetricsOnRelease``, ``Allocate``'s deferred alignment counters, ``AllocatePod``) and
``topologymanager/scope_container.go`` / ``scope_pod.go`` with ``IsAlignmentGuaranteed``.
Machine: topoDualSocketHT (12 CPUs, 2 sockets = 2 NUMA nodes, one L3 each), CPU 0 reserved.
"""

from __future__ import annotations

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.metrics import render_metrics
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict

MACHINES = "/work/shared/conformance/machines/"


def node(policy="best-effort", scope="container", options=None, pod_level=False,
         machine="dual-socket-ht.json") -> NodeAdmission:
    cfg = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
           "cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
           "topologyManagerPolicy": policy, "topologyManagerScope": scope}
    if options:
        cfg["cpuManagerPolicyOptions"] = options
    if pod_level:
        cfg["featureGates"] = {"PodLevelResources": True, "PodLevelResourceManagers": True}
    return NodeAdmission(load_machine(MACHINES + machine), KubeletConfiguration.from_dict(cfg))


def res(cpu, mem="100Mi"):
    r = {"cpu": cpu, "memory": mem} if cpu else {"memory": mem}
    return {"requests": dict(r), "limits": dict(r)}


def gu(name, cpu="2"):
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "uid": name},
                          "spec": {"containers": [{"name": "c", "image": "x", "resources": res(cpu)}]}})


def value(n: NodeAdmission, sample: str) -> float | None:
    for line in render_metrics(n).splitlines():
        if line.startswith(sample + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


SHARED = "kubelet_cpu_manager_shared_pool_size_millicores"
EXCLUSIVE = "kubelet_cpu_manager_exclusive_cpu_allocation_count"
PINNING = "kubelet_cpu_manager_pinning_requests_total"
ALIGNED = "kubelet_container_aligned_compute_resources_count"
FAILED = "kubelet_container_aligned_compute_resources_failure_count"


def per_numa(node_id: int) -> str:
    return f'kubelet_cpu_manager_allocation_per_numa{{numa_node="{node_id}"}}'


def test_the_shared_pool_gauge_starts_at_the_assignable_cpus_without_the_reserved_ones():
    assert value(node(), SHARED) == 11000
    assert value(node(), EXCLUSIVE) == 0


def test_start_up_creates_the_alignment_series_at_zero():
    n = node()
    assert value(n, f'{ALIGNED}{{boundary="physical_cpu",scope="container"}}') == 0
    assert value(n, f'{ALIGNED}{{boundary="uncore_cache",scope="container"}}') == 0
    assert value(n, f'{FAILED}{{boundary="physical_cpu",scope="container"}}') == 0
    assert value(n, f'{ALIGNED}{{boundary="numa_node",scope="pod"}}') == 0


def test_an_exclusive_allocation_moves_cpus_from_the_shared_pool_to_the_exclusive_gauge():
    n = node()
    n.admit(gu("a", "2"))
    assert value(n, EXCLUSIVE) == 2
    assert value(n, SHARED) == 9000
    assert value(n, per_numa(0)) == 2
    assert value(n, per_numa(1)) is None


def test_an_allocation_within_one_uncore_cache_counts_as_uncore_aligned():
    n = node()
    n.admit(gu("a", "2"))
    assert value(n, f'{ALIGNED}{{boundary="uncore_cache",scope="container"}}') == 1


def test_an_allocation_across_uncore_caches_is_not_counted_as_aligned():
    n = node(machine="uncore-single-socket-no-smt.json")  # 4 uncore caches of 4 CPUs
    n.admit(gu("a", "5"))
    assert value(n, f'{ALIGNED}{{boundary="uncore_cache",scope="container"}}') == 0
    n.admit(gu("b", "2"))
    assert value(n, f'{ALIGNED}{{boundary="uncore_cache",scope="container"}}') == 1


def test_releasing_gives_the_cpus_back_to_the_shared_pool_gauge():
    n = node()
    p = gu("a", "2")
    n.admit(p)
    n.remove(p)
    assert value(n, EXCLUSIVE) == 0
    assert value(n, SHARED) == 11000


def test_a_numa_node_left_without_exclusive_cpus_keeps_its_last_per_numa_value():
    """``updateAllocationPerNUMAMetric`` only sets nodes that still hold CPUs (upstream behaviour)."""
    n = node()
    p = gu("a", "2")
    n.admit(p)
    n.remove(p)
    assert value(n, per_numa(0)) == 2


def test_full_pcpus_only_counts_a_physical_cpu_aligned_container():
    n = node(options={"full-pcpus-only": "true"})
    n.admit(gu("a", "2"))
    assert value(n, f'{ALIGNED}{{boundary="physical_cpu",scope="container"}}') == 1


def test_full_pcpus_only_counts_an_smt_alignment_error_as_a_physical_cpu_failure():
    n = node(options={"full-pcpus-only": "true"})
    assert n.admit(gu("a", "1")).reason == "SMTAlignmentError"
    assert value(n, f'{FAILED}{{boundary="physical_cpu",scope="container"}}') == 1
    assert value(n, "kubelet_cpu_manager_pinning_errors_total") == 1


def test_single_numa_node_counts_each_aligned_container_at_container_scope():
    n = node(policy="single-numa-node")
    n.admit(gu("a", "2"))
    assert value(n, f'{ALIGNED}{{boundary="numa_node",scope="container"}}') == 1


def test_single_numa_node_counts_a_refused_container_as_an_alignment_failure():
    n = node(policy="single-numa-node")
    assert n.admit(gu("a", "7")).reason == "TopologyAffinityError"
    assert value(n, f'{FAILED}{{boundary="numa_node",scope="container"}}') == 1


def test_single_numa_node_counts_the_pod_once_at_pod_scope():
    n = node(policy="single-numa-node", scope="pod")
    n.admit(gu("a", "2"))
    assert value(n, f'{ALIGNED}{{boundary="numa_node",scope="pod"}}') == 1
    assert value(n, f'{ALIGNED}{{boundary="numa_node",scope="container"}}') == 0


def test_other_topology_policies_do_not_count_alignment():
    n = node(policy="restricted")
    n.admit(gu("a", "2"))
    assert value(n, f'{ALIGNED}{{boundary="numa_node",scope="container"}}') == 0


def _pod_level(name, budget, init, apps):
    def cont(spec):
        n, cpu, *side = spec
        c = {"name": n, "image": "x", "resources": res(cpu)}
        if side:
            c["restartPolicy"] = "Always"
        return c
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "uid": name}, "spec": {
        "resources": res(budget, "300Mi"), "initContainers": [cont(s) for s in init],
        "containers": [cont(s) for s in apps]}})


def test_allocate_pod_counts_pinning_per_exclusive_container_and_moves_the_gauges_by_the_bubble():
    # upstream TestStaticPolicyAllocatePod: shared init, sidecar 1, shared init, app 1, shared app
    n = node(scope="pod", pod_level=True)
    p = _pod_level("p", "3", [("ngu-init-1", None), ("gu-restartable-2", "1", True), ("ngu-init-3", None)],
                   [("gu-1", "1"), ("ngu-2", None)])
    assert n.admit(p).admitted
    assert value(n, PINNING) == 2
    assert value(n, EXCLUSIVE) == 3
    assert value(n, SHARED) == 8000
    assert value(n, 'resource_manager_allocations_total{resource="cpu",source="pod"}') == 5
    assert value(n, 'resource_manager_container_assignments{assignment_type="pod_exclusive",resource="cpu"}') == 2
    assert value(n, 'resource_manager_container_assignments{assignment_type="pod_shared",resource="cpu"}') == 3


def test_a_pod_budget_without_room_for_shared_containers_is_a_pod_allocation_error():
    n = node(scope="pod", pod_level=True)
    p = _pod_level("p", "2", [], [("gu-1", "1"), ("gu-2", "1"), ("ngu", None)])
    d = n.admit(p)
    assert d.reason == "EmptyPodSharedPoolError"
    assert value(n, PINNING) == 0
    assert value(n, "kubelet_cpu_manager_pinning_errors_total") == 1
    assert value(n, 'resource_manager_allocation_errors_total{resource="cpu",source="pod"}') == 1
    assert value(n, SHARED) == 11000


def test_removing_a_pod_level_pod_releases_its_whole_bubble_from_the_gauges():
    n = node(scope="pod", pod_level=True)
    p = _pod_level("p", "3", [], [("gu-1", "1"), ("ngu", None)])
    n.admit(p)
    n.remove(p)
    assert value(n, EXCLUSIVE) == 0
    assert value(n, SHARED) == 11000
