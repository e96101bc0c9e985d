"""``oom_score_adj`` of a container, as ``pkg/kubelet/qos/policy.go`` sets it.

The kernel kills the process with the highest ``oom_score_adj + usage*1000/capacity``;
the kubelet chooses ``oom_score_adj`` so that Guaranteed pods go last, BestEffort pods
first, and a Burstable container is protected in proportion to its memory request (a
container using more than it asked for scores 1000 and goes first). Every division is
Go's int64 division (truncation toward zero), kept in the same order as upstream.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.features import FeatureGates
from ..model.pod import Container, Pod, is_sidecar
from ..model.resources import (
    MEMORY,
    PodResourcesOptions,
    aggregate_container_requests,
    container_dra_allocations,
    is_pod_level_limits_set,
    is_pod_level_requests_set,
    pod_level_limits,
    quantity_value,
)
from .qos import BEST_EFFORT, GUARANTEED, default_gates, get_pod_qos

KUBELET_OOM_SCORE_ADJ = -999
KUBE_PROXY_OOM_SCORE_ADJ = -999
GUARANTEED_OOM_SCORE_ADJ = -997
BEST_EFFORT_OOM_SCORE_ADJ = 1000
#: Below this request size the tie-break nudge does not distinguish requests.
TIE_BREAK_FLOOR = 64 * 1024 * 1024

SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
NODE_CRITICAL_CLASS = "system-node-critical"


def go_div(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero (Python's ``//`` floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def log2_floor(x: int) -> int:
    """floor(log2(x)), 0 for x < 1."""
    return x.bit_length() - 1 if x >= 1 else 0


def gate(gates: FeatureGates, name: str) -> bool:
    """A gate's value; a gate the chosen Kubernetes version does not know yet is off."""
    try:
        return gates.enabled(name)
    except KeyError:
        return False


# --- critical pods (pkg/kubelet/types) -----------------------------------------------------


def is_static_pod(pod: Pod) -> bool:
    source = pod.metadata.annotations.get("kubernetes.io/config.source")
    return source is not None and source != "api"


def is_mirror_pod(pod: Pod) -> bool:
    return "kubernetes.io/config.mirror" in pod.metadata.annotations


def is_critical_pod(pod: Pod) -> bool:
    """Static and mirror pods, and pods at system-critical priority or above."""
    if is_static_pod(pod) or is_mirror_pod(pod):
        return True
    return pod.spec.priority is not None and pod.spec.priority >= SYSTEM_CRITICAL_PRIORITY


def is_node_critical_pod(pod: Pod) -> bool:
    """Critical *and* of class ``system-node-critical``: only these outlive Guaranteed pods' peers."""
    return is_critical_pod(pod) and pod.spec.priority_class_name == NODE_CRITICAL_CLASS


# --- effective memory --------------------------------------------------------------------


def effective_container_memory_request(pod: Pod, container: Container, gates: FeatureGates) -> int:
    """The container's memory request plus its share of DRA node-allocatable memory.

    A claim shared by n containers gives each ``mapping/n + perPod/n + perContainer``.
    """
    request = quantity_value(container.resources.requests, MEMORY)
    if not gate(gates, "DRANodeAllocatableResources"):
        return request
    share = 0
    for st in pod.status.node_allocatable_resource_claim_statuses:
        if container.name not in st.containers:
            continue
        refs = len(st.containers)
        for m in st.mapping:
            if m.name == MEMORY:
                share += go_div(m.quantity.value(), refs)
        for o in st.overhead:
            if o.name == MEMORY:
                if o.per_pod is not None:
                    share += go_div(o.per_pod.value(), refs)
                if o.per_container is not None:
                    share += o.per_container.value()
    return request + share


def container_memory_limit(pod: Pod, container: Container, gates: FeatureGates) -> int:
    """The memory limit the kubelet puts on the container's cgroup, in bytes (0 = unlimited).

    The container's own limit plus the DRA memory its claims bring (a shared claim counts in
    full: the cgroup must hold the whole device); without one, the pod-level limit.
    """
    own = quantity_value(container.resources.limits, MEMORY)
    if own > 0:
        if gate(gates, "DRANodeAllocatableResources"):
            own += quantity_value(container_dra_allocations(pod, container.name), MEMORY)
        return own
    if gate(gates, "PodLevelResources") and is_pod_level_limits_set(pod):
        return quantity_value(pod_level_limits(pod), MEMORY)
    return 0


def remaining_pod_memory_request_per_container(pod: Pod, gates: FeatureGates) -> int:
    """Pod-level memory request not claimed by any container, split over all containers."""
    res = pod.spec.resources
    pod_memory = quantity_value(res.requests, MEMORY) if res is not None else 0
    if pod_memory == 0:
        return 0
    n = len(pod.spec.containers) + len(pod.spec.init_containers)
    opts = PodResourcesOptions(use_dra_node_allocatable_resource_claim_status=gate(gates, "DRANodeAllocatableResources"))
    aggregated = quantity_value(aggregate_container_requests(pod, opts), MEMORY)
    return go_div(pod_memory - aggregated, n)


# --- the score -----------------------------------------------------------------------------


def linear_score(memory_request: int, memory_capacity: int) -> int:
    return 1000 - go_div(1000 * memory_request, memory_capacity)


def tie_break(linear: int, memory_request: int, memory_limit: int, memory_capacity: int) -> int:
    """KubeletOOMScoreAdjTieBreak: a few points per doubling of request, and a bonus for a
    container whose enforced limit is within its request (it can never be over it)."""
    max_nudge = log2_floor(go_div(go_div(memory_capacity, 1000), TIE_BREAK_FLOOR))
    adj = linear - min(log2_floor(go_div(memory_request, TIE_BREAK_FLOOR)), max_nudge)
    if 0 < memory_limit <= memory_request:
        adj -= max_nudge + 1
    return adj


@dataclass(frozen=True, slots=True)
class OOMScore:
    value: int
    rule: str


def _is_sidecar_of(pod: Pod, container: Container) -> bool:
    return is_sidecar(container) and any(c.name == container.name for c in pod.spec.init_containers)


def container_oom_score_adjust(pod: Pod, container: Container, memory_capacity: int,
                               gates: FeatureGates | None = None, *, tie_break_enabled: bool | None = None) -> OOMScore:
    """``GetContainerOOMScoreAdjust`` with the rule that decided it."""
    g = gates or default_gates()
    if tie_break_enabled is None:
        tie_break_enabled = gate(g, "KubeletOOMScoreAdjTieBreak")
    if is_node_critical_pod(pod):
        return OOMScore(GUARANTEED_OOM_SCORE_ADJ, "node-critical pod (critical priority and system-node-critical)")
    qos = get_pod_qos(pod, g)
    if qos == GUARANTEED:
        return OOMScore(GUARANTEED_OOM_SCORE_ADJ, "Guaranteed pod")
    if qos == BEST_EFFORT:
        return OOMScore(BEST_EFFORT_OOM_SCORE_ADJ, "BestEffort pod")
    if memory_capacity <= 0:
        from ..errors import InputError

        raise InputError("the machine's memory capacity is needed for a Burstable pod's OOM score",
                         path="status.capacity.memory", fix="give the node a memory capacity or --machine")

    request = effective_container_memory_request(pod, container, g)
    pod_level = gate(g, "PodLevelResources") and is_pod_level_requests_set(pod)
    extra = remaining_pod_memory_request_per_container(pod, g) if pod_level else 0
    adj = linear_score(request + extra, memory_capacity)
    rule = f"1000 - 1000*{request + extra}/{memory_capacity}"
    if pod_level:
        rule = f"1000 - 1000*({request} + {extra} pod-level share)/{memory_capacity}"
    if tie_break_enabled:
        adj = tie_break(adj, request + extra, container_memory_limit(pod, container, g), memory_capacity)
        rule += ", tie-broken"

    if _is_sidecar_of(pod, container) and pod.spec.containers:
        if tie_break_enabled:
            ceiling = None
            for c in pod.spec.containers:
                r = effective_container_memory_request(pod, c, g) + extra
                a = tie_break(linear_score(r, memory_capacity), r, container_memory_limit(pod, c, g), memory_capacity)
                ceiling = a if ceiling is None or a > ceiling else ceiling
        else:
            smallest = min(quantity_value(c.resources.requests, MEMORY) for c in pod.spec.containers)
            if pod_level:
                smallest += extra
            ceiling = linear_score(smallest, memory_capacity)
        assert ceiling is not None
        if adj > ceiling:
            adj = ceiling
            rule += f", sidecar capped at the regular containers' {ceiling}"

    floor = 1000 + GUARANTEED_OOM_SCORE_ADJ
    if adj < floor:
        return OOMScore(floor, rule + f" -> raised to the Burstable floor {floor}")
    if adj == BEST_EFFORT_OOM_SCORE_ADJ:
        return OOMScore(adj - 1, rule + " = 1000 -> 999 to stay below BestEffort")
    return OOMScore(adj, rule)


def get_container_oom_score_adjust(pod: Pod, container: Container, memory_capacity: int,
                                   gates: FeatureGates | None = None) -> int:
    return container_oom_score_adjust(pod, container, memory_capacity, gates).value


def possible_container_oom_score_adjusts(pod: Pod, container: Container, memory_capacity: int,
                                         gates: FeatureGates | None = None) -> tuple[int, int]:
    """The score with the tie-break gate off and on (what e2e tests accept)."""
    return (container_oom_score_adjust(pod, container, memory_capacity, gates, tie_break_enabled=False).value,
            container_oom_score_adjust(pod, container, memory_capacity, gates, tie_break_enabled=True).value)


__all__ = ["OOMScore", "container_oom_score_adjust", "get_container_oom_score_adjust",
           "possible_container_oom_score_adjusts", "is_critical_pod", "is_node_critical_pod",
           "container_memory_limit", "effective_container_memory_request", "go_div", "log2_floor",
           "KUBELET_OOM_SCORE_ADJ", "KUBE_PROXY_OOM_SCORE_ADJ", "GUARANTEED_OOM_SCORE_ADJ", "BEST_EFFORT_OOM_SCORE_ADJ"]
