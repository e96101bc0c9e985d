"""The VPA's capping of a recommendation to the namespace's LimitRanges, so that the requests the
admission controller sets (and the bounds the updater compares with) pass LimitRanger's checks.

Upstream (read, not copied): vertical-pod-autoscaler 1.7.1 ``pkg/utils/limitrange/
limit_range_calculator.go`` (one merged item per type: the lowest ``max``, the highest ``min``,
the last ``default``), ``pkg/utils/vpa/capping.go`` (``cappingRecommendationProcessor.Apply``:
``capProportionallyToPodLimitRange`` over the pod's containers — requests of containers without a
recommendation stand in for it — then per container ``applyContainerLimitRange``, the policy's
``minAllowed``/``maxAllowed`` and, for ``RequestsOnly``, the container's limit) and
``pkg/utils/vpa/limit_and_request_scaling.go`` (``GetBoundaryRequest``,
``getProportionalResourceLimit``, ``scaleQuantityProportionally{CPU,Mem}``: the limit keeps its
ratio to the request, so a LimitRange bound on the limit bounds the request by that ratio).

Amounts are kubetwin's: CPU in millicores, memory in bytes; a resource the recommendation lacks
reads as 0, as a missing key of a Go ``ResourceList`` does. Not modelled: where upstream writes
into a nil recommendation or bound when a pod-level limit must be scaled (a container with no
requests and no recommendation; the bounds of a container whose requests stood in for a
recommendation) it panics, kubetwin scales what is there; requests and limits come from the pod
spec (upstream reads the status's under in-place resize).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from .vpa import RecommendedContainerResources, Resources, VPASpec

RESOURCES = ("cpu", "memory")
MAX_INT64 = (1 << 63) - 1
Amounts = dict[str, int]


def amount(resource: str, q: Any) -> int:
    """A quantity in kubetwin's unit (``MilliValue`` for cpu, ``Value`` for memory); 0 when absent."""
    if q is None:
        return 0
    return int(q.milli_value()) if resource == "cpu" else int(q.value())


def _amounts(rl: Mapping[str, Any]) -> Amounts:
    return {r: amount(r, q) for r, q in rl.items() if r in RESOURCES}


@dataclass(frozen=True)
class RangeItem:
    """``getLimitRangeItem``'s merged ``LimitRangeItem`` for one type (None: the list is nil)."""

    max: Amounts | None
    min: Amounts | None
    default: Amounts | None


def limit_range_item(ranges: Sequence[Any], limit_type: str) -> RangeItem | None:
    """The namespace's LimitRanges merged for ``Container`` or ``Pod``: the lowest max, the highest
    min (cpu and memory), the last default; None when no item of the type sets any of them."""
    mx: Amounts | None = None
    mn: Amounts | None = None
    default: Amounts | None = None

    def merged(result: Amounts | None, item: Mapping[str, Any], pick: Callable[[int, int], int]) -> Amounts | None:
        if not item:
            return result
        got = _amounts(item)
        if result is None:
            return dict(got)
        for r in RESOURCES:
            if r in got:
                result[r] = pick(result[r], got[r]) if r in result else got[r]
        return result

    for lr in ranges:
        for it in lr.spec.limits:
            if it.type != limit_type or not (it.max or it.default or it.min):
                continue
            if it.default:
                default = _amounts(it.default)
            mx = merged(mx, it.max, min)
            mn = merged(mn, it.min, max)
    if mx is None and mn is None and default is None:
        return None
    return RangeItem(mx, mn, default)


# --- limit_and_request_scaling.go ---------------------------------------------------------------------
def scale(resource: str, scaled: int, base: int, result: int, round_up: bool = False) -> int:
    """``scaled * result / base``: floored (cpu: rounded up with ``round_up``), at most the
    largest int64; memory is whole
    bytes already, so its rounding modes change nothing. A zero base leaves ``scaled`` (cpu)."""
    if base == 0:
        return scaled
    q, rem = divmod(scaled * result, base)
    if resource == "cpu" and round_up and rem:
        q += 1
    return min(q, MAX_INT64)   # a result past int64 is capped to it


def proportional_limit(resource: str, limit: int, request: int, recommended: int, default: int) -> int | None:
    """``getProportionalResourceLimit``: the limit keeping the original limit-to-request ratio
    (the LimitRange default standing in for a missing limit); None: no limit."""
    if limit == 0:
        limit = default
    if limit == 0 or recommended == 0:
        return None
    if request == 0 or request == limit:
        return recommended
    return scale(resource, limit, request, recommended)


def boundary_request(resource: str, request: int, limit: int, boundary: int, default: int) -> int:
    """``GetBoundaryRequest``: the request whose proportional limit is ``boundary`` (0: no bound)."""
    if limit == 0:
        limit = default
    if limit == 0:
        return 0
    if request == 0:
        return boundary
    return scale(resource, request, limit, boundary)


# --- capping.go ---------------------------------------------------------------------------------------
def _get(x: Resources, r: str) -> int:
    v = x.cpu if r == "cpu" else x.memory
    return v or 0


def _set(x: Resources, r: str, v: int) -> Resources:
    return replace(x, cpu=v) if r == "cpu" else replace(x, memory=v)


def _has(x: Resources, r: str) -> bool:
    return (x.cpu if r == "cpu" else x.memory) is not None


_FIELDS = ("upper_bound", "target", "lower_bound")


def _pod_limit_range(recs: dict[str, RecommendedContainerResources], containers: Sequence[Any], item: RangeItem,
                     r: str, fld: str) -> None:
    """``applyPodLimitRange`` for one resource and one field, in place over ``recs``."""
    lo = (item.min or {}).get(r, 0)
    hi = (item.max or {}).get(r, 0)
    default = (item.default or {}).get(r, 0)
    sum_limit = sum_rec = 0
    for c in containers:
        req, lim = amount(r, c.resources.requests.get(r)), amount(r, c.resources.limits.get(r))
        rec = recs.get(c.name)
        value = req if rec is None else _get(getattr(rec, fld), r)
        cl = proportional_limit(r, lim, req, value, default)
        sum_limit += cl or 0
        sum_rec += value
    if lo <= sum_limit and lo <= sum_rec and (hi == 0 or hi >= sum_limit):
        return
    present = [c.name for c in containers if c.name in recs]
    if lo > sum_rec and sum_limit != 0:
        for name in present:
            rec = recs[name]
            x = getattr(rec, fld)
            recs[name] = replace(rec, **{fld: _set(x, r, scale(r, _get(x, r), sum_rec, lo, round_up=True))})
        return
    if sum_limit == 0:
        return
    target = 0
    if lo > sum_limit:
        target = lo
    if hi != 0 and hi < sum_limit:
        target = hi
    for name in present:
        rec = recs[name]
        x = getattr(rec, fld)
        recs[name] = replace(rec, **{fld: _set(x, r, scale(r, _get(x, r), sum_limit, target))})


def _boundary(x: Resources, req: Amounts, lim: Amounts, bound: Amounts | None, default: Amounts | None) -> Amounts:
    if bound is None:
        return {}
    d = default or {}
    return {r: boundary_request(r, req.get(r, 0), lim.get(r, 0), bound.get(r, 0), d.get(r, 0)) for r in RESOURCES}


def _container_limit_range(x: Resources, req: Amounts, lim: Amounts, item: RangeItem | None) -> Resources:
    """``applyContainerLimitRange``: raised to the request whose proportional limit (and the
    request itself) meets ``min``, lowered to the one whose limit meets ``max`` (0: no bound)."""
    if item is None:
        return x
    hi = _boundary(x, req, lim, item.max, item.default)
    lo = _boundary(x, req, lim, item.min, item.default)
    if item.min is not None:
        for r in RESOURCES:
            if item.min.get(r, 0) > lo.get(r, 0):
                lo[r] = item.min[r]
    for r in RESOURCES:
        if not _has(x, r):
            continue
        v = _get(x, r)
        if lo.get(r, 0) and v < lo[r]:
            v = lo[r]
        if hi.get(r, 0) and v > hi[r]:
            v = hi[r]
        x = _set(x, r, v)
    return x


def _policy(x: Resources, vpa: VPASpec, name: str) -> Resources:
    """``applyVPAPolicy``: the container policy's ``minAllowed`` then ``maxAllowed``."""
    p = vpa.policy_for(name)
    if p is None:
        return x
    for r in RESOURCES:
        if not _has(x, r):
            continue
        v = _get(x, r)
        lo, hi = p.min_allowed.get(r), p.max_allowed.get(r)
        if lo is not None and not lo.is_zero() and v < amount(r, lo):
            v = amount(r, lo)
        if hi is not None and not hi.is_zero() and v > amount(r, hi):
            v = amount(r, hi)
        x = _set(x, r, v)
    return x


def cap_to_limit_ranges(pod: Any, vpa: VPASpec, recs: Mapping[str, RecommendedContainerResources],
                        ranges: Sequence[Any]) -> dict[str, RecommendedContainerResources]:
    """``cappingRecommendationProcessor.Apply`` for ``pod``: the recommendation capped to the pod
    and container LimitRange items of ``ranges`` (the pod's namespace's), then to the VPA's
    policy, then (``RequestsOnly``) to the container's limits. Containers the recommendation has
    no entry for get their own requests as target when a Pod item exists, as upstream inserts them."""
    containers = pod.spec.containers
    out = dict(recs)
    pod_item = limit_range_item(ranges, "Pod")
    if pod_item is not None:
        for c in containers:
            if c.name not in out:
                req = _amounts(c.resources.requests)
                if req:
                    t = Resources(req.get("cpu"), req.get("memory"))
                    out[c.name] = RecommendedContainerResources(t, Resources(None, None), Resources(None, None))
        for fld in _FIELDS:
            for r in RESOURCES:
                _pod_limit_range(out, containers, pod_item, r, fld)
    item = limit_range_item(ranges, "Container")
    by_name = {c.name: c for c in containers}
    final: dict[str, RecommendedContainerResources] = {}
    for name, rec in out.items():
        c = by_name.get(name)
        if c is None:
            continue
        req, lim = _amounts(c.resources.requests), _amounts(c.resources.limits)
        p = vpa.policy_for(name)
        only_requests = p is not None and p.controlled_values == "RequestsOnly"
        final[name] = replace(rec, **{f: _capped(getattr(rec, f), vpa, name, req, lim, item, only_requests)
                                      for f in ("target", "lower_bound", "upper_bound")})
    return final


def _capped(x: Resources, vpa: VPASpec, name: str, req: Amounts, lim: Amounts, item: RangeItem | None,
            only_requests: bool) -> Resources:
    """``getCappedRecommendationForContainer``'s ``process`` for one of target and bounds."""
    x = _policy(_container_limit_range(x, req, lim, item), vpa, name)
    if only_requests:   # capRecommendationToContainerLimit
        for r, v in lim.items():
            if _has(x, r) and _get(x, r) > v:
                x = _set(x, r, v)
    return x
