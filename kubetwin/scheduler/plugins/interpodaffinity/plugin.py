"""InterPodAffinity: required and preferred pod (anti-)affinity, with symmetry — existing
pods' required anti-affinity keeps the incoming pod away, their affinity attracts it
(``pkg/scheduler/framework/plugins/interpodaffinity``: ``plugin.go``, ``filtering.go``, ``scoring.go``).

Counting is per topology pair (label key, value) as upstream does: PreFilter counts once
over all nodes, Filter looks the node's pairs up.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any, Mapping

from ....model.pod import Pod
from ...framework.interface import MAX_NODE_SCORE, CycleState, Plugin
from ...framework.status import SKIP, SUCCESS, Status, unresolvable, unschedulable
from ...framework.types import AffinityTerm, NodeInfo, PodInfo, distinct_terms
from ..helpers import pre_filter_state
from . import NAME
from .args import InterPodAffinityArgs, parse_inter_pod_affinity_args

ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

TopologyPair = tuple[str, str]


def _everything(_: Mapping[str, str]) -> bool:
    return True


def _nothing(_: Mapping[str, str]) -> bool:
    return False


def merge_namespaces(term: AffinityTerm, snapshot: Any, raw_selector_is_empty: bool) -> AffinityTerm:
    """``mergeAffinityTermNamespacesIfNotEmpty``: a real namespaceSelector becomes the names of
    the namespaces it selects now; ``{}`` stays 'all namespaces'."""
    if raw_selector_is_empty:
        return term
    names = snapshot.namespaces_matching(term.namespace_selector)
    return replace(term, namespaces=term.namespaces | frozenset(names), namespace_selector=_nothing)


def resolved_terms(pod: Pod, terms: tuple[AffinityTerm, ...], raws: list[Any], snapshot: Any) -> tuple:
    out = []
    for t, raw in zip(terms, raws):
        sel = raw.namespace_selector
        empty = sel is None or (not sel.match_labels and not sel.match_expressions)
        # nil selector: the term's selector is already 'nothing' — nothing to merge.
        out.append(t if sel is None else merge_namespaces(t, snapshot, empty))
    return tuple(out)


def raw_terms(pod: Pod, anti: bool, preferred: bool) -> list[Any]:
    aff = pod.spec.affinity
    pa = (aff.pod_anti_affinity if anti else aff.pod_affinity) if aff else None
    if pa is None:
        return []
    if preferred:
        return [w.pod_affinity_term for w in pa.preferred_during_scheduling_ignored_during_execution]
    if anti:   # as PodInfo holds them: repeats dropped (see distinct_terms)
        return distinct_terms(pa.required_during_scheduling_ignored_during_execution)
    return list(pa.required_during_scheduling_ignored_during_execution)


def matches_all(terms: tuple[AffinityTerm, ...], pod: Pod) -> bool:
    """``podMatchesAllAffinityTerms``: no terms match nothing."""
    return bool(terms) and all(t.matches(pod, {}) for t in terms)


@dataclass
class _PreFilterState:
    info: PodInfo
    affinity: tuple[AffinityTerm, ...]
    anti_affinity: tuple[AffinityTerm, ...]
    existing_anti_counts: dict[TopologyPair, int]
    affinity_counts: dict[TopologyPair, int]
    anti_counts: dict[TopologyPair, int]


class InterPodAffinity(Plugin):
    name = NAME
    pre_filter_counts_pods = True

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any] | None, path: str, file: str | None = None) -> InterPodAffinityArgs:
        return parse_inter_pod_affinity_args(raw, path, file)

    # --- filtering ---------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]):
        snap = self.handle.snapshot
        info = PodInfo(pod)
        affinity = resolved_terms(pod, info.required_affinity_terms, raw_terms(pod, False, False), snap)
        anti = resolved_terms(pod, info.required_anti_affinity_terms, raw_terms(pod, True, False), snap)
        ns_labels = snap.namespace_labels(pod.metadata.namespace)

        existing: dict[TopologyPair, int] = defaultdict(int)
        for ni in snap.node_infos:
            for ep in ni.pods_with_required_anti_affinity:
                for t in ep.required_anti_affinity_terms:
                    if t.matches(pod, ns_labels):
                        v = ni.labels.get(t.topology_key)
                        if v is not None:
                            existing[(t.topology_key, v)] += 1

        aff_counts: dict[TopologyPair, int] = defaultdict(int)
        anti_counts: dict[TopologyPair, int] = defaultdict(int)
        if affinity or anti:
            for ni in nodes:
                for ep in ni.pods:
                    if matches_all(affinity, ep.pod):
                        for t in affinity:
                            v = ni.labels.get(t.topology_key)
                            if v is not None:
                                aff_counts[(t.topology_key, v)] += 1
                    for t in anti:
                        if t.matches(ep.pod, {}):
                            v = ni.labels.get(t.topology_key)
                            if v is not None:
                                anti_counts[(t.topology_key, v)] += 1
        existing_d = {k: v for k, v in existing.items() if v}
        if not existing_d and not affinity and not anti:
            return None, SKIP
        state[self.name] = _PreFilterState(info, affinity, anti, existing_d,
                                           {k: v for k, v in aff_counts.items() if v},
                                           {k: v for k, v in anti_counts.items() if v})
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        s: _PreFilterState | None = pre_filter_state(self, state, pod)
        if s is None:
            return SUCCESS
        if not self._satisfies_affinity(s, node, pod):
            return unresolvable(ERR_REASON_AFFINITY)
        if s.anti_counts:
            for t in s.anti_affinity:
                v = node.labels.get(t.topology_key)
                if v is not None and s.anti_counts.get((t.topology_key, v), 0) > 0:
                    return unschedulable(ERR_REASON_ANTI_AFFINITY)
        if s.existing_anti_counts:
            for k, v in node.labels.items():
                if s.existing_anti_counts.get((k, v), 0) > 0:
                    return unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY)
        return SUCCESS

    @staticmethod
    def _satisfies_affinity(s: _PreFilterState, node: NodeInfo, pod: Pod) -> bool:
        pods_exist = True
        for t in s.affinity:
            v = node.labels.get(t.topology_key)
            if v is None:
                return False  # every topology key must exist on the node
            if s.affinity_counts.get((t.topology_key, v), 0) <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # The first pod of a group that has affinity to itself may go anywhere with the keys.
        return not s.affinity_counts and matches_all(s.affinity, pod)

    # --- scoring -----------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        args: InterPodAffinityArgs = self.args
        snap = self.handle.snapshot
        has_constraints = bool(raw_terms(pod, False, True) or raw_terms(pod, True, True))
        if args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP
        info = PodInfo(pod)
        pref_aff = resolved_terms(pod, info.preferred_affinity_terms, raw_terms(pod, False, True), snap)
        pref_anti = resolved_terms(pod, info.preferred_anti_affinity_terms, raw_terms(pod, True, True), snap)
        ns_labels = snap.namespace_labels(pod.metadata.namespace)
        topo: dict[str, dict[str, int]] = {}

        def add(term: AffinityTerm, weight: int, target: Pod, labels_ns: Mapping[str, str], node: NodeInfo,
                sign: int) -> None:
            if term.matches(target, labels_ns):
                v = node.labels.get(term.topology_key)
                if v is not None:
                    d = topo.setdefault(term.topology_key, {})
                    d[v] = d.get(v, 0) + weight * sign

        for ni in (snap.node_infos if has_constraints else snap.have_pods_with_affinity):
            if not has_constraints and not ni.pods_with_affinity:
                continue
            if not ni.labels:
                continue
            for ep in (ni.pods if has_constraints else ni.pods_with_affinity):
                for t in pref_aff:
                    add(t, t.weight, ep.pod, {}, ni, 1)
                for t in pref_anti:
                    add(t, t.weight, ep.pod, {}, ni, -1)
                if args.hard_pod_affinity_weight > 0:
                    for t in ep.required_affinity_terms:
                        add(t, args.hard_pod_affinity_weight, pod, ns_labels, ni, 1)
                if not args.ignore_preferred_terms_of_existing_pods:
                    for t in ep.preferred_affinity_terms:
                        add(t, t.weight, pod, ns_labels, ni, 1)
                    for t in ep.preferred_anti_affinity_terms:
                        add(t, t.weight, pod, ns_labels, ni, -1)
        if not topo:
            return SKIP
        state[self.name + "/score"] = topo
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        topo = state.get(self.name + "/score") or {}
        total = 0
        for key, values in topo.items():
            v = node.labels.get(key)
            if v is not None:
                total += values.get(v, 0)
        return total, SUCCESS

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
        if not state.get(self.name + "/score") or not scores:
            return SUCCESS
        lo, hi = min(scores.values()), max(scores.values())
        diff = hi - lo
        for k, s in scores.items():
            scores[k] = int(MAX_NODE_SCORE * ((s - lo) / diff)) if diff > 0 else 0
        return SUCCESS
