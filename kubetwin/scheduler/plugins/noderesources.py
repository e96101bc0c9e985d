"""NodeResourcesFit: does the pod's request fit what the node has left, and how full would
the node be (LeastAllocated / MostAllocated / RequestedToCapacityRatio)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ...errors import InputError
from ...model.pod import Pod, is_extended_resource
from ..framework.interface import CycleState, Plugin, register
from ..framework.resources import pod_request_amounts
from ..framework.status import SUCCESS, Code, Status
from ..framework.types import NodeInfo
from . import resource_allocation as ra
from .dra_extended import device_class_for

SCORING_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
_FIXED = ("cpu", "memory", "ephemeral-storage")


@dataclass(frozen=True)
class NodeResourcesFitArgs:
    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()
    strategy: str = "LeastAllocated"
    resources: tuple[ra.ResourceSpec, ...] = ra.DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] = ()


def parse_fit_args(raw: Mapping[str, Any] | None, path: str) -> NodeResourcesFitArgs:
    raw = raw or {}
    p = (path + "." if path else "")
    ignored = raw.get("ignoredResources") or []
    groups = raw.get("ignoredResourceGroups") or []
    for i, g in enumerate(groups):
        if "/" in str(g):
            raise InputError(f'Invalid value: "{g}": resource group name can\'t contain \'/\'',
                             path=f"{p}ignoredResourceGroups[{i}]")
    strategy = raw.get("scoringStrategy") or {}
    stype = strategy.get("type", "LeastAllocated")
    if stype not in SCORING_STRATEGIES:
        raise InputError(f'Unsupported value: "{stype}": supported values: {", ".join(SCORING_STRATEGIES)}',
                         path=f"{p}scoringStrategy.type")
    resources = ra.parse_resources(strategy.get("resources"), f"{p}scoringStrategy.resources")
    shape: tuple[tuple[int, int], ...] = ()
    if stype == "RequestedToCapacityRatio":
        rtcr = strategy.get("requestedToCapacityRatio") or {}
        points = rtcr.get("shape") or []
        if not points:
            raise InputError("Required value: at least one point must be specified",
                             path=f"{p}scoringStrategy.requestedToCapacityRatio.shape")
        out = []
        for i, pt in enumerate(points):
            pp = f"{p}scoringStrategy.requestedToCapacityRatio.shape[{i}]"
            u, s = pt.get("utilization", 0), pt.get("score", 0)
            if not isinstance(u, int) or not 0 <= u <= 100:
                raise InputError(f"Invalid value: {u!r}: not in valid range [0, 100]", path=f"{pp}.utilization")
            if out and u <= out[-1][0]:
                raise InputError(f"Invalid value: {u!r}: utilization values must be sorted in increasing order",
                                 path=f"{pp}.utilization")
            if not isinstance(s, int) or not 0 <= s <= ra.MAX_CUSTOM_PRIORITY_SCORE:
                raise InputError(f"Invalid value: {s!r}: not in valid range [0, 10]", path=f"{pp}.score")
            out.append((u, s))
        shape = tuple(out)
    return NodeResourcesFitArgs(frozenset(ignored), frozenset(groups), stype, resources, shape)


def insufficient_resources(pod_request: Mapping[str, int], node: NodeInfo, args: NodeResourcesFitArgs,
                           handle: Any) -> Status:
    """``fitsRequest``: every resource the node lacks; UU when one request exceeds the node's total."""
    reasons: list[str] = []
    unresolvable = False
    alloc, used = node.allocatable, node.requested
    if len(node.pods) + 1 > alloc.get("pods", 0):
        reasons.append("Too many pods")
    scalars = {k: v for k, v in pod_request.items() if k not in _FIXED and ra.is_scalar_resource_name(k)}
    if not any(pod_request.get(k, 0) for k in _FIXED) and not scalars:
        return Status(Code.Unschedulable, tuple(reasons)) if reasons else SUCCESS
    for name in _FIXED:
        want = pod_request.get(name, 0)
        if want > 0 and want > alloc.get(name, 0) - used.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable |= want > alloc.get(name, 0)
    dra = handle.gates.enabled("DRAExtendedResource")
    for name, want in scalars.items():
        if want == 0:
            continue
        if is_extended_resource(name):
            if name in args.ignored_resources or name.split("/", 1)[0] in args.ignored_resource_groups:
                continue
        if dra and alloc.get(name, 0) <= 0 and device_class_for(handle, name) is not None:
            continue  # left to DynamicResources
        if want > alloc.get(name, 0) - used.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable |= want > alloc.get(name, 0)
    if not reasons:
        return SUCCESS
    return Status(Code.UnschedulableAndUnresolvable if unresolvable else Code.Unschedulable, tuple(reasons))


@register
class NodeResourcesFit(Plugin):
    name = "NodeResourcesFit"

    def __init__(self, args: NodeResourcesFitArgs, handle: Any):
        super().__init__(args, handle)
        if args.strategy == "LeastAllocated":
            self._scorer = ra.least_allocated(args.resources)
        elif args.strategy == "MostAllocated":
            self._scorer = ra.most_allocated(args.resources)
        else:
            self._scorer = ra.requested_to_capacity_ratio(args.resources, args.shape)

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any] | None, path: str) -> NodeResourcesFitArgs:
        return parse_fit_args(raw, path)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]):
        state[self.name] = pod_request_amounts(pod, self.handle.gates, status=False)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        req = state.get(self.name)
        if req is None:
            req = pod_request_amounts(pod, self.handle.gates, status=False)
        return insufficient_resources(req, node, self.args, self.handle)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        state[self.name + "/score"] = ra.pod_request_list(pod, self.handle.gates, self.args.resources, False)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        reqs = state.get(self.name + "/score")
        if reqs is None:
            reqs = ra.pod_request_list(pod, self.handle.gates, self.args.resources, False)
        return ra.score_node(self._scorer, node, self.args.resources, reqs, False, self.handle), SUCCESS
