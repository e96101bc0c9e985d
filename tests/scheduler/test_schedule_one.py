"""The plain cycle's parts: how many feasible nodes sampling looks for, and the host pick."""

from __future__ import annotations

import random

from kubetwin.scheduler.schedule_one import num_feasible_nodes_to_find, select_host


def test_small_clusters_are_searched_completely():
    assert num_feasible_nodes_to_find(None, 99) == 99


def test_adaptive_percentage_shrinks_with_cluster_size():
    # 50 - 5000/125 = 10 % of 5000
    assert num_feasible_nodes_to_find(None, 5000) == 500


def test_adaptive_percentage_never_drops_below_five_percent():
    assert num_feasible_nodes_to_find(None, 15000) == 750


def test_at_least_one_hundred_nodes_are_looked_for():
    assert num_feasible_nodes_to_find(10, 200) == 100


def test_highest_total_score_wins():
    assert select_host([10, 30, 20], random.Random(0)) == 1


def test_ties_are_broken_reproducibly_under_a_seed():
    scored = [5, 5, 5]
    picks = {select_host(scored, random.Random(seed)) for seed in range(30)}
    assert picks == {0, 1, 2}
    assert select_host(scored, random.Random(7)) == select_host(scored, random.Random(7))
