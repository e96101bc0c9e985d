"""NodeName's Filter over every node at once (the twin of :mod:`.node_name`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....model.pod import Pod
from ...backend.cache import ClusterState
from ...fastpath.vector import UU, FilterVerdict, Vectorised, single_reason
from ...framework.interface import CycleState
from .node_name import ERR_REASON


def filter_node_name(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict:
    if not pod.spec.node_name:
        fail = cs.no_fail
    else:
        fail = np.ones(cs.n, dtype=bool)
        i = cs.index.get(pod.spec.node_name)
        if i is not None:
            fail[i] = False
    return single_reason(plugin.name, fail, UU, ERR_REASON)


VECTORISED = Vectorised(filter=filter_node_name)
