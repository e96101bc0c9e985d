"""The cluster snapshot a long-running scheduler keeps between cycles
(``pkg/scheduler/backend/cache/cache.go``, ``snapshot.go``).

kube-scheduler's cache is updated by events and the per-cycle snapshot is refreshed
incrementally; here the same role is played by one :class:`ClusterState` that binding and
removing pods update in place. Besides the :class:`NodeInfo` objects the per-node plugins
read, it keeps the node state the vectorised plugins need as compact numpy arrays:
allocatable and requested amounts per resource, pod counts, taint sets (nodes share few
distinct ones) and node labels encoded per key, so a label requirement is evaluated once per
distinct value instead of once per node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import msgspec
import numpy as np

from ...errors import KubetwinError
from ...model.features import FeatureGates
from ...model.meta import _enc_hook
from ...model.node import Node, Taint
from ...model.pod import Pod
from ..framework.interface import Handle
from ..framework.resources import is_scalar_resource_name, pod_request_amounts
from ..framework.types import NodeInfo, PodInfo, ResourceAccounting, Snapshot, host_ports
from .node_tree import node_tree_order

FIXED_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_KEY_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)


@dataclass(slots=True)
class PodAmounts:
    """A pod's requests in the forms the scheduler reads, shared by pods of one template."""

    requests: dict[str, int]                 # Fit's Filter (spec; PodRequests)
    bound: np.ndarray                        # what it takes once bound, per indexed resource
    non_zero: tuple[int, int]                # cpu/memory with scoring defaults, once bound
    #: what plugins' vectorised twins work out once per pod shape (keyed by the plugin's own keys)
    memo: dict[Any, Any]


@dataclass(slots=True)
class BoundPod:
    """What binding a pod changed, so removing it undoes exactly that."""

    pod: Pod
    info: PodInfo
    node: int
    requested: np.ndarray
    non_zero: tuple[int, int]
    has_ports: bool


class LiveSnapshot(Snapshot):
    """The snapshot of a :class:`ClusterState`: nodes with affinity pods come from its index."""

    state: "ClusterState"

    @property
    def have_pods_with_affinity(self) -> list[NodeInfo]:
        infos = self.state.infos
        return [infos[i] for i in self.state.nodes_with_affinity]


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

    def codes_of(self, key: str) -> np.ndarray:
        return self.codes.get(key, self._absent)

    def code_of(self, key: str, value: str) -> int | None:
        ids = self._value_ids.get(key)
        return None if ids is None else ids.get(value)

    def evaluate(self, key: str, matcher: Any) -> np.ndarray:
        """``matcher({key: v})`` for every node, computed once per distinct value of ``key``."""
        table = [bool(matcher({key: v})) for v in self.values.get(key, ())]
        table.append(bool(matcher({})))
        return np.array(table, dtype=bool)[self.codes_of(key)]


class ClusterState:
    """Nodes in node-tree order, their pods, and the arrays the vectorised plugins read."""

    def __init__(self, nodes: Iterable[Node], gates: FeatureGates, *, pods: Iterable[Pod] = (),
                 namespaces: Mapping[str, Mapping[str, str]] | None = None,
                 objects: Mapping[str, list[Any]] | None = None):
        self.gates = gates
        self.accounting = ResourceAccounting(gates)
        infos = node_tree_order([NodeInfo(n, self.accounting) for n in nodes])
        self.infos = infos
        self.n = len(infos)
        self.names = [ni.name for ni in infos]
        self.infos_array = np.empty(self.n, dtype=object)
        self.infos_array[:] = infos
        self.index = {name: i for i, name in enumerate(self.names)}
        if len(self.index) != self.n:
            dup = next(n for n in self.names if self.names.count(n) > 1)
            raise KubetwinError(f"node {dup} is given twice")
        self.snapshot = LiveSnapshot(infos, dict(namespaces or {}), [])
        self.snapshot.state = self
        self.handle = Handle(snapshot=self.snapshot, gates=gates, accounting=self.accounting,
                             objects=dict(objects or {}), cache=self)
        self.nominated: dict[str, list[Pod]] = {}
        self.handle.nominated = self.nominated
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
            key = tuple((x.key, x.value, x.effect) for x in t)
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
        self._memo_pod: Pod | None = None
        self._memo_hit: PodAmounts | None = None
        self._amounts: dict[bytes, PodAmounts] = {}
        self._amounts_by_spec: dict[int, tuple[Any, PodAmounts]] = {}
        self.labels = LabelIndex(infos)
        self.names_array = np.array(self.names, dtype=object)
        self.bound: dict[str, BoundPod] = {}
        #: selector key -> (namespace, terminating?, pod matcher, matching pods per node)
        self._match_counts: dict[Any, tuple[str | None, bool, Any, np.ndarray]] = {}
        #: (namespace, live?, labels) -> the namespaced counts such a pod is in (their matchers read
        #: labels only); forgotten whenever a count is added
        self._count_memo: dict[tuple[Any, ...], list[Any]] = {}
        #: nodes running pods with required anti-affinity / any pod (anti-)affinity: pods per node
        self.nodes_with_anti: dict[int, int] = {}
        self.nodes_with_affinity: dict[int, int] = {}
        self.nodes_with_ports: set[int] = set()
        self.pods_with_affinity = 0
        self.pods_with_required_anti_affinity = 0
        #: bound pods per priority (few distinct values): preemption asks whether any pod has a
        #: lower priority than the preemptor before it looks at a single node
        self.priority_counts: dict[int, int] = {}
        #: ``min(priority_counts)`` and the generation it was taken at (:meth:`any_priority_below`)
        self._lowest_priority: int | None = None
        self._lowest_priority_at = -1
        #: bumped by every change a cycle can read (bind, remove, node update, nomination):
        #: a cycle repeated at the same generation reaches the same verdict
        self.generation = 0
        #: the node each generation step changed (-1: not one node's own state)
        self.changes: list[int] = []
        for p in pods:
            if p.spec.node_name in self.index:
                self.bind(p, p.spec.node_name)

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

    def match_counts(self, namespace: str | None, key: Any, matcher: Any, *, terminating: bool = False,
                     pod_matcher: Any = None) -> np.ndarray:
        """Pods matching a selector, per node, computed once and then kept in step on bind/remove.

        ``matcher`` takes labels (pods of ``namespace`` only, terminating ones excluded unless
        ``terminating``); ``pod_matcher`` instead takes the whole pod (``namespace`` None). This
        lets the spreading and inter-pod affinity plugins count without walking every pod each cycle.
        """
        full = (namespace, key, terminating)
        hit = self._match_counts.get(full)
        if hit is not None:
            return hit[3]
        if pod_matcher is None:
            def pod_matcher(p: Pod, ns: str | None = namespace, m: Any = matcher) -> bool:
                return p.metadata.namespace == ns and m(p.metadata.labels)
        arr = np.zeros(self.n, dtype=np.int64)
        for b in self.bound.values():
            p = b.pod
            if (terminating or p.metadata.deletion_timestamp is None) and pod_matcher(p):
                arr[b.node] += 1
        if len(self._match_counts) > 512:
            self._match_counts.clear()
        self._match_counts[full] = (namespace, terminating, pod_matcher, arr)
        self._count_memo.clear()
        return arr

    def _count(self, pod: Pod, i: int, delta: int) -> None:
        """Keep every count in step with one pod. A namespaced count's matcher reads the pod's
        labels only, so which of them a pod is in is worked out once per label set."""
        live = pod.metadata.deletion_timestamp is None
        ns = pod.metadata.namespace
        key = (ns, live, tuple(sorted(pod.metadata.labels.items())))
        hits = self._count_memo.get(key)
        if hits is None:
            hits = [arr for cns, terminating, pod_matcher, arr in self._match_counts.values()
                    if cns == ns and (terminating or live) and pod_matcher(pod)]
            if len(self._count_memo) > 50_000:
                self._count_memo.clear()
            self._count_memo[key] = hits
        for arr in hits:
            arr[i] += delta
        unscoped = self._count_memo.get(())
        if unscoped is None:
            unscoped = self._count_memo[()] = [e for e in self._match_counts.values() if e[0] is None]
        for _, terminating, pod_matcher, arr in unscoped:
            if (terminating or live) and pod_matcher(pod):
                arr[i] += delta

    # --- incremental updates (the cache's AddPod / RemovePod) ---------------------------------

    def bind(self, pod: Pod, node: str) -> None:
        """Account ``pod`` on ``node``; the pod keeps its own spec (``nodeName`` need not be set)."""
        i = self.index.get(node)
        if i is None:
            raise KubetwinError(f"cannot bind {pod.key}: no node {node!r}")
        uid = pod.uid
        if uid in self.bound:
            raise KubetwinError(f"pod {pod.key} is already bound to {self.names[self.bound[uid].node]}")
        self.touch(i)
        a = self.amounts(pod)
        vec, nzt = a.bound, a.non_zero
        info = PodInfo(pod)
        ports = bool(host_ports(pod))
        self.infos[i].add_pod(info)
        self.requested[i] += vec
        self.free[i] -= vec
        self.non_zero[i, 0] += nzt[0]
        self.non_zero[i, 1] += nzt[1]
        self.npods[i] += 1
        if ports:
            self.nodes_with_ports.add(i)
        if info.has_affinity:
            self.pods_with_affinity += 1
            self.nodes_with_affinity[i] = self.nodes_with_affinity.get(i, 0) + 1
        if info.has_required_anti_affinity:
            self.pods_with_required_anti_affinity += 1
            self.nodes_with_anti[i] = self.nodes_with_anti.get(i, 0) + 1
        self.bound[uid] = BoundPod(pod, info, i, vec, nzt, ports)
        prio = pod.spec.priority or 0
        self.priority_counts[prio] = self.priority_counts.get(prio, 0) + 1
        if self._match_counts:
            self._count(pod, i, 1)

    def remove(self, pod: Pod) -> str | None:
        """Forget a bound pod (deleted, completed, evicted); returns the node it was on."""
        b = self.bound.pop(pod.uid, None)
        if b is None:
            return None
        i = b.node
        self.touch(i)
        ni = self.infos[i]
        ni.remove_pod(b.pod)
        self.requested[i] -= b.requested
        self.free[i] += b.requested
        self.non_zero[i, 0] -= b.non_zero[0]
        self.non_zero[i, 1] -= b.non_zero[1]
        self.npods[i] -= 1
        if b.has_ports and not ni.used_ports:
            self.nodes_with_ports.discard(i)
        if b.info.has_affinity:
            self.pods_with_affinity -= 1
            left = self.nodes_with_affinity.get(i, 0) - 1
            if left > 0:
                self.nodes_with_affinity[i] = left
            else:
                self.nodes_with_affinity.pop(i, None)
        if b.info.has_required_anti_affinity:
            self.pods_with_required_anti_affinity -= 1
            left = self.nodes_with_anti.get(i, 0) - 1
            if left > 0:
                self.nodes_with_anti[i] = left
            else:
                self.nodes_with_anti.pop(i, None)
        prio = b.pod.spec.priority or 0
        left = self.priority_counts[prio] - 1
        if left:
            self.priority_counts[prio] = left
        else:
            del self.priority_counts[prio]
        if self._match_counts:
            self._count(b.pod, i, -1)
        return self.names[i]

    def adopt(self, old: "ClusterState") -> None:
        """Nodes joined or left (the cache's ``AddNode``/``RemoveNode`` as the Cluster Autoscaler
        drives them): this state, built over the new node list, takes over from ``old`` what is
        bound on the nodes both know — their NodeInfos with their pods, the accounting columns,
        the bound pods, the per-shape amounts and the selector counts — instead of binding every
        pod again. Nodes only ``old`` knows must be empty; both must index the same resources."""
        if old.resources != self.resources:
            raise KubetwinError("cannot adopt a cluster state with other resource columns")
        src = np.array([old.index.get(name, -1) for name in self.names], dtype=np.int64)
        kept = src >= 0
        new_of = np.full(old.n, -1, dtype=np.int64)
        new_of[src[kept]] = np.flatnonzero(kept)
        left = [old.names[k] for k in np.flatnonzero(new_of < 0) if old.npods[k]]
        if left:
            raise KubetwinError(f"cannot drop node {left[0]!r}: pods are bound to it")
        for i in np.flatnonzero(kept):
            self.infos[i] = old.infos[src[i]]
        self.infos_array[:] = self.infos
        self.snapshot.__post_init__()
        self.labels = LabelIndex(self.infos)
        for name in ("requested", "non_zero", "npods"):
            getattr(self, name)[kept] = getattr(old, name)[src[kept]]
        self.free = (self.alloc - self.requested).copy(order="F")
        for b in old.bound.values():
            b.node = int(new_of[b.node])
        self.bound = old.bound
        self.nodes_with_ports = {int(new_of[i]) for i in old.nodes_with_ports}
        self.nodes_with_affinity = {int(new_of[i]): c for i, c in old.nodes_with_affinity.items()}
        self.nodes_with_anti = {int(new_of[i]): c for i, c in old.nodes_with_anti.items()}
        self.pods_with_affinity = old.pods_with_affinity
        self.pods_with_required_anti_affinity = old.pods_with_required_anti_affinity
        self.priority_counts = dict(old.priority_counts)
        self._amounts, self._amounts_by_spec = old._amounts, old._amounts_by_spec
        for key, (ns, terminating, matcher, counts) in old._match_counts.items():
            moved = np.zeros(self.n, dtype=counts.dtype)
            moved[kept] = counts[src[kept]]
            self._match_counts[key] = (ns, terminating, matcher, moved)
        self.touch(-1)

    def update_node(self, node: Node) -> list[str]:
        """A node object changed (the cache's ``UpdateNode``): taints, ``unschedulable``, labels
        and allocatable amounts take effect for the next cycle; its pods stay. Returns what
        changed (``taints``, ``unschedulable``, ``labels``, ``allocatable``)."""
        name = node.metadata.name
        i = self.index.get(name)
        if i is None:
            raise KubetwinError(f"cannot update node {name!r}: no such node")
        ni = self.infos[i]
        old = ni.node
        changed: list[str] = []
        ni.node = node
        self.touch(-1)
        if old.spec.taints != node.spec.taints:
            changed.append("taints")
            taints = tuple(node.spec.taints)
            key = tuple((x.key, x.value, x.effect) for x in taints)
            for sid, ts in enumerate(self.taint_sets):  # noqa: B007 - sid is read after the loop
                if tuple((x.key, x.value, x.effect) for x in ts) == key:
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
            ni.labels = node.metadata.labels
            self.labels = LabelIndex(self.infos)
        if old.status.allocatable != node.status.allocatable:
            changed.append("allocatable")
            ni._allocatable = None
            amounts = ni.allocatable
            extra = [r for r in amounts if r not in self.rindex and r != "pods" and is_scalar_resource_name(r)]
            if extra:
                raise KubetwinError(f"cannot update node {name!r}: new resource {extra[0]!r} in status.allocatable "
                                    "(resources are fixed when the scheduler starts)")
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

    def touch(self, i: int) -> None:
        """One more generation: node ``i`` changed (-1: something beyond one node's own state)."""
        self.generation += 1
        self.changes.append(i)

    def changed_since(self, generation: int) -> set[int] | None:
        """Nodes changed after ``generation``; None when a change was not one node's own."""
        changes = self.changes
        if len(changes) == generation + 1:   # most often one bind or removal since
            i = changes[generation]
            return None if i == -1 else {i}
        out = set(changes[generation:])
        return None if -1 in out else out

    def any_priority_below(self, priority: int) -> bool:
        """Does some bound pod have a priority lower than ``priority`` (a possible victim)?

        The lowest priority bound is worked out once per generation (binds and removals,
        the only changes to ``priority_counts``, each start a new one)."""
        if self._lowest_priority_at != self.generation:
            self._lowest_priority = min(self.priority_counts, default=None)
            self._lowest_priority_at = self.generation
        lowest = self._lowest_priority
        return lowest is not None and lowest < priority

    def node_of(self, pod: Pod) -> str | None:
        b = self.bound.get(pod.uid)
        return None if b is None else self.names[b.node]

    def pods_on(self, node: str) -> list[Pod]:
        return [pi.pod for pi in self.infos[self.index[node]].pods]
