"""NodeName: a pod that names its node fits only there."""

from __future__ import annotations

from ....model.pod import Pod
from ...framework.interface import CycleState, Plugin
from ...framework.status import SUCCESS, Status, unresolvable
from ...framework.types import NodeInfo
from . import NAME

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(Plugin):
    name = NAME
    node_local = True
    reads_node_object_only = True

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if pod.spec.node_name and pod.spec.node_name != node.name:
            return unresolvable(ERR_REASON)
        return SUCCESS
