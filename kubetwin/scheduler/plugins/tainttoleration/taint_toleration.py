"""TaintToleration: NoSchedule/NoExecute taints must be tolerated; PreferNoSchedule ones cost score."""

from __future__ import annotations

from ....model.pod import Pod
from ...framework.interface import MAX_NODE_SCORE, CycleState, Plugin
from ...framework.status import SUCCESS, Status, unresolvable
from ...framework.types import NodeInfo
from ..helpers import default_normalize_score, tolerated, untolerated_taint
from . import NAME

ERR_REASON = "node(s) had untolerated taint(s)"


class TaintToleration(Plugin):
    name = NAME
    node_local = True
    reads_node_object_only = True

    @property
    def _cmp_ops(self) -> bool:
        return self.handle.gates.enabled("TaintTolerationComparisonOperators")

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if untolerated_taint(node.node.spec.taints, pod.spec.tolerations, self._cmp_ops) is None:
            return SUCCESS
        return unresolvable(ERR_REASON)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        # Only tolerations that can tolerate PreferNoSchedule taints count for scoring.
        state[self.name] = [t for t in pod.spec.tolerations if t.effect in ("", "PreferNoSchedule")]
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        tols = state.get(self.name)
        if tols is None:
            tols = [t for t in pod.spec.tolerations if t.effect in ("", "PreferNoSchedule")]
        cmp_ops = self._cmp_ops
        count = sum(1 for taint in node.node.spec.taints
                    if taint.effect == "PreferNoSchedule" and not tolerated(tols, taint, cmp_ops))
        return count, SUCCESS

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return SUCCESS
