"""The balloons tree search split at the NUMA nodes (``kubetwin.runtime.policies.balloons.treesplit``)
picks the branch the flat tree's mask search picks: random CPU sets on the conformance machines
and on ``simulate``'s machine (many ties), growing and shrinking, with and without balancing."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.runtime.policies.balloons import fast, treesplit
from kubetwin.runtime.policies.balloons.cputree import CpuTreeNode, cpu_tree_from_system
from kubetwin.runtime.sysfs import System

MACHINES = Path(__file__).resolve().parents[4].parent / "shared" / "conformance" / "machines"
MACHINE_FILES = ("dual-socket-multi-numa-per-socket-ht.json", "single-socket-ht.json", "quad-socket-four-way-ht.json",
                 "dual-socket-no-ht.json", "dual-socket-sub-numa-per-socket-ht-monolithic-uncore.json")


def _machine(name: str) -> Any:
    if not (MACHINES / name).is_file():
        pytest.skip("the shared conformance machines are not here")
    return load_machine(str(MACHINES / name))


def _flat(machine: Any) -> fast.FlatTree:
    return fast.FlatTree(cpu_tree_from_system(System(machine)))


def _random_mask(rng: random.Random, cpus: list[int], p: float) -> int:
    return CPUSet(c for c in cpus if rng.random() < p).mask


def _check(flat: fast.FlatTree, rng: random.Random, rounds: int, cur_p: tuple[float, ...],
           free_p: tuple[float, ...], deltas: tuple[int, ...]) -> None:
    split = flat.split
    assert split is not None
    cpus = [c for c in range(flat.masks[0][0].bit_length()) if flat.masks[0][0] >> c & 1]
    for _ in range(rounds):
        current = _random_mask(rng, cpus, rng.choice(cur_p))
        free = _random_mask(rng, cpus, rng.choice(free_p)) & ~current
        delta = rng.choice(deltas)
        balancing = rng.random() < 0.5
        # twice: the second answer from the split nodes' tables
        for _ in range(2):
            assert split.search(balancing, current, free, delta) == \
                flat._search_masks(balancing, current, free, delta), (bin(current), bin(free), delta, balancing)


@pytest.mark.parametrize("machine", MACHINE_FILES)
def test_the_split_search_picks_the_branch_the_mask_search_picks(machine: str) -> None:
    flat = _flat(_machine(machine))
    if flat.split is None:
        pytest.skip("no level of few nodes to split at")
    _check(flat, random.Random(f"split/{machine}"), 400, (0.0, 0.1, 0.4), (0.2, 0.5, 0.9),
           (1, 1, 2, 3, 4, 8, -1, -2, -3))


def test_the_split_search_picks_the_branch_among_many_ties_on_simulates_machine() -> None:
    flat = _flat(load_machine("2s2n16c2t"))
    _check(flat, random.Random("split/ties"), 600, (0.0, 0.0, 0.02, 0.05, 0.2), (0.5, 0.8, 0.95, 1.0),
           (1, 1, 2, 4, 6, 17, 40, -1, -1, -2, -5))


def test_simulates_machine_is_split_at_its_numa_nodes() -> None:
    flat = _flat(load_machine("2s2n16c2t"))
    assert flat.split is not None
    assert flat.split.split == 3 and len(flat.split.split_masks) == 4   # system, package, die, numa


def test_a_change_no_numa_node_has_room_for_goes_to_the_mask_search(monkeypatch: pytest.MonkeyPatch) -> None:
    flat = _flat(load_machine("2s2n16c2t"))
    split = flat.split
    assert split is not None
    asked: list[int] = []
    plain = fast.FlatTree._search_masks

    def spy(self: fast.FlatTree, balancing: bool, current: int, free: int, delta: int) -> int:
        asked.append(delta)
        return plain(self, balancing, current, free, delta)

    monkeypatch.setattr(fast.FlatTree, "_search_masks", spy)
    free = (1 << 128) - 1
    assert split.search(True, 0, free, 40) == flat.masks[1][0]   # more than a NUMA node's 32 CPUs: a package
    assert asked == [40]
    assert split.search(True, 0, free, 4) == flat.masks[3][0]    # a NUMA node's own room: no mask search
    assert asked == [40]


def test_each_numa_nodes_best_branch_is_remembered_per_its_own_cpus() -> None:
    flat = _flat(load_machine("2s2n16c2t"))
    split = flat.split
    assert split is not None
    numa0 = flat.masks[3][0]
    other = ((1 << 128) - 1) & ~numa0
    split.search(True, 0, numa0 | other, 1)
    split.search(True, 0, numa0 | (other & (other - 1)), 1)   # another free CPU elsewhere: NUMA node 0's the same
    tables = split.bests[(6, 1, True, True, False)]
    assert len(tables[0]) == 1


def test_a_tree_that_does_not_nest_is_not_split() -> None:
    root = CpuTreeNode("root", "system", cpus=CPUSet([0, 1, 2, 3]))
    for name, cpus in (("a", [0, 1, 2]), ("b", [2, 3])):
        root.add_child(CpuTreeNode(name, "package", cpus=CPUSet(cpus)))
    assert treesplit.split_tree(fast.FlatTree(root)) is None


def test_the_flat_tree_searches_through_the_split_unless_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    flat = _flat(load_machine("2s2n16c2t"))
    assert flat.split is not None
    calls: list[int] = []
    monkeypatch.setattr(flat.split.__class__, "search", lambda self, b, c, f, d: calls.append(d) or 1)
    flat._search(True, 0, 0b1111, 1)
    monkeypatch.setattr(treesplit, "ENABLED", False)
    flat._search(True, 0, 0b1111, 1)
    assert calls == [1]
