"""Node-local scores kept per pod shape are computed once per node and forgotten when the node
changes (or when the cluster changes beyond one node's own state). On small clusters an entry
holds every node's score (``WHOLE_MAX_NODES``); the ``lazy`` tests hold only the nodes asked for."""

from __future__ import annotations

import numpy as np
import pytest

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.scheduler.backend.cache import ClusterState
from kubetwin.scheduler.fastpath import nodescores
from kubetwin.scheduler.fastpath.nodescores import node_local_scores


@pytest.fixture
def lazy(monkeypatch):
    """Entries hold the nodes asked for only (as on clusters above ``WHOLE_MAX_NODES``)."""
    monkeypatch.setattr(nodescores, "WHOLE_MAX_NODES", 0)


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


def test_scores_are_computed_only_for_nodes_not_held(lazy):
    cs, score = _cluster(6), Counting()
    assert node_local_scores(cs, "k", (), np.array([1, 3]), score).tolist() == [10, 30]
    assert node_local_scores(cs, "k", (), np.array([1, 3, 4]), score).tolist() == [10, 30, 41]
    assert score.asked == [[1, 3], [4]]


def test_a_node_that_changed_is_scored_again(lazy):
    cs, score = _cluster(6), Counting()
    node_local_scores(cs, "k", (), np.array([0, 1, 2]), score)
    cs.touch(1)
    assert node_local_scores(cs, "k", (), np.array([0, 1, 2]), score).tolist() == [0, 11, 20]
    assert score.asked[-1] == [1]


def test_a_change_beyond_one_node_forgets_every_score(lazy):
    cs, score = _cluster(6), Counting()
    node_local_scores(cs, "k", (), np.array([0, 1, 2]), score)
    cs.touch(-1)
    node_local_scores(cs, "k", (), np.array([0, 1, 2]), score)
    assert score.asked[-1] == [0, 1, 2]


def test_each_key_keeps_its_own_scores(lazy):
    cs, score = _cluster(4), Counting()
    node_local_scores(cs, "a", (), np.array([0]), score)
    assert node_local_scores(cs, "b", (), np.array([0]), score).tolist() == [1]
    assert node_local_scores(cs, "a", (), np.array([0]), score).tolist() == [0]


def test_the_least_recently_used_key_goes_first_when_full(lazy, monkeypatch):
    monkeypatch.setattr(nodescores, "MAX_ENTRIES", 2)
    cs, score = _cluster(4), Counting()
    for key in ("a", "b", "a", "c"):   # "b" is the least recently used when "c" comes
        node_local_scores(cs, key, (), np.array([0]), score)
    node_local_scores(cs, "a", (), np.array([0]), score)
    assert len(score.asked) == 3
    node_local_scores(cs, "b", (), np.array([0]), score)
    assert len(score.asked) == 4


def test_a_few_changed_nodes_are_scored_again_at_once_even_outside_the_nodes_asked_for(lazy):
    cs, score = _cluster(6), Counting()
    node_local_scores(cs, "k", (), np.array([0, 1, 2]), score)
    cs.touch(4)
    assert node_local_scores(cs, "k", (), np.array([0, 1]), score).tolist() == [0, 10]
    assert score.asked[-1] == [4]
    assert node_local_scores(cs, "k", (), np.array([4]), score).tolist() == [41]
    assert len(score.asked) == 2


def test_many_changed_nodes_are_scored_again_when_asked_for(lazy, monkeypatch):
    monkeypatch.setattr(nodescores, "EAGER", 1)
    cs, score = _cluster(6), Counting()
    node_local_scores(cs, "k", (), np.array([0, 1, 2]), score)
    cs.touch(1)
    cs.touch(2)
    assert node_local_scores(cs, "k", (), np.array([0, 1]), score).tolist() == [0, 11]
    assert score.asked[-1] == [1]


def test_on_a_small_cluster_the_first_read_scores_every_node():
    cs, score = _cluster(6), Counting()
    assert node_local_scores(cs, "k", (), np.array([1, 3]), score).tolist() == [10, 30]
    assert node_local_scores(cs, "k", (), np.array([4, 5]), score).tolist() == [40, 50]
    assert score.asked == [[0, 1, 2, 3, 4, 5]]


def test_on_a_small_cluster_the_changed_nodes_are_scored_again_whether_asked_for_or_not():
    cs, score = _cluster(6), Counting()
    node_local_scores(cs, "k", (), np.array([0]), score)
    cs.touch(4)
    cs.touch(2)
    assert node_local_scores(cs, "k", (), np.array([0, 1, 2]), score).tolist() == [0, 10, 21]
    assert score.asked[-1] == [2, 4]
    assert node_local_scores(cs, "k", (), np.array([4]), score).tolist() == [41]
    assert len(score.asked) == 2


def test_on_a_small_cluster_many_changed_nodes_are_scored_again_at_once(monkeypatch):
    monkeypatch.setattr(nodescores, "EAGER", 1)
    cs, score = _cluster(6), Counting()
    node_local_scores(cs, "k", (), np.array([0]), score)
    for i in (5, 1, 3):
        cs.touch(i)
    assert node_local_scores(cs, "k", (), np.array([1, 3, 5, 0]), score).tolist() == [11, 31, 51, 0]
    assert score.asked[-1] == [1, 3, 5]


def test_on_a_small_cluster_a_change_beyond_one_node_scores_every_node_again():
    cs, score = _cluster(4), Counting()
    node_local_scores(cs, "k", (), np.array([0]), score)
    cs.touch(-1)
    assert node_local_scores(cs, "k", (), np.array([3]), score).tolist() == [31]
    assert score.asked[-1] == [0, 1, 2, 3]


def test_whole_and_lazy_entries_give_the_same_scores(monkeypatch):
    # random reads and node changes: both ways answer every read with the score as computed now
    import random

    version = [0] * 40

    def score(nodes: np.ndarray) -> np.ndarray:
        return np.array([i * 1000 + version[i] for i in nodes.tolist()], dtype=np.int64)

    answers = {}
    for whole in (10**6, 0):
        monkeypatch.setattr(nodescores, "WHOLE_MAX_NODES", whole)
        cs = _cluster(40)
        version[:] = [0] * 40
        r = random.Random(7)
        got = []
        for _ in range(300):
            if r.random() < 0.5:
                for _ in range(r.choice((1, 2, 9))):
                    i = r.randrange(40)
                    version[i] += 1
                    cs.touch(i)
            if r.random() < 0.05:
                cs.touch(-1)
            idx = np.array(sorted(r.sample(range(40), r.randrange(1, 40))), dtype=np.int64)
            got.append(node_local_scores(cs, r.choice("ab"), (), idx, score).tolist())
            assert got[-1] == [i * 1000 + version[i] for i in idx.tolist()]
        answers[whole] = got
    assert answers[10**6] == answers[0]
