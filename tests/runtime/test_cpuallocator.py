"""nri-plugins' CPU allocator: idle packages, cache groups, idle cores, then threads (Go tests
``TestAllocatorHelper`` and the allocation order)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubetwin.machine.machineinfo import machine_from_machineinfo
from kubetwin.model.cpuset import CPUSet
from kubetwin.runtime.cpuallocator import (
    PRIORITY_HIGH,
    PRIORITY_NONE,
    PRIORITY_NORMAL,
    AllocationError,
    CPUAllocator,
    CPUPriorities,
    _Helper,
)
from kubetwin.runtime.sysfs import System

MACHINES = Path(__file__).parent / "cases" / "machines"


def machine(name: str):
    return machine_from_machineinfo(json.loads((MACHINES / f"{name}.json").read_text()))


def two_socket_four_node_40_core():
    """pkg/cpuallocator testdata "2-socket-4-node-40-core": CPU c and c+40 are siblings, package
    c // 20, L3 per package."""
    nodes = {0: "0-2,5-6,10-12,15-16", 1: "3-4,7-9,13-14,17-19", 2: "20-22,25-26,30-32,35-36",
             3: "23-24,27-29,33-34,37-39"}
    dist = [[10, 11, 21, 21], [11, 10, 21, 21], [21, 21, 10, 11], [21, 21, 11, 10]]
    topo = []
    for nid, text in nodes.items():
        cores = [{"core_id": c, "socket_id": c // 20, "thread_ids": [c, c + 40],
                  "caches": [{"id": c, "size": 1, "type": "Unified", "level": 2}],
                  "uncore_caches": [{"id": c // 20, "size": 1, "type": "Unified", "level": 3}]}
                 for c in CPUSet.parse(text)]
        topo.append({"node_id": nid, "memory": 48 << 30, "cores": cores, "distances": dist[nid]})
    return machine_from_machineinfo({"num_cores": 80, "num_physical_cores": 40, "num_sockets": 2,
                                     "memory_capacity": 4 * (48 << 30), "topology": topo})


@pytest.mark.parametrize("frm, prefer, cnt, expected", [
    ("2,3,10-14,20", PRIORITY_NORMAL, 9, ""),
    ("2,3,10-14,20", PRIORITY_NORMAL, 8, "2,3,10-14,20"),
    ("2,3,10-25", PRIORITY_HIGH, 4, "2,3,15,17"),
], ids=["too few available CPUs", "request all available CPUs", "prefer high priority cpus"])
def test_allocator_helper(frm: str, prefer: int, cnt: int, expected: str) -> None:
    sys = System(two_socket_four_node_40_core())
    alloc = CPUAllocator(sys)
    alloc.topology.priorities = CPUPriorities([CPUSet.parse("2,5,8,15,17,42,45,48,55,57"),
                                               CPUSet.parse("20-39,60-79"),
                                               CPUSet.parse("0,1,3,4,6,7,9-14,16,18,19,40,41,43,44,46,47,49-54,56,58,59")])
    result = _Helper(sys, alloc.topology, CPUSet.parse(frm), cnt, prefer).allocate()
    assert result == CPUSet.parse(expected)


def test_whole_idle_packages_are_taken_first() -> None:
    alloc = CPUAllocator(System(machine("n4c16")))
    got, rest = alloc.allocate_cpus(CPUSet.parse("1-15"), 8)
    assert got == CPUSet.parse("8-15") and rest == CPUSet.parse("1-7")


def test_whole_idle_cores_come_before_single_threads() -> None:
    alloc = CPUAllocator(System(machine("n4c16")))
    got, _ = alloc.allocate_cpus(CPUSet.parse("1-7"), 2)
    assert got == CPUSet.parse("2-3")


def test_a_single_thread_comes_from_the_fullest_core_of_the_fullest_package() -> None:
    alloc = CPUAllocator(System(machine("n4c16")))
    got, _ = alloc.allocate_cpus(CPUSet.parse("1-15"), 1)
    assert got == CPUSet.parse("1")


def test_a_cache_level_splitting_a_package_groups_cpus() -> None:
    alloc = CPUAllocator(System(machine("n4c128")))
    groups = [str(g.cpus) for g in alloc.topology.cache_groups]
    assert len(groups) == 16 and groups[:2] == ["0-7", "8-15"]
    got, _ = alloc.allocate_cpus(CPUSet.parse("1-127"), 8)
    assert str(got) in groups


def test_no_cache_groups_when_every_cache_is_a_core_or_a_package() -> None:
    assert CPUAllocator(System(machine("n4c16"))).topology.cache_groups == []


def test_allocating_more_than_available_is_an_error() -> None:
    with pytest.raises(AllocationError, match="does not have 3 CPUs"):
        CPUAllocator(System(machine("n4c16"))).allocate_cpus(CPUSet.parse("0-1"), 3)


def test_release_leaves_the_released_cpus_in_the_remainder() -> None:
    kept, released = CPUAllocator(System(machine("n4c16"))).release_cpus(CPUSet.parse("0-7"), 2, PRIORITY_NONE)
    assert kept.size() == 6 and released.size() == 2 and not kept & released
