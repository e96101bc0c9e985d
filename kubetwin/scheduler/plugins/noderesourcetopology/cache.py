"""The NodeResourceTopologyMatch plugin's NRT cache (scheduler-plugins v0.34.7,
``pkg/noderesourcetopology/cache``: ``passthrough.go``, ``discardreserved.go``,
``overreserve.go``, ``store.go``), chosen as ``initNodeTopologyInformer`` chooses it:
``discardReservedNodes`` → DiscardReserved; else ``cacheResyncPeriodSeconds`` ≤ 0 →
Passthrough; else OverReserve, resynced every period.

* **Passthrough**: the NodeResourceTopology objects as the API server holds them now.
* **DiscardReserved**: like Passthrough, but a node with a pod between Reserve and PostBind
  has no data (Filter: "invalid node topology data"). kubetwin binds at once, so the window is
  empty: the answer is Passthrough's.
* **OverReserve**: a copy of every object taken when the scheduler starts, minus the requests
  (``GetPodEffectiveRequest``) of every pod reserved on the node since — subtracted from each
  NUMA zone holding the resource, clamped at zero: it over-reserves on purpose. A node whose
  Filter failed is "maybe over-reserved"; ``Resync`` replaces such a node's copy with the
  current object, dropping its reservations, once the object's pod-set fingerprint
  (``nodeTopologyPodsFingerprint``) matches the pods the scheduler sees on the node (a
  dedicated informer: bound, not Pending — or Running with the shared one); an object without
  a fingerprint never resyncs. Reserving a pod on a node clears its mark. Foreign pods (pods
  other schedulers placed) do not exist in kubetwin's single-scheduler cluster.

The pods the scheduler sees and the current objects come from callables the caller sets
(:class:`OverReserve` ``pods_on_node``, every cache's ``source``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Protocol

import msgspec

from ....model import podfingerprint
from ....model.pod import Pod
from ....model.quantity import Quantity
from .nrt import NodeResourceTopology

#: the API server's current object of a node (None: none published)
Source = Callable[[str], "NodeResourceTopology | None"]
#: (namespace, name, has exclusive resources) of the pods the scheduler sees on a node
PodsOnNode = Callable[[str], "Iterable[tuple[str, str, bool]]"]

_ZERO = Quantity.from_int(0)

RESYNC_METHODS = ("Autodetect", "All", "OnlyExclusiveResources")
FOREIGN_PODS_DETECT = ("None", "All", "OnlyExclusiveResources")
INFORMER_MODES = ("Shared", "Dedicated")
RESYNC_SCOPES = ("All", "OnlyResources")


class Cache(Protocol):
    """``cache.Interface``."""

    source: Source

    def get_cached_nrt_copy(self, node: str, pod: Pod) -> tuple[NodeResourceTopology | None, bool]:
        """(object or None, fresh): not fresh makes Filter answer "invalid node topology data"."""
        ...

    def node_maybe_over_reserved(self, node: str, pod: Pod) -> None: ...

    def reserve_node_resources(self, node: str, pod: Pod) -> None: ...

    def unreserve_node_resources(self, node: str, pod: Pod) -> None: ...

    def post_bind(self, node: str, pod: Pod) -> None: ...


class Passthrough:
    def __init__(self, source: Source):
        self.source = source

    def get_cached_nrt_copy(self, node: str, pod: Pod) -> tuple[NodeResourceTopology | None, bool]:
        return self.source(node), True

    def node_maybe_over_reserved(self, node: str, pod: Pod) -> None:
        pass

    def reserve_node_resources(self, node: str, pod: Pod) -> None:
        pass

    def unreserve_node_resources(self, node: str, pod: Pod) -> None:
        pass

    def post_bind(self, node: str, pod: Pod) -> None:
        pass


class DiscardReserved(Passthrough):
    def __init__(self, source: Source):
        super().__init__(source)
        self.reservations: dict[str, set[str]] = {}

    def get_cached_nrt_copy(self, node: str, pod: Pod) -> tuple[NodeResourceTopology | None, bool]:
        if self.reservations.get(node):
            return None, False
        return self.source(node), True

    def reserve_node_resources(self, node: str, pod: Pod) -> None:
        self.reservations.setdefault(node, set()).add(pod.uid)

    def unreserve_node_resources(self, node: str, pod: Pod) -> None:
        self.reservations.get(node, set()).discard(pod.uid)

    def post_bind(self, node: str, pod: Pod) -> None:
        self.reservations.get(node, set()).discard(pod.uid)


class OverReserve:
    def __init__(self, source: Source, nodes: Iterable[str], *, resync_method: str = "Autodetect",
                 informer_mode: str = "Dedicated"):
        self.source = source
        self.resync_method = resync_method
        self.informer_mode = informer_mode
        #: the cache's own copies (``nrtStore``), taken at start-up from the API server
        self.nrts: dict[str, NodeResourceTopology] = {}
        for n in nodes:
            got = source(n)
            if got is not None:
                self.nrts[n] = got
        #: node -> "namespace/name" -> effective request (``resourceStore``)
        self.assumed: dict[str, dict[str, dict[str, Quantity]]] = {}
        self.maybe_over_reserved: dict[str, int] = {}
        #: node -> its copy minus its reservations (dropped when either changes)
        self._views: dict[str, NodeResourceTopology] = {}
        self.generation = 0
        #: set by the caller: the pods the scheduler's informer sees on a node
        self.pods_on_node: PodsOnNode = lambda node: ()
        #: resyncs that flushed at least one node, and the nodes flushed
        self.flushes = 0
        self.flushed_nodes = 0

    def get_cached_nrt_copy(self, node: str, pod: Pod) -> tuple[NodeResourceTopology | None, bool]:
        nrt = self.nrts.get(node)
        if nrt is None:
            return None, True
        assumed = self.assumed.get(node)
        if not assumed:
            return nrt, True
        view = self._views.get(node)
        if view is None:   # the copy minus the reservations, until either changes
            view = self._views[node] = _minus(nrt, assumed.values())
        return view, True

    def node_maybe_over_reserved(self, node: str, pod: Pod) -> None:
        self.maybe_over_reserved[node] = self.maybe_over_reserved.get(node, 0) + 1

    def reserve_node_resources(self, node: str, pod: Pod) -> None:
        from .plugin import pod_effective_request

        assumed = self.assumed.setdefault(node, {})
        key = f"{pod.namespace}/{pod.name}"
        new = key not in assumed
        request = assumed[key] = pod_effective_request(pod)
        view = self._views.pop(node, None)
        if view is not None and new:
            # a new request is the last one taken off: the view so far minus it is the whole
            # subtraction's answer (each step clamps at zero on the step before's amounts)
            self._views[node] = _minus(view, (request,))
        self.maybe_over_reserved.pop(node, None)

    def unreserve_node_resources(self, node: str, pod: Pod) -> None:
        got = self.assumed.get(node)
        if got is not None:
            got.pop(f"{pod.namespace}/{pod.name}", None)
            self._views.pop(node, None)

    def post_bind(self, node: str, pod: Pod) -> None:
        pass

    @property
    def desynced(self) -> list[str]:
        return sorted(self.maybe_over_reserved)

    def resync(self) -> list[str]:
        """``Resync``: the maybe-over-reserved nodes whose current object's fingerprint matches
        the pods seen on them get that object and lose their reservations; returns them."""
        flushed = []
        for node in self.desynced:
            candidate = self.source(node)
            if candidate is None:
                continue
            pods = list(self.pods_on_node(node))
            if not pods:
                continue   # "cannot find any pod for node"
            expected, only_exclusive = self._fingerprint(candidate)
            if not expected:
                continue
            try:
                podfingerprint.check([(ns, name) for ns, name, excl in pods if excl or not only_exclusive], expected)
            except podfingerprint.FingerprintError:
                continue
            flushed.append((node, candidate))
        for node, nrt in flushed:
            self.nrts[node] = nrt
            self.assumed.pop(node, None)
            self._views.pop(node, None)
            self.maybe_over_reserved.pop(node, None)
        if flushed:
            self.generation += 1
            self.flushes += 1
            self.flushed_nodes += len(flushed)
        return [n for n, _ in flushed]

    def _fingerprint(self, nrt: NodeResourceTopology) -> tuple[str, bool]:
        """``podFingerprintForNodeTopology``."""
        attrs = {a.name: a.value for a in nrt.attributes}
        if podfingerprint.ATTRIBUTE in attrs:
            only = self.resync_method == "OnlyExclusiveResources" or (
                self.resync_method == "Autodetect"
                and attrs.get(podfingerprint.ATTRIBUTE_METHOD) == podfingerprint.METHOD_WITH_EXCLUSIVE_RESOURCES)
            return attrs[podfingerprint.ATTRIBUTE], only
        annotations = nrt.metadata.annotations or {}
        return annotations.get(podfingerprint.ANNOTATION, ""), False

    def pod_is_relevant(self, phase: str, node_name: str) -> bool:
        """``IsPodRelevantDedicated`` / ``IsPodRelevantShared``."""
        if self.informer_mode == "Shared":
            return phase == "Running"
        return phase != "Pending" and bool(node_name)


def _minus(nrt: NodeResourceTopology, requests: Iterable[Mapping[str, Quantity]]) -> NodeResourceTopology:
    """``resourceStore.UpdateNRT``: each pod's request off every zone resource of that name."""
    zones = []
    reqs = list(requests)
    for zone in nrt.zones:
        resources = []
        for r in zone.resources:
            available = r.available if r.available is not None else _ZERO
            for req in reqs:
                q = req.get(r.name)
                if q is None:
                    continue
                available = _ZERO if available.cmp(q) < 0 else available - q
            resources.append(msgspec.structs.replace(r, available=available))
        zones.append(msgspec.structs.replace(zone, resources=resources))
    return msgspec.structs.replace(nrt, zones=zones)


def new_cache(args: Any, source: Source, nodes: Iterable[str]) -> Any:
    """``initNodeTopologyInformer``'s choice."""
    if args.discard_reserved_nodes:
        return DiscardReserved(source)
    if args.cache_resync_period_seconds <= 0:
        return Passthrough(source)
    return OverReserve(source, nodes, resync_method=args.resync_method, informer_mode=args.informer_mode)


def are_exclusive_for_pod(pod: Pod, qos: str) -> bool:
    """``resourcerequests.AreExclusiveForPod``: a request the node gives exclusively — an
    extended resource, or (Guaranteed pods) whole CPUs, memory or huge pages."""
    from ....model.pod import is_hugepage_resource, is_native_resource

    for c in list(pod.spec.init_containers) + list(pod.spec.containers):
        for name, q in c.resources.requests.items():
            if not is_native_resource(name):
                return True
            if qos != "Guaranteed":
                continue
            if name == "cpu" and q.value() * 1000 == q.milli_value() and q.value() > 0:
                return True
            if (name == "memory" or is_hugepage_resource(name)) and q.value() > 0:
                return True
    return False
