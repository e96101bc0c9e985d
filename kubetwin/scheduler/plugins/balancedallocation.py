"""NodeResourcesBalancedAllocation: prefer nodes whose resources are used evenly with the pod."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ...model.pod import Pod
from ..framework.interface import CycleState, Plugin, register
from ..framework.status import SKIP, SUCCESS, Status
from ..framework.types import NodeInfo
from . import resource_allocation as ra


@dataclass(frozen=True)
class NodeResourcesBalancedAllocationArgs:
    resources: tuple[ra.ResourceSpec, ...] = ra.DEFAULT_RESOURCES


@register
class NodeResourcesBalancedAllocation(Plugin):
    name = "NodeResourcesBalancedAllocation"

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any] | None, path: str) -> NodeResourcesBalancedAllocationArgs:
        raw = raw or {}
        return NodeResourcesBalancedAllocationArgs(
            ra.parse_resources(raw.get("resources"), (path + "." if path else "") + "resources"))

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        reqs = ra.pod_request_list(pod, self.handle.gates, self.args.resources, True)
        if not any(reqs):
            return SKIP  # a best-effort pod changes no balance
        state[self.name] = reqs
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        reqs = state.get(self.name)
        if reqs is None:
            reqs = ra.pod_request_list(pod, self.handle.gates, self.args.resources, True)
        return ra.score_node(ra.balanced, node, self.args.resources, reqs, True, self.handle), SUCCESS
