"""Cluster state as one scheduling cycle sees it: ``PodInfo``, ``NodeInfo``, ``Snapshot``.

Mirrors ``pkg/scheduler/framework/types.go``: a PodInfo pre-parses a pod's affinity terms
once (namespaces resolved, selectors compiled); a NodeInfo aggregates what its pods take
(requests, non-zero requests, host ports) so filters do not walk pods again.
Resource amounts are plain ints: cpu in millicores, everything else in units (bytes, pods,
devices) — the ``framework.Resource`` convention.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import msgspec

from ...model.features import FeatureGates
from ...model.node import Node
from ...model.pod import Pod, PodAffinityTerm, is_sidecar
from ...model.quantity import Quantity
from ..labels import Labels, Matcher, label_selector_matcher

#: ``schedutil.DefaultMilliCPURequest`` / ``DefaultMemoryRequest``: what a container without a
#: cpu / memory request counts for in scoring, so empty pods do not all pile onto one node.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


def amount(name: str, q: Quantity) -> int:
    """A quantity in the scheduler's unit for ``name``: millicores for cpu, else ``Value()``."""
    return q.milli_value() if name == "cpu" else q.value()


def resource_amounts(rl: Mapping[str, Quantity]) -> dict[str, int]:
    return {k: amount(k, v) for k, v in rl.items()}


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """``framework.AffinityTerm``: a PodAffinityTerm with namespaces and selectors resolved."""

    namespaces: frozenset[str]
    selector: Matcher
    topology_key: str
    namespace_selector: Matcher
    weight: int = 0

    def matches(self, pod: Pod, ns_labels: Labels) -> bool:
        if pod.metadata.namespace in self.namespaces or self.namespace_selector(ns_labels):
            return self.selector(pod.metadata.labels)
        return False


def _nothing(_: Labels) -> bool:
    return False


def affinity_term(owner: Pod, term: PodAffinityTerm, weight: int = 0) -> AffinityTerm:
    """Namespaces default to the owner's when neither ``namespaces`` nor a selector is set."""
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((owner.metadata.namespace,))
    else:
        namespaces = frozenset(term.namespaces)
    ns_sel = label_selector_matcher(term.namespace_selector) if term.namespace_selector is not None else _nothing
    return AffinityTerm(namespaces, label_selector_matcher(term.label_selector), term.topology_key, ns_sel, weight)


_TERM_ENCODER = msgspec.json.Encoder()


def distinct_terms(terms: Sequence[PodAffinityTerm]) -> list[PodAffinityTerm]:
    """``terms`` without repeats, first occurrences in order.

    For required anti-affinity only: its terms are a conjunction checked for "any matching pod
    in the domain" (counts compared with zero) and never scored, so a repeated term changes no
    answer — while 100,000 copies of one term (a pod the API server would refuse as too large)
    cost 100,000 matches per pod per cycle. Required affinity is not deduplicated: an existing
    pod's required affinity terms each add ``hardPodAffinityWeight`` in Score."""
    if len(terms) < _CACHED_FROM:
        return _distinct(terms)
    # a long list is met again every cycle (PodInfo is rebuilt): its answer kept by identity,
    # the list itself held so its id is not reused
    hit = _LONG_DISTINCT.get(id(terms))
    if hit is None or hit[0] is not terms:
        if len(_LONG_DISTINCT) >= 64:
            _LONG_DISTINCT.clear()
        hit = _LONG_DISTINCT[id(terms)] = (terms, _distinct(terms))
    return list(hit[1])


#: term lists at least this long have their distinct terms kept (see distinct_terms)
_CACHED_FROM = 64
_LONG_DISTINCT: dict[int, tuple[Sequence[PodAffinityTerm], list[PodAffinityTerm]]] = {}


def _distinct(terms: Sequence[PodAffinityTerm]) -> list[PodAffinityTerm]:
    seen: set[bytes] = set()
    out = []
    for t in terms:
        k = _TERM_ENCODER.encode(t)
        if k not in seen:
            seen.add(k)
            out.append(t)
    return out


class PodInfo:
    """A pod with its affinity terms parsed once."""

    __slots__ = ("pod", "required_affinity_terms", "required_anti_affinity_terms",
                 "preferred_affinity_terms", "preferred_anti_affinity_terms")

    required_affinity_terms: tuple[AffinityTerm, ...]
    required_anti_affinity_terms: tuple[AffinityTerm, ...]
    preferred_affinity_terms: tuple[AffinityTerm, ...]
    preferred_anti_affinity_terms: tuple[AffinityTerm, ...]

    def __init__(self, pod: Pod):
        self.pod = pod
        aff = pod.spec.affinity
        if aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None):   # most pods
            self.required_affinity_terms = self.required_anti_affinity_terms = ()
            self.preferred_affinity_terms = self.preferred_anti_affinity_terms = ()
            return
        pa = aff.pod_affinity if aff else None
        paa = aff.pod_anti_affinity if aff else None
        self.required_affinity_terms = tuple(
            affinity_term(pod, t) for t in (pa.required_during_scheduling_ignored_during_execution if pa else ()))
        self.required_anti_affinity_terms = tuple(
            affinity_term(pod, t)
            for t in distinct_terms(paa.required_during_scheduling_ignored_during_execution if paa else ()))
        self.preferred_affinity_terms = tuple(
            affinity_term(pod, w.pod_affinity_term, w.weight)
            for w in (pa.preferred_during_scheduling_ignored_during_execution if pa else ()))
        self.preferred_anti_affinity_terms = tuple(
            affinity_term(pod, w.pod_affinity_term, w.weight)
            for w in (paa.preferred_during_scheduling_ignored_during_execution if paa else ()))

    @property
    def has_affinity(self) -> bool:
        aff = self.pod.spec.affinity
        return aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None)

    @property
    def has_required_anti_affinity(self) -> bool:
        return bool(self.required_anti_affinity_terms)


@dataclass(frozen=True, slots=True)
class HostPort:
    ip: str
    protocol: str
    port: int


def host_ports(pod: Pod) -> list[HostPort]:
    """Host ports a pod takes: app containers and sidecars; regular init containers end before."""
    spec = pod.spec
    for c in spec.containers:
        if c.ports:
            break
    else:
        for c in spec.init_containers:
            if c.ports:
                break
        else:
            return []   # no container declares a port (most pods): nothing to look at
    out = []
    containers = [c for c in pod.spec.init_containers if is_sidecar(c)] + list(pod.spec.containers)
    for c in containers:
        for p in c.ports:
            if p.host_port <= 0:
                continue
            out.append(HostPort(p.host_ip or "0.0.0.0", p.protocol or "TCP", p.host_port))
    return out


def ports_conflict(used: Iterable[HostPort], want: HostPort) -> bool:
    """Same protocol and port, and the same IP or either side on 0.0.0.0 (``HostPortInfo.CheckConflict``)."""
    for u in used:
        if u.port == want.port and u.protocol == want.protocol and (
                u.ip == want.ip or u.ip == "0.0.0.0" or want.ip == "0.0.0.0"):
            return True
    return False


class NodeInfo:
    """One node and the pods on it, with the sums plugins read."""

    __slots__ = ("node", "name", "labels", "pods", "_requested", "_non_zero", "_allocatable", "used_ports",
                 "pods_with_affinity", "pods_with_required_anti_affinity", "_accounting")

    def __init__(self, node: Node, accounting: "ResourceAccounting"):
        self.node = node
        self.name = node.metadata.name
        self.labels: Mapping[str, str] = node.metadata.labels
        self.pods: list[PodInfo] = []
        self.used_ports: list[HostPort] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self._accounting = accounting
        self._requested: dict[str, int] | None = None
        self._non_zero: dict[str, int] | None = None
        self._allocatable: dict[str, int] | None = None

    def add_pod(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.has_affinity:
            self.pods_with_affinity.append(pi)
        if pi.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(pi)
        self.used_ports.extend(host_ports(pi.pod))
        if self._requested is not None:
            self._add_amounts(pi.pod, 1)

    def remove_pod(self, pod: Pod) -> None:
        uid = pod.uid
        self.pods = [p for p in self.pods if p.pod.uid != uid]
        self.pods_with_affinity = [p for p in self.pods_with_affinity if p.pod.uid != uid]
        self.pods_with_required_anti_affinity = [p for p in self.pods_with_required_anti_affinity if p.pod.uid != uid]
        self.used_ports = [hp for p in self.pods for hp in host_ports(p.pod)]
        if self._requested is not None:
            self._add_amounts(pod, -1)

    def _add_amounts(self, pod: Pod, sign: int) -> None:
        """Kept sums moved by one pod (new dicts: clones share the old ones)."""
        r, n = self._accounting.pod_amounts(pod)
        req = dict(self._requested or {})
        for k, v in r.items():
            left = req.get(k, 0) + sign * v
            if left or sign > 0:
                req[k] = left
            else:
                req.pop(k, None)
        nz = self._non_zero or {"cpu": 0, "memory": 0}
        self._requested = req
        self._non_zero = {"cpu": nz["cpu"] + sign * n.get("cpu", 0), "memory": nz["memory"] + sign * n.get("memory", 0)}

    def set_node(self, node: Node) -> None:
        """The node object changed (``NodeInfo.SetNode``): labels and allocatable are read again."""
        if node.status.allocatable != self.node.status.allocatable:
            self._allocatable = None
        self.node = node
        self.labels = node.metadata.labels

    def clone(self) -> "NodeInfo":
        c = NodeInfo(self.node, self._accounting)
        c.pods = list(self.pods)
        c.used_ports = list(self.used_ports)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c._requested, c._non_zero, c._allocatable = self._requested, self._non_zero, self._allocatable
        return c

    @property
    def allocatable(self) -> dict[str, int]:
        """``status.allocatable`` in scheduler units (``pods`` is the allowed pod number)."""
        if self._allocatable is None:
            self._allocatable = resource_amounts(self.node.status.allocatable)
        return self._allocatable

    def _sum(self) -> tuple[dict[str, int], dict[str, int]]:
        req: dict[str, int] = {}
        nz = {"cpu": 0, "memory": 0}
        for p in self.pods:
            r, n = self._accounting.pod_amounts(p.pod)
            for k, v in r.items():
                req[k] = req.get(k, 0) + v
            nz["cpu"] += n.get("cpu", 0)
            nz["memory"] += n.get("memory", 0)
        self._requested, self._non_zero = req, nz
        return req, nz

    @property
    def requested(self) -> dict[str, int]:
        """Σ effective requests of the pods (``NodeInfo.Requested``)."""
        req = self._requested
        if req is None:
            req, _ = self._sum()
        return req

    @property
    def non_zero_requested(self) -> dict[str, int]:
        """Σ cpu / memory requests with defaults for missing ones (``NodeInfo.NonZeroRequested``)."""
        nz = self._non_zero
        if nz is None:
            _, nz = self._sum()
        return nz


class ResourceAccounting:
    """How a pod's requests are counted, given the feature gates (cached per pod uid)."""

    def __init__(self, gates: FeatureGates):
        self.gates = gates
        self._cache: dict[str, tuple[Pod, dict[str, int], dict[str, int]]] = {}

    def pod_amounts(self, pod: Pod) -> tuple[dict[str, int], dict[str, int]]:
        """(effective requests, non-zero cpu/memory requests) of ``pod``."""
        hit = self._cache.get(pod.uid)
        if hit is None or hit[0] is not pod:
            from .resources import pod_non_zero_amounts, pod_request_amounts

            hit = (pod, pod_request_amounts(pod, self.gates), pod_non_zero_amounts(pod, self.gates))
            self._cache[pod.uid] = hit
        return hit[1], hit[2]


@dataclass
class Snapshot:
    """The cluster as one cycle sees it: node infos in list order, plus other objects."""

    node_infos: list[NodeInfo]
    namespaces: dict[str, Mapping[str, str]] = field(default_factory=dict)
    objects: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Index ``node_infos`` again after entries of the list were replaced."""
        self.by_name = {ni.name: ni for ni in self.node_infos}
        #: node name -> its position in ``node_infos``
        self.index = {ni.name: i for i, ni in enumerate(self.node_infos)}

    def get(self, name: str) -> NodeInfo | None:
        return self.by_name.get(name)

    def namespace_labels(self, ns: str) -> Mapping[str, str]:
        return self.namespaces.get(ns, {})

    def namespaces_matching(self, matcher: Matcher) -> set[str]:
        return {n for n, labels in self.namespaces.items() if matcher(labels)}

    @property
    def have_pods_with_affinity(self) -> list[NodeInfo]:
        return [ni for ni in self.node_infos if ni.pods_with_affinity]

    @property
    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        return [ni for ni in self.node_infos if ni.pods_with_required_anti_affinity]


def build_snapshot(nodes: Iterable[Node], pods: Iterable[Pod], accounting: ResourceAccounting,
                   namespaces: Mapping[str, Mapping[str, str]] | None = None,
                   objects: list[Any] | None = None) -> Snapshot:
    """Node infos in input order; pods bound to unknown nodes are ignored, as the cache does."""
    infos = [NodeInfo(n, accounting) for n in nodes]
    by_name = {ni.name: ni for ni in infos}
    for p in pods:
        ni = by_name.get(p.spec.node_name)
        if ni is not None:
            ni.add_pod(PodInfo(p))
    return Snapshot(infos, dict(namespaces or {}), list(objects or []))
