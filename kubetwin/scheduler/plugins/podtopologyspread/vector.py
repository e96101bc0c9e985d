"""PodTopologySpread's PreFilter, Filter and Score over every node at once (the twins of
:mod:`.plugin`): matching pods are counted per node once and kept in step by the cache
(``ClusterState.match_counts``), then summed per topology domain with ``bincount``.

Not an upstream module: upstream has only the plain plugin (``pkg/scheduler/framework/plugins/podtopologyspread``); this is its vectorised twin."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import numpy as np

from ....model.pod import Pod
from ...backend.cache import ClusterState
from ...fastpath.vector import SKIPPED, UU, FilterVerdict, ScoreVector, U, Vectorised
from ...framework.interface import MAX_NODE_SCORE, CycleState
from ...framework.status import SKIP, SUCCESS, Status
from ..nodeaffinity.vector import required_affinity_mask
from ..tainttoleration.vector import filter_taint_toleration
from . import NAME
from . import plugin as pts

SPREAD_STATE = NAME + "/vector"
#: selectors as bytes: the key under which matching pods are counted
SEL_ENCODER = msgspec.json.Encoder()


MAX_INT32 = 2**31 - 1


def spread_constraints(cs: ClusterState, pod: Pod, plugin: Any) -> list | None:
    """The pod's hard spread constraints with a cache key per selector — its own, or the
    profile's default ones on the selector of the Services and controllers selecting it."""
    if not pod.spec.topology_spread_constraints:
        got = plugin.default_constraints(pod, "DoNotSchedule")
        return [] if got is None else [(c, got[1]) for c in got[0]]
    cons = plugin.constraints(pod, "DoNotSchedule")
    raws = [c for c in pod.spec.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule"]
    mlk = cs.gates.enabled("MatchLabelKeysInPodTopologySpread")
    labels = pod.metadata.labels
    out = []
    for c, raw in zip(cons, raws):
        extra = tuple(sorted((k, labels[k]) for k in raw.match_label_keys if k in labels)) if mlk else ()
        out.append((c, (SEL_ENCODER.encode(raw.label_selector), extra)))
    return out


def filter_pod_topology_spread(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict | None:
    """PreFilter's domain counts and Filter's skew check over all nodes at once."""
    cons = state.get(SPREAD_STATE)
    if cons is None:
        return None
    n = cs.n
    ns = pod.metadata.namespace
    has_all = np.ones(n, dtype=bool)
    for c, _ in cons:
        has_all &= cs.labels.codes_of(c.topology_key) >= 0
    aff = taint_ok = None
    fail = np.zeros(n, dtype=bool)
    key = np.zeros(n, dtype=np.int64)  # 1: missing label (UU), 2: skew (U)
    for c, sel_key in cons:
        included = has_all.copy()
        if c.node_affinity_policy == "Honor":
            if aff is None:
                aff = required_affinity_mask(cs, pod)
            included &= aff
        if c.node_taints_policy == "Honor":
            if taint_ok is None:
                taint_ok = ~filter_taint_toleration(cs, pod, plugin, state).fail
            included &= taint_ok
        codes = cs.labels.codes_of(c.topology_key)
        nvals = len(cs.labels.values.get(c.topology_key, ()))
        if c.selector.empty:
            counts = np.zeros(n, dtype=np.int64)
        else:
            counts = cs.match_counts(ns, sel_key, c.selector.matches)
        inc_codes = codes[included]
        present = np.bincount(inc_codes, minlength=nvals) > 0 if nvals else np.zeros(0, dtype=bool)
        dom = np.bincount(inc_codes, weights=counts[included], minlength=nvals).astype(np.int64) \
            if nvals else np.zeros(0, dtype=np.int64)
        n_dom = int(present.sum())
        min_match = int(dom[present].min()) if n_dom else MAX_INT32
        if n_dom < c.min_domains:
            min_match = 0
        self_match = 1 if c.selector.matches(pod.metadata.labels) else 0
        missing = codes < 0
        # the skew check per domain, then gathered per node; the trailing entry is the 'absent'
        # code -1 (a node without the label fails for that reason, not for skew)
        dom_skew = np.zeros(nvals + 1, dtype=bool)
        if nvals:
            dom_skew[:nvals] = dom + self_match - min_match > c.max_skew
        skew = dom_skew[codes]
        new_missing = missing & ~fail
        key[new_missing] = 1
        fail |= new_missing
        new_skew = skew & ~missing & ~fail
        key[new_skew] = 2
        fail |= new_skew
    code = np.where(key == 1, UU, U).astype(np.int8)
    reasons = ((), (pts.ERR_REASON_NODE_LABEL_NOT_MATCH,), (pts.ERR_REASON_CONSTRAINTS_NOT_MATCH,))
    return FilterVerdict(plugin.name, fail, code, key, lambda k: reasons[k])


def score_pod_topology_spread(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    """Soft spread (``ScheduleAnyway``) over the scored nodes at once: domains from the scored
    nodes, matching pods counted per domain over every included node, log-weighted sums rounded
    as Go's ``math.Round``, then reversed against the highest and lowest sum.

    The pod's own constraints count only nodes that carry every topology key; the profile's
    default constraints (on the selector of the Services and controllers selecting the pod)
    under ``System`` defaulting also score nodes missing a key, whose domain is the empty value.
    """
    if spread_is_skip(cs, pod, plugin):
        return SKIPPED
    ns = pod.metadata.namespace
    if pod.spec.topology_spread_constraints:
        cons = plugin.constraints(pod, "ScheduleAnyway")
        if not cons:
            return SKIPPED
        raws = [c for c in pod.spec.topology_spread_constraints if c.when_unsatisfiable == "ScheduleAnyway"]
        mlk = cs.gates.enabled("MatchLabelKeysInPodTopologySpread")
        labels = pod.metadata.labels
        keys = [(SEL_ENCODER.encode(r.label_selector),
                 tuple(sorted((k, labels[k]) for k in r.match_label_keys if k in labels)) if mlk else ())
                for r in raws]
        require_all = True
    else:
        got = plugin.default_constraints(pod, "ScheduleAnyway")
        if got is None:
            return SKIPPED
        cons, key = got
        keys = [key] * len(cons)
        require_all = not plugin.system_defaulted
    n, m = cs.n, len(idx)
    codes = [cs.labels.codes_of(c.topology_key) for c in cons]
    has_all = np.ones(n, dtype=bool)
    if require_all:
        for cd in codes:
            has_all &= cd >= 0
    valid = has_all[idx]
    n_valid = int(valid.sum())
    inclusion = cs.gates.enabled("NodeInclusionPolicyInPodTopologySpread")
    aff = required_affinity_mask(cs, pod)
    taint_ok = None
    base = has_all if inclusion else has_all & aff
    total = np.zeros(m, dtype=np.float64)
    for c, sel_key, cd in zip(cons, keys, codes):
        if c.selector.empty:
            match = np.zeros(n, dtype=np.int64)
        else:
            match = cs.match_counts(ns, sel_key, c.selector.matches)
        node_codes = cd[idx]
        if c.topology_key == pts.HOSTNAME:
            weight = math.log(n_valid + 2)
            cnt = match[idx]
        else:
            nvals = len(cs.labels.values.get(c.topology_key, ()))
            if not require_all:
                # a node without the key sits in the domain of the empty value
                empty = cs.labels.code_of(c.topology_key, "")
                if empty is None:
                    empty, nvals = nvals, nvals + 1
                cd = np.where(cd < 0, empty, cd)
            eff_codes = cd[idx]
            present = np.bincount(eff_codes[valid], minlength=nvals) > 0 if nvals else np.zeros(0, dtype=bool)
            weight = math.log(int(present.sum()) + 2)
            included = base.copy()
            if inclusion:
                if c.node_affinity_policy == "Honor":
                    included &= aff
                if c.node_taints_policy == "Honor":
                    if taint_ok is None:
                        taint_ok = ~filter_taint_toleration(cs, pod, plugin, CycleState()).fail
                    included &= taint_ok
            if nvals:
                inc_codes = cd[included]
                dom = np.bincount(inc_codes, weights=match[included], minlength=nvals).astype(np.int64)
                dom[~present] = 0
                cnt = dom[np.where(node_codes >= 0, node_codes, 0)]
            else:
                cnt = np.zeros(m, dtype=np.int64)
        has = node_codes >= 0
        total = np.where(has, total + (cnt * weight + (c.max_skew - 1)), total)
    raw = np.floor(total + 0.5).astype(np.int64)
    raw[~valid] = 0
    if n_valid:
        lo, hi = int(raw[valid].min()), max(int(raw[valid].max()), 0)
    else:
        lo, hi = 2**63 - 1, 0
    if hi == 0:
        norm = np.full(m, MAX_NODE_SCORE, dtype=np.int64)
    else:
        norm = MAX_NODE_SCORE * (hi + lo - raw) // hi
    norm[~valid] = 0
    return ScoreVector(raw, norm)


def spread_is_skip(cs: ClusterState, pod: Pod, plugin: Any) -> bool:
    """Nothing to do: no constraints, and no objects a default constraint would be built from."""
    if pod.spec.topology_spread_constraints:
        return False
    objs = cs.handle.objects
    return not (objs.get("Service") or objs.get("ReplicationController") or objs.get("ReplicaSet")
                or objs.get("StatefulSet"))


def pre_filter_spread(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> Status | None:
    """PreFilter: the hard constraints with a counting key per selector (None: the plugin's own)."""
    cons = spread_constraints(cs, pod, plugin)
    if cons is None:
        return None
    if not cons:
        return SKIP
    state[SPREAD_STATE] = cons
    return SUCCESS


VECTORISED = Vectorised(filter=filter_pod_topology_spread, score=score_pod_topology_spread,
                        pre_filter=pre_filter_spread, pre_filter_is_skip=spread_is_skip)
