"""Scores that read only each node's own state, kept per pod shape from one cycle to the next.

NodeResourcesFit's and NodeResourcesBalancedAllocation's scores of a node depend on the pod's
requests and on that node's columns alone (allocatable, requested), and a bind or a removal
changes one node. Pods of one shape — a Deployment's replicas — are scored again and again on
mostly the same nodes, so a node's score is kept until the node changes (the cache's
generations say which nodes did: :meth:`~..backend.cache.Cache.changed_since`; any change that is
not one node's own forgets them all), and a cycle computes only the scored nodes it does not
hold: the few nodes changed since the last read at once, the others when first scored. Each
value is the one the score's own function gives for the node, so the totals are those of
scoring every node afresh.

Not an upstream module: upstream scores every feasible node in each cycle
(``pkg/scheduler/schedule_one.go``'s ``prioritizeNodes``); this is the fast path's memo of it.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Hashable

import numpy as np

from .cluster_memos import ClusterMemos

if TYPE_CHECKING:
    from ..backend.cache import ClusterState

#: at most this many (score, pod shape) entries per cluster, and at most this many node values
#: in all (about 9 bytes each): the least recently used entry goes first
MAX_ENTRIES = 64
MAX_VALUES = 4_000_000


class _Entry:
    __slots__ = ("values", "valid", "n_valid", "generation", "pins")

    def __init__(self, n: int, generation: int, pins: tuple[Any, ...]):
        self.values = np.zeros(n, dtype=np.int64)
        self.valid = np.zeros(n, dtype=bool)
        #: how many nodes are valid (all of them: no node to look up)
        self.n_valid = 0
        self.generation = generation
        #: the objects whose identities the key holds, kept alive while the entry is
        self.pins = pins


#: up to this many nodes changed since an entry was last read are scored again at once (a bind
#: changes one node), more are marked to be scored when next asked for
EAGER = 4
#: on clusters of at most this many nodes an entry holds every node's score: a shape's first
#: cycle scores every node, later ones the nodes changed since (all at once, however many),
#: and reading the entry is one gather. Scoring every node costs little more than scoring the
#: nodes asked for, where a call costs more than its elements; on larger clusters the nodes
#: asked for are scored as they are first asked for
WHOLE_MAX_NODES = 8192


#: one memo per cluster state
_MEMOS = ClusterMemos()


def node_local_scores(cs: "ClusterState", key: Hashable, pins: tuple[Any, ...], idx: np.ndarray,
                      compute: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The scores of nodes ``idx`` (a new int64 array): those kept for ``key`` where the node has
    not changed since they were computed, ``compute(nodes)`` for the others. ``compute`` must
    give each node's score from that node's own state and the pod alone; ``key`` names the score
    and the pod's shape (``pins``: objects the key refers to by identity)."""
    memo = _MEMOS.of(cs)
    gen = cs.generation
    e = memo.get(key)
    if cs.n <= WHOLE_MAX_NODES:
        return _whole(cs, memo, key, e, pins, idx, compute)
    if e is None or len(e.values) != cs.n:
        e = _new_entry(memo, key, cs.n, gen, pins)
    else:
        memo.move_to_end(key)
        if e.generation != gen:
            changed = cs.changed_since(e.generation)
            e.generation = gen
            if changed is None:
                e.valid[:] = False
                e.n_valid = 0
            elif len(changed) <= EAGER:
                nodes = sorted(changed)
                valid, values = e.valid, e.values
                for i, v in zip(nodes, compute(np.array(nodes, dtype=np.int64)).tolist()):
                    values[i] = v
                    if not valid[i]:
                        valid[i] = True
                        e.n_valid += 1
            else:
                e.valid[list(changed)] = False
                e.n_valid = int(np.count_nonzero(e.valid))
    if e.n_valid != len(e.values):
        valid = e.valid.take(idx)
        if not _all(valid):
            miss = idx[~valid]
            e.values[miss] = compute(miss)
            e.valid[miss] = True
            e.n_valid += len(miss)
    return e.values.take(idx)


def _new_entry(memo: "OrderedDict[Hashable, _Entry]", key: Hashable, n: int, generation: int,
               pins: tuple[Any, ...]) -> _Entry:
    """A fresh entry for ``key``, the oldest entries dropped so the memo holds at most
    ``MAX_ENTRIES`` entries and about ``MAX_VALUES`` node scores."""
    e = memo[key] = _Entry(n, generation, pins)
    limit = max(1, min(MAX_ENTRIES, MAX_VALUES // max(n, 1)))
    while len(memo) > limit:
        memo.popitem(last=False)
    return e

def _whole(cs: "ClusterState", memo: "OrderedDict[Hashable, _Entry]", key: Hashable, e: "_Entry | None",
           pins: tuple[Any, ...], idx: np.ndarray, compute: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """:func:`node_local_scores` with every node's score held (``WHOLE_MAX_NODES``)."""
    n = cs.n
    gen = cs.generation
    if e is None or len(e.values) != n or e.n_valid != n:
        e = _new_entry(memo, key, n, gen, pins)
        e.values = compute(np.arange(n, dtype=np.int64))
        e.n_valid = n
    else:
        memo.move_to_end(key)
        if e.generation != gen:
            changed = cs.changed_since(e.generation)
            e.generation = gen
            if changed is None:
                e.values = compute(np.arange(n, dtype=np.int64))
            else:
                nodes = sorted(changed)
                values = e.values
                if len(nodes) <= EAGER:
                    for i, v in zip(nodes, compute(np.array(nodes, dtype=np.int64)).tolist()):
                        values[i] = v
                else:
                    at = np.array(nodes, dtype=np.int64)
                    values[at] = compute(at)
    return e.values.take(idx)


#: ``ndarray.all`` without its Python wrapper
_all = np.logical_and.reduce
