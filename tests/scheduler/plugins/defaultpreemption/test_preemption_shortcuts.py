"""DefaultPreemption's shortcut gives the dry run's answers: with no lower-priority pod anywhere, no
node is looked at and the message is the one every node's dry run would give."""

from __future__ import annotations

import random

import pytest

from kubetwin.scheduler.scheduler import Scheduler

from ...builders import GATES, node, pod


def _cluster(seed: int):
    rng = random.Random(seed)
    nodes = [node(f"n{i}", cpu=str(rng.choice((1, 2, 3))),
                  **({"taints": [{"key": "k", "effect": "NoSchedule"}]} if rng.random() < 0.2 else {}))
             for i in range(12)]
    running = [pod(f"p{j}", priority=rng.choice((0, 0, 5, 50)), node_name=f"n{rng.randrange(12)}")
               for j in range(20)]
    return nodes, running


def _full_dry_run(monkeypatch):
    """The dry run on every candidate node: the cluster-wide check always says 'maybe'."""
    from kubetwin.scheduler.backend import cache

    monkeypatch.setattr(cache.ClusterState, "any_priority_below", lambda self, p: True)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("priority", [0, 5, 100])
def test_preemption_answers_match_the_dry_run_on_every_node(seed, priority, monkeypatch):
    nodes, running = _cluster(seed)
    fast = Scheduler(None, nodes, GATES, pods=running, seed=seed).schedule(pod("hi", cpu="3", priority=priority))
    with monkeypatch.context() as m:
        _full_dry_run(m)
        slow = Scheduler(None, nodes, GATES, pods=running, seed=seed).schedule(pod("hi", cpu="3", priority=priority))
    assert (fast.message, fast.nominated_node, [v.name for v in fast.victims]) == \
        (slow.message, slow.nominated_node, [v.name for v in slow.victims])


def test_no_lower_priority_pod_anywhere_means_no_victims_on_any_candidate():
    s = Scheduler(None, [node("n1", cpu="1"), node("n2", cpu="1")], GATES,
                  pods=[pod("a", priority=10, node_name="n1"), pod("b", priority=10, node_name="n2")])
    r = s.schedule(pod("hi", priority=10))
    assert r.nominated_node is None
    assert r.message.endswith("preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.")


def test_bound_priorities_are_counted_until_the_pods_leave():
    s = Scheduler(None, [node("n1")], GATES, pods=[pod("a", priority=3, node_name="n1")])
    assert s.cluster.any_priority_below(4) and not s.cluster.any_priority_below(3)
    s.remove(pod("a", priority=3, node_name="n1"))
    assert not s.cluster.any_priority_below(4)
