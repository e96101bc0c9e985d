"""The scheduler's cache, updated by events between cycles (``pkg/scheduler/backend/cache/cache.go``).

kube-scheduler's cache takes pod and node events (``AssumePod``/``AddPod``, ``RemovePod``,
``UpdateNode``, ``AddNode``/``RemoveNode``) and refreshes the per-cycle snapshot from them. Here
:class:`Cache` takes the same events — :meth:`~Cache.bind`, :meth:`~Cache.remove`,
:meth:`~Cache.update_node`, :meth:`~Cache.adopt` (nodes joined or left) — and passes each one to
the two views it keeps current: the snapshot the plugins read (:class:`.snapshot.LiveSnapshot`,
NodeInfos in node-tree order) and the numpy columns the vectorised plugins read
(:class:`.columns.NodeColumns`). It also keeps what only the cache knows: the bound pods and what
binding each changed, the pods nominated to nodes, the bound pods' priorities, and a generation
counter with the node each step changed (:meth:`~Cache.changed_since`), from which kept verdicts
know what to look at again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from ...errors import KubetwinError
from ...model.features import FeatureGates
from ...model.node import Node
from ...model.pod import Pod
from ..framework.interface import Handle
from ..framework.types import PodInfo, ResourceAccounting, host_ports
from .columns import NodeColumns
from .snapshot import LiveSnapshot


@dataclass(slots=True)
class BoundPod:
    """What binding a pod changed, so removing it undoes exactly that."""

    pod: Pod
    info: PodInfo
    node: int
    requested: np.ndarray
    non_zero: tuple[int, int]
    has_ports: bool


class Cache(NodeColumns):
    """Nodes in node-tree order, their pods, and the events that change them.

    The cache *is* its columns (it extends :class:`NodeColumns` rather than holding one) so that
    a vectorised plugin reads ``cs.free`` or ``cs.labels`` with one attribute lookup in the hot
    path; the columns' own state and operations stay in :mod:`.columns`, the snapshot's in
    :mod:`.snapshot`, and only this class decides when they change.
    """

    def __init__(self, nodes: Iterable[Node], gates: FeatureGates, *, pods: Iterable[Pod] = (),
                 namespaces: Mapping[str, Mapping[str, str]] | None = None,
                 objects: Mapping[str, list[Any]] | None = None):
        accounting = ResourceAccounting(gates)
        self.snapshot = LiveSnapshot(nodes, accounting, namespaces)
        super().__init__(self.snapshot.node_infos, self.snapshot.index, gates, accounting)
        self.handle = Handle(snapshot=self.snapshot, gates=gates, accounting=accounting,
                             objects=dict(objects or {}), cache=self)
        #: pods nominated to nodes by preemption, by node name (the handle reads the same dict)
        self.nominated: dict[str, list[Pod]] = {}
        self.handle.nominated = self.nominated
        self.bound: dict[str, BoundPod] = {}
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

    # --- the snapshot's affinity lists, as the vectorised inter-pod affinity plugin reads them ----

    @property
    def nodes_with_affinity(self) -> dict[int, int]:
        return self.snapshot.nodes_with_affinity

    @property
    def nodes_with_anti(self) -> dict[int, int]:
        return self.snapshot.nodes_with_anti

    @property
    def pods_with_affinity(self) -> int:
        return self.snapshot.pods_with_affinity

    @property
    def pods_with_required_anti_affinity(self) -> int:
        return self.snapshot.pods_with_required_anti_affinity

    # --- events (the cache's AssumePod / RemovePod / UpdateNode / AddNode + RemoveNode) ----------

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
        info = PodInfo(pod)
        ports = bool(host_ports(pod))
        self.snapshot.add_pod(i, info)
        self.add_pod(i, pod, a, ports)
        self.bound[uid] = BoundPod(pod, info, i, a.bound, a.non_zero, ports)
        prio = pod.spec.priority or 0
        self.priority_counts[prio] = self.priority_counts.get(prio, 0) + 1

    def remove(self, pod: Pod) -> str | None:
        """Forget a bound pod (deleted, completed, evicted); returns the node it was on."""
        b = self.bound.pop(pod.uid, None)
        if b is None:
            return None
        i = b.node
        self.touch(i)
        self.snapshot.remove_pod(i, b.pod, b.info)
        self.remove_pod(i, b.pod, b.requested, b.non_zero, b.has_ports)
        prio = b.pod.spec.priority or 0
        left = self.priority_counts[prio] - 1
        if left:
            self.priority_counts[prio] = left
        else:
            del self.priority_counts[prio]
        return self.names[i]

    def adopt(self, old: "Cache") -> None:
        """Nodes joined or left (the cache's ``AddNode``/``RemoveNode`` as the Cluster Autoscaler
        drives them): this cache, built over the new node list, takes over from ``old`` what is
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
        self.snapshot.take_over(old.snapshot, src, new_of)
        self.take_over(old, src, new_of)
        for b in old.bound.values():
            b.node = int(new_of[b.node])
        self.bound = old.bound
        self.priority_counts = dict(old.priority_counts)
        self.touch(-1)

    def update_node(self, node: Node) -> list[str]:
        """A node object changed (the cache's ``UpdateNode``): taints, ``unschedulable``, labels
        and allocatable amounts take effect for the next cycle; its pods stay. Returns what
        changed (``taints``, ``unschedulable``, ``labels``, ``allocatable``)."""
        name = node.metadata.name
        i = self.index.get(name)
        if i is None:
            raise KubetwinError(f"cannot update node {name!r}: no such node")
        old = self.snapshot.update_node(i, node)
        self.touch(-1)
        return self.node_changed(i, old, node)

    # --- generations ---------------------------------------------------------------------------

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

    # --- reads ---------------------------------------------------------------------------------

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


#: The name the callers type the cache with (the vectorised twins' ``cs``, the simulation's
#: ``cluster``): kept so that the split into cache, snapshot and columns changed no call site.
ClusterState = Cache
