"""NodePorts' Filter over every node at once (the twin of :mod:`.node_ports`): only nodes with
host ports in use are looked at."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....model.pod import Pod
from ...backend.cache import ClusterState
from ...fastpath.vector import U, FilterVerdict, Vectorised, single_reason
from ...framework.interface import CycleState
from ...framework.types import host_ports, ports_conflict
from .node_ports import ERR_REASON


def filter_node_ports(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict:
    wanted = state.get(plugin.name)
    if wanted is None:
        wanted = host_ports(pod)
    if not cs.nodes_with_ports:
        return single_reason(plugin.name, cs.no_fail, U, ERR_REASON)
    fail = np.zeros(cs.n, dtype=bool)
    for i in cs.nodes_with_ports:
        used = cs.infos[i].used_ports
        if any(ports_conflict(used, p) for p in wanted):
            fail[i] = True
    return single_reason(plugin.name, fail, U, ERR_REASON)


VECTORISED = Vectorised(filter=filter_node_ports)
