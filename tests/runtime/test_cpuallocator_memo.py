"""The CPU allocator's table of answers (``cpuallocator_memo``) against the plain allocator:
random CPU sets, counts and priorities on the conformance machines give the plain answer, the
first time and from the table; a set too small is refused before the table is read; whole
runs of both nri-plugins policies place the same with and without it."""

from __future__ import annotations

import random

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.runtime import cpuallocator_memo
from kubetwin.runtime.cpuallocator import PRIORITY_NONE, AllocationError, CPUAllocator
from kubetwin.runtime.sysfs import System

from . import fastpath_runs as runs


def _allocator(machine_file: str) -> CPUAllocator:
    machine = load_machine(str(runs.SHARED / "machines" / machine_file))
    return CPUAllocator(System(machine, CPUSet()))


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_answers_from_the_table_are_the_plain_allocators(machine: str) -> None:
    alloc = _allocator(machine)
    cpus = alloc.sys.cpu_set.sorted()
    rng = random.Random(21)
    for _ in range(300):
        frm = CPUSet(c for c in cpus if rng.random() < rng.choice((0.3, 0.7, 0.95)))
        if frm.size() < 2:
            continue
        cnt = rng.randrange(1, frm.size())
        prefer = rng.choice((0, 1, 2, PRIORITY_NONE))
        plain = alloc.plain_allocate_cpus(frm, cnt, prefer)
        assert alloc.allocate_cpus(frm, cnt, prefer) == plain   # computed, then kept
        assert alloc.allocate_cpus(frm, cnt, prefer) == plain   # from the table


def test_the_table_is_shared_by_allocators_of_one_machine_only() -> None:
    one, two = _allocator(runs.MACHINES[1]), _allocator(runs.MACHINES[0])
    frm = CPUSet.parse("0-7")
    assert one.allocate_cpus(frm, 3) == one.plain_allocate_cpus(frm, 3)
    assert two.allocate_cpus(frm, 3) == two.plain_allocate_cpus(frm, 3)


def test_a_set_too_small_is_refused_as_by_the_plain_allocator() -> None:
    alloc = _allocator(runs.MACHINES[1])
    with pytest.raises(AllocationError, match="does not have 5 CPUs"):
        alloc.allocate_cpus(CPUSet.parse("0-3"), 5)


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_runs_place_the_same_with_and_without_the_table(policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rp = runs.topology_aware() if policy == "topology-aware" else runs.balloons()
    annotations = runs.TOPOLOGY_AWARE_ANNOTATIONS if policy == "topology-aware" else runs.BALLOONS_ANNOTATIONS
    arrivals = runs.arrivals(22, 150, annotations)
    fast = runs.run(runs.nodes(runs.MACHINES[0], 4, rp), arrivals)
    monkeypatch.setattr(cpuallocator_memo, "ENABLED", False)
    plain = runs.run(runs.nodes(runs.MACHINES[0], 4, rp), arrivals)
    assert fast == plain and runs.placed(plain) > 0
