"""A run of leftover flushes worked out per group of pods parked together, not tick by tick
(the fast twin of :meth:`.leftover.LeftoverFlushes.retry`'s loop; the flush itself is
``flushUnschedulablePodsLeftover``, ``pkg/scheduler/backend/queue/scheduling_queue.go``).

Between two cluster changes every parked pod fails each retry as it failed the first, so what
a run of flushes does to a pod follows from its ``Timestamp`` alone: the flush tick that finds it
parked longer than ``podMaxInUnschedulablePodsDuration`` moves it, it fails, is parked again with
that tick as its ``Timestamp``, and the same happens one period later. Pods parked at one instant
move together for the rest of the run, in the order the queue sort gave them the first time
(``PrioritySort``: priority, then ``Timestamp``, then sequence number — renumbered in that order
at each retry, so kept). Such a group (:class:`_Group`) costs a few operations per tick whatever
its size; a pod's record is written once, at the end of the run (its retries, its last tick, the
sequence number that tick gave it). Pods parked at different instants whose first retry of the
run falls on one tick form one group, in the queue sort's order. A group already retried in the
run never meets another one (their timestamps are distinct ticks of the run, each due one period
on, and the pods not retried yet were parked before the run began), but should a tick find two,
or one and pods retried for the first time, the run stops before it: the clock's next run takes
them all afresh, which comes to the same.

Everything a tick may decide is decided as the tick-by-tick loop decides it: which pods are due
(the same comparison), whether one still backs off (then the run stops there), whether the pods
retried for the first time have kept answers (asked in the same batches, in the same order).
Not an upstream module: kubetwin's own shortcut, compared with the tick-by-tick loop in
``tests/sim/test_flush_runs.py``.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from typing import Callable, Mapping

from ..scheduler.backend.queue import MAX_BACKOFF, QueuedPod, SchedulingQueue, backoff_expiry
from ..scheduler.plugins.queuesort.priority_sort import PrioritySort

#: off: every run of flushes goes tick by tick (the plain loop)
ENABLED = True

@dataclass
class _Group:
    """Pods retried together in this run, in pop order."""

    pods: list[QueuedPod]
    ts: float          # the group's latest tick (the pods' ``Timestamp`` from then)
    seq: int           # the sequence number its first pod took at that tick
    ticks: int = 1     # the group's ticks so far: each pod's retries in this run

    def backing_off(self, now: float) -> bool:
        """Some pod still backs off at ``now`` (``is_backing_off`` on the records it would have)."""
        window = math.floor(now)
        if math.floor(self.ts + MAX_BACKOFF) < window:
            return False
        ts, ticks = self.ts, self.ticks
        return any(backoff_expiry(ts, qp.attempts + ticks) >= window for qp in self.pods)


def run_flushes(queue: SchedulingQueue, t: float, until: Callable[[], float], max_parked: float,
                flush_due: Callable[[float], float], answer: Callable[[list[QueuedPod]], bool],
                plugins: Mapping[str, frozenset[str]]) -> int | None:
    """The leftover flush at ``t`` and those after it before ``until()`` (asked once, after
    the first tick), as the tick-by-tick loop runs them: ``answer`` takes each tick's pods
    retried for the first time in this run (False: they need real cycles, and the run stops
    before that tick), ``plugins`` then holds each one's rejecting plugins. Returns the ticks
    run, with the queue's records written as those ticks leave them; None, with nothing done,
    when the queue sort is not ``PrioritySort`` (whose order a group keeps)."""
    if queue.sort_key is not PrioritySort.sort_key:
        return None
    heap, parked, records = queue.parked_groups()
    groups: deque[_Group] = deque()
    seq = queue.next_seq()
    tick = t
    last = -math.inf   # the latest instant whose pods were taken (the heap copy pops in order)
    ticks = 0
    end: float | None = None
    # A group is due only after ``max_parked`` since its last tick: with that past the longest
    # backoff and its whole-second window (a second more kept for rounding), none of its pods
    # can still back off
    groups_may_back_off = not max_parked >= MAX_BACKOFF + 2
    while True:
        fresh: list[QueuedPod] = []
        while heap:
            ts = heap[0]
            if ts <= last or not parked.get(ts):
                heapq.heappop(heap)   # taken already (a repeated entry), or stale
                continue
            if not tick - ts > max_parked:
                break
            heapq.heappop(heap)
            last = ts
            fresh.extend(map(records.__getitem__, parked[ts]))
        due: list[_Group] = []
        while groups and tick - groups[0].ts > max_parked:
            due.append(groups.popleft())
        if fresh or due:
            window = math.floor(tick)
            backing_off = False
            for qp in fresh:
                if qp.attempts > 0 and qp.backoff_until >= window:
                    backing_off = True
                    break
            if (backing_off or (fresh and due) or len(due) > 1
                    or (groups_may_back_off and any(g.backing_off(tick) for g in due))):
                # (groups meet only here: left to the clock, whose next run takes them all afresh)
                groups.extendleft(reversed(due))
                break
            if fresh:
                if len(fresh) > 1:
                    fresh.sort(key=PrioritySort.sort_key)
                if not answer(fresh):
                    break
                g = _Group(fresh, tick, seq)
            else:
                g = due[0]
                g.ts, g.seq = tick, seq
                g.ticks += 1
            seq += len(g.pods)
            groups.append(g)
        ticks += 1
        oldest = groups[0].ts if groups else None
        while heap:
            ts = heap[0]
            if ts <= last or not parked.get(ts):
                heapq.heappop(heap)
                continue
            if oldest is None or ts < oldest:
                oldest = ts
            break
        if oldest is None:
            break
        tick = flush_due(oldest)
        if end is None:
            end = until()
        if tick >= end:
            break
    for g in groups:
        queue.park_retried(g.pods, plugins, g.ts, g.seq, g.ticks)
    queue.continue_seq(seq)
    return ticks

