"""PodTopologySpread's PreFilter, Filter and Score over every node at once (the twins of
:mod:`.plugin`): matching pods are counted per node once and kept in step by the cache
(``ClusterState.match_counts``), then summed per topology domain with ``bincount``.

Not an upstream module: upstream has only the plain plugin (``pkg/scheduler/framework/plugins/podtopologyspread``); this is its vectorised twin."""

from __future__ import annotations

import math
import weakref
from typing import Any, Callable

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
from .repeats import held_once, sequential_sums

SPREAD_STATE = NAME + "/vector"
#: selectors as bytes: the key under which matching pods are counted
SEL_ENCODER = msgspec.json.Encoder()


MAX_INT32 = 2**31 - 1


def spread_constraints(cs: ClusterState, pod: Pod, plugin: Any) -> list | None:
    """The pod's hard spread constraints with a cache key per selector — its own, or the
    profile's default ones on the selector of the Services and controllers selecting it."""
    written = pod.spec.topology_spread_constraints
    if not written:
        got = plugin.default_constraints(pod, "DoNotSchedule")
        return [] if got is None else [(c, got[1]) for c in got[0]]
    # pods of one template write the same constraints: parsed once per plugin and text (with the
    # pod's labels when some constraint reads them through matchLabelKeys)
    memo = _PARSED.get(plugin)
    if memo is None:
        memo = _PARSED[plugin] = {}
    labels = pod.metadata.labels
    text = SEL_ENCODER.encode(written)
    key = (text, SEL_ENCODER.encode(labels)) if any(c.match_label_keys for c in written) else text
    out = memo.get(key)
    if out is not None:
        return out
    cons = plugin.constraints(pod, "DoNotSchedule")
    raws = held_once(written, "DoNotSchedule")[0]   # as the plugin holds them: repeats once
    mlk = cs.gates.enabled("MatchLabelKeysInPodTopologySpread")
    out = []
    for c, raw in zip(cons, raws):
        extra = tuple(sorted((k, labels[k]) for k in raw.match_label_keys if k in labels)) if mlk else ()
        out.append((c, (SEL_ENCODER.encode(raw.label_selector), extra)))
    if len(memo) > 1024:
        memo.clear()
    memo[key] = out
    return out


#: per plugin: the hard constraints :func:`spread_constraints` parsed, by the pod's constraints
#: as written (the plugin's args and gates are fixed while it runs; callers never change the list)
_PARSED: "weakref.WeakKeyDictionary[Any, dict[Any, list]]" = weakref.WeakKeyDictionary()


def filter_pod_topology_spread(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict | None:
    """PreFilter's domain counts and Filter's skew check over all nodes at once: per constraint,
    a table over the key's values (plus the trailing 'absent' entry) of the domains that fail,
    gathered per node. Codes and reasons are worked out only when no node fits."""
    tables = spread_tables(cs, pod, plugin, state)
    if tables is None:
        return None
    codes, table = tables[0]
    fail = table[codes]
    for codes, table in tables[1:]:
        fail |= table[codes]
    return FilterVerdict(plugin.name, fail, explain=lambda: _spread_reasons(cs, tables))


def window_pod_topology_spread(cs: ClusterState, pod: Pod, plugin: Any,
                               state: CycleState) -> Callable[[int, int], np.ndarray] | None:
    """:func:`filter_pod_topology_spread`'s failures over the nodes ``lo`` to ``hi`` only: the
    domain tables are the whole cluster's, the gather per node is the window's."""
    tables = spread_tables(cs, pod, plugin, state)
    if tables is None:
        return None

    def fails(lo: int, hi: int) -> np.ndarray:
        codes, table = tables[0]
        fail = table[codes[lo:hi]]
        for codes, table in tables[1:]:
            fail |= table[codes[lo:hi]]
        return fail

    return fails


def _spread_reasons(cs: ClusterState, tables: list[tuple[np.ndarray, np.ndarray]]) -> tuple[
        np.ndarray, np.ndarray, Callable[[int], tuple[str, ...]]]:
    """Each failing node's reason: the first constraint it fails, for a missing label (UU) or for
    the skew (U)."""
    n = cs.n
    fail = np.zeros(n, dtype=bool)
    key = np.zeros(n, dtype=np.int64)  # 1: missing label (UU), 2: skew (U)
    for codes, table in tables:
        missing = codes < 0
        new_missing = missing & ~fail
        key[new_missing] = 1
        fail |= new_missing
        new_skew = table[codes] & ~missing & ~fail
        key[new_skew] = 2
        fail |= new_skew
    code = np.where(key == 1, UU, U).astype(np.int8)
    reasons = ((), (pts.ERR_REASON_NODE_LABEL_NOT_MATCH,), (pts.ERR_REASON_CONSTRAINTS_NOT_MATCH,))
    return code, key, lambda k: reasons[k]


def spread_tables(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> list[
        tuple[np.ndarray, np.ndarray]] | None:
    """Per hard constraint: the nodes' codes for its topology key and the table, over the key's
    values plus a trailing 'absent' entry, of where a node fails — its domain's matching pods plus
    the pod's own match, less the fewest of any eligible domain, above ``maxSkew``; or no label
    (the absent entry: True). None when the plugin must run node by node."""
    cons = state.get(SPREAD_STATE)
    if cons is None:
        return None
    n = cs.n
    ns = pod.metadata.namespace
    keys = tuple(c.topology_key for c, _ in cons)
    has_all: np.ndarray | None = None
    aff: np.ndarray | None = None
    taint_fail: np.ndarray | None = None
    out = []
    for c, sel_key in cons:
        honour_aff = c.node_affinity_policy == "Honor" and _requires_nodes(pod)
        honour_taints = False
        if c.node_taints_policy == "Honor":
            if taint_fail is None:
                taint_fail = filter_taint_toleration(cs, pod, plugin, state).fail
            honour_taints = taint_fail is not cs.no_fail   # some node's taints are not tolerated
        codes = cs.labels.codes_of(c.topology_key)
        nvals = len(cs.labels.values.get(c.topology_key, ()))
        if c.selector.empty:
            counts = None
        else:
            counts = cs.match_counts(ns, sel_key, c.selector.matches)
        if not honour_aff and not honour_taints:
            # eligible nodes: those with every constraint's key: domain sums kept between cycles
            present, dom = _domains(cs, (ns, sel_key, keys, c.topology_key), keys, codes, nvals, counts)
        else:
            if has_all is None:
                has_all = np.ones(n, dtype=bool)
                for k in keys:
                    has_all &= cs.labels.codes_of(k) >= 0
            included = has_all.copy()
            if honour_aff:
                if aff is None:
                    aff = required_affinity_mask(cs, pod)
                included &= aff
            if honour_taints:
                assert taint_fail is not None
                included &= ~taint_fail
            present, dom = _domain_sums(codes[included], None if counts is None else counts[included], nvals)
        n_dom = np.count_nonzero(present)
        min_match = int(np.minimum.reduce(dom[present])) if n_dom else MAX_INT32
        if n_dom < c.min_domains:
            min_match = 0
        self_match = 1 if c.selector.matches(pod.metadata.labels) else 0
        table = np.ones(nvals + 1, dtype=bool)   # the trailing entry: no label
        if nvals:
            table[:nvals] = dom + self_match - min_match > c.max_skew
        out.append((codes, table))
    return out


def _requires_nodes(pod: Pod) -> bool:
    """The pod asks for some nodes (nodeSelector or required node affinity): honouring it may
    leave nodes out of the domains."""
    if pod.spec.node_selector:
        return True
    aff = pod.spec.affinity
    return aff is not None and aff.node_affinity is not None \
        and aff.node_affinity.required_during_scheduling_ignored_during_execution is not None


def _domain_sums(inc_codes: np.ndarray, inc_counts: np.ndarray | None, nvals: int) -> tuple[np.ndarray, np.ndarray]:
    """(domains with an eligible node, matching pods per domain) over the eligible nodes."""
    if not nvals:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
    present = np.bincount(inc_codes, minlength=nvals) > 0
    if inc_counts is None:
        return present, np.zeros(nvals, dtype=np.int64)
    return present, np.bincount(inc_codes, weights=inc_counts, minlength=nvals).astype(np.int64)


class _Domains:
    __slots__ = ("generation", "present", "dom", "counts", "eligible", "codes")

    def __init__(self, generation: int, present: np.ndarray, dom: np.ndarray, counts: np.ndarray | None,
                 eligible: np.ndarray, codes: np.ndarray):
        self.generation = generation
        self.present, self.dom = present, dom
        self.counts = counts        # the matching pods per node the sums were taken from
        self.eligible = eligible    # nodes with every constraint's key
        self.codes = codes


_DOMAINS: "weakref.WeakKeyDictionary[ClusterState, dict[Any, _Domains]]" = weakref.WeakKeyDictionary()


def _domains(cs: ClusterState, key: Any, keys: tuple[str, ...], codes: np.ndarray, nvals: int,
             counts: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_domain_sums` over the nodes with every key in ``keys``, kept from one cycle to the
    next: a bind or removal changes one node's matching pods, added to its domain's sum; any
    change that is not one node's own (labels) sums again."""
    memo = _DOMAINS.get(cs)
    if memo is None:
        memo = _DOMAINS[cs] = {}
    e = memo.get(key)
    gen = cs.generation
    if e is not None and e.generation != gen and e.codes is codes:
        changed = cs.changed_since(e.generation)
        if changed is None:
            e = None
        elif counts is not None and e.counts is not None:
            for i in changed:
                now = counts.item(i)
                d = now - e.counts.item(i)
                if d:
                    e.counts[i] = now
                    if e.eligible.item(i):
                        e.dom[codes.item(i)] += d
            e.generation = gen
        else:
            e.generation = gen
    if e is None or e.codes is not codes or e.generation != gen:
        eligible = np.ones(cs.n, dtype=bool)
        for k in keys:
            eligible &= cs.labels.codes_of(k) >= 0
        present, dom = _domain_sums(codes[eligible], None if counts is None else counts[eligible], nvals)
        if len(memo) > 256:
            memo.clear()
        e = memo[key] = _Domains(gen, present, dom, None if counts is None else counts.copy(), eligible, codes)
    return e.present, e.dom


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
        cons, order = plugin.constraints_in_order(pod, "ScheduleAnyway")
        if not cons:
            return SKIPPED
        raws = held_once(pod.spec.topology_spread_constraints, "ScheduleAnyway")[0]
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
        order = None
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
    terms: list[np.ndarray] = []   # with repeated constraints: each one's term, added in order below
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
        if order is not None:
            terms.append(np.where(has, cnt * weight + (c.max_skew - 1), 0.0))
            continue
        total = np.where(has, total + (cnt * weight + (c.max_skew - 1)), total)
    if order is not None:
        total = sequential_sums(terms, order)
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


VECTORISED = Vectorised(filter=filter_pod_topology_spread, filter_window=window_pod_topology_spread,
                        score=score_pod_topology_spread,
                        pre_filter=pre_filter_spread, pre_filter_is_skip=spread_is_skip)
