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
  only shrinks, so the nodes a pod shape fits are listed once per shape (``_Shape.cand``) and a
  pointer (``_Shape.start``) moves past those that stopped fitting — no node ahead of it can fit
  again in this scan;
* a drain trial only takes room, so before its first placement the nodes it may use are filtered
  in one vector operation (room in the committed state, not the node itself, not another unneeded
  node), and within the trial a per-shape pointer moves past nodes the trial filled;
* a trial places on Python-int rows and undoes its own placements when a pod finds no place (no
  copy of the whole room per trial); only a successful drain is written to the numpy arrays.

The node-local checks (node affinity, taints) are per pod, so a node failing them is passed over
without moving a pointer, exactly as the plain walk does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class _Shape:
    """One pod request vector: its non-zero columns and the nodes that had room for it."""

    cols: list[int]
    want: list[int]
    cand: np.ndarray
    start: int = 0


class DrainScan:
    """The committed free room of one scale-down scan and the first-fit drain trials against it.

    ``free``/``npods`` are the scan's own copies (rows per node, columns per resource); they are
    updated in place when a drain succeeds. ``local_fit(pod, k)`` is the node-local predicate."""

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
        self.busy[:] = False
        for k in nodes:
            self.busy[k] = True

    def _shape(self, vec: np.ndarray) -> _Shape:
        key = vec.tobytes()
        s = self._shapes.get(key)
        if s is None:
            cols = np.flatnonzero(vec)
            ok = (self.npods < self.pods_alloc) & self.schedulable
            if len(cols):
                ok &= (self.free[:, cols] >= vec[cols]).all(axis=1)
            s = self._shapes[key] = _Shape(cols.tolist(), vec[cols].tolist(), np.flatnonzero(ok))
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
        orders: dict[int, list[Any]] = {}
        for s in shapes:   # before any placement: the state is the committed one
            if id(s) in orders:
                continue
            cand, start = s.cand, s.start
            while start < len(cand) and not self._room(s, int(cand[start])):
                start += 1
            s.start = start
            idx = cand[start:]
            ok = ~self.busy[idx] & (idx != skip)
            if len(s.cols):
                ok &= (self.free[idx][:, s.cols] >= s.want).all(axis=1)
            ok &= self.npods[idx] < self.pods_alloc[idx]
            orders[id(s)] = [idx[ok].tolist(), 0]
        log: list[tuple[int, _Shape]] = []
        placed = True
        for pod, s in zip(pods, shapes):
            entry = orders[id(s)]
            order, pos = entry
            j = pos
            target = -1
            while j < len(order):
                k = order[j]
                if not self._room(s, k):
                    if j == pos:   # filled by this trial: no later pod of the shape fits it
                        pos += 1
                    j += 1
                    continue
                if self.local_fit(pod, k):
                    target = k
                    break
                j += 1
            entry[1] = pos
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
        for k, s in log:
            if s.cols:
                self.free[k, s.cols] -= s.want
            self.npods[k] += 1
        return True
