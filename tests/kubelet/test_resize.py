"""The kubelet's in-place resize allocation (``kubetwin.kubelet.resize``).

Cases from ``pkg/kubelet/allocation/allocation_manager_test.go`` (``TestHandlePodResourcesResize``,
``TestHandlePodResourcesResizeWithSwap``, ``TestHandlePodResourcesResizeMultipleConditions``,
``TestSortPendingResizes``, ``TestIsResizeIncreasingRequests``) and ``handlers.go``. Upstream's
node: 4 CPUs and 4Gi allocatable (absolute), three running pods of 1 CPU / 1Gi each.
"""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.resize import (
    ALLOCATED,
    DEFERRED,
    IN_PROGRESS,
    INFEASIBLE,
    PENDING,
    UNCHANGED,
    ResizeManager,
    request_resize,
)
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import Pod, pod_from_dict


def node(version: str | None = None, machine: str = "1s1n4c1t:mem=4Gi", **cfg) -> NodeAdmission:
    base = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
            "evictionHard": {"imagefs.available": "15%"}}
    base.update(cfg)
    return NodeAdmission(load_machine(machine), KubeletConfiguration.from_dict(base, version))


def pod(name: str, requests: dict, limits: dict | None = None, *, sidecar: bool = False, priority: int | None = None,
        annotations: dict | None = None, resize_policy: list | None = None, qos: str = "") -> Pod:
    c = {"name": "c1", "image": "i1", "resources": {"requests": requests, "limits": limits or {}}}
    if resize_policy:
        c["resizePolicy"] = resize_policy
    spec: dict = {"containers": [c]}
    if sidecar:
        spec = {"initContainers": [{**c, "name": "c1-init", "restartPolicy": "Always"}],
                "containers": [{"name": "main", "image": "i"}]}
    if priority is not None:
        spec["priority"] = priority
    meta = {"name": name, "namespace": "ns", "uid": name, **({"annotations": annotations} if annotations else {})}
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if qos:
        obj["status"] = {"qosClass": qos}
    return pod_from_dict(obj)


def cpu_mem(cpu: str, mem: str | None = None) -> dict:
    return {"cpu": cpu, **({"memory": mem} if mem else {})}


def resize_on_busy_node(original: dict, new: dict, *, sidecar: bool = False, annotations: dict | None = None,
                        original_limits: dict | None = None, new_limits: dict | None = None):
    """TestHandlePodResourcesResize: pod1 (resized) beside pod2 and pod3, each 1 CPU / 1Gi."""
    n = node()
    resized = pod("pod1", original, original_limits, sidecar=sidecar, annotations=annotations)
    assert n.admit(resized).admitted
    for other in ("pod2", "pod3"):
        assert n.admit(pod(other, cpu_mem("1", "1Gi"))).admitted
    desired = pod("pod1", new, new_limits, sidecar=sidecar, annotations=annotations)
    manager = ResizeManager(n)
    return request_resize(n, desired, manager=manager), manager


@pytest.mark.parametrize("sidecar", [False, True])
@pytest.mark.parametrize("new", [cpu_mem("500m", "500Mi"), cpu_mem("1500m", "500Mi"), cpu_mem("500m", "1500Mi")],
                         ids=["cpu and memory decrease", "cpu increase, memory decrease",
                              "cpu decrease, memory increase"])
def test_a_resize_that_fits_is_allocated_and_in_progress(new, sidecar):
    """TestHandlePodResourcesResize: 'Request CPU and memory decrease - expect InProgress' and the two mixed cases."""
    result, manager = resize_on_busy_node(cpu_mem("1", "1Gi"), new, sidecar=sidecar)
    assert result.status == ALLOCATED
    assert [c.to_dict() for c in result.conditions] == [{"type": IN_PROGRESS, "status": "True"}]
    assert manager.allocated("pod1") == result.pod


@pytest.mark.parametrize("sidecar", [False, True])
@pytest.mark.parametrize("new, message", [
    (cpu_mem("2500m", "2500Mi"), "Node didn't have enough resource: cpu, requested: 2500, used: 2000, capacity: 4000"),
    (cpu_mem("500m", "2500Mi"), "Node didn't have enough resource: memory, requested: 2621440000, "
                                "used: 2147483648, capacity: 4294967296"),
], ids=["cpu and memory beyond current capacity", "memory beyond current capacity"])
def test_a_resize_beyond_what_is_free_now_is_deferred(new, message, sidecar):
    """TestHandlePodResourcesResize: '... increase beyond current capacity - expect Deferred'."""
    result, manager = resize_on_busy_node(cpu_mem("1", "1Gi"), new, sidecar=sidecar)
    assert (result.status, result.reason, result.message) == (DEFERRED, DEFERRED, message)
    assert [c.type for c in result.conditions] == [PENDING]
    assert manager.pending == ["pod1"]
    assert manager.allocated("pod1").spec != result.pod.spec  # still allocated at the old values


@pytest.mark.parametrize("sidecar", [False, True])
@pytest.mark.parametrize("new, message", [
    (cpu_mem("1", "4500Mi"), "Node didn't have enough capacity: memory, requested: 4718592000, capacity: 4294967296"),
    (cpu_mem("5", "1Gi"), "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000"),
], ids=["memory beyond node capacity", "cpu beyond node capacity"])
def test_a_resize_beyond_node_allocatable_is_infeasible(new, message, sidecar):
    """TestHandlePodResourcesResize: 'Request ... increase beyond node capacity - expect Infeasible'."""
    result, manager = resize_on_busy_node(cpu_mem("1", "1Gi"), new, sidecar=sidecar)
    assert (result.status, result.message) == (INFEASIBLE, message)
    assert result.conditions[0].to_dict() == {"type": PENDING, "status": "True", "reason": INFEASIBLE,
                                              "message": message}
    assert manager.pending == []  # infeasible resizes are not retried


def test_an_unchanged_pod_has_no_resize_conditions():
    """TestHandlePodResourcesResize: 'No resize'."""
    result, _ = resize_on_busy_node(cpu_mem("1", "1Gi"), cpu_mem("1", "1Gi"))
    assert (result.status, result.conditions) == (UNCHANGED, ())


def test_a_static_pod_cannot_be_resized():
    """TestHandlePodResourcesResize: 'static pod, expect Infeasible' (IsInPlacePodVerticalScalingAllowed)."""
    static = {"kubernetes.io/config.source": "file"}
    result, _ = resize_on_busy_node(cpu_mem("1", "1Gi"), cpu_mem("500m", "500Mi"), annotations=static)
    assert (result.status, result.message) == (INFEASIBLE, "In-place resize of static-pods is not supported")


@pytest.mark.parametrize("old, new, old_lim, new_lim", [
    ({"cpu": "2m"}, {"cpu": "1"}, None, None),
    ({"cpu": "1"}, {"cpu": "2m"}, None, None),
    ({"cpu": "10m"}, {"cpu": "10m"}, {"cpu": "10m"}, {"cpu": "20m"}),
    ({"cpu": "10m"}, {"cpu": "10m"}, {"cpu": "20m"}, {"cpu": "10m"}),
], ids=["increase cpu from min shares", "decrease cpu to min shares", "increase cpu from min limit",
        "decrease cpu to min limit"])
def test_resizes_at_the_minimum_cpu_values_are_allocated(old, new, old_lim, new_lim):
    """TestHandlePodResourcesResize: the min shares / min limit cases."""
    result, _ = resize_on_busy_node(old, new, original_limits=old_lim, new_limits=new_lim)
    assert result.status == ALLOCATED


def test_a_pending_infeasible_resize_keeps_the_allocated_one_in_progress():
    """TestHandlePodResourcesResizeMultipleConditions: desired != allocated != actuated shows both conditions."""
    n = node()
    assert n.admit(pod("pod", cpu_mem("500m", "500Mi"))).admitted
    m = ResizeManager(n)
    assert m.request(pod("pod", cpu_mem("1", "1Gi")))[-1].status == ALLOCATED  # not actuated yet
    r = m.request(pod("pod", cpu_mem("5", "4500Mi")))[-1]
    assert [(c.type, c.reason) for c in r.conditions] == [(PENDING, INFEASIBLE), (IN_PROGRESS, "")]
    m.actuated("pod")
    assert [c.type for c in m.conditions_of("pod")] == [PENDING]


@pytest.mark.parametrize("policy, status", [("RestartContainer", ALLOCATED), ("NotRequired", INFEASIBLE)])
def test_a_memory_request_change_of_a_container_with_swap_needs_a_restart_policy(policy, status):
    """TestHandlePodResourcesResizeWithSwap: LimitedSwap containers resize memory only with RestartContainer."""
    n = node(memorySwap={"swapBehavior": "LimitedSwap"}, failSwapOn=False)
    rp = [{"resourceName": "memory", "restartPolicy": policy}]
    assert n.admit(pod("pod1", cpu_mem("1", "1Gi"), resize_policy=rp)).admitted
    r = request_resize(n, pod("pod1", cpu_mem("500m", "500Mi"), resize_policy=rp))
    assert r.status == status
    if status == INFEASIBLE:
        assert r.message == "In-place resize of containers with swap is not supported."


def test_pending_resizes_are_sorted_as_upstream_sorts_them():
    """TestSortPendingResizes: decreases first, then PriorityClass, then Guaranteed, then longest deferred."""
    pushed = []
    for order in (range(6), reversed(range(6))):
        n = node(machine="1s1n16c1t:mem=16Gi")
        m = ResizeManager(n)
        for i in range(6):
            assert n.admit(pod(f"p{i}", cpu_mem("1", "1Gi"))).admitted
        desired = {0: pod("p0", cpu_mem("500m", "500Mi")),
                   1: pod("p1", cpu_mem("1500m", "1500Mi"), priority=100),
                   2: pod("p2", cpu_mem("1500m", "1500Mi"), qos="Guaranteed")}
        for i in (3, 4, 5):
            desired[i] = pod(f"p{i}", cpu_mem("1500m", "1500Mi"))
        m.set_condition("p3", PENDING, DEFERRED, "some-message", now=1.0)
        m.set_condition("p4", PENDING, DEFERRED, "some-message", now=2.0)
        for i in order:
            m.push(desired[i])
        pushed.append(list(m.pending))
    assert pushed == [[f"p{i}" for i in range(6)]] * 2


def test_a_resize_that_frees_room_is_evaluated_first_and_lets_a_deferred_one_through():
    """sortPendingResizes puts resizes that do not increase requests first: the shrink makes room
    for the deferred growth in the same retry (trigger pod_updated)."""
    n = node()
    for name in ("a", "b", "c"):
        assert n.admit(pod(name, cpu_mem("1", "1Gi"))).admitted
    m = ResizeManager(n)
    assert m.request(pod("a", cpu_mem("2500m", "1Gi")))[-1].status == DEFERRED  # 2 + 2.5 > 4 CPUs
    results = m.request(pod("b", cpu_mem("500m", "1Gi")))
    assert [(r.pod.name, r.status, r.trigger) for r in results] == [("b", ALLOCATED, "pod_updated"),
                                                                    ("a", ALLOCATED, "pod_updated")]


def test_a_deferred_resize_is_retried_after_a_later_resize_made_room():
    """A growing resize queued behind a deferred one frees cpu: the deferred one is retried
    (retryPendingResizes, trigger pod_resized) once the other is allocated."""
    n = node()
    for name in ("a", "b", "c"):
        assert n.admit(pod(name, cpu_mem("1", "1Gi"))).admitted
    m = ResizeManager(n)
    assert m.request(pod("a", cpu_mem("2500m", "1Gi")))[-1].status == DEFERRED
    results = m.request(pod("b", cpu_mem("500m", "1536Mi")))  # more memory: an increasing resize, sorted after a
    assert [(r.pod.name, r.status, r.trigger) for r in results] == [
        ("a", DEFERRED, "pod_updated"), ("b", ALLOCATED, "pod_updated"), ("a", ALLOCATED, "pod_resized")]
    assert m.pending == [] and m.conditions_of("a")[0].type == IN_PROGRESS


def test_a_deferred_resize_is_retried_when_a_pod_is_removed():
    """HandlePodRemoves retries pending resizes (trigger pods_removed)."""
    n = node()
    for name in ("a", "b", "c"):
        assert n.admit(pod(name, cpu_mem("1", "1Gi"))).admitted
    m = ResizeManager(n)
    assert request_resize(n, pod("a", cpu_mem("2500m", "1Gi")), manager=m).status == DEFERRED
    gone = m.allocated("c")
    n.remove(gone)
    [r] = m.pod_removed("c")
    assert (r.pod.name, r.status, r.trigger) == ("a", ALLOCATED, "pods_removed")


def test_the_periodic_retry_comes_every_three_minutes():
    """The allocation manager's ticker: retryDelay = 3 minutes."""
    n = node()
    assert n.admit(pod("a", cpu_mem("1", "1Gi"))).admitted
    assert n.admit(pod("b", cpu_mem("2", "1Gi"))).admitted
    m = ResizeManager(n)
    assert request_resize(n, pod("a", cpu_mem("3", "1Gi")), manager=m).status == DEFERRED
    assert m.periodic(60.0) == []
    n.set_allocation(m.allocated("b"), pod("b", cpu_mem("1", "1Gi")))  # room made without a trigger
    [r] = m.periodic(180.0)
    assert (r.status, r.trigger) == (ALLOCATED, "periodic_retry")


# --- the resource managers ------------------------------------------------------------------------

STATIC = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}


def guaranteed(name: str, cpu: str, mem: str = "1Gi") -> Pod:
    return pod(name, cpu_mem(cpu, mem), cpu_mem(cpu, mem))


def test_a_guaranteed_pods_cpu_cannot_be_resized_under_the_static_cpu_policy():
    """handlers.go: InPlacePodVerticalScalingExclusiveCPUs off (the default) and policy static."""
    n = node(**STATIC)
    assert n.admit(guaranteed("g", "2")).admitted
    r = request_resize(n, guaranteed("g", "3"))
    assert (r.status, r.message) == (INFEASIBLE,
                                     'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"')


def test_a_guaranteed_pods_memory_alone_may_change_under_the_static_cpu_policy():
    """handlers.go: guaranteedPodResourceResizeRequired looks at the cpu requests only for the CPU Manager."""
    n = node(**STATIC)
    assert n.admit(guaranteed("g", "2")).admitted
    before = n.cpu.exclusive_cpus("g", "c1")
    r = request_resize(n, guaranteed("g", "2", "2Gi"))
    assert r.status == ALLOCATED and n.cpu.exclusive_cpus("g", "c1") == before


def test_a_guaranteed_pods_memory_cannot_be_resized_under_the_static_memory_policy():
    """handlers.go: InPlacePodVerticalScalingExclusiveMemory off and memoryManagerPolicy Static."""
    n = node(memoryManagerPolicy="Static", reservedMemory=[{"numaNode": 0, "limits": {"memory": "200Mi"}}],
             kubeReserved={"memory": "100Mi"}, evictionHard={"memory.available": "100Mi"}, **STATIC)
    assert n.admit(guaranteed("g", "1", "1Gi")).admitted
    r = request_resize(n, guaranteed("g", "1", "2Gi"))
    assert (r.status, r.message) == (INFEASIBLE,
                                     'Resize is infeasible for Guaranteed Pods alongside Memory Manager policy "Static"')


def test_with_the_exclusive_cpus_gate_v1_36_keeps_the_containers_cpus():
    """v1.36 with InPlacePodVerticalScalingExclusiveCPUs: the resize is allocated, but the static
    policy's Allocate finds the container in its state and keeps its cpuset (KEP-5554 lands in v1.37)."""
    n = node(featureGates={"InPlacePodVerticalScalingExclusiveCPUs": True}, **STATIC)
    assert n.admit(guaranteed("g", "2")).admitted
    before = n.cpu.exclusive_cpus("g", "c1")
    r = request_resize(n, guaranteed("g", "3"))
    assert r.status == ALLOCATED and n.cpu.exclusive_cpus("g", "c1") == before
    assert "keeps its exclusive CPUs" in r.notes[0]


def test_with_the_exclusive_cpus_gate_a_restricted_topology_policy_defers_the_resize():
    """GetTopologyHints answers an empty hint for a size mismatch; restricted refuses it (Deferred)."""
    n = node(featureGates={"InPlacePodVerticalScalingExclusiveCPUs": True}, topologyManagerPolicy="restricted",
             **STATIC)
    assert n.admit(guaranteed("g", "2")).admitted
    r = request_resize(n, guaranteed("g", "3"))
    assert (r.status, r.message) == (DEFERRED, "Resources cannot be allocated with Topology locality")


def test_the_v1_37_exclusive_cpu_resize_is_refused_as_not_modelled():
    n = node("1.37", featureGates={"InPlacePodVerticalScalingExclusiveCPUs": True}, **STATIC)
    assert n.admit(guaranteed("g", "2")).admitted
    with pytest.raises(InputError, match="not modelled"):
        request_resize(n, guaranteed("g", "3"))


def test_the_seam_checks_with_the_api_server_first_when_given_its_gates():
    """request_resize(..., api_gates=...): ValidatePodResize before the kubelet (the VPA updater's path)."""
    from kubetwin.kubelet.resize import REFUSED
    from kubetwin.model.features import gates_for

    n = node()
    assert n.admit(pod("a", cpu_mem("1", "1Gi"), cpu_mem("2", "2Gi"))).admitted
    r = request_resize(n, pod("a", cpu_mem("2", "2Gi"), cpu_mem("2", "2Gi")), api_gates=gates_for("1.36"))
    assert (r.status, r.message) == (REFUSED, 'Pod "a" is invalid: spec: Invalid value: "Burstable": Pod QOS Class '
                                              'may not change as a result of resizing')
    ok = request_resize(n, pod("a", cpu_mem("1500m", "1Gi"), cpu_mem("2", "2Gi")), api_gates=gates_for("1.36"))
    assert ok.status == ALLOCATED


def test_infeasible_resizes_are_counted_by_reason_detail():
    """TestHandlePodResourcesResize's expected metrics: insufficient_node_allocatable and static_pod."""
    from kubetwin.kubelet.metrics import render_resize_metrics

    _, m = resize_on_busy_node(cpu_mem("1", "1Gi"), cpu_mem("5", "1Gi"))
    _, static = resize_on_busy_node(cpu_mem("1", "1Gi"), cpu_mem("500m", "500Mi"),
                                    annotations={"kubernetes.io/config.source": "file"})
    assert m.infeasible == {"insufficient_node_allocatable": 1} and static.infeasible == {"static_pod": 1}
    assert render_resize_metrics(m).splitlines() == [
        "# HELP kubelet_pod_infeasible_resizes_total [ALPHA] Number of infeasible resizes for pods.",
        "# TYPE kubelet_pod_infeasible_resizes_total counter",
        'kubelet_pod_infeasible_resizes_total{reason_detail="insufficient_node_allocatable"} 1']


def test_a_deferred_resize_accepted_later_is_counted_by_its_trigger():
    """TestRecordPodDeferredAcceptedResizes: counted only when the resize had been deferred."""
    n = node()
    for name in ("a", "b", "c"):
        assert n.admit(pod(name, cpu_mem("1", "1Gi"))).admitted
    m = ResizeManager(n)
    m.request(pod("a", cpu_mem("2500m", "1Gi")))
    m.request(pod("b", cpu_mem("500m", "1536Mi")))
    assert m.deferred_accepted == {"pod_resized": 1}


def test_a_kubelet_with_in_place_resize_off_finds_every_resize_infeasible():
    """IsInPlacePodVerticalScalingAllowed: the gate can still be turned off in v1.34 (beta)."""
    n = node("1.34", featureGates={"InPlacePodVerticalScaling": False})
    assert n.admit(pod("a", cpu_mem("1", "1Gi"))).admitted
    r = request_resize(n, pod("a", cpu_mem("500m", "1Gi")))
    assert (r.status, r.message) == (INFEASIBLE, "InPlacePodVerticalScaling is disabled")


def test_an_actuated_resize_is_recorded_in_the_actuated_state_and_no_longer_in_progress():
    """``SetActuatedResources`` then ``CheckPodResizeInProgress``: the condition goes once the
    actuated resources are the allocated ones."""
    result, manager = resize_on_busy_node(cpu_mem("1", "1Gi"), cpu_mem("500m", "500Mi"))
    manager.actuated("pod1")
    got = manager.actuated_state.get_container_resources("pod1", "c1")
    assert got == result.pod.spec.containers[0].resources
    assert manager.conditions_of("pod1") == ()


def test_a_removed_pod_leaves_the_actuated_state_but_not_yet_its_file():
    result, manager = resize_on_busy_node(cpu_mem("1", "1Gi"), cpu_mem("500m", "500Mi"))
    manager.actuated("pod1")
    manager.pod_removed("pod1")
    assert "pod1" not in manager.actuated_state.entries and "pod1" in manager.actuated_state.stored


def test_remove_orphaned_pods_drops_the_actuated_entries_of_pods_gone():
    result, manager = resize_on_busy_node(cpu_mem("1", "1Gi"), cpu_mem("500m", "500Mi"))
    manager.actuated("pod1")
    assert manager.remove_orphaned_pods({"pod2"}) == ["pod1"]
