"""Filter and Score of the node-local default plugins over every node at once.

Each function here computes, with numpy over a :class:`ClusterState`, exactly what the
plugin object computes node by node (the property tests compare both on random clusters).
A function returns ``None`` when the pod needs something the arrays do not model (for
example extended resources backed by DRA): the scheduler then runs that plugin per node.
Amounts are int64; ratios are formed in float64 in the same order of operations as the
plugins, so results are identical for amounts below 2**53.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..model.pod import NodeSelectorTerm, Pod, is_extended_resource
from .framework.interface import MAX_NODE_SCORE, CycleState
from .framework.status import Code, Status
from .framework.types import host_ports, ports_conflict
from .labels import requirement_matcher
from .plugins import resource_allocation as ra
from .plugins.dra_extended import device_class_for
from .plugins import nodeaffinity, nodename, nodeports, nodeunschedulable, tainttoleration
from .plugins.helpers import tolerated, untolerated_taint
from .state import FIXED_RESOURCES, ClusterState

U = np.int8(Code.Unschedulable)
UU = np.int8(Code.UnschedulableAndUnresolvable)


class FilterVerdict:
    """One plugin's Filter over all nodes: who fails, with which code and reasons.

    A successful cycle reads only ``fail``; codes and reasons matter only once no node fits.
    A plugin may therefore hand in ``explain`` instead of them: it computes
    ``(code, key, reasons_of)`` from the cluster as it is, so it must be called before the
    cluster changes — :meth:`settle` does that when a failure is recorded."""

    __slots__ = ("plugin", "fail", "_code", "_key", "_reasons_of", "_explain")

    def __init__(self, plugin: str, fail: np.ndarray, code: np.ndarray | None = None, key: np.ndarray | None = None,
                 reasons_of: Callable[[int], tuple[str, ...]] | None = None, *,
                 explain: Callable[[], tuple[np.ndarray, np.ndarray | None, Callable[[int], tuple[str, ...]]]]
                 | None = None):
        self.plugin = plugin
        self.fail = fail                  # bool[n]
        self._code = code                 # int8[n] (meaningful where fail)
        self._key = key                   # int64[n] reason key (None: one reason set for all)
        self._reasons_of = reasons_of
        self._explain = explain

    def settle(self) -> "FilterVerdict":
        """Codes and reasons computed now (from an ``explain``), while the cluster is as filtered."""
        if self._explain is not None:
            self._code, self._key, self._reasons_of = self._explain()
            self._explain = None
        return self

    @property
    def code(self) -> np.ndarray:
        return self.settle()._code  # type: ignore[return-value]

    @property
    def key(self) -> np.ndarray | None:
        return self.settle()._key

    @property
    def reasons_of(self) -> Callable[[int], tuple[str, ...]]:
        return self.settle()._reasons_of  # type: ignore[return-value]

    def status(self, i: int) -> Status:
        key = self.key
        k = 0 if key is None else int(key[i])
        return Status(Code(int(self.code[i])), self.reasons_of(k), self.plugin)


_CODE_ARRAYS: dict[tuple[int, int], np.ndarray] = {}


def _codes(n: int, code: np.int8) -> np.ndarray:
    """A shared read-only array of one code (verdicts never write to it)."""
    arr = _CODE_ARRAYS.get((n, int(code)))
    if arr is None:
        arr = np.full(n, code, dtype=np.int8)
        arr.flags.writeable = False
        _CODE_ARRAYS[(n, int(code))] = arr
    return arr


_ONE_REASON: dict[str, Callable[[int], tuple[str, ...]]] = {}


def _single(plugin: str, fail: np.ndarray, code: np.int8, reason: str) -> FilterVerdict:
    reasons_of = _ONE_REASON.get(reason)
    if reasons_of is None:
        reasons = (reason,)
        reasons_of = _ONE_REASON[reason] = lambda _k: reasons
    return FilterVerdict(plugin, fail, _codes(len(fail), code), None, reasons_of)


# --- node-local filters ----------------------------------------------------------------------


def filter_node_unschedulable(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict:
    fail = cs.unschedulable if cs.any_unschedulable else cs.no_fail
    if cs.any_unschedulable and tolerated(pod.spec.tolerations, nodeunschedulable._UNSCHEDULABLE_TAINT,
                                cs.gates.enabled("TaintTolerationComparisonOperators")):
        fail = np.zeros(cs.n, dtype=bool)
    return _single(plugin.name, fail, UU, nodeunschedulable.ERR_REASON)


def filter_node_name(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict:
    if not pod.spec.node_name:
        fail = cs.no_fail
    else:
        fail = np.ones(cs.n, dtype=bool)
        i = cs.index.get(pod.spec.node_name)
        if i is not None:
            fail[i] = False
    return _single(plugin.name, fail, UU, nodename.ERR_REASON)


def filter_taint_toleration(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict:
    cmp_ops = cs.gates.enabled("TaintTolerationComparisonOperators")
    table = [untolerated_taint(list(ts), pod.spec.tolerations, cmp_ops) is not None for ts in cs.taint_sets]
    fail = np.array(table, dtype=bool)[cs.taint_set_of] if any(table) else cs.no_fail
    return _single(plugin.name, fail, UU, tainttoleration.ERR_REASON)


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
        return _single(plugin.name, cs.no_fail, UU, nodeaffinity.ERR_REASON_POD)  # nothing required
    key = np.zeros(cs.n, dtype=np.int64)
    fail = np.zeros(cs.n, dtype=bool)
    if req is not None:
        enforced = ~terms_mask(cs, req.node_selector_terms)
        fail |= enforced
    pod_fail = ~required_affinity_mask(cs, pod) & ~fail
    key[pod_fail] = 1
    fail |= pod_fail
    reasons = ((nodeaffinity.ERR_REASON_ENFORCED,), (nodeaffinity.ERR_REASON_POD,))
    return FilterVerdict(plugin.name, fail, _codes(cs.n, UU), key, lambda k: reasons[k])


def filter_node_ports(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict:
    wanted = state.get(plugin.name)
    if wanted is None:
        wanted = host_ports(pod)
    if not cs.nodes_with_ports:
        return _single(plugin.name, cs.no_fail, U, nodeports.ERR_REASON)
    fail = np.zeros(cs.n, dtype=bool)
    for i in cs.nodes_with_ports:
        used = cs.infos[i].used_ports
        if any(ports_conflict(used, p) for p in wanted):
            fail[i] = True
    return _single(plugin.name, fail, U, nodeports.ERR_REASON)


#: a request NodeResourcesFit checks: (resource, amount, fixed resource?, column in the cluster's arrays)
Wanted = tuple[str, int, bool, "int | None"]


def _wanted(cs: ClusterState, req: dict[str, int], args: Any) -> tuple[Wanted, ...]:
    out: list[Wanted] = []
    for name in FIXED_RESOURCES:
        want = req.get(name, 0)
        if want > 0:
            out.append((name, want, True, cs.rindex.get(name)))
    for name, want in req.items():
        if name in FIXED_RESOURCES or not ra.is_scalar_resource_name(name) or want == 0:
            continue
        if is_extended_resource(name) and (
                name in args.ignored_resources or name.split("/", 1)[0] in args.ignored_resource_groups):
            continue
        out.append((name, want, False, cs.rindex.get(name)))
    return tuple(out)


def wanted_resources(cs: ClusterState, pod: Pod, plugin: Any, req: dict[str, int] | None = None) -> tuple[Wanted, ...]:
    """The requests ``fitsRequest`` checks, in the order of its reasons: the fixed resources asked
    for, then the scalar ones NodeResourcesFit does not ignore. ``req``: the pod's requests as
    PreFilter computed them. Kept with the pod shape's amounts (resource columns and the plugin's
    args are fixed when the scheduler starts)."""
    a = cs.amounts(pod)
    if req is None:
        req = a.requests
    args = plugin.args
    if a.requests is not req:
        return _wanted(cs, req, args)
    k = ("fit", id(args))
    got = a.score.get(k)
    if got is None or got[0] is not args:
        got = a.score[k] = (args, _wanted(cs, req, args))
    return got[1]


def filter_node_resources_fit(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict:
    """``fitsRequest`` over all nodes. Which nodes fail is all a successful cycle reads; the
    reasons (a bitmask per node: bit 0 'Too many pods', then one bit per resource) are worked
    out only when the cycle fails."""
    req = state.get(plugin.name)
    if req is None:
        req = cs.amounts(pod).requests
    plan = wanted_resources(cs, pod, plugin, req)
    fail = cs.npods >= cs.pods_alloc
    dra: bool | None = None
    for name, want, fixed, j in plan:
        if j is None:  # no node has it: only pods already bound may have asked for it
            short = want > -_unindexed_requested(cs, name)
        else:
            short = want > cs.free[:, j]
        if not fixed:
            if dra is None:
                dra = cs.gates.enabled("DRAExtendedResource")
            if dra and device_class_for(cs.handle, name) is not None:
                # a DeviceClass backs it: only nodes that have it as a device plugin's count it here
                short &= cs.alloc[:, j] > 0 if j is not None else False
        fail |= short
    return FilterVerdict(plugin.name, fail, explain=lambda: _fit_reasons(cs, plan))


def _fit_reasons(cs: ClusterState, plan: Sequence[Wanted]) -> tuple[np.ndarray, np.ndarray, Callable[[int], tuple[str, ...]]]:
    """Codes and reason bitmasks of :func:`filter_node_resources_fit`, from the cluster as it is."""
    n = cs.n
    bits = (cs.npods >= cs.pods_alloc).astype(np.int64)   # bit 0: too many pods
    uu: np.ndarray | None = None
    names = ["Too many pods"]
    dra = cs.gates.enabled("DRAExtendedResource")
    for name, want, fixed, j in plan:
        if j is None:
            alloc = np.zeros(n, dtype=np.int64)
            free = alloc - _unindexed_requested(cs, name)
        else:
            alloc, free = cs.alloc[:, j], cs.free[:, j]
        short = want > free
        if not fixed and dra and device_class_for(cs.handle, name) is not None:
            short &= alloc > 0
        if short.any():
            bits |= np.left_shift(short, len(names), dtype=np.int64)
            beyond = short & (want > alloc)
            uu = beyond if uu is None else uu | beyond
        names.append(f"Insufficient {name}")
    code = _codes(n, U) if uu is None else np.where(uu, UU, U).astype(np.int8, copy=False)
    cache: dict[int, tuple[str, ...]] = {}

    def reasons_of(k: int) -> tuple[str, ...]:
        r = cache.get(k)
        if r is None:
            r = cache[k] = tuple(nm for b, nm in enumerate(names) if k >> b & 1)
        return r

    return code, bits, reasons_of


def node_resources_fit_on(cs: ClusterState, plugin: Any, i: int, wanted: Sequence[Wanted],
                          statuses: dict[tuple[bool, int], Status]) -> Status | None:
    """:func:`filter_node_resources_fit` for node ``i`` alone, read from the cluster's arrays
    (None when the pod fits): what a kept verdict needs for the few nodes changed since.
    ``wanted``: the pod's requests Fit checks, as :func:`wanted_resources` lists them once
    per pod — (resource, amount, fixed resource?, column). ``statuses``: the ones returned
    before for this ``wanted``, reused (a kept verdict compares them by identity first) — keyed
    by the shortfalls as a bitmask (bit 0 'Too many pods', then one bit per wanted resource), so
    the reasons are spelled out only for a combination not met before."""
    short = 0
    unresolvable = False
    if cs.npods.item(i) >= cs.pods_alloc.item(i):
        short = 1
    dra = None
    free, alloc_of = cs.free, cs.alloc
    bit = 1
    for name, want, fixed, j in wanted:
        bit <<= 1
        if j is None:
            ni = cs.infos[i]
            if want <= -(ni.requested.get(name, 0) if ni.pods else 0):
                continue
            alloc = 0
        else:
            if want <= free.item(i, j):
                continue
            alloc = alloc_of.item(i, j)   # read only for a shortfall: it says why
        if not fixed and alloc <= 0:
            if dra is None:
                dra = cs.gates.enabled("DRAExtendedResource")
            if dra and device_class_for(cs.handle, name) is not None:
                continue
        short |= bit
        unresolvable |= want > alloc
    if not short:
        return None
    memo = (unresolvable, short)
    st = statuses.get(memo)
    if st is None:
        reasons = ["Too many pods"] if short & 1 else []
        reasons += [f"Insufficient {w[0]}" for k, w in enumerate(wanted) if short >> (k + 1) & 1]
        st = statuses[memo] = Status(Code.UnschedulableAndUnresolvable if unresolvable else Code.Unschedulable,
                                     tuple(reasons), plugin=plugin.name)
    return st


def _unindexed_requested(cs: ClusterState, name: str) -> np.ndarray:
    out = np.zeros(cs.n, dtype=np.int64)
    for i, ni in enumerate(cs.infos):
        v = ni.requested.get(name, 0) if ni.pods else 0
        if v:
            out[i] = v
    return out


SPREAD_STATE = "PodTopologySpread/vector"
MAX_INT32 = 2**31 - 1
_SEL_ENCODER = __import__("msgspec").json.Encoder()


def spread_constraints(cs: ClusterState, pod: Pod, plugin: Any) -> list | None:
    """The pod's hard spread constraints with a cache key per selector — its own, or the
    profile's default ones on the selector of the Services and controllers selecting it."""
    if not pod.spec.topology_spread_constraints:
        got = plugin.default_constraints(pod, "DoNotSchedule")
        return [] if got is None else [(c, got[1]) for c in got[0]]
    cons = plugin._constraints(pod, "DoNotSchedule")
    raws = [c for c in pod.spec.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule"]
    mlk = cs.gates.enabled("MatchLabelKeysInPodTopologySpread")
    labels = pod.metadata.labels
    out = []
    for c, raw in zip(cons, raws):
        extra = tuple(sorted((k, labels[k]) for k in raw.match_label_keys if k in labels)) if mlk else ()
        out.append((c, (_SEL_ENCODER.encode(raw.label_selector), extra)))
    return out


def filter_pod_topology_spread(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict | None:
    """PreFilter's domain counts and Filter's skew check over all nodes at once."""
    from .plugins import podtopologyspread as pts

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
        node_dom = np.where(missing, 0, dom[np.where(missing, 0, codes)] if nvals else 0)
        skew = node_dom + self_match - min_match > c.max_skew
        new_missing = missing & ~fail
        key[new_missing] = 1
        fail |= new_missing
        new_skew = skew & ~missing & ~fail
        key[new_skew] = 2
        fail |= new_skew
    code = np.where(key == 1, UU, U).astype(np.int8)
    reasons = ((), (pts.ERR_REASON_NODE_LABEL_NOT_MATCH,), (pts.ERR_REASON_CONSTRAINTS_NOT_MATCH,))
    return FilterVerdict(plugin.name, fail, code, key, lambda k: reasons[k])


IPA_STATE = "InterPodAffinity/vector"


def _term_key(t: Any, raw: Any) -> tuple:
    ns_sel = raw.namespace_selector
    everything = ns_sel is not None and not ns_sel.match_labels and not ns_sel.match_expressions
    return (_SEL_ENCODER.encode(raw.label_selector), tuple(sorted(t.namespaces)), everything)


def inter_pod_affinity_state(cs: ClusterState, pod: Pod) -> tuple | None:
    """InterPodAffinity's PreFilter: the pod's resolved required terms and the topology pairs
    where existing pods' required anti-affinity rejects it; None when it would Skip."""
    from .framework.types import PodInfo
    from .plugins import interpodaffinity as ipa

    snap = cs.snapshot
    info = PodInfo(pod)
    raw_aff, raw_anti = ipa._raw(pod, False, False), ipa._raw(pod, True, False)
    affinity = ipa._resolved_terms(pod, info.required_affinity_terms, raw_aff, snap)
    anti = ipa._resolved_terms(pod, info.required_anti_affinity_terms, raw_anti, snap)
    ns_labels = snap.namespace_labels(pod.metadata.namespace)
    existing: dict[tuple[str, str], int] = {}
    for i in cs.nodes_with_anti:
        ni = cs.infos[i]
        for ep in ni.pods_with_required_anti_affinity:
            for t in ep.required_anti_affinity_terms:
                if t.matches(pod, ns_labels):
                    v = ni.labels.get(t.topology_key)
                    if v is not None:
                        existing[(t.topology_key, v)] = existing.get((t.topology_key, v), 0) + 1
    if not affinity and not anti and not existing:
        return None
    return affinity, raw_aff, anti, raw_anti, existing


def _domain_hits(cs: ClusterState, key: str, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(node's code for ``key``, does the node's domain hold a counted pod)."""
    codes = cs.labels.codes_of(key)
    nvals = len(cs.labels.values.get(key, ()))
    if not nvals:
        return codes, np.zeros(cs.n, dtype=bool)
    has = codes >= 0
    dom = np.bincount(codes[has], weights=counts[has], minlength=nvals) > 0
    return codes, has & dom[np.where(has, codes, 0)]


def filter_inter_pod_affinity(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict | None:
    from .plugins import interpodaffinity as ipa

    st = state.get(IPA_STATE)
    if st is None:
        return None
    affinity, raw_aff, anti, raw_anti, existing = st
    n = cs.n
    fail = np.zeros(n, dtype=bool)
    key = np.zeros(n, dtype=np.int64)
    if affinity:
        k = ("affinity-all",) + tuple(_term_key(t, r) for t, r in zip(affinity, raw_aff))
        counts = cs.match_counts(None, k, None, terminating=True,
                                 pod_matcher=lambda p, terms=affinity: ipa.matches_all(terms, p))
        missing = np.zeros(n, dtype=bool)
        exist = np.ones(n, dtype=bool)
        any_counted = False
        for t in affinity:
            codes, hit = _domain_hits(cs, t.topology_key, counts)
            missing |= codes < 0
            exist &= hit
            any_counted |= bool(counts[codes >= 0].sum() > 0)
        first_pod = not any_counted and ipa.matches_all(affinity, pod)
        bad = missing | (~exist & (not first_pod))
        key[bad] = 1
        fail |= bad
    for t, r in zip(anti, raw_anti):
        counts = cs.match_counts(None, ("anti",) + _term_key(t, r), None, terminating=True,
                                 pod_matcher=lambda p, term=t: term.matches(p, {}))
        _, hit = _domain_hits(cs, t.topology_key, counts)
        bad = hit & ~fail
        key[bad] = 2
        fail |= bad
    by_key: dict[str, list[int]] = {}
    for (k, v), c in existing.items():
        code = cs.labels.code_of(k, v) if c > 0 else None
        if code is not None:
            by_key.setdefault(k, []).append(code)
    for k, codes in by_key.items():
        bad = np.isin(cs.labels.codes_of(k), codes) & ~fail
        key[bad] = 3
        fail |= bad
    code = np.where(key == 1, UU, U).astype(np.int8)
    reasons = ((), (ipa.ERR_REASON_AFFINITY,), (ipa.ERR_REASON_ANTI_AFFINITY,), (ipa.ERR_REASON_EXISTING_ANTI_AFFINITY,))
    return FilterVerdict(plugin.name, fail, code, key, lambda kk: reasons[kk])


def filter_dynamic_resources(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict | None:
    """Claims that all wait for an allocation, from the plugin's verdicts kept per (claim specs,
    node) until the node's devices change; None (per-node Filter) for anything else."""
    fail = plugin.filter_all(state, pod, cs.infos)
    if fail is None:
        return None
    from .plugins.dynamicresources import ERR_CANNOT_ALLOCATE

    return _single(plugin.name, fail, UU, ERR_CANNOT_ALLOCATE)


VECTOR_FILTERS: dict[str, Callable[[ClusterState, Pod, Any, CycleState], FilterVerdict | None]] = {
    "NodeUnschedulable": filter_node_unschedulable,
    "NodeName": filter_node_name,
    "TaintToleration": filter_taint_toleration,
    "NodeAffinity": filter_node_affinity,
    "NodePorts": filter_node_ports,
    "NodeResourcesFit": filter_node_resources_fit,
    "PodTopologySpread": filter_pod_topology_spread,
    "InterPodAffinity": filter_inter_pod_affinity,
    "DynamicResources": filter_dynamic_resources,
}


def register_vector_filter(plugin: str, fn: Callable[[ClusterState, Pod, Any, CycleState], FilterVerdict | None]) -> None:
    """An out-of-tree plugin's Filter over every node at once (it must answer exactly as the
    plugin's own ``filter`` node by node; None sends the pod through the per-node Filter)."""
    VECTOR_FILTERS[plugin] = fn


# --- scores ------------------------------------------------------------------------------------


@dataclass
class ScoreVector:
    raw: np.ndarray
    normalized: np.ndarray


#: A vector score's answer when the plugin's PreScore would return Skip.
SKIPPED = ScoreVector(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def default_normalize(scores: np.ndarray, reverse: bool) -> np.ndarray:
    """``helper.DefaultNormalizeScore`` over the scored nodes."""
    mx = int(scores.max()) if len(scores) else 0
    if mx == 0:
        return np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64) if reverse else scores.copy()
    s = MAX_NODE_SCORE * scores // mx
    return MAX_NODE_SCORE - s if reverse else s


def score_taint_toleration(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    cmp_ops = cs.gates.enabled("TaintTolerationComparisonOperators")
    tols = [t for t in pod.spec.tolerations if t.effect in ("", "PreferNoSchedule")]
    table = [sum(1 for t in ts if t.effect == "PreferNoSchedule" and not tolerated(tols, t, cmp_ops))
             for ts in cs.taint_sets]
    if not any(table):
        raw = np.zeros(len(idx), dtype=np.int64)
        return ScoreVector(raw, np.full(len(idx), MAX_NODE_SCORE, dtype=np.int64))
    raw = np.array(table, dtype=np.int64)[cs.taint_set_of[idx]]
    return ScoreVector(raw, default_normalize(raw, True))


def score_node_affinity(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    pref = nodeaffinity._pod_preferred(pod)
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


def _amounts(cs: ClusterState, reqs: Sequence[int], resources: Sequence[ra.ResourceSpec], use_requested: bool,
             idx: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
    """``calculateResourceAllocatableRequest`` per scored resource: (allocatable, requested)."""
    zeros = np.zeros(len(idx), dtype=np.int64)
    allocs, requested = [], []
    for r, want, scalar in zip(resources, reqs, _scalar_flags(resources)):
        name = r.name
        j = cs.rindex.get(name)
        if (want == 0 and scalar) or j is None:
            if j is None and scalar and want != 0 and cs.gates.enabled("DRAExtendedResource") \
                    and device_class_for(cs.handle, name) is not None:
                return None
            allocs.append(zeros)
            requested.append(zeros)
            continue
        if name in ("cpu", "memory"):
            base = cs.requested[:, j].take(idx) if use_requested else cs.non_zero[:, 0 if name == "cpu" else 1].take(idx)
        elif name == "ephemeral-storage" or scalar:
            base = cs.requested[:, j].take(idx)
        else:
            allocs.append(zeros)
            requested.append(zeros)
            continue
        a = cs.alloc[:, j].take(idx)
        if scalar and cs.gates.enabled("DRAExtendedResource") and device_class_for(cs.handle, name) is not None \
                and not all(name in cs.infos[i].allocatable for i in idx):
            return None
        allocs.append(a)
        base += want
        requested.append(base if cs.alloc_nonzero[j] else np.where(a == 0, 0, base))
    return allocs, requested


_SCALAR_FLAGS: dict[Any, tuple[bool, ...]] = {}


def _scalar_flags(resources: Sequence[ra.ResourceSpec]) -> tuple[bool, ...]:
    got = _SCALAR_FLAGS.get(resources)
    if got is None:
        got = _SCALAR_FLAGS[resources] = tuple(ra.is_scalar_resource_name(r.name) for r in resources)
    return got


def _least(resources, allocs, reqs) -> np.ndarray:
    n = len(allocs[0]) if allocs else 0
    if all(bool(cap.all()) for cap in allocs):  # every node has every scored resource
        total = np.zeros(n, dtype=np.int64)
        for r, cap, req in zip(resources, allocs, reqs):
            s = (cap - req) * MAX_NODE_SCORE // cap
            s[req > cap] = 0
            total += s * r.weight if r.weight != 1 else s
        wsum = sum(r.weight for r in resources)
        return total // wsum if wsum else total
    total = np.zeros(n, dtype=np.int64)
    wsum = np.zeros(n, dtype=np.int64)
    for r, cap, req in zip(resources, allocs, reqs):
        valid = cap != 0
        s = np.where(req > cap, 0, (cap - req) * MAX_NODE_SCORE // np.where(valid, cap, 1))
        total += np.where(valid, s * r.weight, 0)
        wsum += np.where(valid, r.weight, 0)
    return np.where(wsum > 0, total // np.maximum(wsum, 1), 0)


def _most(resources, allocs, reqs) -> np.ndarray:
    n = len(allocs[0]) if allocs else 0
    total = np.zeros(n, dtype=np.int64)
    wsum = np.zeros(n, dtype=np.int64)
    for r, cap, req in zip(resources, allocs, reqs):
        valid = cap != 0
        s = np.minimum(req, cap) * MAX_NODE_SCORE // np.where(valid, cap, 1)
        total += np.where(valid, s * r.weight, 0)
        wsum += np.where(valid, r.weight, 0)
    return np.where(wsum > 0, total // np.maximum(wsum, 1), 0)


def _rtcr(resources, shape, allocs, reqs) -> np.ndarray:
    scale = MAX_NODE_SCORE // ra.MAX_CUSTOM_PRIORITY_SCORE
    fn = ra.broken_linear([(u, s * scale) for u, s in shape])
    table = np.array([fn(p) for p in range(ra.MAX_UTILIZATION + 1)], dtype=np.int64)
    n = len(allocs[0]) if allocs else 0
    total = np.zeros(n, dtype=np.int64)
    wsum = np.zeros(n, dtype=np.int64)
    for r, cap, req in zip(resources, allocs, reqs):
        valid = cap != 0
        util = np.where(req > cap, ra.MAX_UTILIZATION, req * ra.MAX_UTILIZATION // np.where(valid, cap, 1))
        s = table[np.clip(util, 0, ra.MAX_UTILIZATION)]
        take = valid & (s > 0)
        total += np.where(take, s * r.weight, 0)
        wsum += np.where(take, r.weight, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / np.where(wsum > 0, wsum, 1)
    return np.where(wsum > 0, np.floor(mean + 0.5), 0).astype(np.int64)


def _balanced(allocs, reqs) -> np.ndarray:
    """``balancedResourceScorer``; the same float64 operations, in the same order, per node."""
    n = len(allocs[0]) if allocs else 0
    if len(allocs) == 2 and bool(allocs[0].all()) and bool(allocs[1].all()):
        f0 = np.minimum(reqs[0] / allocs[0], 1.0)
        f1 = np.minimum(reqs[1] / allocs[1], 1.0)
        std = np.abs((f0 - f1) / 2)
        return np.floor((1 - std) * MAX_NODE_SCORE).astype(np.int64)
    cnt = np.zeros(n, dtype=np.int64)
    first = np.zeros(n)
    second = np.zeros(n)
    fracs = []
    s = np.zeros(n)
    for cap, req in zip(allocs, reqs):
        valid = cap != 0
        with np.errstate(invalid="ignore", divide="ignore"):
            f = np.minimum(req / np.where(valid, cap, 1), 1.0)
        first = np.where(valid & (cnt == 0), f, first)
        second = np.where(valid & (cnt == 1), f, second)
        s = np.where(valid, s + f, s)
        fracs.append((valid, f))
        cnt += valid
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s / np.maximum(cnt, 1)
    sq = np.zeros(n)
    for valid, f in fracs:
        d = f - mean
        sq = np.where(valid, sq + d * d, sq)
    std_n = np.sqrt(sq / np.maximum(cnt, 1))
    std = np.where(cnt == 2, np.abs((first - second) / 2), np.where(cnt > 2, std_n, 0.0))
    return np.floor((1 - std) * MAX_NODE_SCORE).astype(np.int64)


def _cpu_memory_columns(cs: ClusterState, resources: Sequence[ra.ResourceSpec]) -> bool:
    """Scoring reads only cpu and memory, which every node has: no per-node zero guards."""
    return (len(resources) == 2 and resources[0].name == "cpu" and resources[1].name == "memory"
            and cs.alloc_nonzero[0] and cs.alloc_nonzero[1])


def _cpu_memory(table: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cpu and memory columns of ``cs.alloc``/``requested``/``non_zero`` over the scored nodes,
    one column at a time: numpy gathers and combines 1-D columns far faster than (m, 2) blocks."""
    return table[:, 0].take(idx), table[:, 1].take(idx)


def _least_cpu_memory(resources: Sequence[ra.ResourceSpec], caps: Sequence[np.ndarray],
                      used: Sequence[np.ndarray], reqs: Sequence[int]) -> np.ndarray:
    """``leastResourceScorer`` on cpu and memory (columns over the scored nodes: allocatable,
    non-zero requested): (free after the pod) × 100 / allocatable per resource (0 when it does
    not fit), weighted mean rounded down."""
    total = None
    for k, r in enumerate(resources):
        left = caps[k] - used[k]
        left -= reqs[k]
        np.maximum(left, 0, out=left)
        left *= MAX_NODE_SCORE
        left //= caps[k]
        if r.weight != 1:
            left *= r.weight
        if total is None:
            total = left
        else:
            total += left
    wsum = resources[0].weight + resources[1].weight
    if wsum:
        total //= wsum
    return total  # type: ignore[return-value]


def _balanced_cpu_memory(caps: Sequence[np.ndarray], requested: Sequence[np.ndarray], reqs: Sequence[int]) -> np.ndarray:
    """``balancedResourceScorer`` on cpu and memory: with two fractions the standard deviation
    is half their distance (the same float64 steps as the plugin)."""
    f0 = requested[0] + reqs[0]
    f0 = f0 / caps[0]
    np.minimum(f0, 1.0, out=f0)
    f1 = requested[1] + reqs[1]
    f1 = f1 / caps[1]
    np.minimum(f1, 1.0, out=f1)
    f0 -= f1
    f0 /= 2
    np.abs(f0, out=f0)
    np.subtract(1, f0, out=f0)
    f0 *= MAX_NODE_SCORE
    np.floor(f0, out=f0)
    return f0.astype(np.int64)


def score_node_resources_fit(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    args = plugin.args
    reqs = cs.score_requests(pod, args.resources, False)
    if args.strategy == "LeastAllocated" and _cpu_memory_columns(cs, args.resources):
        raw = _least_cpu_memory(args.resources, _cpu_memory(cs.alloc, idx), _cpu_memory(cs.non_zero, idx), reqs)
        return ScoreVector(raw, raw)
    got = _amounts(cs, reqs, args.resources, False, idx)
    if got is None:
        return None
    allocs, reqs = got
    if args.strategy == "LeastAllocated":
        raw = _least(args.resources, allocs, reqs)
    elif args.strategy == "MostAllocated":
        raw = _most(args.resources, allocs, reqs)
    else:
        raw = _rtcr(args.resources, args.shape, allocs, reqs)
    if not args.resources:
        raw = np.zeros(len(idx), dtype=np.int64)
    return ScoreVector(raw, raw)


def score_balanced_allocation(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    resources = plugin.args.resources
    reqs = cs.score_requests(pod, resources, True)
    if not any(reqs):
        return SKIPPED  # a best-effort pod changes no balance
    if _cpu_memory_columns(cs, resources):
        raw = _balanced_cpu_memory(_cpu_memory(cs.alloc, idx), _cpu_memory(cs.requested, idx), reqs)
        return ScoreVector(raw, raw)
    got = _amounts(cs, reqs, resources, True, idx)
    if got is None:
        return None
    allocs, reqs = got
    raw = _balanced(allocs, reqs) if allocs else np.full(len(idx), MAX_NODE_SCORE, dtype=np.int64)
    return ScoreVector(raw, raw)


def score_resources_together(cs: ClusterState, pod: Pod, fit: Any, fit_weight: int, balanced: Any,
                             balanced_weight: int, idx: np.ndarray) -> np.ndarray | None:
    """NodeResourcesFit (LeastAllocated) and NodeResourcesBalancedAllocation on cpu and memory,
    weighted and summed, from one gather of the scored nodes' figures: the two plugins of the
    default profile read the same columns, and every cycle that places a pod scores them. The
    per-node arithmetic is the plugins' own (:func:`_least_cpu_memory`,
    :func:`_balanced_cpu_memory`). None when either reads more (another strategy or resource, a
    node without cpu or memory): each plugin then scores alone."""
    fa, ba = fit.args, balanced.args
    if fa.strategy != "LeastAllocated" or not _cpu_memory_columns(cs, fa.resources) \
            or not _cpu_memory_columns(cs, ba.resources):
        return None
    caps = _cpu_memory(cs.alloc, idx)
    total = _least_cpu_memory(fa.resources, caps, _cpu_memory(cs.non_zero, idx),
                              cs.score_requests(pod, fa.resources, False))
    if fit_weight != 1:
        total *= fit_weight
    bal_req = cs.score_requests(pod, ba.resources, True)
    if any(bal_req):   # else Skip: a best-effort pod changes no balance
        bal = _balanced_cpu_memory(caps, _cpu_memory(cs.requested, idx), bal_req)
        if balanced_weight != 1:
            bal *= balanced_weight
        total += bal
    return total


def score_pod_topology_spread(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    """Soft spread (``ScheduleAnyway``) over the scored nodes at once: domains from the scored
    nodes, matching pods counted per domain over every included node, log-weighted sums rounded
    as Go's ``math.Round``, then reversed against the highest and lowest sum.

    The pod's own constraints count only nodes that carry every topology key; the profile's
    default constraints (on the selector of the Services and controllers selecting the pod)
    under ``System`` defaulting also score nodes missing a key, whose domain is the empty value.
    """
    import math

    from .plugins import podtopologyspread as pts

    ns = pod.metadata.namespace
    if pod.spec.topology_spread_constraints:
        cons = plugin._constraints(pod, "ScheduleAnyway")
        if not cons:
            return SKIPPED
        raws = [c for c in pod.spec.topology_spread_constraints if c.when_unsatisfiable == "ScheduleAnyway"]
        mlk = cs.gates.enabled("MatchLabelKeysInPodTopologySpread")
        labels = pod.metadata.labels
        keys = [(_SEL_ENCODER.encode(r.label_selector),
                 tuple(sorted((k, labels[k]) for k in r.match_label_keys if k in labels)) if mlk else ())
                for r in raws]
        require_all = True
    else:
        got = plugin.default_constraints(pod, "ScheduleAnyway")
        if got is None:
            return SKIPPED
        cons, key = got
        keys = [key] * len(cons)
        require_all = not plugin._system_defaulted
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


def score_inter_pod_affinity(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    """Preferred (anti-)affinity over the scored nodes at once.

    The pod's own preferred terms count matching pods per node with the kept match counts and
    sum them per topology domain (bincount); the terms of existing pods with affinity (required
    affinity at ``hardPodAffinityWeight``, preferred affinity and anti-affinity) are few and
    added per domain. A node scores the sum over its domains; min-max normalisation follows.
    """
    from .framework.types import PodInfo
    from .plugins import interpodaffinity as ipa

    args = plugin.args
    raw_aff, raw_anti = ipa._raw(pod, False, True), ipa._raw(pod, True, True)
    has_constraints = bool(raw_aff or raw_anti)
    if not has_constraints and (args.ignore_preferred_terms_of_existing_pods or cs.pods_with_affinity == 0):
        return SKIPPED
    snap = cs.snapshot
    info = PodInfo(pod)
    pref_aff = ipa._resolved_terms(pod, info.preferred_affinity_terms, raw_aff, snap)
    pref_anti = ipa._resolved_terms(pod, info.preferred_anti_affinity_terms, raw_anti, snap)
    n, m = cs.n, len(idx)
    raw = np.zeros(m, dtype=np.int64)
    touched = False
    #: per topology key: weighted sum per label code
    per_key: dict[str, np.ndarray] = {}

    def domain_sums(key: str) -> np.ndarray | None:
        nvals = len(cs.labels.values.get(key, ()))
        if not nvals:
            return None
        arr = per_key.get(key)
        if arr is None:
            arr = per_key[key] = np.zeros(nvals, dtype=np.int64)
        return arr

    for terms, raws, sign in ((pref_aff, raw_aff, 1), (pref_anti, raw_anti, -1)):
        for t, r in zip(terms, raws):
            counts = cs.match_counts(None, ("pref",) + _term_key(t, r), None, terminating=True,
                                     pod_matcher=lambda p, term=t: term.matches(p, {}))
            codes = cs.labels.codes_of(t.topology_key)
            has = codes >= 0
            if not has.any() or not counts[has].any():
                continue
            touched = True
            arr = domain_sums(t.topology_key)
            assert arr is not None
            arr += np.bincount(codes[has], weights=counts[has], minlength=len(arr)).astype(np.int64) \
                * (t.weight * sign)
    if cs.pods_with_affinity:
        ns_labels = snap.namespace_labels(pod.metadata.namespace)
        hard = args.hard_pod_affinity_weight
        existing_pref = not args.ignore_preferred_terms_of_existing_pods
        for i in cs.nodes_with_affinity:
            ni = cs.infos[i]
            for ep in ni.pods_with_affinity:
                found: list[tuple[Any, int]] = []
                if hard > 0:
                    found += [(t, hard) for t in ep.required_affinity_terms]
                if existing_pref:
                    found += [(t, t.weight) for t in ep.preferred_affinity_terms]
                    found += [(t, -t.weight) for t in ep.preferred_anti_affinity_terms]
                for t, w in found:
                    if not t.matches(pod, ns_labels):
                        continue
                    v = ni.labels.get(t.topology_key)
                    if v is None:
                        continue
                    code = cs.labels.code_of(t.topology_key, v)
                    arr = domain_sums(t.topology_key)
                    if code is None or arr is None:
                        continue
                    touched = True
                    arr[code] += w
    if not touched:
        return SKIPPED
    for key, arr in per_key.items():
        codes = cs.labels.codes_of(key)[idx]
        has = codes >= 0
        raw += np.where(has, arr[np.where(has, codes, 0)], 0)
    if m == 0:
        return ScoreVector(raw, raw.copy())
    lo, hi = int(raw.min()), int(raw.max())
    diff = hi - lo
    if diff > 0:
        norm = (MAX_NODE_SCORE * ((raw - lo) / diff)).astype(np.int64)
    else:
        norm = np.zeros(m, dtype=np.int64)
    return ScoreVector(raw, norm)


def score_dynamic_resources(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    """Prioritized-list ranks from this cycle's Filter results; a pod that left nothing to
    score (no claims, nothing allocated, gate off) scores 0 everywhere, which adds nothing."""
    if not plugin.scores_pod(pod):
        return SKIPPED
    raw_list = plugin.node_scores(pod, [cs.names[i] for i in idx.tolist()])
    raw = np.array(raw_list, dtype=np.int64)
    return ScoreVector(raw, default_normalize(raw, False))


#: plugin -> vector score (PreScore's Skip included: :data:`SKIPPED`).
VECTOR_SCORES: dict[str, Callable[[ClusterState, Pod, Any, np.ndarray], ScoreVector | None]] = {
    "TaintToleration": score_taint_toleration,
    "NodeAffinity": score_node_affinity,
    "NodeResourcesFit": score_node_resources_fit,
    "NodeResourcesBalancedAllocation": score_balanced_allocation,
    "PodTopologySpread": score_pod_topology_spread,
    "InterPodAffinity": score_inter_pod_affinity,
    "DynamicResources": score_dynamic_resources,
}
