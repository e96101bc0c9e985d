"""The balloons tree allocator's table of resizes (``cputree_memo``) against the plain tree walk:
random balloons, free sets and changes (inflating and deflating, with and without topology
balancing and CPU sets to be close to or far from) on the conformance machines give the plain
answer, computed and then from the table; runs of the balloons policy place the same with and
without it."""

from __future__ import annotations

import random

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.runtime.policies.balloons import cputree_memo
from kubetwin.runtime.policies.balloons.cputree import CpuTreeAllocator, TreeError, cpu_tree_from_system
from kubetwin.runtime.sysfs import System

from ... import fastpath_runs as runs


def _subset(rng: random.Random, cpus: list[int], p: float) -> CPUSet:
    return CPUSet(c for c in cpus if rng.random() < p)


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_resizes_from_the_table_are_the_plain_tree_walks(machine: str) -> None:
    sys = System(load_machine(str(runs.SHARED / "machines" / machine)), CPUSet())
    tree = cpu_tree_from_system(sys)
    cpus = sys.cpu_set.sorted()
    rng = random.Random(61)
    compared = 0
    for _ in range(300):
        reserved = _subset(rng, cpus[:8], 0.3)
        close = [[reserved]] if reserved and rng.random() < 0.3 else []
        far = [[reserved]] if reserved and not close and rng.random() < 0.5 else []
        alloc = CpuTreeAllocator(tree, rng.random() < 0.5, close, far)
        current = _subset(rng, cpus, 0.2)
        free = _subset(rng, cpus, 0.6) - current
        delta = rng.randint(1, 6) if rng.random() < 0.6 else -rng.randint(1, 4)
        if (delta > 0 and free.size() <= delta) or (delta < 0 and current.size() <= -delta):
            continue   # answered before the tree is walked
        try:
            plain = alloc._with_devices(current, free, delta)
        except TreeError:
            continue
        assert alloc.resize_cpus(current, free, delta) == plain   # computed, then kept
        assert alloc.resize_cpus(current, free, delta) == plain   # from the table
        compared += 1
    assert compared > 100


def test_a_run_of_balloons_places_the_same_with_and_without_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(62, 150, runs.BALLOONS_ANNOTATIONS)
    fast = runs.run(runs.nodes(runs.MACHINES[0], 4, runs.balloons()), arrivals)
    monkeypatch.setattr(cputree_memo, "ENABLED", False)
    plain = runs.run(runs.nodes(runs.MACHINES[0], 4, runs.balloons()), arrivals)
    assert fast == plain and runs.placed(plain) > 0
