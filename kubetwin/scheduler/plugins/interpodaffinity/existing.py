"""The (anti-)affinity terms of the pods already bound, each distinct term once with the nodes
whose pods carry it, kept in step with the cluster from one cycle to the next.

InterPodAffinity's PreFilter (``getExistingAntiAffinityCounts`` in
``pkg/scheduler/framework/plugins/interpodaffinity/filtering.go``) matches every required
anti-affinity term of every bound pod against the incoming pod, and its PreScore
(``processExistingPod`` in ``scoring.go``) every required affinity and preferred (anti-)affinity
term of the bound pods. Replicas of one workload carry equal terms, so the vectorised twins
match each distinct term once: two terms are equal when they would match the same pods — the
same namespaces, label selector, namespace selector and topology key (a term's matchers are
built from exactly these) — and add to the same domains with the same weight. Only nodes that
carry the term's topology key count (upstream skips the others). The tables are brought up to
date from the cache's generations: the nodes changed since are read again, and any change that
is not one node's own (a node's labels, nominations, nodes added) reads every node again.

Not an upstream module: the fast path's index of what upstream walks pod by pod.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import msgspec

from ...framework.types import AffinityTerm, PodInfo
from .plugin import raw_terms

if TYPE_CHECKING:
    from ...backend.cache import ClusterState

_ENCODER = msgspec.json.Encoder()
#: (what the term is, weight, namespaces, topology key, label selector, namespace selector)
TermKey = tuple[str, int, frozenset[str], str, bytes, bytes]

REQUIRED_ANTI_AFFINITY = "requiredAntiAffinity"
REQUIRED_AFFINITY = "requiredAffinity"
PREFERRED_AFFINITY = "preferredAffinity"
PREFERRED_ANTI_AFFINITY = "preferredAntiAffinity"


def term_key(kind: str, term: AffinityTerm, raw: Any) -> TermKey:
    """What decides which pods ``term`` (built from the PodAffinityTerm ``raw``) matches, and
    what it adds where."""
    return (kind, term.weight, term.namespaces, term.topology_key, _ENCODER.encode(raw.label_selector),
            _ENCODER.encode(raw.namespace_selector))


def required_anti_affinity_terms(info: PodInfo) -> list[tuple[TermKey, AffinityTerm]]:
    """The terms the PreFilter matches: required anti-affinity."""
    return [(term_key(REQUIRED_ANTI_AFFINITY, t, r), t)
            for t, r in zip(info.required_anti_affinity_terms, raw_terms(info.pod, True, False))]


def scoring_terms(info: PodInfo) -> list[tuple[TermKey, AffinityTerm]]:
    """The terms the Score adds: required affinity, preferred affinity and anti-affinity."""
    return ([(term_key(REQUIRED_AFFINITY, t, r), t)
             for t, r in zip(info.required_affinity_terms, raw_terms(info.pod, False, False))]
            + [(term_key(PREFERRED_AFFINITY, t, r), t)
               for t, r in zip(info.preferred_affinity_terms, raw_terms(info.pod, False, True))]
            + [(term_key(PREFERRED_ANTI_AFFINITY, t, r), t)
               for t, r in zip(info.preferred_anti_affinity_terms, raw_terms(info.pod, True, True))])


class ExistingTerms:
    """Distinct terms of bound pods: key -> (a term, {node carrying its topology key: pods})."""

    __slots__ = ("generation", "terms", "of_node", "_anti")

    def __init__(self, anti: bool):
        self.generation = -1
        self.terms: dict[TermKey, tuple[AffinityTerm, dict[int, int]]] = {}
        #: node -> the keys its pods add (one per pod and term)
        self.of_node: dict[int, list[TermKey]] = {}
        #: required anti-affinity (PreFilter) or the scoring terms
        self._anti = anti

    def refresh(self, cs: "ClusterState") -> None:
        if self.generation == cs.generation:
            return
        changed = cs.changed_since(self.generation) if self.generation >= 0 else None
        nodes = cs.nodes_with_anti if self._anti else cs.nodes_with_affinity
        if changed is None:
            self.terms.clear()
            self.of_node.clear()
            for i in nodes:
                self._add(cs, i)
        else:
            for i in changed:
                self._drop(i)
                if i in nodes:
                    self._add(cs, i)
        self.generation = cs.generation

    def _add(self, cs: "ClusterState", i: int) -> None:
        keys: list[TermKey] = []
        ni = cs.infos[i]
        labels = ni.labels
        if self._anti:
            pods, terms_of = ni.pods_with_required_anti_affinity, required_anti_affinity_terms
        else:
            pods, terms_of = ni.pods_with_affinity, scoring_terms
        for ep in pods:
            for key, t in terms_of(ep):
                if t.topology_key not in labels:
                    continue
                got = self.terms.get(key)
                if got is None:
                    got = self.terms[key] = (t, {})
                got[1][i] = got[1].get(i, 0) + 1
                keys.append(key)
        if keys:
            self.of_node[i] = keys

    def _drop(self, i: int) -> None:
        for key in self.of_node.pop(i, ()):
            nodes = self.terms[key][1]
            left = nodes[i] - 1
            if left:
                nodes[i] = left
            else:
                del nodes[i]
                if not nodes:
                    del self.terms[key]


_TABLES: "weakref.WeakKeyDictionary[ClusterState, tuple[ExistingTerms, ExistingTerms]]" = weakref.WeakKeyDictionary()


def _tables(cs: "ClusterState") -> tuple[ExistingTerms, ExistingTerms]:
    got = _TABLES.get(cs)
    if got is None:
        got = _TABLES[cs] = (ExistingTerms(anti=True), ExistingTerms(anti=False))
    return got


def existing_anti_affinity(cs: "ClusterState") -> ExistingTerms:
    """The bound pods' distinct required anti-affinity terms, up to date."""
    table = _tables(cs)[0]
    table.refresh(cs)
    return table


def existing_scoring_terms(cs: "ClusterState") -> ExistingTerms:
    """The bound pods' distinct required affinity and preferred (anti-)affinity terms, up to date."""
    table = _tables(cs)[1]
    table.refresh(cs)
    return table
