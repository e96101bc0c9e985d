"""The sampling over every node (``first_feasible``): the first ``numFeasibleNodesToFind``
feasible nodes in rotation order from ``nextStartNodeIndex``, and how many nodes that examined
— what ``findNodesThatPassFilters`` gives when it walks the nodes one by one."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kubetwin.scheduler.fastpath.cycle import first_feasible


def _walked(fail: list[bool], start: int, to_find: int) -> tuple[list[int], int] | None:
    """The nodes walked one by one from ``start``, stopping once ``to_find`` fit."""
    m = len(fail)
    found: list[int] = []
    for step in range(m):
        i = (start + step) % m
        if not fail[i]:
            found.append(i)
            if len(found) == to_find:
                return found, step + 1
    return (found, m) if found else None


@pytest.mark.parametrize("seed", range(40))
def test_first_feasible_is_the_walk_from_the_start_node(seed):
    rng = random.Random(seed)
    m = rng.randrange(1, 60)
    fail = [rng.random() < rng.choice((0.0, 0.3, 0.7, 1.0)) for _ in range(m)]
    start, to_find = rng.randrange(m), rng.randrange(1, m + 1)
    got = first_feasible(np.array(fail, dtype=bool), start, to_find, m)
    want = _walked(fail, start, to_find)
    if want is None:
        assert got is None
    else:
        assert got is not None
        assert (got[0].tolist(), got[1]) == want
