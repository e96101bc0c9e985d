"""NodeAffinity's Filter and Score over every node at once (the twins of :mod:`.node_affinity`):
a requirement on one label key is judged once per distinct value of the key."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ....model.pod import NodeSelectorTerm, Pod
from ...backend.cache import ClusterState
from ...fastpath.vector import SKIPPED, UU, FilterVerdict, ScoreVector, Vectorised, codes, default_normalize, single_reason
from ...framework.interface import CycleState
from ...labels import requirement_matcher
from .node_affinity import ERR_REASON_ENFORCED, ERR_REASON_POD, pod_preferred


def term_mask(cs: ClusterState, term: NodeSelectorTerm) -> np.ndarray:
    """``node_selector_term_matcher`` for every node: empty or invalid terms match nothing."""
    if not term.match_expressions and not term.match_fields:
        return np.zeros(cs.n, dtype=bool)
    mask = np.ones(cs.n, dtype=bool)
    for req in term.match_expressions:
        m = requirement_matcher(req.key, req.operator, req.values)
        if m is None:
            return np.zeros(cs.n, dtype=bool)
        mask &= cs.labels.evaluate(req.key, m)
    for req in term.match_fields:
        if req.key != "metadata.name" or req.operator not in ("In", "NotIn") or len(req.values) != 1:
            return np.zeros(cs.n, dtype=bool)
        eq = np.zeros(cs.n, dtype=bool)
        i = cs.index.get(req.values[0])
        if i is not None:
            eq[i] = True
        mask &= eq if req.operator == "In" else ~eq
    return mask


def terms_mask(cs: ClusterState, terms: Sequence[NodeSelectorTerm]) -> np.ndarray:
    """Terms are ORed; no terms match nothing."""
    out = np.zeros(cs.n, dtype=bool)
    for t in terms:
        out |= term_mask(cs, t)
    return out


def required_affinity_mask(cs: ClusterState, pod: Pod) -> np.ndarray:
    """``GetRequiredNodeAffinity``: nodeSelector AND the required terms (when given)."""
    mask = np.ones(cs.n, dtype=bool)
    for k, v in pod.spec.node_selector.items():
        code = cs.labels.code_of(k, v)
        if code is None:
            return np.zeros(cs.n, dtype=bool)
        mask &= cs.labels.codes_of(k) == code
    aff = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    req = aff.required_during_scheduling_ignored_during_execution if aff else None
    if req is not None:
        mask &= terms_mask(cs, req.node_selector_terms)
    return mask


def filter_node_affinity(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict:
    added = plugin.args.added_affinity
    req = added.required_during_scheduling_ignored_during_execution if added else None
    aff = pod.spec.affinity
    if req is None and not pod.spec.node_selector and (
            aff is None or aff.node_affinity is None
            or aff.node_affinity.required_during_scheduling_ignored_during_execution is None):
        return single_reason(plugin.name, cs.no_fail, UU, ERR_REASON_POD)  # nothing required
    key = np.zeros(cs.n, dtype=np.int64)
    fail = np.zeros(cs.n, dtype=bool)
    if req is not None:
        enforced = ~terms_mask(cs, req.node_selector_terms)
        fail |= enforced
    pod_fail = ~required_affinity_mask(cs, pod) & ~fail
    key[pod_fail] = 1
    fail |= pod_fail
    reasons = ((ERR_REASON_ENFORCED,), (ERR_REASON_POD,))
    return FilterVerdict(plugin.name, fail, codes(cs.n, UU), key, lambda k: reasons[k])


def score_node_affinity(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    pref = pod_preferred(pod)
    added = plugin.args.added_affinity
    added_pref = added.preferred_during_scheduling_ignored_during_execution if added else []
    if pref is None and not added_pref:
        return SKIPPED
    total = np.zeros(cs.n, dtype=np.int64)
    for t in list(added_pref) + list(pref or []):
        if t.weight == 0 or not (t.preference.match_expressions or t.preference.match_fields):
            continue
        total += np.where(term_mask(cs, t.preference), t.weight, 0)
    raw = total[idx]
    return ScoreVector(raw, default_normalize(raw, False))


VECTORISED = Vectorised(filter=filter_node_affinity, score=score_node_affinity)
