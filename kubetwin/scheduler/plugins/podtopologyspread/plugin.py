"""PodTopologySpread: keep matching pods spread across topology domains (hard constraints in
Filter, soft ones in Score), with minDomains, node inclusion policies, matchLabelKeys and the
profile's default constraints (``pkg/scheduler/framework/plugins/podtopologyspread``:
``plugin.go``, ``common.go``, ``filtering.go``, ``scoring.go``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ....model.meta import LabelSelector, convert
from ....model.pod import Pod, TopologySpreadConstraint
from ...framework.interface import MAX_NODE_SCORE, CycleState, Plugin
from ...framework.status import SKIP, SUCCESS, Status, unresolvable, unschedulable
from ...framework.types import NodeInfo
from ...labels import label_selector_matcher, map_selector_matcher
from ..helpers import pre_filter_state, untolerated_taint
from ..nodeaffinity.node_affinity import required_node_affinity
from . import NAME
from .args import HOSTNAME, SYSTEM, PodTopologySpreadArgs, parse_pod_topology_spread_args
from .repeats import held_once, sequential_sum

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
MAX_INT32 = 2**31 - 1
_SELECTOR_KEY = __import__("msgspec").json.Encoder()


@dataclass(frozen=True)
class Selector:
    """A compiled label selector that remembers whether it is empty (selects everything)."""

    matches: Callable[[Mapping[str, str]], bool]
    empty: bool = False
    nothing: bool = False


NOTHING = Selector(lambda _: False, nothing=True)


def selector_of(ls: LabelSelector | None) -> Selector:
    if ls is None:
        return NOTHING
    return Selector(label_selector_matcher(ls), empty=not ls.match_labels and not ls.match_expressions)


def and_labels(sel: Selector, labels: Mapping[str, str]) -> Selector:
    """``mergeLabelSetWithSelector``: AND ``key = value`` for each label; 'nothing' stays nothing."""
    if sel.nothing or not labels:
        return sel
    extra = map_selector_matcher(labels)
    base = sel.matches
    return Selector(lambda l: extra(l) and base(l))


@dataclass(frozen=True)
class Constraint:
    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"


def count_matching(node: NodeInfo, sel: Selector, namespace: str) -> int:
    """``countPodsMatchSelector``: an empty selector counts nothing; terminating pods never count."""
    if sel.empty:
        return 0
    n = 0
    for pi in node.pods:
        p = pi.pod
        if p.metadata.deletion_timestamp is not None or p.metadata.namespace != namespace:
            continue
        if sel.matches(p.metadata.labels):
            n += 1
    return n


@dataclass
class _FilterState:
    constraints: list[Constraint]
    counts: list[dict[str, int]] = field(default_factory=list)


@dataclass
class _ScoreState:
    constraints: list[Constraint]
    counts: list[dict[str, int]]
    weights: list[float]
    ignored: set[str]
    #: the pod's soft constraints as written, each its index in ``constraints`` (None: no repeats)
    order: tuple[int, ...] | None = None


class PodTopologySpread(Plugin):
    name = NAME
    pre_filter_counts_pods = True

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any] | None, path: str, file: str | None = None) -> PodTopologySpreadArgs:
        return parse_pod_topology_spread_args(raw, path, file)

    @property
    def system_defaulted(self) -> bool:
        return self.args.defaulting_type == SYSTEM

    # --- constraints ---------------------------------------------------------------------------

    def constraints(self, pod: Pod, action: str) -> list[Constraint]:
        """The pod's constraints of ``action``, identical ones once (see :mod:`.repeats`)."""
        return self.constraints_in_order(pod, action)[0]

    def constraints_in_order(self, pod: Pod, action: str) -> tuple[list[Constraint], tuple[int, ...] | None]:
        """:meth:`constraints`, and when some of the pod's own repeat, each written one's index
        among them (Score adds a term per constraint as written)."""
        if pod.spec.topology_spread_constraints:
            written, order = held_once(pod.spec.topology_spread_constraints, action)
            return self._filter_constraints(written, pod.metadata.labels, action), order
        got = self.default_constraints(pod, action)
        return (got[0] if got is not None else []), None

    def default_constraints(self, pod: Pod, action: str) -> tuple[list[Constraint], tuple] | None:
        """The profile's default constraints for a pod without its own, all on the selector of
        the Services and controllers that select the pod, with a key naming that selector (so
        matching pods can be counted once and kept in step); None when there are none."""
        cons = self._filter_constraints(list(self.args.default_constraints), pod.metadata.labels, action)
        if not cons:
            return None
        got = self._default_selector_keyed(pod)
        if got is None:
            return None
        sel, key = got
        return [Constraint(c.max_skew, c.topology_key, sel, c.min_domains, c.node_affinity_policy,
                           c.node_taints_policy) for c in cons], key

    def _filter_constraints(self, constraints: list[TopologySpreadConstraint], pod_labels: Mapping[str, str],
                            action: str) -> list[Constraint]:
        gates = self.handle.gates
        out = []
        for c in constraints:
            if c.when_unsatisfiable != action:
                continue
            sel = selector_of(c.label_selector)
            if gates.enabled("MatchLabelKeysInPodTopologySpread") and c.match_label_keys:
                extra = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
                sel = and_labels(sel, extra)
            aff, taints = "Honor", "Ignore"
            if gates.enabled("NodeInclusionPolicyInPodTopologySpread"):
                aff = c.node_affinity_policy or aff
                taints = c.node_taints_policy or taints
            out.append(Constraint(c.max_skew, c.topology_key, sel,
                                  c.min_domains if c.min_domains is not None else 1, aff, taints))
        return out

    def _default_selector(self, pod: Pod) -> Selector | None:
        got = self._default_selector_keyed(pod)
        return got[0] if got is not None else None

    def _default_selector_keyed(self, pod: Pod) -> tuple[Selector, tuple] | None:
        """``helper.DefaultSelector``: services, RCs, ReplicaSets and StatefulSets selecting the
        pod; with a key of the merged label set and the controllers' selectors."""
        objs = self.handle.objects
        ns = pod.metadata.namespace
        labels = pod.metadata.labels
        label_set: dict[str, str] = {}
        for svc in objs.get("Service", []):
            meta = svc.get("metadata") or {}
            if meta.get("namespace", "default") != ns:
                continue
            sel = (svc.get("spec") or {}).get("selector")
            if sel is None:
                continue
            if all(labels.get(k) == v for k, v in sel.items()):
                label_set.update(sel)
        extra: list[Callable[[Mapping[str, str]], bool]] = []
        extra_keys: list[bytes] = []
        owner = next((o for o in pod.metadata.owner_references if o.controller), None)
        if owner is not None:
            kinds = {("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")}
            if (owner.api_version, owner.kind) in kinds:
                for obj in objs.get(owner.kind, []):
                    meta = obj.get("metadata") or {}
                    if meta.get("name") != owner.name or meta.get("namespace", "default") != ns:
                        continue
                    spec_sel = (obj.get("spec") or {}).get("selector")
                    if owner.kind == "ReplicationController":
                        label_set.update(spec_sel or {})
                    elif spec_sel is not None:
                        ls = convert(spec_sel, LabelSelector)
                        if ls.match_labels or ls.match_expressions:
                            extra.append(label_selector_matcher(ls))
                            extra_keys.append(_SELECTOR_KEY.encode(ls))
        if not label_set and not extra:
            return None
        base = map_selector_matcher(label_set)
        key = ("default-selector", tuple(sorted(label_set.items())), tuple(extra_keys))
        return Selector(lambda l: base(l) and all(m(l) for m in extra)), key

    def _included(self, c: Constraint, pod: Pod, node: NodeInfo, affinity: Any) -> bool:
        """``matchNodeInclusionPolicies``."""
        if c.node_affinity_policy == "Honor" and not affinity(node.labels, node.name):
            return False
        if c.node_taints_policy == "Honor":
            cmp_ops = self.handle.gates.enabled("TaintTolerationComparisonOperators")
            if untolerated_taint(node.node.spec.taints, pod.spec.tolerations, cmp_ops) is not None:
                return False
        return True

    # --- filtering -----------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]):
        cons = self.constraints(pod, "DoNotSchedule")
        if not cons:
            return None, SKIP
        affinity = required_node_affinity(pod)
        counts: list[dict[str, int]] = [{} for _ in cons]
        ns = pod.metadata.namespace
        for ni in self.handle.snapshot.node_infos:
            if not all(c.topology_key in ni.labels for c in cons):
                continue
            for i, c in enumerate(cons):
                if not self._included(c, pod, ni, affinity):
                    continue
                v = ni.labels[c.topology_key]
                counts[i][v] = counts[i].get(v, 0) + count_matching(ni, c.selector, ns)
        state[self.name] = _FilterState(cons, counts)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        s: _FilterState | None = pre_filter_state(self, state, pod)
        if s is None:
            return SUCCESS
        for i, c in enumerate(s.constraints):
            v = node.labels.get(c.topology_key)
            if v is None:
                return unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
            domain_counts = s.counts[i]
            min_match = min(domain_counts.values()) if domain_counts else MAX_INT32
            if len(domain_counts) < c.min_domains:
                min_match = 0  # fewer eligible domains than minDomains: the global minimum is 0
            self_match = 1 if c.selector.matches(pod.metadata.labels) else 0
            skew = domain_counts.get(v, 0) + self_match - min_match
            if skew > c.max_skew:
                return unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return SUCCESS

    # --- scoring -------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status:
        all_nodes = self.handle.snapshot.node_infos
        if not all_nodes:
            return SKIP
        require_all = bool(pod.spec.topology_spread_constraints) or not self.system_defaulted
        cons, order = self.constraints_in_order(pod, "ScheduleAnyway")
        if not cons:
            return SKIP
        counts: list[dict[str, int]] = [{} for _ in cons]
        ignored: set[str] = set()
        sizes = [0] * len(cons)
        for ni in nodes:
            if require_all and not all(c.topology_key in ni.labels for c in cons):
                ignored.add(ni.name)
                continue
            for i, c in enumerate(cons):
                if c.topology_key == HOSTNAME:
                    continue
                v = ni.labels.get(c.topology_key, "")
                if v not in counts[i]:
                    counts[i][v] = 0
                    sizes[i] += 1
        weights = []
        for i, c in enumerate(cons):
            size = len(nodes) - len(ignored) if c.topology_key == HOSTNAME else sizes[i]
            weights.append(math.log(size + 2))
        affinity = required_node_affinity(pod)
        inclusion = self.handle.gates.enabled("NodeInclusionPolicyInPodTopologySpread")
        ns = pod.metadata.namespace
        for ni in all_nodes:
            if not inclusion and not affinity(ni.labels, ni.name):
                continue
            if require_all and not all(c.topology_key in ni.labels for c in cons):
                continue
            for i, c in enumerate(cons):
                if inclusion and not self._included(c, pod, ni, affinity):
                    continue
                v = ni.labels.get(c.topology_key, "")
                if v not in counts[i]:
                    continue
                counts[i][v] += count_matching(ni, c.selector, ns)
        state[self.name + "/score"] = _ScoreState(cons, counts, weights, ignored, order)
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        s: _ScoreState | None = state.get(self.name + "/score")
        if s is None or node.name in s.ignored:
            return 0, SUCCESS
        terms: list[float | None] = []
        for i, c in enumerate(s.constraints):
            v = node.labels.get(c.topology_key)
            if v is None:
                terms.append(None)
                continue
            if c.topology_key == HOSTNAME:
                cnt = count_matching(node, c.selector, pod.metadata.namespace)
            else:
                cnt = s.counts[i].get(v, 0)
            terms.append(cnt * s.weights[i] + (c.max_skew - 1))
        if s.order is not None:   # repeated constraints: each term added once per copy, in order
            return _go_round(sequential_sum(terms, s.order)), SUCCESS
        total = 0.0
        for t in terms:
            if t is not None:
                total += t
        return _go_round(total), SUCCESS

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
        s: _ScoreState | None = state.get(self.name + "/score")
        if s is None:
            return SUCCESS
        valid = {k: v for k, v in scores.items() if k not in s.ignored}
        lo = min(valid.values(), default=2**63 - 1)
        hi = max(list(valid.values()) + [0])
        for k in scores:
            if k in s.ignored:
                scores[k] = 0
            elif hi == 0:
                scores[k] = MAX_NODE_SCORE
            else:
                scores[k] = MAX_NODE_SCORE * (hi + lo - scores[k]) // hi
        return SUCCESS


def _go_round(x: float) -> int:
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))
