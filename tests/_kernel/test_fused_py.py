"""The compiled kernel and its pure-Python twin give the same answers.

On random columns — nodes full of pods, resources short, other Filters' failures, node-object
failures, amounts from tiny to near 2**50, weights from 1 to 100, requests of zero (Balanced
off) — ``pick`` returns the same nodes examined, feasible nodes in the same order with the same
scores, and the same nodes tied at the top, from every sampling start and for every
``numFeasibleNodesToFind``. Where the extension was not built here, the tests of the compiled
side are skipped (the pure-Python twin runs alone).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from kubetwin import _kernel
from kubetwin._kernel import fused_py

needs_c = pytest.mark.skipif(_kernel.pick_c is None, reason="the C kernel was not built here")


def _columns(rng: random.Random, n: int) -> dict:
    big = rng.random() < 0.3
    hi = 2**50 if big else 64_000
    cap0 = np.array([rng.randint(1, hi) for _ in range(n)], dtype=np.int64)
    cap1 = np.array([rng.randint(1, hi) for _ in range(n)], dtype=np.int64)
    rq0 = np.array([rng.randint(0, int(c)) for c in cap0], dtype=np.int64)
    rq1 = np.array([rng.randint(0, int(c)) for c in cap1], dtype=np.int64)
    nz0 = rq0 + np.array([rng.choice([0, 0, 100]) for _ in range(n)], dtype=np.int64)
    nz1 = rq1 + np.array([rng.choice([0, 0, 200]) for _ in range(n)], dtype=np.int64)
    if rng.random() < 0.3:   # few distinct nodes: many ties
        for arr in (cap0, cap1, rq0, rq1, nz0, nz1):
            arr[:] = arr[0]
    pods_alloc = np.array([rng.choice([3, 5, 110]) for _ in range(n)], dtype=np.int64)
    npods = np.array([rng.randint(0, int(p)) for p in pods_alloc], dtype=np.int64)
    want0, want1 = rng.randint(0, hi // 4), rng.randint(0, hi // 4)
    wants = ((want0, cap0 - rq0), (want1, cap1 - rq1))
    own = tuple(np.array([rng.random() < 0.2 for _ in range(n)]) for _ in range(rng.randint(0, 2)))
    static = np.array([rng.random() < 0.15 for _ in range(n)]) if rng.random() < 0.5 else None
    bal_on = int(rng.random() < 0.8)
    score = (cap0, cap1, nz0, nz1, rq0, rq1, want0, want1, rng.randint(1, 5), rng.randint(1, 5),
             rng.randint(1, 100), bal_on, want0 if bal_on else 0, want1 if bal_on else 0, rng.randint(1, 100))
    return {"static": static, "npods": npods, "pods_alloc": pods_alloc, "wants": wants, "own": own, "score": score}


def _pick(fn, n: int, start: int, to_find: int, c: dict, scored: bool):
    feasible, scores, top = (np.full(n, -1, dtype=np.int64) for _ in range(3))
    processed, found, ntop = fn(n, start, to_find, c["static"], c["npods"], c["pods_alloc"], c["wants"], c["own"],
                                c["score"] if scored else None, feasible, scores, top)
    out = (processed, found, feasible[:found].tolist())
    if scored:
        out += (scores[:found].tolist(), ntop, top[:ntop].tolist())
    return out


@needs_c
@pytest.mark.parametrize("seed", range(40))
def test_the_kernel_and_its_twin_examine_find_score_and_tie_alike(seed):
    rng = random.Random(seed)
    n = rng.choice([1, 2, 7, 64, 300])
    c = _columns(rng, n)
    assert _kernel.pick_c is not None
    for _ in range(6):
        start, to_find = rng.randrange(n), rng.randint(1, n + 2)
        for scored in (True, False):
            assert _pick(_kernel.pick_c, n, start, to_find, c, scored) == _pick(fused_py.pick, n, start, to_find, c,
                                                                                scored), (seed, start, to_find)


def test_the_twin_stops_at_the_nodes_to_find_in_sampling_order():
    n = 6
    zeros = np.zeros(n, dtype=np.int64)
    fails = np.array([False, True, False, False, True, False])
    got = _pick(fused_py.pick, n, 3, 2, {"static": fails, "npods": zeros, "pods_alloc": zeros + 1, "wants": (),
                                           "own": (), "score": None}, False)
    assert got == (3, 2, [3, 5])   # nodes 3, 4 (rejected), 5 examined


def test_no_feasible_node_examines_every_node():
    n = 4
    zeros = np.zeros(n, dtype=np.int64)
    got = _pick(fused_py.pick, n, 1, 2, {"static": None, "npods": zeros + 1, "pods_alloc": zeros + 1, "wants": (),
                                           "own": (), "score": None}, False)
    assert got == (4, 0, [])


def test_the_switch_chooses_the_twin_and_back():
    before = _kernel.use(False)
    try:
        assert _kernel.pick is fused_py.pick and not _kernel.COMPILED
    finally:
        _kernel.use(before)
    assert _kernel.COMPILED == (before and _kernel.pick_c is not None)
