"""``NodeResourcesFitArgs`` and ``NodeResourcesBalancedAllocationArgs`` (``kubescheduler.config.k8s.io/v1``),
decoded strictly, defaulted and validated as kube-scheduler does
(``pkg/scheduler/apis/config/v1/defaults.go``, ``validation/validation_pluginargs.go``).

Defaults: no scoring strategy is LeastAllocated on cpu and memory; an empty resource list is
cpu and memory; a weight left out (or 0) is 1. Validation: a strategy type must be named and
known, weights are in (0, 100] (BalancedAllocation: exactly 1, names not repeated), resource
groups have no ``/``, a RequestedToCapacityRatio shape has sorted points in range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ....errors import InputError
from ....model.strict import INTEGER, STRING, list_of, obj
from ...framework.args import args_spec, decode_args
from . import BALANCED_ALLOCATION, FIT
from .resource_allocation import DEFAULT_RESOURCES, MAX_CUSTOM_PRIORITY_SCORE, ResourceSpec

LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO = (
    "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
SCORING_STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

RESOURCE_SPEC = obj(name=STRING, weight=INTEGER)
SHAPE_POINT = obj(utilization=INTEGER, score=INTEGER)
SCORING_STRATEGY = obj(type=STRING, resources=list_of(RESOURCE_SPEC),
                       requestedToCapacityRatio=obj(shape=list_of(SHAPE_POINT)))
FIT_ARGS = args_spec(ignoredResources=list_of(STRING), ignoredResourceGroups=list_of(STRING),
                     scoringStrategy=SCORING_STRATEGY)
BALANCED_ALLOCATION_ARGS = args_spec(resources=list_of(RESOURCE_SPEC))


@dataclass(frozen=True)
class NodeResourcesFitArgs:
    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()
    strategy: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class NodeResourcesBalancedAllocationArgs:
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES


def _p(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def parse_resources(raw: Any, path: str, *, max_weight: int = 100) -> tuple[ResourceSpec, ...]:
    """A ``[]ResourceSpec``: empty is cpu and memory, a weight of 0 (or none) is 1."""
    if not raw:
        return DEFAULT_RESOURCES
    out = []
    for i, item in enumerate(raw):
        p = f"{path}[{i}]"
        if item is None:  # JSON null decodes to Go's zero ResourceSpec: no name
            item = {}
        name = item.get("name")
        if not name:
            raise InputError("Required value: name", path=f"{p}.name")
        weight = item.get("weight") or 1
        if not 0 < weight <= max_weight:
            rng = "must be 1" if max_weight == 1 else f"resource weight of {name} not in valid range (0, {max_weight}]"
            raise InputError(f"Invalid value: {weight!r}: {rng}", path=f"{p}.weight")
        out.append(ResourceSpec(name, int(weight)))
    return tuple(out)


def parse_fit_args(raw: Mapping[str, Any] | None, path: str = "", file: str | None = None) -> NodeResourcesFitArgs:
    args = decode_args(FIT, raw, FIT_ARGS, path, file)
    try:
        return _fit_args(args, path)
    except InputError as exc:
        raise exc.in_file(file) from None


def _fit_args(raw: Mapping[str, Any], path: str) -> NodeResourcesFitArgs:
    ignored = raw.get("ignoredResources") or []
    groups = raw.get("ignoredResourceGroups") or []
    for i, g in enumerate(groups):
        if "/" in g:
            raise InputError(f'Invalid value: "{g}": resource group name can\'t contain \'/\'',
                             path=_p(path, f"ignoredResourceGroups[{i}]"))
    strategy = raw.get("scoringStrategy")
    if strategy is None:
        return NodeResourcesFitArgs(frozenset(ignored), frozenset(groups))
    sp = _p(path, "scoringStrategy")
    stype = strategy.get("type") or ""
    if stype not in SCORING_STRATEGIES:
        raise InputError(f'Unsupported value: "{stype}": supported values: '
                         + ", ".join(f'"{s}"' for s in SCORING_STRATEGIES), path=f"{sp}.type")
    resources = parse_resources(strategy.get("resources"), f"{sp}.resources")
    shape: tuple[tuple[int, int], ...] = ()
    rtcr = strategy.get("requestedToCapacityRatio")
    if rtcr is not None or stype == REQUESTED_TO_CAPACITY_RATIO:
        shape = _shape((rtcr or {}).get("shape") or [], f"{sp}.requestedToCapacityRatio.shape")
    return NodeResourcesFitArgs(frozenset(ignored), frozenset(groups), stype, resources, shape)


def _shape(points: list[Mapping[str, Any]], path: str) -> tuple[tuple[int, int], ...]:
    """``validateFunctionShape``: at least one point, utilization sorted and in [0, 100], score in [0, 10]."""
    if not points:
        raise InputError("Required value: at least one point must be specified", path=path)
    out: list[tuple[int, int]] = []
    for i, pt in enumerate(points):
        pp = f"{path}[{i}]"
        u, s = pt.get("utilization") or 0, pt.get("score") or 0
        if out and u <= out[-1][0]:
            raise InputError(f"Invalid value: {u!r}: values must be sorted in increasing order",
                             path=f"{pp}.utilization")
        if not 0 <= u <= 100:
            raise InputError(f"Invalid value: {u!r}: not in valid range [0, 100]", path=f"{pp}.utilization")
        if not 0 <= s <= MAX_CUSTOM_PRIORITY_SCORE:
            raise InputError(f"Invalid value: {s!r}: not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                             path=f"{pp}.score")
        out.append((int(u), int(s)))
    return tuple(out)


def parse_balanced_allocation_args(raw: Mapping[str, Any] | None, path: str = "",
                                   file: str | None = None) -> NodeResourcesBalancedAllocationArgs:
    args = decode_args(BALANCED_ALLOCATION, raw, BALANCED_ALLOCATION_ARGS, path, file)
    rp = _p(path, "resources")
    try:
        resources = parse_resources(args.get("resources"), rp, max_weight=1)
    except InputError as exc:
        raise exc.in_file(file) from None
    seen: set[str] = set()
    for i, r in enumerate(resources if args.get("resources") else ()):
        if r.name in seen:
            raise InputError(f'Duplicate value: "{r.name}"', path=f"{rp}[{i}].name", file=file)
        seen.add(r.name)
    return NodeResourcesBalancedAllocationArgs(resources)
