"""The CPU allocator's orderings by keys (``cpuallocator_keys``) against the plain comparison:
random CPU sets and counts on the conformance machines, with no priority preferred (the keys'
case) and with each priority (the plain comparison), give the plain allocator's answer; whole
runs of both nri-plugins policies place the same with and without them."""

from __future__ import annotations

import random

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.runtime import cpuallocator_keys
from kubetwin.runtime.cpuallocator import PRIORITY_NONE, CPUAllocator
from kubetwin.runtime.sysfs import System

from . import fastpath_runs as runs


def _allocator(machine_file: str) -> CPUAllocator:
    machine = load_machine(str(runs.SHARED / "machines" / machine_file))
    return CPUAllocator(System(machine, CPUSet()))


def _answers(alloc: CPUAllocator, asks: list[tuple[CPUSet, int, int]]) -> list[tuple[CPUSet, CPUSet]]:
    return [alloc.plain_allocate_cpus(frm, cnt, prefer) for frm, cnt, prefer in asks]


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_orderings_by_keys_give_the_plain_allocators_answers(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    alloc = _allocator(machine)
    cpus = alloc.sys.cpu_set.sorted()
    rng = random.Random(23)
    asks = []
    for _ in range(300):
        frm = CPUSet(c for c in cpus if rng.random() < rng.choice((0.3, 0.7, 0.95)))
        if frm.size() < 2:
            continue
        asks.append((frm, rng.randrange(1, frm.size()), rng.choice((0, 1, 2, PRIORITY_NONE, PRIORITY_NONE))))
    keyed = _answers(alloc, asks)
    monkeypatch.setattr(cpuallocator_keys, "ENABLED", False)
    assert keyed == _answers(alloc, asks)


def test_keys_sort_only_when_no_priority_is_preferred() -> None:
    class Helper:
        prefer = 1

    assert not cpuallocator_keys.sort_idle_cores(Helper(), [3, 1], PRIORITY_NONE)
    assert not cpuallocator_keys.sort_idle_threads(Helper(), [3, 1], PRIORITY_NONE)


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_runs_place_the_same_with_and_without_the_keys(policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from kubetwin.runtime import cpuallocator_memo

    monkeypatch.setattr(cpuallocator_memo, "ENABLED", False)   # every answer computed
    rp = runs.topology_aware() if policy == "topology-aware" else runs.balloons()
    annotations = runs.TOPOLOGY_AWARE_ANNOTATIONS if policy == "topology-aware" else runs.BALLOONS_ANNOTATIONS
    arrivals = runs.arrivals(24, 150, annotations)
    keyed = runs.run(runs.nodes(runs.MACHINES[0], 4, rp), arrivals)
    monkeypatch.setattr(cpuallocator_keys, "ENABLED", False)
    assert keyed == runs.run(runs.nodes(runs.MACHINES[0], 4, rp), arrivals)
