"""The Cluster Autoscaler's scale-down planner: its limit, order, recheck timeout and budgets.

Cases translated from cluster-autoscaler 1.36.1's unit tests, named in each test."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.sim.ca_planner import Planner, PlannerLimits, crop, order_candidates, unneeded_nodes_limit
from kubetwin.sim.loop import simulate


# --- unneededNodesLimit: core/scaledown/planner/planner_test.go TestUpdateClusterStatUnneededNodesLimit
@pytest.mark.parametrize(("case", "previously_unneeded", "unneeded_time", "interval", "want"), [
    ("no unneeded, default settings", 0, 60, 10, 20),
    ("some unneeded, default settings", 3, 60, 10, 23),
    ("max unneeded, default settings", 70, 60, 10, 70),
    ("too many unneeded, default settings", 77, 60, 10, 70),
    ("instant kill nodes", 0, 0, 10, 20),
    ("quick loops", 13, 60, 1, 33),
    ("slow loops", 13, 60, 30, 30),
])
def test_unneeded_nodes_limit_matches_upstreams_cases(case, previously_unneeded, unneeded_time, interval, want):
    assert unneeded_nodes_limit(previously_unneeded, 10, unneeded_time, interval) == want, case


def test_the_limit_uses_the_shortest_interval_between_scans():
    p = Planner(PlannerLimits(), unneeded_time=60)
    p.begin(100, [])
    p.begin(130, [])    # 30 s
    p.begin(131, [])    # 1 s: quick loops
    p.begin(161, [])
    assert p.min_update_interval == 1
    assert p.limit() == 20   # no node unneeded yet: 0 + 10 + 10


def test_the_first_interval_is_the_unneeded_time():
    p = Planner(PlannerLimits(), unneeded_time=600)
    p.begin(0, [])
    assert p.min_update_interval == 600


# --- CropNodes: core/scaledown/budgets/budgets_test.go TestCropNodesToBudgets (MaxScaleDownParallelism
# 10, MaxDrainParallelism 5, no deletion in progress; node groups that are not atomic)
BUDGET = PlannerLimits(max_scale_down_parallelism=10, max_drain_parallelism=5)


def nodes(group: str, n: int) -> list[tuple[str, str]]:
    return [(f"{group}-{i}", group) for i in range(n)]


def names(pairs):
    return [n for n, _ in pairs]


@pytest.mark.parametrize(("case", "empty", "drain", "want_empty", "want_drain"), [
    ("no nodes", [], [], [], []),
    ("empty nodes within max limit", nodes("ng", 10), [], nodes("ng", 10), []),
    ("empty nodes exceeding max limit", nodes("ng", 11), [], nodes("ng", 10), []),
    ("drain nodes within max limit", [], nodes("ng", 5), [], nodes("ng", 5)),
    ("multiple drain node groups", [], nodes("ng", 5) + nodes("ng2", 5), [], nodes("ng", 5)),
    ("drain nodes exceeding max limit", [], nodes("ng", 6), [], nodes("ng", 5)),
    ("empty&drain nodes within max limits", nodes("ng", 5), nodes("ng2", 5), nodes("ng", 5), nodes("ng2", 5)),
    ("empty&drain nodes exceeding overall limit", nodes("ng", 8), nodes("ng2", 8), nodes("ng", 8), nodes("ng2", 2)),
    ("empty&drain nodes exceeding drain limit", nodes("ng", 2), nodes("ng2", 8), nodes("ng", 2), nodes("ng2", 5)),
])
def test_crop_keeps_upstreams_budgets(case, empty, drain, want_empty, want_drain):
    assert crop(empty, drain, BUDGET) == (names(want_empty), names(want_drain)), case


def test_crop_takes_node_groups_in_the_order_they_first_appear():
    pairs = [("a-0", "a"), ("b-0", "b"), ("a-1", "a"), ("b-1", "b")]
    assert crop(pairs, [], PlannerLimits(max_scale_down_parallelism=3)) == (["a-0", "a-1", "b-0"], [])


def test_zero_drain_parallelism_drains_nothing():
    assert crop([], nodes("ng", 2), PlannerLimits(max_drain_parallelism=0)) == ([], [])


# --- the candidates' order: processors/scaledowncandidates (EmptySorting, then PreviousCandidates)
def test_candidates_are_ordered_empty_first_then_previously_unneeded():
    empty = {"e1", "e2"}
    previous = {"p", "e2"}
    got = order_candidates(["a", "p", "e1", "b", "e2"], lambda n: n in empty, lambda n: n in previous)
    assert got == ["e2", "e1", "p", "a", "b"]


# --- unremovable nodes: core/scaledown/unremovable/nodes_test.go TestUpdate
def test_an_unremovable_node_is_skipped_until_its_recheck_timeout():
    p = Planner(PlannerLimits(unremovable_node_recheck_timeout=300), unneeded_time=600)
    p.begin(0, ["n"])
    p.mark_unremovable("n", 0)
    p.begin(299, ["n"])
    assert p.recently_unremovable("n")
    p.begin(300, ["n"])     # the TTL is not after the timestamp: dropped
    assert not p.recently_unremovable("n")


def test_an_unremovable_node_that_left_is_forgotten():
    p = Planner(PlannerLimits(), unneeded_time=600)
    p.mark_unremovable("gone", 0)
    p.begin(10, ["other"])
    assert not p.recently_unremovable("gone")


# --- the unneeded list: core/scaledown/unneeded/nodes_test.go TestUpdate, TestRemovableAt
def test_the_unneeded_list_is_replaced_by_each_scan_keeping_first_seen_times():
    p = Planner(PlannerLimits(), unneeded_time=600)
    p.finish(["a", "b"], 10)
    p.finish(["b", "c"], 20)
    assert p.unneeded == {"b": 10, "c": 20}


def test_a_node_is_removable_only_after_more_than_the_unneeded_time():
    p = Planner(PlannerLimits(), unneeded_time=600)
    p.finish(["a"], 10)
    assert not p.unneeded_long_enough("a", 610)
    assert p.unneeded_long_enough("a", 620)


def test_with_no_unneeded_time_a_node_is_removable_at_once():
    p = Planner(PlannerLimits(), unneeded_time=0)
    p.finish(["a"], 10)
    assert p.unneeded_long_enough("a", 10)


# --- in simulate ---------------------------------------------------------------------------------
def empty_pool(kit, tmp_path, count, **ca):
    spec = {"horizon": "1h", "autoscaling": {"clusterAutoscaler": {"scaleDownUnneededTime": "1m", **ca}},
            "nodeGroups": [{"name": "pool", "count": count, "minSize": 0, "maxSize": 20,
                            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}]}
    return kit.scenario(tmp_path, spec)


def test_empty_nodes_go_max_scale_down_parallelism_at_a_time(tmp_path, kit):
    r = simulate(empty_pool(kit, tmp_path, 7, maxScaleDownParallelism=3))
    times = [d["time"] for d in r.autoscaling["clusterAutoscaler"]["scaleDowns"]]
    assert len(times) == 7
    assert [times.count(t) for t in sorted(set(times))] == [3, 3, 1]


def test_empty_nodes_are_removed_after_more_than_the_unneeded_time(tmp_path, kit):
    r = simulate(empty_pool(kit, tmp_path, 2))
    # first found unneeded at the first scan (0 s); the scan at 60 s is not more than 60 s after it
    assert {d["time"] for d in r.autoscaling["clusterAutoscaler"]["scaleDowns"]} == {70}


def test_planner_flags_are_strict(tmp_path, kit):
    with pytest.raises(InputError, match="maxScaleDownParallelism"):
        empty_pool(kit, tmp_path, 1, maxScaleDownParalelism=3)


def test_a_negative_drain_parallelism_is_refused(tmp_path, kit):
    with pytest.raises(InputError, match="maxDrainParallelism"):
        empty_pool(kit, tmp_path, 1, maxDrainParallelism=-1)

