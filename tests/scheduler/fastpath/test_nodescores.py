"""Node-local scores kept per pod shape are computed once per node and forgotten when the node
changes (or when the cluster changes beyond one node's own state)."""

from __future__ import annotations

import numpy as np

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.scheduler.backend.cache import ClusterState
from kubetwin.scheduler.fastpath import nodescores
from kubetwin.scheduler.fastpath.nodescores import node_local_scores


def _cluster(n: int) -> ClusterState:
    nodes = [convert({"metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "4", "pods": "10"}}}, Node)
             for i in range(n)]
    return ClusterState(nodes, gates_for())


class Counting:
    """A score of node i: i × 10 plus how many times it was computed before."""

    def __init__(self) -> None:
        self.asked: list[list[int]] = []

    def __call__(self, nodes: np.ndarray) -> np.ndarray:
        self.asked.append(nodes.tolist())
        return nodes * 10 + len(self.asked) - 1


def test_scores_are_computed_only_for_nodes_not_held():
    cs, score = _cluster(6), Counting()
    assert node_local_scores(cs, "k", (), np.array([1, 3]), score).tolist() == [10, 30]
    assert node_local_scores(cs, "k", (), np.array([1, 3, 4]), score).tolist() == [10, 30, 41]
    assert score.asked == [[1, 3], [4]]


def test_a_node_that_changed_is_scored_again():
    cs, score = _cluster(6), Counting()
    node_local_scores(cs, "k", (), np.array([0, 1, 2]), score)
    cs.touch(1)
    assert node_local_scores(cs, "k", (), np.array([0, 1, 2]), score).tolist() == [0, 11, 20]
    assert score.asked[-1] == [1]


def test_a_change_beyond_one_node_forgets_every_score():
    cs, score = _cluster(6), Counting()
    node_local_scores(cs, "k", (), np.array([0, 1, 2]), score)
    cs.touch(-1)
    node_local_scores(cs, "k", (), np.array([0, 1, 2]), score)
    assert score.asked[-1] == [0, 1, 2]


def test_each_key_keeps_its_own_scores():
    cs, score = _cluster(4), Counting()
    node_local_scores(cs, "a", (), np.array([0]), score)
    assert node_local_scores(cs, "b", (), np.array([0]), score).tolist() == [1]
    assert node_local_scores(cs, "a", (), np.array([0]), score).tolist() == [0]


def test_the_least_recently_used_key_goes_first_when_full(monkeypatch):
    monkeypatch.setattr(nodescores, "MAX_ENTRIES", 2)
    cs, score = _cluster(4), Counting()
    for key in ("a", "b", "a", "c"):   # "b" is the least recently used when "c" comes
        node_local_scores(cs, key, (), np.array([0]), score)
    node_local_scores(cs, "a", (), np.array([0]), score)
    assert len(score.asked) == 3
    node_local_scores(cs, "b", (), np.array([0]), score)
    assert len(score.asked) == 4


def test_a_few_changed_nodes_are_scored_again_at_once_even_outside_the_nodes_asked_for():
    cs, score = _cluster(6), Counting()
    node_local_scores(cs, "k", (), np.array([0, 1, 2]), score)
    cs.touch(4)
    assert node_local_scores(cs, "k", (), np.array([0, 1]), score).tolist() == [0, 10]
    assert score.asked[-1] == [4]
    assert node_local_scores(cs, "k", (), np.array([4]), score).tolist() == [41]
    assert len(score.asked) == 2


def test_many_changed_nodes_are_scored_again_when_asked_for(monkeypatch):
    monkeypatch.setattr(nodescores, "EAGER", 1)
    cs, score = _cluster(6), Counting()
    node_local_scores(cs, "k", (), np.array([0, 1, 2]), score)
    cs.touch(1)
    cs.touch(2)
    assert node_local_scores(cs, "k", (), np.array([0, 1]), score).tolist() == [0, 11]
    assert score.asked[-1] == [1]
