"""Node state as numpy columns, the form the vectorised plugins read — kubetwin's own, beside the
cache and snapshot of ``pkg/scheduler/backend/cache/cache.go`` and ``snapshot.go``.

Upstream's plugins walk one :class:`NodeInfo` at a time. kubetwin's vectorised twins
(``plugins/<plugin>/vector.py``) answer for every node at once, so the cache also keeps the
node state they need as compact arrays over the node axis (node-tree order): allocatable and
requested amounts per resource, pod counts, taint sets (nodes share few distinct ones), node
labels encoded per key (:class:`LabelIndex`: a label requirement is evaluated once per distinct
value instead of once per node), the nodes with host ports, selector counts kept in step
(:meth:`NodeColumns.match_counts`) and each pod shape's requests (:class:`PodAmounts`).

:class:`NodeColumns` owns these arrays and the operations that keep them in step with one
node's change (a pod added or removed, a node object updated, nodes joining or leaving); the
cache (:mod:`.cache`) decides when those happen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import msgspec
import numpy as np

from ...errors import KubetwinError
from ...model.features import FeatureGates
from ...model.meta import enc_hook
from ...model.node import Node, Taint
from ...model.pod import Pod
from ..framework.resources import is_scalar_resource_name, pod_request_amounts
from ..framework.types import NodeInfo, ResourceAccounting
from .labelsets import LabelSets, label_set_key

FIXED_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_KEY_ENCODER = msgspec.json.Encoder(enc_hook=enc_hook)

#: a label matcher: labels -> does the requirement hold
LabelMatcher = Callable[[Mapping[str, str]], bool]
#: a pod matcher: pod -> does the selector hold (callers bind their terms as default arguments)
PodMatcher = Callable[..., bool]


@dataclass(slots=True)
class PodAmounts:
    """A pod's requests in the forms the scheduler reads, shared by pods of one template."""

    requests: dict[str, int]                 # Fit's Filter (spec; PodRequests)
    bound: np.ndarray                        # what it takes once bound, per indexed resource
    non_zero: tuple[int, int]                # cpu/memory with scoring defaults, once bound
    #: what plugins' vectorised twins work out once per pod shape (keyed by the plugin's own keys)
    memo: dict[Any, Any]


class LabelIndex:
    """Node labels per key as integer codes into that key's distinct values (-1: no such label).

    A requirement on one key is evaluated on each distinct value plus 'absent' and then
    gathered with the codes; indexing with -1 picks the trailing 'absent' entry.
    """

    def __init__(self, infos: Sequence[NodeInfo]):
        n = len(infos)
        self.values: dict[str, list[str]] = {}
        self._value_ids: dict[str, dict[str, int]] = {}
        self.codes: dict[str, np.ndarray] = {}
        for i, ni in enumerate(infos):
            for k, v in ni.labels.items():
                ids = self._value_ids.get(k)
                if ids is None:
                    ids = self._value_ids[k] = {}
                    self.values[k] = []
                    self.codes[k] = np.full(n, -1, dtype=np.int32)
                c = ids.get(v)
                if c is None:
                    c = ids[v] = len(self.values[k])
                    self.values[k].append(v)
                self.codes[k][i] = c
        self._n = n
        self._absent = np.full(n, -1, dtype=np.int32)
        #: key -> (every node has the label, no two nodes share a value), worked out when first asked
        self._shape: dict[str, tuple[bool, bool]] = {}

    def codes_of(self, key: str) -> np.ndarray:
        return self.codes.get(key, self._absent)

    def shape(self, key: str) -> tuple[bool, bool]:
        """(every node has the label ``key``, each of its values is on one node only). A key
        with both — ``kubernetes.io/hostname`` — makes every node its own topology domain, so a
        sum per domain is the node's own figure and needs no ``bincount``."""
        got = self._shape.get(key)
        if got is None:
            nvals = len(self.values.get(key, ()))
            complete = bool(nvals) and bool((self.codes_of(key) >= 0).all())
            got = self._shape[key] = (complete, nvals == int((self.codes_of(key) >= 0).sum()))
        return got

    def code_of(self, key: str, value: str) -> int | None:
        ids = self._value_ids.get(key)
        return None if ids is None else ids.get(value)

    def evaluate(self, key: str, matcher: LabelMatcher) -> np.ndarray:
        """``matcher({key: v})`` for every node, computed once per distinct value of ``key``."""
        table = [bool(matcher({key: v})) for v in self.values.get(key, ())]
        table.append(bool(matcher({})))
        return np.array(table, dtype=bool)[self.codes_of(key)]


def _taint_key(taints: Sequence[Taint]) -> tuple[tuple[str, str | None, str], ...]:
    return tuple((x.key, x.value, x.effect) for x in taints)


class NodeColumns:
    """Arrays over the node axis (``infos``, node-tree order) that the vectorised plugins read.

    ``infos``, ``names`` and ``index`` are the snapshot's node list, shared (not copied): column
    ``i`` is node ``names[i]``.
    """

    def __init__(self, infos: list[NodeInfo], index: dict[str, int], gates: FeatureGates,
                 accounting: ResourceAccounting):
        self.gates = gates
        self.accounting = accounting
        self.infos = infos
        self.n = len(infos)
        self.names = [ni.name for ni in infos]
        self.index = index
        self.infos_array = np.empty(self.n, dtype=object)
        self.infos_array[:] = infos
        self.names_array = np.array(self.names, dtype=object)
        resources: list[str] = list(FIXED_RESOURCES)
        for ni in infos:
            for r in ni.allocatable:
                if r not in resources and r != "pods" and is_scalar_resource_name(r):
                    resources.append(r)
        self.resources = resources
        self.rindex = {r: j for j, r in enumerate(resources)}
        # column-major: one resource's amounts over all nodes are contiguous
        self.alloc = np.zeros((self.n, len(resources)), dtype=np.int64, order="F")
        self.pods_alloc = np.zeros(self.n, dtype=np.int64)
        for i, ni in enumerate(infos):
            a = ni.allocatable
            for r, v in a.items():
                j = self.rindex.get(r)
                if j is not None:
                    self.alloc[i, j] = v
            self.pods_alloc[i] = a.get("pods", 0)
        #: per resource: does every node have some of it (scoring then needs no zero guard)
        self.alloc_nonzero = [bool(self.alloc[:, j].all()) for j in range(len(resources))]
        self.requested = np.zeros((self.n, len(resources)), dtype=np.int64, order="F")
        self.non_zero = np.zeros((self.n, 2), dtype=np.int64, order="F")
        self.free = self.alloc.copy(order="F")  # allocatable − requested, kept in step
        self.npods = np.zeros(self.n, dtype=np.int64)
        # taints: nodes share few distinct taint lists
        self.taint_sets: list[tuple[Taint, ...]] = []
        ids: dict[tuple, int] = {}
        self.taint_set_of = np.zeros(self.n, dtype=np.int32)
        for i, ni in enumerate(infos):
            t = tuple(ni.node.spec.taints)
            key = _taint_key(t)
            sid = ids.get(key)
            if sid is None:
                sid = ids[key] = len(self.taint_sets)
                self.taint_sets.append(t)
            self.taint_set_of[i] = sid
        self._taints_changed()
        self.unschedulable = np.array([ni.node.spec.unschedulable for ni in infos], dtype=bool)
        self.any_unschedulable = bool(self.unschedulable.any())
        self.all_nodes = np.arange(self.n)
        #: a shared all-False verdict (read-only): plugins that reject no node return it
        self.no_fail = np.zeros(self.n, dtype=bool)
        self.no_fail.flags.writeable = False
        self.labels = LabelIndex(infos)
        #: nodes running pods with host ports
        self.nodes_with_ports: set[int] = set()
        self._memo_pod: Pod | None = None
        self._memo_hit: PodAmounts | None = None
        self._amounts: dict[bytes, PodAmounts] = {}
        self._amounts_by_spec: dict[int, tuple[Any, PodAmounts]] = {}
        #: selector key -> (namespace, terminating?, pod matcher, matching pods per node)
        self._match_counts: dict[Any, tuple[str | None, bool, PodMatcher, np.ndarray]] = {}
        #: a pod's label set (:func:`.labelsets.label_set_key`) -> the counts such a pod is in (their
        #: matchers read the namespace and labels only). Forgotten whenever the table of counts changes.
        self._count_memo: dict[bytes, list[Any]] = {}
        #: the bound pods grouped by label set (:mod:`.labelsets`), kept from the first pod on;
        #: None once given up (too many distinct label sets)
        self._label_sets: LabelSets | None = LabelSets()

    def amounts(self, pod: Pod) -> PodAmounts:
        """The pod's requests, computed once per distinct resource-relevant part of the pod.

        Pods of one template share the entry: the key is everything ``PodRequests`` reads
        (containers, overhead, pod-level resources, claims, the status resize fields).
        """
        if self._memo_pod is pod and self._memo_hit is not None:
            return self._memo_hit
        spec = pod.spec
        st = pod.status
        plain = not (st.container_statuses or st.init_container_statuses or st.resize
                     or st.node_allocatable_resource_claim_statuses)
        if plain:   # pods sharing a spec object (one template) share the entry without encoding it
            got = self._amounts_by_spec.get(id(spec))
            if got is not None and got[0] is spec:
                self._memo_pod, self._memo_hit = pod, got[1]
                return got[1]
        key = _KEY_ENCODER.encode((spec.containers, spec.init_containers, spec.overhead, spec.resources,
                                   spec.resource_claims, pod.status.container_statuses,
                                   pod.status.init_container_statuses, pod.status.resize,
                                   pod.status.node_allocatable_resource_claim_statuses))
        hit = self._amounts.get(key)
        if hit is None:
            req, nz = self.accounting.pod_amounts(pod)
            vec = np.zeros(len(self.resources), dtype=np.int64)
            for r, v in req.items():
                j = self.rindex.get(r)
                if j is not None:
                    vec[j] = v
            hit = PodAmounts(pod_request_amounts(pod, self.gates, status=False), vec,
                             (nz.get("cpu", 0), nz.get("memory", 0)), {})
            if len(self._amounts) > 50_000:
                self._amounts.clear()
            self._amounts[key] = hit
        if plain:
            if len(self._amounts_by_spec) > 50_000:
                self._amounts_by_spec.clear()
            self._amounts_by_spec[id(spec)] = (spec, hit)   # the spec is held: its id stays its own
        self._memo_pod, self._memo_hit = pod, hit
        return hit

    def match_counts(self, namespace: str | None, key: Any, matcher: LabelMatcher | None, *,
                     terminating: bool = False, pod_matcher: PodMatcher | None = None) -> np.ndarray:
        """Pods matching a selector, per node, computed once and then kept in step on add/remove.

        ``matcher`` takes labels (pods of ``namespace`` only, terminating ones excluded unless
        ``terminating``); ``pod_matcher`` instead takes the whole pod (``namespace`` None). This
        lets the spreading and inter-pod affinity plugins count without walking every pod each cycle.
        ``key`` names the selector (any hashable value the caller derives from it). Either
        matcher must read the pod's namespace and labels only: it is asked once per label set of
        the bound pods (:mod:`.labelsets`).
        """
        full = (namespace, key, terminating)
        hit = self._match_counts.get(full)
        if hit is not None:
            return hit[3]
        if pod_matcher is None:
            if matcher is None:
                raise TypeError("match_counts needs a label matcher or a pod matcher")

            def by_labels(p: Pod, ns: str | None = namespace, m: LabelMatcher = matcher) -> bool:
                return p.metadata.namespace == ns and m(p.metadata.labels)
            pod_matcher = by_labels
        sets = self._label_sets
        if sets is not None:
            arr = sets.counts(self.n, namespace, terminating, pod_matcher)
        else:
            arr = np.zeros(self.n, dtype=np.int64)
            for ni_index, ni in enumerate(self.infos):
                for pi in ni.pods:
                    p = pi.pod
                    if (terminating or p.metadata.deletion_timestamp is None) and pod_matcher(p):
                        arr[ni_index] += 1
        if len(self._match_counts) > 512:
            self._match_counts.clear()
        self._match_counts[full] = (namespace, terminating, pod_matcher, arr)
        self._count_memo.clear()
        return arr

    def _count(self, pod: Pod, i: int, delta: int) -> None:
        """Keep the label-set groups and every count in step with one pod. A count's matcher
        reads the pod's namespace and labels only, so which counts a pod is in is worked out
        once per label set."""
        key = label_set_key(pod)
        sets = self._label_sets
        if sets is not None:
            if delta > 0:
                sets.add(key, pod, i)
                if sets.too_many():
                    self._label_sets = None
            else:
                sets.remove(key, i)
        if not self._match_counts:
            return
        hits = self._count_memo.get(key)
        if hits is None:
            ns, live = pod.metadata.namespace, pod.metadata.deletion_timestamp is None
            hits = [arr for cns, terminating, pod_matcher, arr in self._match_counts.values()
                    if (cns is None or cns == ns) and (terminating or live) and pod_matcher(pod)]
            if len(self._count_memo) > 50_000:
                self._count_memo.clear()
            self._count_memo[key] = hits
        for arr in hits:
            arr[i] += delta

    # --- one node's change ---------------------------------------------------------------------

    def add_pod(self, i: int, pod: Pod, a: PodAmounts, has_ports: bool) -> None:
        """Node ``i`` runs ``pod`` now (its amounts ``a``)."""
        vec, nzt = a.bound, a.non_zero
        # the rows as views changed in place (``requested[i] += vec`` would also write the row back)
        row = self.requested[i]
        row += vec
        row = self.free[i]
        row -= vec
        self.non_zero[i, 0] += nzt[0]
        self.non_zero[i, 1] += nzt[1]
        self.npods[i] += 1
        if has_ports:
            self.nodes_with_ports.add(i)
        if self._match_counts or self._label_sets is not None:
            self._count(pod, i, 1)

    def remove_pod(self, i: int, pod: Pod, requested: np.ndarray, non_zero: tuple[int, int],
                   has_ports: bool) -> None:
        """Node ``i`` no longer runs ``pod``, which took ``requested`` / ``non_zero`` when added
        (its NodeInfo has already let it go)."""
        row = self.requested[i]
        row -= requested
        row = self.free[i]
        row += requested
        self.non_zero[i, 0] -= non_zero[0]
        self.non_zero[i, 1] -= non_zero[1]
        self.npods[i] -= 1
        if has_ports and not self.infos[i].used_ports:
            self.nodes_with_ports.discard(i)
        if self._match_counts or self._label_sets is not None:
            self._count(pod, i, -1)

    def node_changed(self, i: int, old: Node, node: Node) -> list[str]:
        """Node ``i``'s object went from ``old`` to ``node`` (its NodeInfo already holds the new
        one): taints, ``unschedulable``, labels and allocatable amounts are read again. Returns
        what changed (``taints``, ``unschedulable``, ``labels``, ``allocatable``)."""
        changed: list[str] = []
        if old.spec.taints != node.spec.taints:
            changed.append("taints")
            taints = tuple(node.spec.taints)
            key = _taint_key(taints)
            for sid, ts in enumerate(self.taint_sets):  # noqa: B007 - sid is read after the loop
                if _taint_key(ts) == key:
                    break
            else:
                sid = len(self.taint_sets)
                self.taint_sets.append(taints)
            self.taint_set_of[i] = sid
            self._taints_changed()
        if old.spec.unschedulable != node.spec.unschedulable:
            changed.append("unschedulable")
            self.unschedulable[i] = bool(node.spec.unschedulable)
            self.any_unschedulable = bool(self.unschedulable.any())
        if old.metadata.labels != node.metadata.labels:
            changed.append("labels")
            self.labels = LabelIndex(self.infos)
        if old.status.allocatable != node.status.allocatable:
            changed.append("allocatable")
            amounts = self.infos[i].allocatable
            extra = [r for r in amounts if r not in self.rindex and r != "pods" and is_scalar_resource_name(r)]
            if extra:
                raise KubetwinError(f"cannot update node {node.metadata.name!r}: new resource {extra[0]!r} in "
                                    "status.allocatable (resources are fixed when the scheduler starts)")
            row = np.zeros(len(self.resources), dtype=np.int64)
            for r, v in amounts.items():
                j = self.rindex.get(r)
                if j is not None:
                    row[j] = v
            self.alloc[i] = row
            self.free[i] = row - self.requested[i]
            self.pods_alloc[i] = amounts.get("pods", 0)
            self.alloc_nonzero = [bool(self.alloc[:, j].all()) for j in range(len(self.resources))]
        return changed

    def _taints_changed(self) -> None:
        #: some node has a PreferNoSchedule taint (else the taint plugin scores every node alike)
        self.any_prefer_no_schedule = any(t.effect == "PreferNoSchedule" for ts in self.taint_sets for t in ts)

    def take_over(self, old: "NodeColumns", src: np.ndarray, new_of: np.ndarray) -> None:
        """Nodes joined or left: take from ``old`` the pod-dependent columns of the nodes both
        know (``src[i]``: node ``i``'s position in ``old``, -1 if new; ``new_of``: the reverse),
        with the per-shape amounts and the selector counts. The node list (``infos``) already
        holds the kept nodes' NodeInfos; the labels are indexed again over it."""
        if old.resources != self.resources:
            raise KubetwinError("cannot adopt a cluster state with other resource columns")
        kept = src >= 0
        self.infos_array[:] = self.infos
        self.labels = LabelIndex(self.infos)
        self.requested[kept] = old.requested[src[kept]]
        self.non_zero[kept] = old.non_zero[src[kept]]
        self.npods[kept] = old.npods[src[kept]]
        self.free = (self.alloc - self.requested).copy(order="F")
        self.nodes_with_ports = {int(new_of[i]) for i in old.nodes_with_ports}
        self._amounts, self._amounts_by_spec = old._amounts, old._amounts_by_spec
        for key, (ns, terminating, matcher, counts) in old._match_counts.items():
            moved = np.zeros(self.n, dtype=counts.dtype)
            moved[kept] = counts[src[kept]]
            self._match_counts[key] = (ns, terminating, matcher, moved)
        self._count_memo.clear()
        self._label_sets = LabelSets.of(self.infos)   # made again over the new node list
