"""NodeResourcesFit: does the pod's request fit what the node has left, and how full would
the node be (LeastAllocated / MostAllocated / RequestedToCapacityRatio) —
``pkg/scheduler/framework/plugins/noderesources/fit.go``."""

from __future__ import annotations

from typing import Any, Mapping

from ....model.pod import Pod, is_extended_resource
from ...framework.interface import CycleState, Plugin
from ...framework.resources import is_scalar_resource_name, pod_request_amounts
from ...framework.status import SUCCESS, Code, Status
from ...framework.types import NodeInfo
from ..dynamicresources.extended import device_class_for
from . import FIT
from . import resource_allocation as ra
from .args import MOST_ALLOCATED, LEAST_ALLOCATED, NodeResourcesFitArgs, parse_fit_args

_FIXED = ("cpu", "memory", "ephemeral-storage")


def insufficient_resources(pod_request: Mapping[str, int], node: NodeInfo, args: NodeResourcesFitArgs,
                           handle: Any) -> Status:
    """``fitsRequest``: every resource the node lacks; UU when one request exceeds the node's total."""
    reasons: list[str] = []
    unresolvable = False
    alloc, used = node.allocatable, node.requested
    if len(node.pods) + 1 > alloc.get("pods", 0):
        reasons.append("Too many pods")
    scalars = {k: v for k, v in pod_request.items() if k not in _FIXED and is_scalar_resource_name(k)}
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


class NodeResourcesFit(Plugin):
    name = FIT
    node_local = True

    def __init__(self, args: NodeResourcesFitArgs, handle: Any):
        super().__init__(args, handle)
        if args.strategy == LEAST_ALLOCATED:
            self._scorer = ra.least_allocated(args.resources)
        elif args.strategy == MOST_ALLOCATED:
            self._scorer = ra.most_allocated(args.resources)
        else:
            self._scorer = ra.requested_to_capacity_ratio(args.resources, args.shape)

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any] | None, path: str, file: str | None = None) -> NodeResourcesFitArgs:
        return parse_fit_args(raw, path, file)

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
