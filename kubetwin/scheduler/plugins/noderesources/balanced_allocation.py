"""NodeResourcesBalancedAllocation: prefer nodes whose resources are used evenly with the pod
(``pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go``)."""

from __future__ import annotations

from typing import Any, Mapping

from ....model.pod import Pod
from ...framework.interface import CycleState, Plugin
from ...framework.status import SKIP, SUCCESS, Status
from ...framework.types import NodeInfo
from . import BALANCED_ALLOCATION
from . import resource_allocation as ra
from .args import NodeResourcesBalancedAllocationArgs, parse_balanced_allocation_args



class NodeResourcesBalancedAllocation(Plugin):
    name = BALANCED_ALLOCATION

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any] | None, path: str,
                   file: str | None = None) -> NodeResourcesBalancedAllocationArgs:
        return parse_balanced_allocation_args(raw, path, file)

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
