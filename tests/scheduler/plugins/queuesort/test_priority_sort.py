"""PrioritySort: the queue's order, as a plugin of the default profile."""

from __future__ import annotations

from kubetwin.scheduler.backend.queue import QueuedPod, SchedulingQueue
from kubetwin.scheduler.framework.interface import QueueSortPlugin
from kubetwin.scheduler.framework.runtime import Framework
from kubetwin.scheduler.plugins.queuesort.priority_sort import PrioritySort
from kubetwin.scheduler.profile import Profile
from kubetwin.scheduler.scheduler import Scheduler

from ...builders import GATES, node, pod


def test_less_puts_the_higher_priority_first():
    high, low = QueuedPod(pod("a", priority=10), 5.0, 1), QueuedPod(pod("b", priority=1), 1.0, 0)
    assert PrioritySort.less(high, low) and not PrioritySort.less(low, high)


def test_less_puts_the_earlier_timestamp_first_among_equal_priorities():
    early, late = QueuedPod(pod("a"), 1.0, 1), QueuedPod(pod("b"), 2.0, 0)
    assert PrioritySort.less(early, late) and not PrioritySort.less(late, early)


def test_sort_key_orders_as_less_does():
    qps = [QueuedPod(pod(f"p{i}", priority=pr), ts, i)
           for i, (pr, ts) in enumerate([(0, 3.0), (5, 9.0), (5, 1.0), (-1, 0.0), (0, 2.0)])]
    by_key = sorted(qps, key=PrioritySort.sort_key)
    assert all(not PrioritySort.less(b, a) for a, b in zip(by_key, by_key[1:]))


def test_the_default_profile_has_priority_sort_as_its_queue_sort_plugin():
    fwk = Scheduler(None, [node("n1")], GATES).framework
    assert isinstance(fwk.queue_sort_plugin, PrioritySort)
    assert isinstance(fwk.queue_sort_plugin, QueueSortPlugin)


def test_the_framework_gives_the_queue_its_queue_sort_order():
    class Reversed(PrioritySort):
        @staticmethod
        def sort_key(qp: QueuedPod) -> tuple[int, float, int]:
            return ((qp.pod.spec.priority or 0), qp.timestamp, qp.seq)

    fwk = Scheduler(None, [node("n1")], GATES).framework
    alone = Framework.for_plugin(Reversed(None, fwk.handle), fwk.handle)
    q = SchedulingQueue()
    alone.configure_queue(q)
    q.add(pod("high", priority=10), 0.0)
    q.add(pod("low", priority=1), 0.0)
    first = q.pop()
    assert first is not None and first.metadata.name == "low"


def test_a_profile_without_queue_sort_leaves_the_queue_in_priority_order():
    fwk = Scheduler(Profile(plugins=(("NodeName", 0),)), [node("n1")], GATES).framework
    q = SchedulingQueue()
    fwk.configure_queue(q)
    q.add(pod("low", priority=1), 0.0)
    q.add(pod("high", priority=10), 0.0)
    first = q.pop()
    assert fwk.queue_sort_plugin is None and first is not None and first.metadata.name == "high"
