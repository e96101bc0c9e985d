"""The scoring half NodeResourcesFit and NodeResourcesBalancedAllocation share: which amounts
go into a score, and the scoring strategies (``noderesources/resource_allocation.go``,
``least_allocated.go``, ``most_allocated.go``, ``requested_to_capacity_ratio.go``,
``balanced_allocation.go``'s ``balancedResourceScorer``).

Amounts are node allocatable and node requested *including the pod*; cpu and memory use
the non-zero requests (Fit) or the real ones (BalancedAllocation, ``use_requested``). A
scalar resource the pod does not request is bypassed, and a resource the node has none of
is left out of the mean.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ....model.pod import Pod
from ...framework.interface import MAX_NODE_SCORE
from ...framework.resources import is_scalar_resource_name, options
from ...framework.types import NodeInfo, resource_amounts
from ..dynamicresources.extended import dra_extended_allocatable

MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    name: str
    weight: int = 1


DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def pod_request_list(pod: Pod, gates: Any, resources: Sequence[ResourceSpec], use_requested: bool) -> list[int]:
    """``calculatePodResourceRequestList``: the incoming pod's request per scored resource."""
    from ....model.resources import pod_requests

    opts = options(gates, status=True, non_zero=not use_requested)
    amounts = resource_amounts(pod_requests(pod, opts))
    return [amounts.get(r.name, 0) for r in resources]


def allocatable_and_requested(node: NodeInfo, name: str, pod_request: int, use_requested: bool,
                              handle: Any) -> tuple[int, int]:
    """``calculateResourceAllocatableRequest``: (allocatable, requested incl. the pod); (0, 0) bypasses."""
    if pod_request == 0 and is_scalar_resource_name(name):
        return 0, 0
    alloc = node.allocatable
    if name in ("cpu", "memory"):
        req = node.requested if use_requested else node.non_zero_requested
        return alloc.get(name, 0), req.get(name, 0) + pod_request
    if name == "ephemeral-storage":
        return alloc.get(name, 0), node.requested.get(name, 0) + pod_request
    if is_scalar_resource_name(name):
        if name in alloc:
            return alloc[name], node.requested.get(name, 0) + pod_request
        if handle.gates.enabled("DRAExtendedResource"):
            dra = dra_extended_allocatable(handle, node, name)
            if dra is not None:
                return dra[0], dra[1] + pod_request
    return 0, 0


def score_node(scorer: Callable[[list[int], list[int]], int], node: NodeInfo, resources: Sequence[ResourceSpec],
               pod_requests: Sequence[int], use_requested: bool, handle: Any) -> int:
    requested = [0] * len(resources)
    allocatable = [0] * len(resources)
    for i, r in enumerate(resources):
        a, q = allocatable_and_requested(node, r.name, pod_requests[i], use_requested, handle)
        if a == 0:
            continue
        allocatable[i], requested[i] = a, q
    return scorer(requested, allocatable)


# --- strategies ------------------------------------------------------------------------------


def least_allocated(resources: Sequence[ResourceSpec]) -> Callable[[list[int], list[int]], int]:
    """Free share per resource, ``(alloc − req)·100/alloc`` (0 when over), integer weighted mean."""

    def score(requested: list[int], allocatable: list[int]) -> int:
        total = wsum = 0
        for i, r in enumerate(resources):
            cap = allocatable[i]
            if cap == 0:
                continue
            req = requested[i]
            s = 0 if req > cap else (cap - req) * MAX_NODE_SCORE // cap
            total += s * r.weight
            wsum += r.weight
        return total // wsum if wsum else 0

    return score


def most_allocated(resources: Sequence[ResourceSpec]) -> Callable[[list[int], list[int]], int]:
    """Used share per resource, capped at the allocatable; integer weighted mean."""

    def score(requested: list[int], allocatable: list[int]) -> int:
        total = wsum = 0
        for i, r in enumerate(resources):
            cap = allocatable[i]
            if cap == 0:
                continue
            req = min(requested[i], cap)
            total += (req * MAX_NODE_SCORE // cap) * r.weight
            wsum += r.weight
        return total // wsum if wsum else 0

    return score


def _tdiv(a: int, b: int) -> int:
    """Go's integer division: truncation toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """``helper.BuildBrokenLinearFunction`` over (utilization, score) points."""

    def f(p: int) -> int:
        for i, (u, s) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return shape[0][1]
                pu, ps = shape[i - 1]
                return ps + _tdiv((s - ps) * (p - pu), u - pu)
        return shape[-1][1]

    return f


def requested_to_capacity_ratio(resources: Sequence[ResourceSpec],
                                shape: Sequence[tuple[int, int]]) -> Callable[[list[int], list[int]], int]:
    """Shape scores ×10 onto 0..100; zero-scoring resources leave the mean, which is rounded."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    fn = broken_linear([(u, s * scale) for u, s in shape])

    def resource_score(req: int, cap: int) -> int:
        if cap == 0 or req > cap:
            return fn(MAX_UTILIZATION)
        return fn(req * MAX_UTILIZATION // cap)

    def score(requested: list[int], allocatable: list[int]) -> int:
        total = wsum = 0
        for i, r in enumerate(resources):
            if allocatable[i] == 0:
                continue
            s = resource_score(requested[i], allocatable[i])
            if s > 0:
                total += s * r.weight
                wsum += r.weight
        if wsum == 0:
            return 0
        return _go_round(total / wsum)

    return score


def _go_round(x: float) -> int:
    """``math.Round``: half away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def balanced(requested: list[int], allocatable: list[int]) -> int:
    """``int((1 − std)·100)`` over the used fractions (capped at 1) of resources the node has."""
    fractions = []
    for req, cap in zip(requested, allocatable):
        if cap == 0:
            continue
        fractions.append(min(req / cap, 1.0))
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)
