"""The Cluster Autoscaler's drain simulation over one scale-down scan, the fast path: the same
first-fit placements as :meth:`kubetwin.sim.cluster_autoscaler.ClusterAutoscalerLoop._place_elsewhere`
(the plain implementation, kept as the reference), at a fraction of the cost.

Upstream (read, not copied): cluster-autoscaler 1.36 ``simulator/cluster.go``
(``RemovalSimulator.SimulateNodeRemoval`` → ``findPlaceFor``: every pod of the node must find a
place on another node that is not itself being removed, in a forked snapshot that is reverted when
one does not) and ``simulator/scheduling/hinting_simulator.go`` (``TrySchedulePods``: a pod goes to
the first node, in the snapshot's order, that passes the predicates).

Why it is fast and still exact, within one scan:

* the committed free room (the scan's copy of the cluster's, less what successful drains moved)
  only shrinks, so per pod shape the nodes with room that are not unneeded are listed once
  (``_Shape.avail``) and kept in step: a commit drops the nodes that lost the room, a node turning
  unneeded leaves every list, a node found needed again joins those it has room for;
* a drain trial only takes room, so within it a per-shape pointer moves past the nodes the trial
  filled;
* a trial places on Python-int rows and undoes its own placements when a pod finds no place (no
  copy of the whole room per trial); only a successful drain is written to the numpy arrays.

The node-local checks (node affinity, taints) are per pod, so a node failing them is passed over
without moving a pointer, exactly as the plain walk does.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class _Shape:
    """One pod request vector: its non-zero columns, and the nodes (in order) that are not busy and
    have room for it in the committed state (kept in step as drains commit and nodes turn busy)."""

    cols: list[int]
    want: list[int]
    avail: list[int]


class DrainScan:
    """The committed free room of one scale-down scan and the first-fit drain trials against it.

    ``free``/``npods`` are the scan's own copies (rows per node, columns per resource); they are
    updated in place when a drain succeeds. ``amounts(pod)`` is a pod's request vector,
    ``local_fit(pod, k)`` the node-local predicate."""

    def __init__(self, free: np.ndarray, npods: np.ndarray, pods_alloc: np.ndarray, unschedulable: np.ndarray,
                 amounts: Callable[[Any], np.ndarray], local_fit: Callable[[Any, int], bool]):
        self.free = free
        self.npods = npods
        self.free_l: list[list[int]] = free.tolist()
        self.npods_l: list[int] = npods.tolist()
        self.alloc_l: list[int] = pods_alloc.tolist()
        self.pods_alloc = pods_alloc
        self.schedulable = ~unschedulable
        self.amounts = amounts
        self.local_fit = local_fit
        self.busy = np.zeros(len(npods), dtype=bool)
        self._shapes: dict[bytes, _Shape] = {}

    def set_busy(self, nodes: Iterable[int]) -> None:
        """The nodes already unneeded (before any shape is worked out)."""
        self.busy[:] = False
        for k in nodes:
            self.busy[k] = True

    def mark_busy(self, k: int, busy: bool) -> None:
        """Node ``k`` turned unneeded (no destination any more) or was found needed (a destination again)."""
        if bool(self.busy[k]) == busy:
            return
        self.busy[k] = busy
        for s in self._shapes.values():
            at = bisect_left(s.avail, k)
            if busy:
                if at < len(s.avail) and s.avail[at] == k:
                    del s.avail[at]
            elif self.schedulable[k] and self._room(s, k):
                s.avail.insert(at, k)

    def _shape(self, vec: np.ndarray) -> _Shape:
        key = vec.tobytes()
        s = self._shapes.get(key)
        if s is None:
            cols = np.flatnonzero(vec)
            ok = (self.npods < self.pods_alloc) & self.schedulable & ~self.busy
            if len(cols):
                ok &= (self.free[:, cols] >= vec[cols]).all(axis=1)
            s = self._shapes[key] = _Shape(cols.tolist(), vec[cols].tolist(), np.flatnonzero(ok).tolist())
        return s

    def _room(self, s: _Shape, k: int) -> bool:
        if self.npods_l[k] >= self.alloc_l[k]:
            return False
        row = self.free_l[k]
        for c, w in zip(s.cols, s.want):
            if row[c] < w:
                return False
        return True

    def place_elsewhere(self, skip: int, pods: list[Any]) -> bool:
        """Every pod of node ``skip`` on the first node (in order) that is neither it nor busy and
        has room and passes the node-local checks; the room is taken only if all of them find one."""
        shapes = [self._shape(self.amounts(p)) for p in pods]
        pos: dict[int, int] = {}
        log: list[tuple[int, _Shape]] = []
        placed = True
        for pod, s in zip(pods, shapes):
            order = s.avail
            first = j = pos.get(id(s), 0)
            target = -1
            while j < len(order):
                k = order[j]
                if k == skip or not self._room(s, k):
                    if j == first:   # this trial filled it (or it is the drained node): no later pod of the shape goes there
                        first += 1
                    j += 1
                    continue
                if self.local_fit(pod, k):
                    target = k
                    break
                j += 1
            pos[id(s)] = first
            if target < 0:
                placed = False
                break
            row = self.free_l[target]
            for c, w in zip(s.cols, s.want):
                row[c] -= w
            self.npods_l[target] += 1
            log.append((target, s))
        if not placed:
            for k, s in log:
                row = self.free_l[k]
                for c, w in zip(s.cols, s.want):
                    row[c] += w
                self.npods_l[k] -= 1
            return False
        touched = set()
        for k, s in log:
            if s.cols:
                self.free[k, s.cols] -= s.want
            self.npods[k] += 1
            touched.add(k)
        for s in self._shapes.values():   # committed room only shrank: drop the nodes that lost it
            for k in touched:
                if not self._room(s, k):
                    at = bisect_left(s.avail, k)
                    if at < len(s.avail) and s.avail[at] == k:
                        del s.avail[at]
        return True
