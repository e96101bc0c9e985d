"""The search: each type alone, mixes cheapest first, proofs and bounds, the scheduler-only count."""

from __future__ import annotations

from pathlib import Path

from kubetwin.plan.nodetype import parse_node_type
from kubetwin.plan.search import plan
from kubetwin.plan.workload import read_workload

from .conftest import deployment, write


def _numa(folder: Path, extra: str = ""):
    return parse_node_type("numa=1s2n4c2t:mem=64Gi,kubelet=kubelet-numa.yaml" + extra, root=folder)


def test_numa_alignment_needs_more_nodes_than_the_scheduler_counts(folder: Path) -> None:
    p = plan(read_workload([folder / "web.yaml"]), [_numa(folder)])
    assert p.best is not None and p.best.mix == (("numa", 4),)
    assert p.alone[0].scheduler_only == 3


def test_an_answer_meeting_its_lower_bound_is_proven(folder: Path) -> None:
    p = plan(read_workload([folder / "web.yaml"]), [_numa(folder)], scheduler_only=False)
    assert p.proven and p.lower_bound == 4


def test_counts_between_the_bound_and_the_answer_are_all_simulated(tmp_path: Path) -> None:
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}}
    wl = read_workload([write(tmp_path, "w.yaml", deployment(replicas=5, cpu="1", memory="1Gi", extra=anti))])
    p = plan(wl, [parse_node_type("a=1s1n8c2t:mem=64Gi")], scheduler_only=False)
    assert p.best is not None and p.best.nodes == 5            # one replica a node
    assert p.exhaustive and not p.proven and p.lower_bound == 1   # minimal for the scheduler only
    assert {1, 2, 3, 4} <= {t.nodes for t in p.trials if not t.fits}


def test_the_trial_budget_turns_the_answer_into_a_bound(tmp_path: Path) -> None:
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}}
    wl = read_workload([write(tmp_path, "w.yaml", deployment(replicas=9, cpu="1", memory="1Gi", extra=anti))])
    p = plan(wl, [parse_node_type("a=1s1n8c2t:mem=64Gi")], max_trials=5, scheduler_only=False)
    assert p.best is not None and p.best.nodes == 16   # 1, 2, 4, 8 do not fit, 16 does: no budget left to bisect
    assert not p.exhaustive and not p.proven and p.budget_spent and p.untried > 0


def test_with_prices_the_cheapest_mix_wins(folder: Path) -> None:
    types = [_numa(folder, ",price=1"), parse_node_type("big=2s2n8c2t:mem=128Gi,price=4.5")]
    p = plan(read_workload([folder / "web.yaml"]), types, scheduler_only=False)
    assert p.best is not None and dict(p.best.mix) == {"numa": 4, "big": 0}
    assert p.cost((4, 0)) == 4.0 and p.exhaustive


def _three_12_cpu_pods(folder: Path):
    # "large" (24 CPUs) holds two of them, "small" (16 CPUs) one
    return read_workload([write(folder, "w.yaml", deployment(replicas=3, cpu="12", memory="1Gi"))])


def test_a_single_type_wins_when_no_mix_is_cheaper(folder: Path) -> None:
    types = [parse_node_type("large=1s1n12c2t:mem=64Gi,price=5"), parse_node_type("small=1s1n8c2t:mem=64Gi,price=2")]
    p = plan(_three_12_cpu_pods(folder), types, scheduler_only=False)
    assert p.best is not None and dict(p.best.mix) == {"large": 0, "small": 3}


def test_a_mix_of_two_types_is_found_when_cheaper_than_either_alone(folder: Path) -> None:
    types = [parse_node_type("large=1s1n12c2t:mem=64Gi,price=3"), parse_node_type("small=1s1n8c2t:mem=64Gi,price=2")]
    p = plan(_three_12_cpu_pods(folder), types, scheduler_only=False)
    assert p.best is not None and dict(p.best.mix) == {"large": 1, "small": 1}
    assert p.exhaustive


def test_no_answer_when_a_pod_fits_no_type(tmp_path: Path) -> None:
    wl = read_workload([write(tmp_path, "w.yaml", deployment(replicas=1, cpu="64", memory="1Gi"))])
    p = plan(wl, [parse_node_type("a=1s1n8c2t:mem=64Gi")])
    assert p.best is None


def test_max_caps_the_nodes_of_a_type(tmp_path: Path) -> None:
    wl = read_workload([write(tmp_path, "w.yaml", deployment(replicas=4, cpu="6", memory="1Gi"))])
    p = plan(wl, [parse_node_type("a=1s1n8c2t:mem=64Gi,max=1")])
    assert p.best is None


def test_cheaper_mixes_are_enumerated_below_the_bar_only() -> None:
    from kubetwin.plan.search import cheaper_mixes

    got = cheaper_mixes([3, 3], [2.0, 3.0], (6.0, 3), 100)
    assert got == [(1, 1)]                 # (0, 2) and (3, 0) are one type; (1, 1) costs 5


def test_too_many_cheaper_mixes_are_not_enumerated() -> None:
    from kubetwin.plan.search import cheaper_mixes

    assert cheaper_mixes([50, 50, 50], [1.0, 1.0, 1.0], (100.0, 100), 1000) is None
