"""The long-running scheduler: binding, removal, sampling rotation, seeds, the run loop."""

from __future__ import annotations

from kubetwin.scheduler.backend.queue import SchedulingQueue
from kubetwin.scheduler.scheduler import Scheduler

from .builders import GATES, node, pod


def test_bind_accounts_the_pod_for_the_next_cycle():
    s = Scheduler(None, [node("n1", cpu="1")], GATES)
    first = pod("a", cpu="1")
    assert s.schedule(first).node == "n1"
    s.bind(first, "n1")
    r = s.schedule(pod("b", cpu="1"))
    assert r.node is None
    assert r.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_remove_frees_the_node_again():
    s = Scheduler(None, [node("n1", cpu="1")], GATES)
    first = pod("a", cpu="1")
    s.bind(first, "n1")
    assert s.remove(first) == "n1"
    assert s.schedule(pod("b", cpu="1")).node == "n1"


def test_sampling_rotates_the_start_node_between_cycles():
    nodes = [node(f"n{i:03}") for i in range(200)]
    s = Scheduler(None, nodes, GATES)
    r = s.schedule(pod("a"))
    # 200 nodes: adaptive 48 % → 100 feasible nodes to find, all fit, so 100 processed
    assert (r.feasible, r.evaluated) == (100, 100)
    assert s.next_start == 100
    s.schedule(pod("b"))
    assert s.next_start == 0


def test_same_seed_same_choices():
    nodes = [node(f"n{i}") for i in range(10)]
    picks = []
    for _ in range(2):
        s = Scheduler(None, nodes, GATES, seed=42)
        picks.append([s.schedule(pod(f"p{k}")).node for k in range(5)])
    assert picks[0] == picks[1]


def test_no_nodes_message():
    assert Scheduler(None, [], GATES).schedule(pod("a")).message == "no nodes available to schedule pods"


def test_run_drains_the_queue_in_priority_order_and_preempts():
    s = Scheduler(None, [node("n1", cpu="2")], GATES)
    q = SchedulingQueue()
    low = [pod(f"low{i}", priority=1) for i in range(2)]
    q.add_all(low)
    results = s.run(q)
    assert [r.node for r in results] == ["n1", "n1"]
    q.add(pod("hi", priority=100))
    results = s.run(q)
    # the first cycle preempts one low pod; the pod, now nominated, binds in the next cycle
    assert results[0].nominated_node == "n1" and len(results[0].victims) == 1
    assert results[-1].node == "n1" and results[-1].pod.name == "hi"
    assert s.cluster.npods[0] == 2
