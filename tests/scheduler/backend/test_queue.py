"""The scheduling queue: queue-sort order, scheduling gates, backoff, parking and the leftover flush."""

from __future__ import annotations

from kubetwin.scheduler.backend.queue import SchedulingQueue, backoff_duration, backoff_expiry
from kubetwin.scheduler.framework.events import ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE, NODE_ADD

from ..builders import pod


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
