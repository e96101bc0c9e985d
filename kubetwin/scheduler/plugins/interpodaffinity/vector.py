"""InterPodAffinity's PreFilter, Filter and Score over every node at once (the twins of
:mod:`.plugin`): matching pods counted per node (kept in step by the cache) and summed per
topology domain; existing pods' terms are few and added per domain.

Not an upstream module: upstream has only the plain plugin (``pkg/scheduler/framework/plugins/interpodaffinity``); this is its vectorised twin."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from ....model.pod import Pod
from ...backend.cache import ClusterState
from ...fastpath.vector import SKIPPED, UU, FilterVerdict, ScoreVector, U, Vectorised
from ...framework.interface import MAX_NODE_SCORE, CycleState
from ...framework.status import SKIP, SUCCESS, Status
from ...framework.types import PodInfo
from . import NAME
from . import plugin as ipa
from .existing import PREFERRED_AFFINITY, REQUIRED_AFFINITY, existing_anti_affinity, existing_scoring_terms

IPA_STATE = NAME + "/vector"
#: selectors as bytes: the key under which matching pods are counted
SEL_ENCODER = msgspec.json.Encoder()


def _term_key(t: Any, raw: Any) -> tuple:
    ns_sel = raw.namespace_selector
    everything = ns_sel is not None and not ns_sel.match_labels and not ns_sel.match_expressions
    return (SEL_ENCODER.encode(raw.label_selector), tuple(sorted(t.namespaces)), everything)


def inter_pod_affinity_state(cs: ClusterState, pod: Pod) -> tuple | None:
    """InterPodAffinity's PreFilter: the pod's resolved required terms and the topology pairs
    where existing pods' required anti-affinity rejects it; None when it would Skip."""
    snap = cs.snapshot
    info = PodInfo(pod)
    raw_aff, raw_anti = ipa.raw_terms(pod, False, False), ipa.raw_terms(pod, True, False)
    affinity = ipa.resolved_terms(pod, info.required_affinity_terms, raw_aff, snap)
    anti = ipa.resolved_terms(pod, info.required_anti_affinity_terms, raw_anti, snap)
    ns_labels = snap.namespace_labels(pod.metadata.namespace)
    #: topology key -> the nodes (repeats allowed) whose domain for that key an existing pod's
    #: required anti-affinity term closes to the pod
    existing: dict[str, list[int]] = {}
    if cs.nodes_with_anti:
        # each distinct term of the bound pods matched once (replicas carry equal terms)
        for t, nodes in existing_anti_affinity(cs).terms.values():
            if t.matches(pod, ns_labels):   # nodes: those with the term's topology key
                existing.setdefault(t.topology_key, []).extend(nodes)
    if not affinity and not anti and not existing:
        return None
    return affinity, raw_aff, anti, raw_anti, existing


def _domain_hits(cs: ClusterState, key: str, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(node's code for ``key``, does the node's domain hold a counted pod)."""
    labels = cs.labels
    codes = labels.codes_of(key)
    nvals = len(labels.values.get(key, ()))
    if not nvals:
        return codes, np.zeros(cs.n, dtype=bool)
    complete, unique = labels.shape(key)
    if unique:   # every node its own domain (the hostname): the node's own count
        return codes, (counts > 0) if complete else (counts > 0) & (codes >= 0)
    has = codes >= 0
    dom = np.bincount(codes[has], weights=counts[has], minlength=nvals) > 0
    return codes, has & dom[np.where(has, codes, 0)]


def filter_inter_pod_affinity(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict | None:
    st = state.get(IPA_STATE)
    if st is None:
        return None
    affinity, raw_aff, anti, raw_anti, existing = st
    n = cs.n
    fail = np.zeros(n, dtype=bool)
    #: (reason key, the nodes it rejects first), for the codes and reasons of a failed cycle
    rejected: list[tuple[int, np.ndarray]] = []
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
        rejected.append((1, bad))
        fail |= bad
    for t, r in zip(anti, raw_anti):
        counts = cs.match_counts(None, ("anti",) + _term_key(t, r), None, terminating=True,
                                 pod_matcher=lambda p, term=t: term.matches(p, {}))
        _, hit = _domain_hits(cs, t.topology_key, counts)
        bad = hit & ~fail
        rejected.append((2, bad))
        fail |= bad
    for tkey, at in existing.items():
        codes = cs.labels.codes_of(tkey)
        if cs.labels.shape(tkey)[1]:   # every node its own domain: the nodes listed are closed
            bad = np.zeros(n, dtype=bool)
            bad[at] = True
        else:
            # the closed domains as a table over the key's values plus the trailing 'absent'
            # entry (code -1, never closed: every node listed has the label), gathered per node
            hit_domain = np.zeros(len(cs.labels.values.get(tkey, ())) + 1, dtype=bool)
            hit_domain[codes[at]] = True
            hit_domain[-1] = False
            bad = hit_domain[codes]
        bad &= ~fail
        rejected.append((3, bad))
        fail |= bad
    return FilterVerdict(plugin.name, fail, explain=lambda: _reasons(n, rejected))


_REASONS = ((), (ipa.ERR_REASON_AFFINITY,), (ipa.ERR_REASON_ANTI_AFFINITY,), (ipa.ERR_REASON_EXISTING_ANTI_AFFINITY,))


def _reasons(n: int, rejected: list[tuple[int, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, Any]:
    """The Filter's codes and reason keys: each node's first rejecting part (the masks are the
    Filter's own, disjoint, fixed when it ran)."""
    key = np.zeros(n, dtype=np.int64)
    for k, bad in rejected:
        key[bad] = k
    code_arr = np.where(key == 1, UU, U).astype(np.int8)
    return code_arr, key, _REASONS.__getitem__


def score_inter_pod_affinity(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    """Preferred (anti-)affinity over the scored nodes at once.

    The pod's own preferred terms count matching pods per node with the kept match counts and
    sum them per topology domain (bincount); the terms of existing pods with affinity (required
    affinity at ``hardPodAffinityWeight``, preferred affinity and anti-affinity) are few and
    added per domain. A node scores the sum over its domains; min-max normalisation follows.
    """
    args = plugin.args
    aff = pod.spec.affinity
    if (aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None)) and (
            args.ignore_preferred_terms_of_existing_pods or cs.pods_with_affinity == 0):
        return SKIPPED   # no preferred terms of its own and none of existing pods to meet (checked cheaply)
    raw_aff, raw_anti = ipa.raw_terms(pod, False, True), ipa.raw_terms(pod, True, True)
    has_constraints = bool(raw_aff or raw_anti)
    if not has_constraints and (args.ignore_preferred_terms_of_existing_pods or cs.pods_with_affinity == 0):
        return SKIPPED
    snap = cs.snapshot
    info = PodInfo(pod)
    pref_aff = ipa.resolved_terms(pod, info.preferred_affinity_terms, raw_aff, snap)
    pref_anti = ipa.resolved_terms(pod, info.preferred_anti_affinity_terms, raw_anti, snap)
    m = len(idx)
    raw = np.zeros(m, dtype=np.int64)
    touched = False
    labels = cs.labels
    #: per topology key: weighted sum per label code
    per_key: dict[str, np.ndarray] = {}
    #: the sums of keys every node has with a value of its own (the hostname): per node
    own_domain: np.ndarray | None = None

    def domain_sums(key: str) -> np.ndarray | None:
        nvals = len(labels.values.get(key, ()))
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
            codes = labels.codes_of(t.topology_key)
            complete, unique = labels.shape(t.topology_key)
            if complete:   # every node has the key: no mask
                if not counts.any():
                    continue
                touched = True
                if unique:
                    own_domain = counts * (t.weight * sign) if own_domain is None \
                        else own_domain + counts * (t.weight * sign)
                    continue
                arr = domain_sums(t.topology_key)
                assert arr is not None
                arr += np.bincount(codes, weights=counts, minlength=len(arr)).astype(np.int64) * (t.weight * sign)
                continue
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
        # each distinct term of the bound pods matched once, added on the nodes carrying it
        for tk, (t, nodes) in existing_scoring_terms(cs).terms.items():
            kind = tk[0]
            if kind == REQUIRED_AFFINITY:
                if hard <= 0:
                    continue
                w = hard
            elif not existing_pref:
                continue
            else:
                w = t.weight if kind == PREFERRED_AFFINITY else -t.weight
            if not t.matches(pod, ns_labels):
                continue
            touched = True   # the nodes listed carry the key
            at = np.fromiter(nodes, dtype=np.int64, count=len(nodes))
            add = np.fromiter(nodes.values(), dtype=np.int64, count=len(nodes)) * w
            if labels.shape(t.topology_key) == (True, True):
                if own_domain is None:
                    own_domain = np.zeros(cs.n, dtype=np.int64)
                np.add.at(own_domain, at, add)
                continue
            arr = domain_sums(t.topology_key)
            assert arr is not None
            np.add.at(arr, labels.codes_of(t.topology_key)[at], add)
    if not touched:
        return SKIPPED
    for key, arr in per_key.items():
        codes = labels.codes_of(key)[idx]
        if labels.shape(key)[0]:
            raw += arr[codes]
            continue
        has = codes >= 0
        raw += np.where(has, arr[np.where(has, codes, 0)], 0)
    if own_domain is not None:
        raw += own_domain[idx]
    if m == 0:
        return ScoreVector(raw, raw.copy())
    lo, hi = int(raw.min()), int(raw.max())
    diff = hi - lo
    if diff > 0:
        norm = (MAX_NODE_SCORE * ((raw - lo) / diff)).astype(np.int64)
    else:
        norm = np.zeros(m, dtype=np.int64)
    return ScoreVector(raw, norm)


def required_affinity_is_skip(cs: ClusterState, pod: Pod, plugin: Any) -> bool:
    """PreFilter Skips: the pod has no required (anti-)affinity and no bound pod has required anti-affinity."""
    aff = pod.spec.affinity
    has = aff is not None and (
        (aff.pod_affinity is not None and aff.pod_affinity.required_during_scheduling_ignored_during_execution)
        or (aff.pod_anti_affinity is not None
            and aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution))
    return not has and cs.pods_with_required_anti_affinity == 0


def pre_filter_affinity(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> Status:
    """PreFilter: the resolved required terms and the domains existing anti-affinity rules out."""
    got = inter_pod_affinity_state(cs, pod)
    if got is None:
        return SKIP
    state[IPA_STATE] = got
    return SUCCESS


VECTORISED = Vectorised(filter=filter_inter_pod_affinity, score=score_inter_pod_affinity,
                        pre_filter=pre_filter_affinity, pre_filter_is_skip=required_affinity_is_skip)
