"""DefaultPreemption: victims, reprieves, PDBs, the picked node, preemptionPolicy Never, nominations."""

from __future__ import annotations

from kubetwin.model.meta import convert
from kubetwin.scheduler.plugins.defaultpreemption.pdb import PodDisruptionBudget
from kubetwin.scheduler.scheduler import Scheduler

from ...builders import GATES, node, pod


def test_preemption_picks_lowest_priority_victims_on_the_best_node():
    nodes = [node("n1", cpu="2"), node("n2", cpu="2")]
    running = [pod("n1-a", priority=10, node_name="n1"), pod("n1-b", priority=10, node_name="n1"),
               pod("n2-a", priority=5, node_name="n2"), pod("n2-b", priority=50, node_name="n2")]
    s = Scheduler(None, nodes, GATES, pods=running)
    r = s.schedule(pod("hi", priority=100))
    assert r.node is None
    # n2's highest victim (5) is lower than n1's (10): only n2-a needs to go
    assert r.nominated_node == "n2"
    assert [v.name for v in r.victims] == ["n2-a"]


def test_preemption_reprieves_victims_that_can_stay():
    s = Scheduler(None, [node("n1", cpu="3")], GATES,
                  pods=[pod("a", priority=1, node_name="n1"), pod("b", priority=2, node_name="n1"),
                        pod("c", priority=3, node_name="n1")])
    r = s.schedule(pod("hi", cpu="2", priority=10))
    assert r.nominated_node == "n1"
    assert sorted(v.name for v in r.victims) == ["a", "b"]


def test_preemption_never_policy():
    s = Scheduler(None, [node("n1", cpu="1")], GATES, pods=[pod("a", priority=1, node_name="n1")])
    r = s.schedule(pod("hi", priority=10, preemptionPolicy="Never"))
    assert r.nominated_node is None
    assert r.message == ("0/1 nodes are available: 1 Insufficient cpu. "
                         "preemption: not eligible due to preemptionPolicy=Never.")


def test_preemption_not_helpful_for_unresolvable_nodes():
    s = Scheduler(None, [node("n1", cpu="1", taints=[{"key": "k", "effect": "NoSchedule"}]), node("n2", cpu="1")],
                  GATES, pods=[pod("a", priority=100, node_name="n2")])
    r = s.schedule(pod("hi", priority=10))
    assert r.message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). preemption: 0/2 nodes are "
        "available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.")


def test_preemption_prefers_nodes_without_pdb_violations():
    nodes = [node("n1", cpu="1"), node("n2", cpu="1")]
    running = [pod("guarded", priority=1, node_name="n1", labels={"app": "db"}),
               pod("free", priority=5, node_name="n2", labels={"app": "web"})]
    pdb = convert({"metadata": {"name": "db", "namespace": "default"},
                   "spec": {"selector": {"matchLabels": {"app": "db"}}},
                   "status": {"disruptionsAllowed": 0}}, PodDisruptionBudget)
    s = Scheduler(None, nodes, GATES, pods=running, pdbs=[pdb])
    r = s.schedule(pod("hi", priority=10))
    assert r.nominated_node == "n2"
    assert [v.name for v in r.victims] == ["free"]


def test_preemption_ties_go_to_the_node_whose_top_victim_started_last():
    nodes = [node("n1", cpu="1"), node("n2", cpu="1")]
    running = [pod("old", priority=1, node_name="n1", start="2024-01-01T00:00:00Z"),
               pod("new", priority=1, node_name="n2", start="2024-06-01T00:00:00Z")]
    r = Scheduler(None, nodes, GATES, pods=running).schedule(pod("hi", priority=10))
    assert r.nominated_node == "n2"


def test_nominated_pod_holds_its_node_against_lower_priority_pods():
    s = Scheduler(None, [node("n1", cpu="1")], GATES)
    s.nominate(pod("hi", priority=100), "n1")
    r = s.schedule(pod("low", priority=1))
    assert r.node is None
    assert r.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert s.schedule(pod("higher", priority=1000)).node == "n1"
