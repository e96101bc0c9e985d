"""The scheduling queue: activeQ ordered by PrioritySort, backoff, and the unschedulable pool.

``PrioritySort`` pops the highest ``spec.priority`` first and, among equals, the pod that
entered the queue first (its ``PodInfo.Timestamp``: creation time when known, else the order
of arrival). A pod that failed a cycle waits out a backoff (1 s doubled per attempt, at most
10 s) and sits among the unschedulable pods until a cluster event that one of its rejecting
plugins registered for (``EventsToRegister``) moves it back.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable

from ..model.pod import Pod

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0
#: ``podMaxInUnschedulablePodsDuration``: a pod parked this long is retried without any event
POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
#: ``flushUnschedulablePodsLeftover`` runs this often in kube-scheduler
UNSCHEDULABLE_FLUSH_INTERVAL = 30.0
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"

ASSIGNED_POD_ADD = "AssignedPodAdd"
ASSIGNED_POD_DELETE = "AssignedPodDelete"
ASSIGNED_POD_UPDATE = "AssignedPodUpdate"
NODE_ADD = "NodeAdd"
NODE_UPDATE = "NodeUpdate"
NODE_DELETE = "NodeDelete"
POD_UPDATE = "UnscheduledPodUpdate"
RESOURCE_CLAIM_CHANGE = "ResourceClaimChange"
RESOURCE_SLICE_CHANGE = "ResourceSliceChange"

#: events each plugin registers (``EventsToRegister``): which changes may make a pod it
#: rejected schedulable. A plugin not listed is woken by every event.
PLUGIN_EVENTS: dict[str, frozenset[str]] = {
    "NodeResourcesFit": frozenset({ASSIGNED_POD_DELETE, ASSIGNED_POD_UPDATE, NODE_ADD, NODE_UPDATE, POD_UPDATE}),
    "NodePorts": frozenset({ASSIGNED_POD_DELETE, NODE_ADD}),
    "NodeName": frozenset({NODE_ADD}),
    "NodeUnschedulable": frozenset({NODE_ADD, NODE_UPDATE}),
    "TaintToleration": frozenset({NODE_ADD, NODE_UPDATE, POD_UPDATE}),
    "NodeAffinity": frozenset({NODE_ADD, NODE_UPDATE, POD_UPDATE}),
    "PodTopologySpread": frozenset({ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE, ASSIGNED_POD_UPDATE, NODE_ADD,
                                    NODE_UPDATE, NODE_DELETE, POD_UPDATE}),
    "InterPodAffinity": frozenset({ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE, ASSIGNED_POD_UPDATE, NODE_ADD,
                                   NODE_UPDATE, POD_UPDATE}),
    "DynamicResources": frozenset({RESOURCE_CLAIM_CHANGE, RESOURCE_SLICE_CHANGE, NODE_ADD, POD_UPDATE,
                                   ASSIGNED_POD_DELETE}),
}


def register_plugin_events(plugin: str, events: Iterable[str]) -> None:
    """``EventsToRegister`` of an out-of-tree plugin: the cluster events that may make a pod it
    rejected schedulable (a plugin never registered is woken by every event)."""
    PLUGIN_EVENTS[plugin] = frozenset(events)


def _timestamp(pod: Pod) -> float | None:
    t = pod.metadata.creation_timestamp
    if not t:
        return None
    try:
        return datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass
class QueuedPod:
    pod: Pod
    timestamp: float
    seq: int
    attempts: int = 0
    backoff_until: float = 0.0
    unschedulable_plugins: frozenset[str] = frozenset()
    #: when the pod last entered the unschedulable pool (its refreshed ``Timestamp``)
    unschedulable_since: float = 0.0

    def key(self) -> tuple[int, float, int]:
        return (-(self.pod.spec.priority or 0), self.timestamp, self.seq)


@dataclass
class SchedulingQueue:
    """activeQ / backoffQ / unschedulable pods, keyed by pod uid."""

    _active: list[tuple[tuple[int, float, int], str]] = field(default_factory=list)
    _pods: dict[str, QueuedPod] = field(default_factory=dict)
    _unschedulable: set[str] = field(default_factory=set)
    _backoff: set[str] = field(default_factory=set)
    _seq: itertools.count = field(default_factory=itertools.count)
    _popped: QueuedPod | None = None  # the pod of the cycle in progress (keeps its timestamp)

    def __len__(self) -> int:
        return len(self._pods)

    def add(self, pod: Pod, now: float | None = None) -> None:
        """A new pending pod enters activeQ (gated pods wait outside: see :meth:`pop`).

        Its ``Timestamp`` is the queue's clock at ``Add`` (``newQueuedPodInfo``); without a
        clock, the pod's creation time stands in for it, else the order of arrival."""
        seq = next(self._seq)
        ts = now
        if ts is None:
            ts = _timestamp(pod)
            if ts is None:
                ts = float(seq)
        qp = QueuedPod(pod, ts, seq)
        self._pods[pod.uid] = qp
        heapq.heappush(self._active, (qp.key(), pod.uid))

    def add_all(self, pods: Iterable[Pod], now: float | None = None) -> None:
        for p in pods:
            self.add(p, now)

    def pop(self, now: float | None = None) -> Pod | None:
        """The next pod to schedule: highest priority, then earliest timestamp.

        With ``now``, pods in backoff whose time has come rejoin first; without it backoff
        is not waited for (``SchedulerPopFromBackoffQ``: an empty activeQ pops backoffQ).
        """
        self._flush_backoff(now)
        while self._active:
            _, uid = heapq.heappop(self._active)
            qp = self._pods.get(uid)
            if qp is None or uid in self._unschedulable or uid in self._backoff:
                continue
            if qp.pod.spec.scheduling_gates:
                continue
            del self._pods[uid]
            self._popped = qp
            return qp.pod
        if now is None and self._backoff:
            uid = min(self._backoff, key=lambda u: (self._pods[u].backoff_until, self._pods[u].key()))
            self._backoff.discard(uid)
            qp = self._pods.pop(uid)
            self._popped = qp
            return qp.pod
        return None

    def requeue_unschedulable(self, pod: Pod, plugins: Iterable[str], now: float | None = None,
                              attempts: int | None = None) -> None:
        """A failed cycle (``AddUnschedulableIfNotPresent``): the pod waits for an event its
        rejecting plugins care about. Its ``Timestamp`` is refreshed to ``now`` — PrioritySort
        breaks ties with it and the leftover flush measures the time parked from it — and
        its backoff runs from then (1 s doubled per failed attempt, at most 10 s)."""
        prev = self._popped
        same = prev is not None and prev.pod.uid == pod.uid
        n = ((prev.attempts if same else 0) + 1) if attempts is None else attempts  # type: ignore[union-attr]
        seq = next(self._seq)
        ts = now if now is not None else float(seq)
        t = now if now is not None else 0.0
        qp = QueuedPod(pod, ts, seq, n, t + backoff_duration(n), frozenset(plugins), ts)
        self._pods[pod.uid] = qp
        self._unschedulable.add(pod.uid)

    def oldest_unschedulable(self) -> float | None:
        """The earliest ``Timestamp`` in the unschedulable pool (when the next leftover flush
        can move a pod), or None when the pool is empty."""
        if not self._unschedulable:
            return None
        pods = self._pods
        return min(pods[u].timestamp for u in self._unschedulable)

    def on_event(self, event: str, now: float = 0.0) -> int:
        """Move the unschedulable pods this event may help to backoff/active; returns how many."""
        moved = 0
        for uid in list(self._unschedulable):
            qp = self._pods[uid]
            if _interested(qp.unschedulable_plugins, event):
                self._unschedulable.discard(uid)
                if qp.backoff_until > now:
                    self._backoff.add(uid)
                else:
                    heapq.heappush(self._active, (qp.key(), uid))
                moved += 1
        return moved

    def flush_unschedulable_leftover(self, now: float,
                                     max_duration: float = POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION) -> int:
        """``flushUnschedulablePodsLeftover`` (kube-scheduler runs it every 30 s): pods whose
        ``Timestamp`` is more than ``max_duration`` old (the ``--pod-max-in-unschedulable-pods-duration``
        flag, 5 minutes) go back to backoff or activeQ whatever their plugins registered
        (``UnschedulableTimeout``). Returns how many."""
        moved = 0
        for uid in list(self._unschedulable):
            qp = self._pods[uid]
            if now - qp.timestamp > max_duration:
                self._unschedulable.discard(uid)
                if qp.backoff_until > now:
                    self._backoff.add(uid)
                else:
                    heapq.heappush(self._active, (qp.key(), uid))
                moved += 1
        return moved

    def _flush_backoff(self, now: float | None) -> None:
        if now is None:
            return
        for uid in list(self._backoff):
            qp = self._pods[uid]
            if qp.backoff_until <= now:
                self._backoff.discard(uid)
                heapq.heappush(self._active, (qp.key(), uid))

    @property
    def unschedulable(self) -> list[Pod]:
        return [self._pods[u].pod for u in self._unschedulable]


def backoff_duration(attempts: int) -> float:
    """1 s after the first failure, doubling, capped at 10 s."""
    d = INITIAL_BACKOFF
    for _ in range(1, attempts):
        d *= 2
        if d >= MAX_BACKOFF:
            return MAX_BACKOFF
    return d


def _interested(plugins: frozenset[str], event: str) -> bool:
    if not plugins:
        return True
    for p in plugins:
        events = PLUGIN_EVENTS.get(p)
        if events is None or event in events:
            return True
    return False
