"""NodeUnschedulable's Filter over every node at once (the twin of :mod:`.node_unschedulable`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....model.pod import Pod
from ...backend.cache import ClusterState
from ...fastpath.vector import UU, FilterVerdict, Vectorised, single_reason
from ...framework.interface import CycleState
from ..helpers import tolerated
from .node_unschedulable import ERR_REASON, UNSCHEDULABLE_TAINT


def filter_node_unschedulable(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict:
    fail = cs.unschedulable if cs.any_unschedulable else cs.no_fail
    if cs.any_unschedulable and tolerated(pod.spec.tolerations, UNSCHEDULABLE_TAINT,
                                cs.gates.enabled("TaintTolerationComparisonOperators")):
        fail = np.zeros(cs.n, dtype=bool)
    return single_reason(plugin.name, fail, UU, ERR_REASON)


VECTORISED = Vectorised(filter=filter_node_unschedulable)
