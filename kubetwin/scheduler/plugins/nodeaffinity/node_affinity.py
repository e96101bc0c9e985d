"""NodeAffinity: ``nodeSelector``, required and preferred node affinity, and the profile's
``addedAffinity`` that applies to every pod of the profile
(``pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go``)."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ....model.pod import NodeSelectorTerm, Pod, PreferredSchedulingTerm
from ...framework.interface import MAX_NODE_SCORE, CycleState, Plugin
from ...framework.status import SKIP, SUCCESS, Status, unresolvable
from ...framework.types import NodeInfo
from ...labels import map_selector_matcher, node_selector_matcher, node_selector_term_matcher
from ..helpers import default_normalize_score
from . import NAME
from .args import NodeAffinityArgs, parse_node_affinity_args

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

NodeMatcher = Callable[[Mapping[str, str], str], bool]


def required_node_affinity(pod: Pod) -> NodeMatcher:
    """``nodeaffinity.GetRequiredNodeAffinity``: nodeSelector AND required terms (ORed)."""
    selector = map_selector_matcher(pod.spec.node_selector) if pod.spec.node_selector else None
    aff = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    req = aff.required_during_scheduling_ignored_during_execution if aff else None
    terms = node_selector_matcher(req.node_selector_terms) if req is not None else None

    def match(labels: Mapping[str, str], name: str) -> bool:
        if selector is not None and not selector(labels):
            return False
        return terms is None or terms(labels, name)

    return match


def preferred_terms(terms: list[PreferredSchedulingTerm]) -> list[tuple[int, NodeMatcher]]:
    """Weighted matchers; zero-weight and empty terms are dropped, as upstream does."""
    return [(t.weight, node_selector_term_matcher(t.preference)) for t in terms
            if t.weight != 0 and (t.preference.match_expressions or t.preference.match_fields)]


def pod_preferred(pod: Pod) -> list[PreferredSchedulingTerm] | None:
    aff = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    if aff is None or not aff.preferred_during_scheduling_ignored_during_execution:
        return None
    return aff.preferred_during_scheduling_ignored_during_execution


class NodeAffinity(Plugin):
    name = NAME
    node_local = True
    reads_node_object_only = True

    def __init__(self, args: NodeAffinityArgs, handle: Any):
        super().__init__(args, handle)
        added = args.added_affinity
        req = added.required_during_scheduling_ignored_during_execution if added else None
        self.added_selector = node_selector_matcher(req.node_selector_terms) if req is not None else None
        pref = added.preferred_during_scheduling_ignored_during_execution if added else []
        self._added_preferred = preferred_terms(pref) if pref else None

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any] | None, path: str, file: str | None = None) -> NodeAffinityArgs:
        return parse_node_affinity_args(raw, path, file)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]):
        aff = pod.spec.affinity.node_affinity if pod.spec.affinity else None
        req = aff.required_during_scheduling_ignored_during_execution if aff else None
        if req is None and self.added_selector is None and not pod.spec.node_selector:
            return None, SKIP
        state[self.name] = required_node_affinity(pod)
        if req is None or not req.node_selector_terms:
            return None, SUCCESS
        names: set[str] | None = None
        for term in req.node_selector_terms:
            term_names = _term_node_names(term)
            if term_names is None:
                return None, SUCCESS  # a term without a name restriction: any node may match
            names = term_names if names is None else names | term_names
        if names is not None and not names:
            return None, unresolvable(ERR_REASON_CONFLICT)
        return names, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        if self.added_selector is not None and not self.added_selector(node.labels, node.name):
            return unresolvable(ERR_REASON_ENFORCED)
        match = state.get(self.name) or required_node_affinity(pod)
        if not match(node.labels, node.name):
            return unresolvable(ERR_REASON_POD)
        return SUCCESS

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        pref = pod_preferred(pod)
        if pref is None and self._added_preferred is None:
            return SKIP
        state[self.name + "/score"] = preferred_terms(pref or [])
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        count = 0
        for weight, m in self._added_preferred or ():
            if m(node.labels, node.name):
                count += weight
        terms = state.get(self.name + "/score")
        if terms is None:
            terms = preferred_terms(pod_preferred(pod) or [])
        for weight, m in terms:
            if m(node.labels, node.name):
                count += weight
        return count, SUCCESS

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return SUCCESS


def _term_node_names(term: NodeSelectorTerm) -> set[str] | None:
    """Names a term restricts to through ``matchFields metadata.name In``; None if it does not."""
    names: set[str] | None = None
    for r in term.match_fields:
        if r.key == "metadata.name" and r.operator == "In":
            s = set(r.values)
            names = s if names is None else names & s
    return names
