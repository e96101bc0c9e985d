"""NodeUnschedulable: cordoned nodes (``spec.unschedulable``) take only pods that tolerate it."""

from __future__ import annotations

from ....model.node import Taint
from ....model.pod import Pod
from ...framework.interface import CycleState, Plugin
from ...framework.status import SUCCESS, Status, unresolvable
from ...framework.types import NodeInfo
from ..helpers import tolerated
from . import NAME

ERR_REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


class NodeUnschedulable(Plugin):
    name = NAME
    node_local = True
    reads_node_object_only = True

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if not node.node.spec.unschedulable:
            return SUCCESS
        cmp_ops = self.handle.gates.enabled("TaintTolerationComparisonOperators")
        if tolerated(pod.spec.tolerations, UNSCHEDULABLE_TAINT, cmp_ops):
            return SUCCESS
        return unresolvable(ERR_REASON)
