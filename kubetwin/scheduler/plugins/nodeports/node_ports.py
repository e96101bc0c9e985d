"""NodePorts: a host port (protocol, IP, port) can be taken by one pod per node."""

from __future__ import annotations

from ....model.pod import Pod
from ...framework.interface import CycleState, Plugin
from ...framework.status import SKIP, SUCCESS, Status, unschedulable
from ...framework.types import NodeInfo, host_ports, ports_conflict
from . import NAME

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


class NodePorts(Plugin):
    name = NAME
    node_local = True

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]):
        ports = host_ports(pod)
        if not ports:
            return None, SKIP
        state[self.name] = ports
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        wanted = state.get(self.name)
        if wanted is None:
            wanted = host_ports(pod)
        if any(ports_conflict(node.used_ports, p) for p in wanted):
            return unschedulable(ERR_REASON)
        return SUCCESS
