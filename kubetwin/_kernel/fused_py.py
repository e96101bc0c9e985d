"""The pure-Python twin of the compiled ``_fused.pick`` (``_fused.c``): the same answers from
numpy arrays, with the plugins' own functions.

:func:`pick` reads the nodes in sampling order from ``start`` (``nextStartNodeIndex``), keeps the
first ``to_find`` (``numFeasibleNodesToFind``) that no Filter column rejects, scores them as
NodeResourcesFit (LeastAllocated on cpu and memory) and NodeResourcesBalancedAllocation do —
:func:`~kubetwin.scheduler.plugins.noderesources.vector._least_cpu_memory` and
:func:`~kubetwin.scheduler.plugins.noderesources.vector._balanced_cpu_memory`, the vectorised
cycle's own arithmetic — and lists the nodes tied at the top score, for ``selectHost``'s draw.

Not an upstream module: upstream's loop is ``pkg/scheduler/schedule_one.go``'s
``findNodesThatPassFilters``, ``prioritizeNodes`` and ``selectHost``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..scheduler.fastpath.cycle import first_feasible
from ..scheduler.plugins.noderesources.resource_allocation import ResourceSpec
from ..scheduler.plugins.noderesources.vector import _balanced_cpu_memory, _least_cpu_memory


def pick(n: int, start: int, to_find: int, static_fail: np.ndarray | None, npods: np.ndarray,
         pods_alloc: np.ndarray, wants: tuple[tuple[int, np.ndarray], ...], own: tuple[np.ndarray, ...],
         score: tuple[Any, ...] | None, feasible_out: np.ndarray, scores_out: np.ndarray,
         top_out: np.ndarray) -> tuple[int, int, int]:
    """(nodes examined, feasible nodes found, nodes tied at the top score); the feasible nodes
    in sampling order go to ``feasible_out``, their scores to ``scores_out``, the top ones (in
    the same order) to ``top_out``. ``wants``: (amount, free column) per resource Fit checks;
    ``own``: other Filters' failing nodes; ``score``: None (no scores) or (cpu, memory
    allocatable; their non-zero requested and requested columns; Fit's two requests and
    resource weights; Fit's weight; Balanced on; its two requests and weight)."""
    fail = npods >= pods_alloc
    for want, column in wants:
        fail |= want > column
    for f in own:
        fail |= f
    if static_fail is not None:
        fail |= static_fail
    got = first_feasible(fail, start, to_find, n)
    if got is None:
        return n, 0, 0
    feasible, processed = got
    found = len(feasible)
    feasible_out[:found] = feasible
    if score is None:
        return processed, found, 0
    cap0, cap1, nz0, nz1, rq0, rq1, fr0, fr1, w0, w1, fit_weight, bal_on, br0, br1, bal_weight = score
    caps = (cap0.take(feasible), cap1.take(feasible))
    total = _least_cpu_memory((ResourceSpec("cpu", w0), ResourceSpec("memory", w1)), caps, (nz0.take(feasible), nz1.take(feasible)), (fr0, fr1))
    if fit_weight != 1:
        total *= fit_weight
    if bal_on:
        bal = _balanced_cpu_memory(caps, (rq0.take(feasible), rq1.take(feasible)), (br0, br1))
        if bal_weight != 1:
            bal *= bal_weight
        total += bal
    scores_out[:found] = total
    top = feasible[total == total.max()]
    top_out[:len(top)] = top
    return processed, found, len(top)
