"""The long-running scheduler: queue order, sampling rotation, binding, preemption victims."""

from __future__ import annotations

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.pdb import PodDisruptionBudget
from kubetwin.scheduler.queue import (ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE, NODE_ADD, SchedulingQueue, backoff_expiry,
                                      backoff_duration)
from kubetwin.scheduler.scheduler import Scheduler

GATES = gates_for()


def node(name: str, cpu: str = "4", pods: int = 110, zone: str | None = None, **extra) -> Node:
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return convert({"metadata": {"name": name, "labels": labels}, "spec": extra,
                    "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": str(pods)}}}, Node)


def pod(name: str, cpu: str = "1", priority: int | None = None, node_name: str = "", labels=None,
        start: str | None = None, created: str | None = None, namespace: str = "default", **spec) -> Pod:
    s = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec}
    if priority is not None:
        s["priority"] = priority
    if node_name:
        s["nodeName"] = node_name
    meta = {"name": name, "namespace": namespace, "labels": labels or {}}
    if created:
        meta["creationTimestamp"] = created
    status = {"startTime": start} if start else {}
    return convert({"metadata": meta, "spec": s, "status": status}, Pod)


# --- queue -------------------------------------------------------------------------------------


def test_queue_pops_higher_priority_first():
    q = SchedulingQueue()
    q.add(pod("low", priority=1))
    q.add(pod("high", priority=100))
    q.add(pod("none"))
    assert [q.pop().name for _ in range(3)] == ["high", "low", "none"]


def test_queue_breaks_priority_ties_by_creation_time():
    q = SchedulingQueue()
    q.add(pod("later", created="2024-01-01T00:00:02Z"))
    q.add(pod("earlier", created="2024-01-01T00:00:01Z"))
    assert q.pop().name == "earlier"


def test_queue_keeps_arrival_order_without_timestamps():
    q = SchedulingQueue()
    for n in ("a", "b", "c"):
        q.add(pod(n))
    assert [q.pop().name for _ in range(3)] == ["a", "b", "c"]


def test_gated_pods_are_never_popped():
    q = SchedulingQueue()
    q.add(pod("gated", schedulingGates=[{"name": "wait"}]))
    assert q.pop() is None


def test_unschedulable_pod_waits_for_an_event_its_plugin_registered():
    q = SchedulingQueue()
    p = pod("p")
    q.add(p)
    q.pop()
    q.requeue_unschedulable(p, {"NodeResourcesFit"})
    assert q.on_event(ASSIGNED_POD_ADD) == 0  # a new pod never frees resources
    assert q.pop() is None
    assert q.on_event(ASSIGNED_POD_DELETE) == 1
    assert q.pop().name == "p"


def test_requeued_pod_respects_backoff_when_time_is_given():
    q = SchedulingQueue()
    p = pod("p")
    q.add(p)
    q.pop(now=0.0)
    q.requeue_unschedulable(p, {"NodeAffinity"}, now=0.0)
    q.on_event(NODE_ADD, now=0.5)
    assert q.pop(now=0.5) is None
    assert q.pop(now=1.5) is None   # expiry 1.0 lies in the current window [1, 2)
    assert q.pop(now=2.0).name == "p"


def test_backoff_ends_with_the_window_after_its_rounded_down_expiry():
    # SchedulerPopFromBackoffQ (1.33+): expiry 0.3 + 1 s is aligned to 1.0, and a pod whose
    # expiry lies in the current 1 s window is still backing off
    q = SchedulingQueue()
    p = pod("p")
    q.add(p)
    q.pop(now=0.3)
    q.requeue_unschedulable(p, {"NodeAffinity"}, now=0.3)
    q.on_event(NODE_ADD, now=0.5)
    assert q.pop(now=1.9) is None
    assert q.pop(now=2.0).name == "p"


def test_backoff_expiry_is_rounded_down_to_the_second():
    assert [backoff_expiry(t, n) for t, n in ((0.3, 1), (0.3, 3), (12.99, 5), (5.0, 0))] == [1.0, 4.0, 22.0, 0.0]


def test_assigned_pod_add_wakes_only_pods_it_can_help():
    # the queueing hints of PodTopologySpread (an assigned pod of the namespace matching a
    # constraint's selector) and InterPodAffinity (an added pod matching the required terms)
    q = SchedulingQueue()
    tsc = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                          "labelSelector": {"matchLabels": {"app": "web"}}}]}
    spread, other_ns, fit = pod("spread", **tsc), pod("elsewhere", namespace="other", **tsc), pod("fit")
    wants = pod("wants", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}})
    for p, plugins in ((spread, {"PodTopologySpread"}), (other_ns, {"PodTopologySpread"}),
                       (fit, {"NodeResourcesFit", "InterPodAffinity"}), (wants, {"InterPodAffinity"})):
        q.add(p)
        q.pop()
        q.requeue_unschedulable(p, plugins)
    assert q.on_event(ASSIGNED_POD_ADD, pod=pod("web", labels={"app": "web"})) == 1
    assert q.on_event(ASSIGNED_POD_ADD, pod=pod("db", labels={"app": "db"})) == 1
    assert sorted(p.name for p in q.unschedulable) == ["elsewhere", "fit"]


def test_backoff_doubles_up_to_ten_seconds():
    assert [backoff_duration(n) for n in (1, 2, 3, 4, 5, 9)] == [1, 2, 4, 8, 10, 10]



def _parked_queue(times: list[float]) -> tuple[SchedulingQueue, list[Pod]]:
    """A queue whose pods failed once each at ``times``, some later woken and failed again
    (stale and duplicate entries in the timestamp heap)."""
    q = SchedulingQueue()
    pods = [pod(f"p{i}", priority=i % 3) for i in range(len(times))]
    for p, t in zip(pods, times):
        q.add(p, now=t)
        q.pop()
        q.requeue_unschedulable(p, {"NodeResourcesFit"}, now=t)
    return q, pods


def test_due_leftover_is_every_pod_parked_too_long_in_pop_order():
    import random

    rng = random.Random(7)
    times = sorted(float(rng.choice(range(0, 2000, 10))) for _ in range(60))
    q, _ = _parked_queue(times)
    for now in (0.0, 300.0, 310.0, 700.0, 1500.0, 2400.0):
        want = sorted((qp for qp in q._pods.values() if now - qp.timestamp > 300.0), key=lambda qp: qp.key())
        assert q.due_leftover(now, 300.0) == want


def test_due_leftover_is_none_when_a_due_pod_still_backs_off():
    q, _ = _parked_queue([0.0])
    assert q.due_leftover(0.5, 0.0) is None   # backoff until 1.0
    assert [qp.pod.name for qp in q.due_leftover(2.0, 0.0)] == ["p0"]


def test_retried_parked_pods_are_parked_again_as_a_failed_cycle_leaves_them():
    q, pods = _parked_queue([0.0, 10.0, 20.0])
    due = q.due_leftover(340.0, 300.0)
    seq = next(q._seq) + 1
    q.retry_parked(due, {p.uid: frozenset() for p in pods}, 340.0)
    assert [(qp.pod.name, qp.attempts, qp.seq, qp.timestamp, qp.backoff_until) for qp in due] == [
        ("p2", 2, seq, 340.0, 342.0), ("p1", 2, seq + 1, 340.0, 342.0), ("p0", 2, seq + 2, 340.0, 342.0)]
    assert q.oldest_unschedulable() == 340.0
    assert q.on_event(ASSIGNED_POD_ADD, 400.0, pod("web")) == 3   # no rejecting plugin now: every event


# --- cycles ------------------------------------------------------------------------------------


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


# --- preemption --------------------------------------------------------------------------------


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
