"""The balloons tree search in C (``kubetwin.runtime.policies.balloons.treekernel``) picks the branch
its Python twin picks (``FlatTree._search_masks``, and the plain walk's order on node positions):
random CPU sets on the conformance machines and on ``simulate``'s machine, growing and
shrinking, with and without balancing; and the ways it is asked."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.policies.balloons import fast, fastalloc, treekernel
from kubetwin.runtime.policies.balloons.cputree import CpuTreeNode, TreeError
from tests.runtime.policies.balloons.test_treesplit import MACHINE_FILES, _flat, _machine, _random_mask

pytestmark = pytest.mark.skipif(not treekernel.COMPILED, reason="the C kernel is not built here")


def _check(flat: fast.FlatTree, rng: random.Random, rounds: int, cur_p: tuple[float, ...],
           free_p: tuple[float, ...], deltas: tuple[int, ...]) -> None:
    assert flat.kernel is not None
    root = flat.masks[0][0]
    cpus = [c for c in range(root.bit_length()) if root >> c & 1]
    for _ in range(rounds):
        current = _random_mask(rng, cpus, p := rng.choice(cur_p))
        free = _random_mask(rng, cpus, q := rng.choice(free_p)) & ~current
        delta = rng.choice(deltas)
        balancing = rng.random() < 0.5
        got = treekernel.search(flat.kernel, balancing, current, free, delta)
        assert got == flat._search_masks(balancing, current, free, delta) \
            == flat._search_positions(balancing, current, free, delta), (bin(current), bin(free), delta, balancing, p, q)


@pytest.mark.parametrize("machine", MACHINE_FILES)
def test_the_c_search_picks_the_branch_the_python_search_picks(machine: str) -> None:
    flat = _flat(_machine(machine))
    if flat.kernel is None:
        pytest.skip("a tree that does not nest")
    _check(flat, random.Random(f"kernel/{machine}"), 600, (0.0, 0.1, 0.4), (0.0, 0.2, 0.5, 0.9),
           (1, 1, 2, 3, 4, 8, 64, -1, -2, -3, -16))


def test_the_c_search_picks_the_branch_among_many_ties_on_simulates_machine() -> None:
    flat = _flat(load_machine("2s2n16c2t"))
    _check(flat, random.Random("kernel/ties"), 2000, (0.0, 0.0, 0.02, 0.05, 0.2), (0.5, 0.8, 0.95, 1.0),
           (1, 1, 2, 4, 6, 17, 40, 200, -1, -1, -2, -5))


def test_no_branch_with_room_is_minus_one_and_best_raises() -> None:
    flat = _flat(load_machine("2s2n16c2t"))
    assert flat.kernel is not None
    assert treekernel.search(flat.kernel, True, 0, 0b111, 4) == -1
    with pytest.raises(TreeError, match="not enough free CPUs"):
        flat.best(True, 0, 0b111, 4)


def test_the_answer_is_one_of_the_trees_own_masks() -> None:
    flat = _flat(load_machine("2s2n16c2t"))
    got = treekernel.search(flat.kernel, True, 0, flat.masks[0][0], 2)
    assert any(got is m for level in flat.masks for m in level)


def test_cpus_beyond_the_tree_count_for_nothing_but_being_there() -> None:
    flat = _flat(load_machine("2s2n16c2t"))
    root = flat.masks[0][0]
    beyond = 1 << (root.bit_length() + 70)
    for balancing, current, free, delta in ((True, 0b1100, root & ~0b1100, 2), (False, 0b1, root & ~0b1, 3),
                                            (True, 0b11110000, 0b1111, -2)):
        for cur, fr in ((current | beyond, free), (current, free | beyond)):
            assert treekernel.search(flat.kernel, balancing, cur, fr, delta) == \
                flat._search_masks(balancing, cur, fr, delta)


def test_a_tree_that_does_not_nest_gets_no_kernel_tree() -> None:
    a, b = CpuTreeNode("a", "package"), CpuTreeNode("b", "package")
    root = CpuTreeNode("root", "system")
    root.cpus, a.cpus, b.cpus = CPUSet([0, 1, 2]), CPUSet([0, 1]), CPUSet([1, 2])   # overlapping children
    root.add_child(a)
    root.add_child(b)
    flat = fast.FlatTree(root)
    assert not flat.nested and flat.kernel is None


def test_best_asks_the_kernel_and_remembers_nothing() -> None:
    flat = _flat(load_machine("2s2n16c2t"))
    root = flat.masks[0][0]
    assert flat.best(True, 0, root, 2) == flat._search_masks(True, 0, root, 2)
    assert flat.answers == {}


def test_switched_off_best_remembers_its_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(treekernel, "ENABLED", False)
    flat = _flat(load_machine("2s2n16c2t"))
    root = flat.masks[0][0]
    assert flat.best(True, 0, root, 2) == flat._search_masks(True, 0, root, 2)
    assert len(flat.answers) == 1


def _chart_node() -> Any:
    from kubetwin.model.kubelet_config import KubeletConfiguration
    from kubetwin.runtime.config import load_policy
    from kubetwin.runtime.node import RuntimeNode

    return RuntimeNode(load_machine("2s2n16c2t"), load_policy("balloons"),
                       KubeletConfiguration.from_dict({"kubeReserved": {"cpu": "1", "memory": "1Gi"}}))


def _guaranteed(name: str, cpus: str) -> Any:
    res = {"requests": {"cpu": cpus, "memory": "1Gi"}, "limits": {"cpu": cpus, "memory": "1Gi"}}
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "uid": name, "namespace": "default"},
                          "spec": {"containers": [{"name": "c", "resources": res}]}})


def test_an_inflate_through_the_kernel_fills_no_table_of_resizes() -> None:
    rn = _chart_node()
    assert rn.resmgr is not None
    policy = rn.resmgr.policy
    assert isinstance(policy, fast.FastBalloonsPolicy) and fastalloc.ENABLED
    for k, cpus in enumerate(("2", "1", "4")):
        assert rn.create_pod(_guaranteed(f"g{k}", cpus)) is None
    trees = [b.tree for b in policy.balloons]
    assert any(getattr(t, "flat", None) is not None for t in trees)
    assert all(not getattr(t, "resizes", {}) for t in trees)


def test_an_inflate_switched_off_fills_its_table_of_resizes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(treekernel, "ENABLED", False)
    rn = _chart_node()
    assert rn.resmgr is not None
    for k, cpus in enumerate(("2", "1", "4")):
        assert rn.create_pod(_guaranteed(f"g{k}", cpus)) is None
    assert any(getattr(b.tree, "resizes", {}) for b in rn.resmgr.policy.balloons)   # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", range(3))
def test_random_runs_of_the_charts_policy_are_the_same_with_the_kernel_and_without(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from kubetwin.runtime.config import load_policy

    from .test_fast import _run
    from .test_fastalloc import _steps

    m = load_machine("2s2n16c2t")
    doc = {"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy", "metadata": {"name": "default"},
           "spec": load_policy("balloons").spec}
    steps = list(_steps(random.Random(f"kernel-run/{seed}"), 60, [], plain_share=0.95))
    with_kernel = _run(m, doc, steps, CPUSet(), True, monkeypatch)
    monkeypatch.setattr(treekernel, "ENABLED", False)
    assert _run(m, doc, steps, CPUSet(), True, monkeypatch) == with_kernel
