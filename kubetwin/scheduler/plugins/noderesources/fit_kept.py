"""NodeResourcesFit's whole-cluster Filter verdict kept per pod shape from one cycle to the next.

Why: ``fitsRequest`` (``pkg/scheduler/framework/plugins/noderesources/fit.go``) reads the pod's
requests and one node's own columns (pods, allocatable, requested) alone, and a bind or a
removal changes one node. The vectorised Filter
(:func:`.vector.filter_node_resources_fit`) compares every node's columns in each cycle (a
handful of numpy calls over the whole cluster); pods of one shape — a workload's replicas — ask
the same question cycle after cycle, so the answer is kept per request plan and only the nodes
the cache says changed since (:meth:`~kubetwin.scheduler.backend.cache.Cache.changed_since`; a
change that is not one node's own forgets it) are compared again, one by one. Each node's answer
is the one the plain comparison gives for the node as it is now, so the verdict is that of the
plain whole-cluster Filter (``tests/scheduler/plugins/noderesources/test_fit_kept.py`` compares
them after random binds and removals).

Kept only for plans whose every resource is a fixed one indexed by the cache (cpu, memory,
ephemeral-storage, hugepages; the scalar resources' DRA-backed test reads more than the node)
and whose amounts fit in the columns' int64. ``ENABLED = False``: the plain comparison every
cycle.

Not an upstream module: upstream runs the Filter on every node in each cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ...fastpath.cluster_memos import ClusterMemos

if TYPE_CHECKING:
    from ...backend.cache import ClusterState

#: off: every cycle compares every node (the plain vectorised Filter)
ENABLED = True
#: plans kept per cluster at most (the least recently used goes first)
MAX_ENTRIES = 32
#: up to this many nodes changed since the last read are compared again one by one; more: all
EAGER = 8

_INT64 = 1 << 63

#: (resource, amount, fixed resource?, column) as :func:`.vector.wanted_resources` lists them
Plan = Sequence[tuple[str, int, bool, "int | None"]]
FullFail = Callable[[Any, Plan, dict[str, np.ndarray], int, int], np.ndarray]


class _Kept:
    __slots__ = ("generation", "fail", "handed", "wanted")

    def __init__(self, generation: int, fail: np.ndarray, wanted: tuple[tuple[int, int], ...]):
        self.generation = generation
        self.fail = fail
        #: (amount, column) of each resource of the plan
        self.wanted = wanted
        #: the array was handed out (a verdict may hold it): copied before it is changed
        self.handed = False


#: one memo per cluster state
_MEMOS = ClusterMemos()


def keepable(plan: Plan) -> bool:
    """Can the plan's verdict be kept (every resource fixed, indexed, its amount an int64)?"""
    for _, want, fixed, j in plan:
        if not fixed or j is None or not -_INT64 <= want < _INT64:
            return False
    return True


def fit_fail(cs: "ClusterState", plan: Plan, full: FullFail) -> np.ndarray | None:
    """The nodes short of pods or of a requested resource (``full(cs, plan, {}, 0, cs.n)``, the
    plain comparison, as it would answer now), or None when the plan is not :func:`keepable`.
    The array returned must not be written to."""
    key = tuple(plan)
    memo = _MEMOS.of(cs)
    gen = cs.generation
    e = memo.get(key)
    if e is None:
        if not keepable(plan):
            return None
        wanted = tuple((want, j) for _, want, _, j in plan if j is not None)
        e = memo[key] = _Kept(gen, full(cs, plan, {}, 0, cs.n), wanted)
        while len(memo) > MAX_ENTRIES:
            memo.popitem(last=False)
    elif e.generation != gen:
        memo.move_to_end(key)
        changed = cs.changed_since(e.generation)
        if changed is None or len(changed) > EAGER or len(e.fail) != cs.n:
            e.fail, e.handed = full(cs, plan, {}, 0, cs.n), False
        else:
            if e.handed:
                e.fail, e.handed = e.fail.copy(), False
            fail = e.fail
            npods, pods_alloc, free = cs.npods, cs.pods_alloc, cs.free
            for i in changed:
                short = npods.item(i) >= pods_alloc.item(i)
                if not short:
                    for want, j in e.wanted:
                        if want > free.item(i, j):
                            short = True
                            break
                fail[i] = short
        e.generation = gen
    e.handed = True
    return e.fail
