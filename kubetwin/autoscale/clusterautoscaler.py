"""Cluster Autoscaler: the binpacking estimator and the expanders.

Why: "how many nodes of which group does a scale-up add" is the estimator's answer, not a
division of requests by allocatable: pods are packed group by group in decreasing size onto
fresh copies of the node-group template, a group stops adding nodes once a node it opened stays
empty, and the limiter caps the nodes per scale-up. The expander then picks one option by its
own rule. The fit test is passed in (:data:`FitPredicate`), so the simulation can give the
scheduler's filters — or, beyond upstream, the kubelet's admission — for the same packing.

Upstream (read, not copied): ``kubernetes/autoscaler`` tag ``cluster-autoscaler-1.36.1``:
``estimator/binpacking_estimator.go`` (``Estimate``, ``tryToScheduleOnExistingNodes``,
``tryToScheduleOnNewNodes``, ``tryFastPath``), ``estimator/decreasing_pod_orderer.go``,
``estimator/threshold_based_limiter.go``, ``expander/{random,mostpods,leastnodes,waste,priority}``,
``expander/factory/{chain,expander_factory}.go``, flag defaults in ``config/flags/flags.go``.

Known differences, stated rather than hidden: Go's ``sort.Slice`` (pdqsort) is not stable for
more than 12 equivalence groups with equal scores, ours is; the snapshot's node iteration for
"any new node" is taken in creation order; ``random`` uses a seeded Python generator where
upstream draws from Go's unseeded ``math/rand``.
"""

from __future__ import annotations

import random as _random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

import yaml

from ..errors import InputError
from ..model.strict import unknown_key_error

#: ``--max-nodes-per-scaleup``
DEFAULT_MAX_NODES_PER_SCALE_UP = 1000
#: ``expander/priority``: the ConfigMap name and key it reads.
PRIORITY_CONFIGMAP_NAME = "cluster-autoscaler-priority-expander"
PRIORITY_CONFIGMAP_KEY = "priorities"


@dataclass(frozen=True)
class NodeTemplate:
    """A node group's template node (``TemplateNodeInfo``): quantities in cpu millicores and
    bytes (other resources in their own units)."""

    node_group: str
    capacity: Mapping[str, int]
    allocatable: Mapping[str, int]
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, str], ...] = ()
    #: the pods a new node starts with (``podsExpectedOnFreshNode``: DaemonSet and mirror pods)
    pods: tuple["CAPod", ...] = ()


@dataclass(frozen=True)
class CAPod:
    """A pending pod as the estimator sees it: its ``PodRequests`` and an opaque payload for
    the fit predicate."""

    name: str
    requests: Mapping[str, int]
    payload: Any = None


@dataclass
class NewNode:
    """A node the estimator added to its forked snapshot (``e-0``, ``e-1``, ...)."""

    name: str
    template: NodeTemplate
    pods: list[CAPod] = field(default_factory=list)
    #: the placed pods' summed requests (kept by the estimator as it places pods)
    used: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for pod in self.template.pods:   # the template node's own pods are there from the start
            if pod not in self.pods:
                self.place(pod)

    def place(self, pod: CAPod) -> None:
        self.pods.append(pod)
        for r, v in pod.requests.items():
            self.used[r] = self.used.get(r, 0) + v


#: May ``pod`` go on ``node`` (with the pods already placed there)?
FitPredicate = Callable[[CAPod, NewNode], bool]
#: A pod that did not fit the last node added, tried elsewhere (upstream: a pod spread by hostname
#: failing on its spread constraint goes to any other node of the snapshot, existing ones
#: included): the estimator node it goes to, the name of an existing node (the callee keeps its
#: own record of the pod there), or None.
Elsewhere = Callable[[CAPod, NewNode, Sequence[NewNode]], "NewNode | str | None"]


def resource_fit(pod: CAPod, node: NewNode) -> bool:
    """The default predicate: requests (and one ``pods`` slot) within the template's
    allocatable, as the scheduler's ``NodeResourcesFit`` counts them."""
    alloc = node.template.allocatable
    used = node.used
    if "pods" in alloc and len(node.pods) + 1 > alloc["pods"]:
        return False
    for r, v in pod.requests.items():
        if v == 0:
            continue
        if used.get(r, 0) + v > alloc.get(r, 0):
            return False
    return True


@dataclass(frozen=True)
class Estimate:
    node_count: int
    scheduled_pods: tuple[CAPod, ...]
    nodes: tuple[tuple[str, tuple[str, ...]], ...]  # node name → pod names, for the report


def pod_score(pod: CAPod, template: NodeTemplate) -> float:
    """``DecreasingPodOrderer.calculatePodScore``: cpu/allocatable + memory/allocatable."""
    score = 0.0
    cpu = template.allocatable.get("cpu", 0)
    if cpu > 0:
        score += pod.requests.get("cpu", 0) / cpu
    mem = template.allocatable.get("memory", 0)
    if mem > 0:
        score += pod.requests.get("memory", 0) / mem
    return score


class _Limiter:
    """``thresholdBasedEstimationLimiter`` with a node cap (the smallest of the thresholds:
    ``--max-nodes-per-scaleup``, node-group and cluster capacity left); 0 = no cap."""

    def __init__(self, max_nodes: int):
        self.max_nodes = max_nodes
        self.nodes = 0

    def permission_to_add_node(self) -> bool:
        if self.max_nodes > 0 and self.nodes >= self.max_nodes:
            return False
        self.nodes += 1
        return True


def binpacking_estimate(groups: Sequence[Sequence[CAPod]], template: NodeTemplate, fits: FitPredicate = resource_fit,
                        *, max_nodes: int = DEFAULT_MAX_NODES_PER_SCALE_UP, fastpath: bool = False,
                        elsewhere: Elsewhere | None = None) -> Estimate:
    """``BinpackingNodeEstimator.Estimate``: pod equivalence groups ordered by decreasing score;
    each group first fills the nodes already added, then the last added node (or, through
    ``elsewhere``, another node), then new nodes — stopping for the group when a pod does not fit
    a fresh node, and adding no node while the last one added is still empty. Nodes that received
    no pod are not counted; an existing node ``elsewhere`` put a pod on is counted, as upstream's
    ``newNodesWithPods`` does."""
    if fastpath:
        raise InputError("--fastpath-binpacking-enabled is not modelled (upstream default false)",
                         path="fastpath", fix="leave fastpath binpacking off")
    ordered = sorted((tuple(g) for g in groups if g), key=lambda g: -pod_score(g[0], template))
    ordered += [tuple(g) for g in groups if not g]
    limiter = _Limiter(max_nodes)
    nodes: list[NewNode] = []
    with_pods: set[str] = set()
    scheduled: list[CAPod] = []
    last: NewNode | None = None

    existing: dict[str, list[str]] = {}

    def track(pod: CAPod, node: NewNode | str) -> None:
        if isinstance(node, str):
            existing.setdefault(node, []).append(pod.name)
            with_pods.add(node)
        else:
            node.place(pod)
            with_pods.add(node.name)
        scheduled.append(pod)

    new_nodes_available = True
    for group in ordered:
        # tryToScheduleOnExistingNodes: stop at the first pod that fits none
        index = 0
        while index < len(group):
            pod = group[index]
            target = next((n for n in nodes if fits(pod, n)), None)
            if target is None:
                break
            track(pod, target)
            index += 1
        if not new_nodes_available:
            continue
        # tryToScheduleOnNewNodes
        for pod in group[index:]:
            found = False
            if last is not None:
                if fits(pod, last):
                    track(pod, last)
                    found = True
                elif elsewhere is not None:
                    other = elsewhere(pod, last, nodes)
                    if other is not None:
                        track(pod, other)
                        found = True
            if found:
                continue
            if last is not None and last.name not in with_pods:
                break  # the last node added is still empty: more would not help this group
            if not limiter.permission_to_add_node():
                new_nodes_available = False
                break
            last = NewNode(f"e-{len(nodes)}", template)
            nodes.append(last)
            if not fits(pod, last):
                break
            track(pod, last)
    counted = tuple((n.name, tuple(p.name for p in n.pods)) for n in nodes if n.name in with_pods)
    counted += tuple((name, tuple(pods)) for name, pods in existing.items())
    return Estimate(len(counted), tuple(scheduled), counted)


# --- expanders --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """``expander.Option``: a node group, how many nodes, which pods they would host."""

    node_group: str
    node_count: int
    pods: tuple[CAPod, ...]
    debug: str = ""


class Filter(Protocol):
    def best_options(self, options: Sequence[Option], templates: Mapping[str, NodeTemplate]) -> list[Option]: ...


class MostPods:
    """``mostpods``: the options scheduling the most pods."""

    def best_options(self, options: Sequence[Option], templates: Mapping[str, NodeTemplate]) -> list[Option]:
        best: list[Option] = []
        most = 0
        for o in options:
            if len(o.pods) == most:
                best.append(o)
                continue
            if len(o.pods) > most:
                most, best = len(o.pods), [o]
        return best


class LeastNodes:
    """``leastnodes``: the options adding the fewest (but some) nodes."""

    def best_options(self, options: Sequence[Option], templates: Mapping[str, NodeTemplate]) -> list[Option]:
        best: list[Option] = []
        least: int | None = None
        for o in options:
            if o.node_count == 0:
                continue
            if o.node_count == least:
                best.append(o)
            elif least is None or o.node_count < least:
                least, best = o.node_count, [o]
        return best


class LeastWaste:
    """``waste``: the smallest unused fraction of cpu plus memory *capacity* over the new nodes."""

    def best_options(self, options: Sequence[Option], templates: Mapping[str, NodeTemplate]) -> list[Option]:
        best: list[Option] | None = None
        least = 0.0
        for o in options:
            t = templates.get(o.node_group)
            if t is None:
                continue
            cpu_req = sum(p.requests.get("cpu", 0) for p in o.pods)
            mem_req = sum(p.requests.get("memory", 0) for p in o.pods)
            avail_cpu = t.capacity.get("cpu", 0) * o.node_count
            avail_mem = t.capacity.get("memory", 0) * o.node_count
            score = _go_fdiv(avail_cpu - cpu_req, avail_cpu) + _go_fdiv(avail_mem - mem_req, avail_mem)
            if best is not None and score == least:
                best.append(o)
            if best is None or score < least:
                least, best = score, [o]
        return best or []


def _go_fdiv(a: int, b: int) -> float:
    """Go float64 division (x/0 is ±Inf or NaN, not an exception)."""
    if b == 0:
        return float("nan") if a == 0 else (float("inf") if a > 0 else float("-inf"))
    return a / b


class Random:
    """``random``: one option chosen at random (seeded here, for reproducible runs)."""

    def __init__(self, seed: int = 0):
        self.rng = _random.Random(seed)

    def best_options(self, options: Sequence[Option], templates: Mapping[str, NodeTemplate]) -> list[Option]:
        if not options:
            return []
        return [options[self.rng.randrange(len(options))]]


def parse_priorities(text: str, file: str | None = None) -> dict[int, list[re.Pattern[str]]]:
    """The priority expander's ConfigMap ``data.priorities``: YAML ``{int: [regexp, ...]}``.
    Python's ``re`` stands in for Go RE2 (``regexp.MatchString``: an unanchored search)."""
    path = f"data.{PRIORITY_CONFIGMAP_KEY}"
    if text == "":
        raise InputError(f"priority configuration in {PRIORITY_CONFIGMAP_NAME} configmap is empty; please provide "
                         "valid configuration", path=path, file=file)
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise InputError(f"Can't parse YAML with priorities in the configmap: {e}", path=path, file=file) from None
    if not isinstance(raw, dict):
        raise InputError("priorities must map integer priorities to lists of regular expressions", path=path, file=file)
    out: dict[int, list[re.Pattern[str]]] = {}
    for prio, res in raw.items():
        if isinstance(prio, bool) or not isinstance(prio, int):
            try:
                prio = int(str(prio), 10)
            except ValueError:
                raise InputError(f"priority {prio!r} is not an integer", path=path, file=file) from None
        if not isinstance(res, list) or not all(isinstance(r, str) for r in res):
            raise InputError(f"priority {prio}: expected a list of regular expressions", path=path, file=file)
        for r in res:
            try:
                out.setdefault(prio, []).append(re.compile(r))
            except re.error as e:
                raise InputError(f"Can't compile regexp rule for priority {prio} and rule {r}: {e}", path=path,
                                 file=file) from None
    return out


def parse_priority_configmap(cm: Mapping[str, Any], file: str | None = None) -> dict[int, list[re.Pattern[str]]]:
    data = cm.get("data") or {}
    if PRIORITY_CONFIGMAP_KEY not in data:
        raise InputError(f"Wrong configmap for priority expander, doesn't contain {PRIORITY_CONFIGMAP_KEY} key",
                         path="data", file=file)
    return parse_priorities(str(data[PRIORITY_CONFIGMAP_KEY]), file)


class Priority:
    """``priority``: the options whose node group matches a rule of the highest priority;
    groups matching no rule are dropped; if none matches, every option is kept."""

    def __init__(self, priorities: Mapping[int, Sequence[re.Pattern[str]]]):
        self.priorities = priorities

    def best_options(self, options: Sequence[Option], templates: Mapping[str, NodeTemplate]) -> list[Option]:
        if not options:
            return []
        max_prio = -1
        best: list[Option] = []
        for o in options:
            for prio, rules in self.priorities.items():
                if not any(r.search(o.node_group) for r in rules):
                    continue
                if prio < max_prio:
                    continue
                if prio > max_prio:
                    max_prio, best = prio, []
                best.append(o)
        return best if best else list(options)


EXPANDERS = ("random", "most-pods", "least-waste", "least-nodes", "priority")
_NOT_MODELLED = ("price", "grpc")


def build_expander(names: Sequence[str], *, priorities: Mapping[int, Sequence[re.Pattern[str]]] | None = None,
                   seed: int = 0, path: str = "--expander") -> Callable[[Sequence[Option], Mapping[str, NodeTemplate]], Option | None]:
    """``Factory.Build`` + ``chainStrategy``: filters in order, stopping when one leaves a
    single option, then a random choice; ``random`` must come last, names only once."""
    filters: list[Filter] = []
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise InputError(f"Expander {name} was specified multiple times, each expander must not be specified "
                             "more than once", path=path)
        if seen and "random" in seen:
            raise InputError(f"Expander {name} came after an expander {names[i - 1]} that will always return only one "
                             f"result, this is not allowed since {name} will never be used", path=path)
        seen.add(name)
        if name in _NOT_MODELLED:
            raise InputError(f"expander {name} is not modelled by kubetwin", path=path,
                             fix=f"use one of {', '.join(EXPANDERS)}")
        if name not in EXPANDERS:
            raise unknown_key_error(name, EXPANDERS, path=path, what="expander")
        if name == "priority":
            if priorities is None:
                raise InputError(f"the priority expander needs the {PRIORITY_CONFIGMAP_NAME} ConfigMap", path=path)
            filters.append(Priority(priorities))
        elif name == "random":
            filters.append(Random(seed))
        else:
            simple: dict[str, Callable[[], Filter]] = {"most-pods": MostPods, "least-waste": LeastWaste,
                                                       "least-nodes": LeastNodes}
            filters.append(simple[name]())
    fallback = Random(seed)

    def best_option(options: Sequence[Option], templates: Mapping[str, NodeTemplate]) -> Option | None:
        current = list(options)
        for f in filters:
            current = f.best_options(current, templates)
            if len(current) == 1:
                return current[0]
        chosen = fallback.best_options(current, templates)
        return chosen[0] if chosen else None

    return best_option
