"""TaintToleration's Filter and Score over every node at once (the twins of :mod:`.taint_toleration`):
nodes share few distinct taint lists, so each list is judged once."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....model.pod import Pod
from ...backend.cache import ClusterState
from ...fastpath.vector import SKIPPED, UU, FilterVerdict, ScoreVector, Vectorised, default_normalize, single_reason
from ...framework.interface import MAX_NODE_SCORE, CycleState
from ..helpers import tolerated, untolerated_taint
from .taint_toleration import ERR_REASON


def filter_taint_toleration(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict:
    cmp_ops = cs.gates.enabled("TaintTolerationComparisonOperators")
    table = [untolerated_taint(list(ts), pod.spec.tolerations, cmp_ops) is not None for ts in cs.taint_sets]
    fail = np.array(table, dtype=bool)[cs.taint_set_of] if any(table) else cs.no_fail
    return single_reason(plugin.name, fail, UU, ERR_REASON)


def score_taint_toleration(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    """Untolerated PreferNoSchedule taints per node, reversed; with no such taint anywhere every
    node scores alike and the plugin is left out (:data:`SKIPPED`)."""
    if not cs.any_prefer_no_schedule:
        return SKIPPED
    cmp_ops = cs.gates.enabled("TaintTolerationComparisonOperators")
    tols = [t for t in pod.spec.tolerations if t.effect in ("", "PreferNoSchedule")]
    table = [sum(1 for t in ts if t.effect == "PreferNoSchedule" and not tolerated(tols, t, cmp_ops))
             for ts in cs.taint_sets]
    if not any(table):
        raw = np.zeros(len(idx), dtype=np.int64)
        return ScoreVector(raw, np.full(len(idx), MAX_NODE_SCORE, dtype=np.int64))
    raw = np.array(table, dtype=np.int64)[cs.taint_set_of[idx]]
    return ScoreVector(raw, default_normalize(raw, True))


VECTORISED = Vectorised(filter=filter_taint_toleration, score=score_taint_toleration)
