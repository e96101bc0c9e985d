"""Effective pod requests and limits, as ``k8s.io/component-helpers/resource`` computes them.

Every consumer — scheduler fit and scoring, kubelet admission, pod cgroups, OOM score,
eviction, quota — asks the same question with different options, so there is exactly one
implementation here and the options say who is asking (:class:`PodResourcesOptions`).

The arithmetic follows the sidecar KEP: app containers and sidecars run together; a regular
init container runs alone next to the sidecars started before it; the pod needs the larger of
the two. Pod-level resources (gate PodLevelResources) replace the container sum for the
resources they name; RuntimeClass overhead comes on top. DRA node-allocatable claims (gate
DRANodeAllocatableResources) charge ``mapping`` and ``perPod`` amounts once per pod and
``perContainer`` amounts while the referencing container runs.

Results are fresh ``dict[str, Quantity]`` the caller owns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .pod import Container, ContainerStatus, Pod, is_sidecar
from .quantity import Quantity

ResourceList = dict[str, Quantity]

CPU = "cpu"
MEMORY = "memory"
HUGEPAGES_PREFIX = "hugepages-"

#: Defaults the scheduler's scoring substitutes for *missing* container requests
#: (``NonMissingContainerRequests``; explicit zeros stay zero).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class PodResourcesOptions:
    """Who is asking, in upstream's words (``PodResourcesOptions``).

    ``use_status_resources`` takes, per resource, the larger of spec, allocated and actuated
    values (in-place resize); it must stay false unless InPlacePodVerticalScaling is on.
    """

    use_status_resources: bool = False
    exclude_overhead: bool = False
    non_missing_container_requests: Mapping[str, Quantity] = field(default_factory=dict)
    skip_pod_level_resources: bool = False
    skip_container_level_resources: bool = False
    use_dra_node_allocatable_resource_claim_status: bool = False


DEFAULT_OPTIONS = PodResourcesOptions()


def scoring_non_missing_requests() -> dict[str, Quantity]:
    """100m CPU and 200Mi memory: what scheduler scoring assumes for a container that says nothing."""
    return {CPU: Quantity.from_milli(DEFAULT_MILLI_CPU_REQUEST), MEMORY: Quantity.from_int(DEFAULT_MEMORY_REQUEST)}


# --- pod-level resources -------------------------------------------------------------------


def is_supported_pod_level_resource(name: str) -> bool:
    """cpu, memory and hugepages-* can be set at pod level; other names are ignored there."""
    return name == CPU or name == MEMORY or name.startswith(HUGEPAGES_PREFIX)


def is_pod_level_resources_set(pod: Pod) -> bool:
    """``IsPodLevelResourcesSet``: a supported resource in pod-level requests or limits."""
    res = pod.spec.resources
    if res is None:
        return False
    return any(map(is_supported_pod_level_resource, res.requests)) or any(
        map(is_supported_pod_level_resource, res.limits))


def is_pod_level_requests_set(pod: Pod) -> bool:
    res = pod.spec.resources
    return res is not None and any(map(is_supported_pod_level_resource, res.requests))


def is_pod_level_limits_set(pod: Pod) -> bool:
    res = pod.spec.resources
    return res is not None and any(map(is_supported_pod_level_resource, res.limits))


def pod_level_requests(pod: Pod) -> Mapping[str, Quantity]:
    """``pod.spec.resources.requests`` (none when the pod sets no pod-level resources)."""
    res = pod.spec.resources
    return res.requests if res is not None else {}


def pod_level_limits(pod: Pod) -> Mapping[str, Quantity]:
    """``pod.spec.resources.limits`` (none when the pod sets no pod-level resources)."""
    res = pod.spec.resources
    return res.limits if res is not None else {}


# --- resource-list arithmetic --------------------------------------------------------------


def add_resource_list(into: ResourceList, other: Mapping[str, Quantity]) -> None:
    for name, q in other.items():
        have = into.get(name)
        into[name] = q if have is None else have + q


def max_resource_list(into: ResourceList, other: Mapping[str, Quantity]) -> None:
    for name, q in other.items():
        have = into.get(name)
        if have is None or q.cmp(have) > 0:
            into[name] = q


def _max_of(first: Mapping[str, Quantity], *others: Mapping[str, Quantity]) -> ResourceList:
    out = dict(first)
    for o in others:
        max_resource_list(out, o)
    return out


def _apply_non_missing(values: Mapping[str, Quantity], defaults: Mapping[str, Quantity]) -> ResourceList:
    out = dict(values)
    for name, q in defaults.items():
        if name not in values:
            out[name] = q
    return out


# --- DRA node-allocatable claims -----------------------------------------------------------


@dataclass(slots=True)
class _DRAResources:
    #: ``mapping`` quantities and ``perPod`` overhead: charged for the pod's whole life.
    pod_fixed: ResourceList = field(default_factory=dict)
    #: ``perContainer`` overhead, by referencing container name.
    per_container: dict[str, ResourceList] = field(default_factory=dict)


def _dra_node_allocatable(pod: Pod, opts: PodResourcesOptions) -> _DRAResources:
    out = _DRAResources()
    statuses = pod.status.node_allocatable_resource_claim_statuses
    if not opts.use_dra_node_allocatable_resource_claim_status or not statuses:
        return out
    names = [c.name for c in pod.spec.init_containers] + [c.name for c in pod.spec.containers]
    for st in statuses:
        for m in st.mapping:
            add_resource_list(out.pod_fixed, {m.name: m.quantity})
        for o in st.overhead:
            if o.per_pod is not None:
                add_resource_list(out.pod_fixed, {o.name: o.per_pod})
        if not any(o.per_container is not None for o in st.overhead):
            continue
        known = 0
        for name in names:
            if name not in st.containers:
                continue
            known += 1
            bucket = out.per_container.setdefault(name, {})
            for o in st.overhead:
                if o.per_container is not None:
                    add_resource_list(bucket, {o.name: o.per_container})
        unknown = len(st.containers) - known
        if unknown > 0:  # names not in the spec: charged for the pod's whole life
            for o in st.overhead:
                if o.per_container is not None:
                    add_resource_list(out.pod_fixed, {o.name: o.per_container.mul(unknown)})
    return out


def container_dra_allocations(pod: Pod, container_name: str) -> ResourceList:
    """``GetContainerDRAAllocations``: everything the container's claims add to its cgroup.

    A claim shared by several containers adds its full mapping and perPod amounts to each
    referencing container's *limit* (the cgroup must fit the whole device).
    """
    out: ResourceList = {}
    for st in pod.status.node_allocatable_resource_claim_statuses:
        if container_name not in st.containers:
            continue
        for m in st.mapping:
            add_resource_list(out, {m.name: m.quantity})
        for o in st.overhead:
            if o.per_pod is not None:
                add_resource_list(out, {o.name: o.per_pod})
        for o in st.overhead:
            if o.per_container is not None:
                add_resource_list(out, {o.name: o.per_container})
    return out


def _drop_dra_for_undeclared_limits(pod: Pod, dra: _DRAResources) -> None:
    """The kubelet sets no cgroup limit for a resource no container limits, so DRA amounts for
    it must not create one; hugepages are never overcommitted and always kept."""
    if not dra.pod_fixed and not dra.per_container:
        return
    declared = {name for c, _ in pod.all_containers() for name in c.resources.limits}

    def keep(values: ResourceList) -> None:
        for name in list(values):
            if not name.startswith(HUGEPAGES_PREFIX) and name not in declared:
                del values[name]

    keep(dra.pod_fixed)
    for values in dra.per_container.values():
        keep(values)


# --- container aggregation -----------------------------------------------------------------


def is_pod_resize_infeasible(pod: Pod) -> bool:
    """The resize is marked Infeasible (``PodResizePending`` condition, or the older ``status.resize``)."""
    for cond in pod.status.conditions:
        if cond.type == "PodResizePending":
            return cond.reason == "Infeasible"
    return pod.status.resize == "Infeasible"


def _find_status(pod: Pod, name: str) -> ContainerStatus | None:
    for cs in pod.status.container_statuses:
        if cs.name == name:
            return cs
    for cs in pod.status.init_container_statuses:
        if cs.name == name:
            return cs
    return None


def _spec_requests(c: Container, cs: ContainerStatus | None, infeasible: bool) -> Mapping[str, Quantity]:
    return c.resources.requests


def _allocated_requests(c: Container, cs: ContainerStatus | None, infeasible: bool) -> Mapping[str, Quantity]:
    if cs is not None and cs.allocated_resources:
        return cs.allocated_resources
    return {} if infeasible else c.resources.requests


def _actuated_requests(c: Container, cs: ContainerStatus | None, infeasible: bool) -> Mapping[str, Quantity]:
    if cs is not None and cs.resources is not None and cs.resources.requests:
        return cs.resources.requests
    if cs is not None and cs.allocated_resources:
        return cs.allocated_resources
    return {} if infeasible else c.resources.requests


def _spec_limits(c: Container, cs: ContainerStatus | None, infeasible: bool) -> Mapping[str, Quantity]:
    return c.resources.limits


def _actuated_limits(c: Container, cs: ContainerStatus | None, infeasible: bool) -> Mapping[str, Quantity]:
    if cs is not None and cs.resources is not None and cs.resources.limits:
        return cs.resources.limits
    return {} if infeasible else c.resources.limits


def _aggregate(pod: Pod, opts: PodResourcesOptions,
               get: Callable[[Container, ContainerStatus | None, bool], Mapping[str, Quantity]], dra: _DRAResources,
               non_missing: Mapping[str, Quantity] | None) -> ResourceList:
    infeasible = is_pod_resize_infeasible(pod) if opts.use_status_resources else False
    result: ResourceList = {}
    for c in pod.spec.containers:
        cs = _find_status(pod, c.name) if opts.use_status_resources else None
        values: Mapping[str, Quantity] = get(c, cs, infeasible)
        if non_missing:
            values = _apply_non_missing(values, non_missing)
        add_resource_list(result, values)
        extra = dra.per_container.get(c.name)
        if extra:
            add_resource_list(result, extra)

    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for c in pod.spec.init_containers:
        cs = _find_status(pod, c.name) if opts.use_status_resources else None
        values = get(c, cs, infeasible)
        if non_missing:
            values = _apply_non_missing(values, non_missing)
        extra = dra.per_container.get(c.name)
        if extra:
            combined = dict(values)
            add_resource_list(combined, extra)
            values = combined
        if is_sidecar(c):
            add_resource_list(result, values)
            add_resource_list(sidecars, values)
            candidate: Mapping[str, Quantity] = sidecars
        else:
            combined = dict(values)
            add_resource_list(combined, sidecars)
            candidate = combined
        max_resource_list(init_peak, candidate)
    max_resource_list(result, init_peak)
    add_resource_list(result, dra.pod_fixed)
    return result


def aggregate_container_requests(pod: Pod, opts: PodResourcesOptions = DEFAULT_OPTIONS) -> ResourceList:
    """``AggregateContainerRequests``: max(apps + sidecars, each init container's peak), plus DRA."""
    dra = _dra_node_allocatable(pod, opts)
    non_missing = opts.non_missing_container_requests or None
    spec = _aggregate(pod, opts, _spec_requests, dra, non_missing)
    if not opts.use_status_resources:
        return spec
    allocated = _aggregate(pod, opts, _allocated_requests, dra, non_missing)
    # Actuated values are read back from cgroups, which already include DRA amounts.
    actuated = _aggregate(pod, opts, _actuated_requests, _DRAResources(), non_missing)
    if is_pod_resize_infeasible(pod):
        return _max_of(actuated, allocated)
    return _max_of(spec, actuated, allocated)


def aggregate_container_limits(pod: Pod, opts: PodResourcesOptions = DEFAULT_OPTIONS) -> ResourceList:
    """``AggregateContainerLimits``: the same arithmetic over limits (never NonMissing defaults)."""
    dra = _dra_node_allocatable(pod, opts)
    _drop_dra_for_undeclared_limits(pod, dra)
    spec = _aggregate(pod, opts, _spec_limits, dra, None)
    if not opts.use_status_resources:
        return spec
    actuated = _aggregate(pod, opts, _actuated_limits, _DRAResources(), None)
    if is_pod_resize_infeasible(pod):
        return actuated
    return _max_of(spec, actuated)


def pod_requests(pod: Pod, opts: PodResourcesOptions = DEFAULT_OPTIONS) -> ResourceList:
    """``PodRequests``: containers, then pod-level requests replace what they name, then overhead."""
    reqs: ResourceList = {} if opts.skip_container_level_resources else aggregate_container_requests(pod, opts)
    if not opts.skip_pod_level_resources and is_pod_level_requests_set(pod):
        for name, q in pod_level_requests(pod).items():
            if is_supported_pod_level_resource(name):
                reqs[name] = q
    if not opts.exclude_overhead and pod.spec.overhead:
        add_resource_list(reqs, pod.spec.overhead)
    return reqs


def pod_limits(pod: Pod, opts: PodResourcesOptions = DEFAULT_OPTIONS) -> ResourceList:
    """``PodLimits``: as :func:`pod_requests`, but overhead is added only to non-zero limits
    (a pod without a limit stays unlimited)."""
    limits = aggregate_container_limits(pod, opts)
    if not opts.skip_pod_level_resources and is_pod_level_resources_set(pod):
        for name, q in pod_level_limits(pod).items():
            if is_supported_pod_level_resource(name):
                limits[name] = q
    if not opts.exclude_overhead and pod.spec.overhead:
        for name, q in pod.spec.overhead.items():
            have = limits.get(name)
            if have is not None and not have.is_zero():
                limits[name] = have + q
    return limits


def quantity_value(values: Mapping[str, Quantity], name: str) -> int:
    """``list.Name().Value()``: whole units, 0 when absent."""
    q = values.get(name)
    return 0 if q is None else q.value()


def quantity_milli_value(values: Mapping[str, Quantity], name: str) -> int:
    q = values.get(name)
    return 0 if q is None else q.milli_value()


__all__ = (
    "PodResourcesOptions", "DEFAULT_OPTIONS", "ResourceList", "pod_requests", "pod_limits",
    "aggregate_container_requests", "aggregate_container_limits", "container_dra_allocations",
    "is_pod_level_resources_set", "is_pod_level_requests_set", "is_pod_level_limits_set", "pod_level_requests",
    "pod_level_limits",
    "is_supported_pod_level_resource", "is_pod_resize_infeasible", "scoring_non_missing_requests",
    "add_resource_list", "max_resource_list", "quantity_value", "quantity_milli_value",
)
