"""NodeName: a pod that names its node fits only there."""

from __future__ import annotations

from ...model.pod import Pod
from ..framework.interface import CycleState, Plugin, register
from ..framework.status import SUCCESS, Status, unresolvable
from ..framework.types import NodeInfo

ERR_REASON = "node(s) didn't match the requested node name"


@register
class NodeName(Plugin):
    name = "NodeName"

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if pod.spec.node_name and pod.spec.node_name != node.name:
            return unresolvable(ERR_REASON)
        return SUCCESS
