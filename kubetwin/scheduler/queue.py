"""The scheduling queue: activeQ ordered by PrioritySort, backoff, and the unschedulable pool.

``PrioritySort`` pops the highest ``spec.priority`` first and, among equals, the pod that
entered the queue first (its ``PodInfo.Timestamp``: creation time when known, else the order
of arrival). A pod that failed a cycle waits out a backoff (1 s doubled per attempt, at most
10 s, its expiry rounded down to the whole second: ``SchedulerPopFromBackoffQ``'s ordering window)
and sits among the unschedulable pods until a cluster event that one of its rejecting plugins
registered for (``EventsToRegister``) moves it back. A bound pod's arrival (``AssignedPodAdded``)
only moves pods it can help: those rejected by PodTopologySpread in its namespace and those with a
required pod-affinity term it matches (``getUnschedulablePodsWithCrossTopologyTerm``).
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable, Mapping, Sequence

from ..model.pod import Pod
from .framework.types import PodInfo

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
    #: ``QueuedPodInfo.RequiredAffinityTerms`` (parsed when first needed)
    _affinity_terms: tuple | None = None

    @property
    def required_affinity_terms(self) -> tuple:
        if self._affinity_terms is None:
            aff = self.pod.spec.affinity
            pa = aff.pod_affinity if aff is not None else None
            self._affinity_terms = (PodInfo(self.pod).required_affinity_terms
                                    if pa is not None and pa.required_during_scheduling_ignored_during_execution
                                    else ())
        return self._affinity_terms

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
    #: the unschedulable pool by ``Timestamp`` (insertion-ordered uids) and a heap of those
    #: timestamps, so the leftover flush and its planning touch only the pods they move
    _parked_at: dict[float, dict[str, None]] = field(default_factory=dict)
    _parked_times: list[float] = field(default_factory=list)
    #: parked pods an assigned pod's arrival may help (PodTopologySpread rejections, required
    #: pod affinity): the only ones ``AssignedPodAdd`` looks at
    _cross_topology: set[str] = field(default_factory=set)

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
        qp = QueuedPod(pod, ts, seq, n, backoff_expiry(t, n), frozenset(plugins), ts)
        if pod.uid in self._pods:
            self.drop(pod.uid)
        self._park(qp)

    def _park(self, qp: QueuedPod) -> None:
        uid = qp.pod.uid
        self._pods[uid] = qp
        self._unschedulable.add(uid)
        ts = qp.timestamp
        at = self._parked_at.get(ts)
        if at is None:
            at = self._parked_at[ts] = {}
            heapq.heappush(self._parked_times, ts)
        at[uid] = None
        if "PodTopologySpread" in qp.unschedulable_plugins or qp.required_affinity_terms:
            self._cross_topology.add(uid)

    def _unpark(self, uid: str, qp: QueuedPod, now: float) -> None:
        """Out of the unschedulable pool: to backoffQ while backing off, else to activeQ."""
        self._unschedulable.discard(uid)
        self._cross_topology.discard(uid)
        self._unpark_index(uid, qp.timestamp)
        if is_backing_off(qp, now):
            self._backoff.add(uid)
        else:
            heapq.heappush(self._active, (qp.key(), uid))

    def _unpark_index(self, uid: str, ts: float) -> None:
        at = self._parked_at.get(ts)
        if at is not None:
            at.pop(uid, None)
            if not at:
                del self._parked_at[ts]   # its heap entry goes stale and is skipped

    def retry_parked(self, due: Sequence[QueuedPod], plugins: Mapping[str, frozenset[str]], now: float) -> None:
        """Parked pods that the leftover flush moved at ``now`` (``due``, in the order they were
        popped) failed again, each with the ``plugins`` of its uid: what flush, ``Pop`` and
        ``AddUnschedulableIfNotPresent`` do to them, in one step — one more attempt, a fresh
        sequence number, ``Timestamp`` and backoff from ``now``. The pods stay in the pool, so
        their records are updated in place (the queue is their only holder)."""
        at = self._parked_at.get(now)
        if at is None:
            at = self._parked_at[now] = {}
            heapq.heappush(self._parked_times, now)
        seq, cross = self._seq, self._cross_topology
        for qp in due:
            uid = qp.pod.uid
            pl = plugins[uid]
            self._unpark_index(uid, qp.timestamp)
            n = qp.attempts + 1
            qp.timestamp = qp.unschedulable_since = now
            qp.seq = next(seq)
            qp.attempts = n
            qp.backoff_until = backoff_expiry(now, n)
            qp.unschedulable_plugins = pl
            at[uid] = None
            if "PodTopologySpread" in pl or qp.required_affinity_terms:
                cross.add(uid)
            else:
                cross.discard(uid)

    def drop(self, uid: str) -> None:
        """Forget a pod the queue holds (it was deleted or bound elsewhere)."""
        qp = self._pods.pop(uid, None)
        if qp is None:
            return
        self._unschedulable.discard(uid)
        self._cross_topology.discard(uid)
        self._backoff.discard(uid)
        self._unpark_index(uid, qp.timestamp)

    @property
    def idle(self) -> bool:
        """Nothing waits in activeQ or backoffQ (every pod held is parked or gated)."""
        return not self._active and not self._backoff

    def due_leftover(self, now: float, max_duration: float = POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
                     ) -> list[QueuedPod] | None:
        """The pods the leftover flush at ``now`` would move, in the order an idle scheduler
        would then pop them — or None when some would go to backoffQ (their order is not
        activeQ's). Nothing is moved.

        The pool's timestamps are found without popping: a walk down the ``_parked_times``
        heap from its root that stops at entries parked too recently (an entry's children are
        never older than it), so a flush that moves one pod looks at a handful of entries
        however many pods are parked."""
        times, at, pods = self._parked_times, self._parked_at, self._pods
        n = len(times)
        if not n or not now - times[0] > max_duration:
            return []
        out: list[QueuedPod] = []
        window = math.floor(now)   # is_backing_off's, for every pod at once
        seen: set[float] = set()   # a timestamp can sit in the heap twice
        stack = [0]
        while stack:
            i = stack.pop()
            ts = times[i]
            if ts not in seen:
                seen.add(ts)
                for uid in at.get(ts, ()):
                    qp = pods[uid]
                    if qp.attempts > 0 and qp.backoff_until >= window:
                        return None
                    out.append(qp)
            for c in (2 * i + 1, 2 * i + 2):
                if c < n and now - times[c] > max_duration:
                    stack.append(c)
        if len(out) > 1:
            out.sort(key=QueuedPod.key)
        return out

    def oldest_unschedulable(self) -> float | None:
        """The earliest ``Timestamp`` in the unschedulable pool (when the next leftover flush
        can move a pod), or None when the pool is empty."""
        times, at = self._parked_times, self._parked_at
        while times:
            ts = times[0]
            if at.get(ts):
                return ts
            heapq.heappop(times)
            at.pop(ts, None)
        return None

    def on_event(self, event: str, now: float = 0.0, pod: Pod | None = None,
                 namespace_labels: dict[str, str] | None = None) -> int:
        """Move the unschedulable pods this event may help to backoff/active; returns how many.

        ``AssignedPodAdd`` with the bound ``pod`` (``AssignedPodAdded``) looks only at pods it
        can help: rejected by PodTopologySpread in the pod's namespace, or with a required
        pod-affinity term the pod matches (``namespace_labels``: its namespace's labels)."""
        if event == ASSIGNED_POD_ADD and pod is not None:
            uids = [u for u in self._cross_topology if _crosses(self._pods[u], pod, namespace_labels or {})]
        else:
            uids = list(self._unschedulable)
        moved = 0
        for uid in uids:
            qp = self._pods[uid]
            if _interested(qp.unschedulable_plugins, event):
                self._unpark(uid, qp, now)
                moved += 1
        return moved

    def flush_unschedulable_leftover(self, now: float,
                                     max_duration: float = POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION) -> int:
        """``flushUnschedulablePodsLeftover`` (kube-scheduler runs it every 30 s): pods whose
        ``Timestamp`` is more than ``max_duration`` old (the ``--pod-max-in-unschedulable-pods-duration``
        flag, 5 minutes) go back to backoff or activeQ whatever their plugins registered
        (``UnschedulableTimeout``). Returns how many."""
        moved = 0
        times, at, pods = self._parked_times, self._parked_at, self._pods
        while times and now - times[0] > max_duration:
            ts = heapq.heappop(times)
            for uid in list(at.pop(ts, ())):
                self._unpark(uid, pods[uid], now)
                moved += 1
        return moved

    def _flush_backoff(self, now: float | None) -> None:
        """``flushBackoffQCompleted``: pods whose (window-aligned) backoff has ended go to activeQ."""
        if now is None:
            return
        for uid in list(self._backoff):
            qp = self._pods[uid]
            if not is_backing_off(qp, now):
                self._backoff.discard(uid)
                heapq.heappush(self._active, (qp.key(), uid))

    @property
    def unschedulable(self) -> list[Pod]:
        return [self._pods[u].pod for u in self._unschedulable]


def backoff_expiry(timestamp: float, attempts: int) -> float:
    """``getBackoffTime``: ``Timestamp`` + the backoff, rounded down to the 1 s ordering window of
    backoffQ (``alignToWindow``, ``SchedulerPopFromBackoffQ``, on since 1.33). No attempt yet, no
    backoff."""
    if attempts <= 0:
        return 0.0
    d = _BACKOFFS[attempts] if attempts < len(_BACKOFFS) else MAX_BACKOFF
    return float(math.floor(timestamp + d))


def is_backing_off(qp: QueuedPod, now: float) -> bool:
    """``isPodBackingoff``: the expiry is not before the current window (a pod whose backoff ends
    within this second still waits for the next window)."""
    return qp.attempts > 0 and qp.backoff_until >= math.floor(now)


def _crosses(qp: QueuedPod, pod: Pod, ns_labels: dict[str, str]) -> bool:
    """``getUnschedulablePodsWithCrossTopologyTerm``: could the bound ``pod`` help ``qp``?"""
    if "PodTopologySpread" in qp.unschedulable_plugins and pod.metadata.namespace == qp.pod.metadata.namespace:
        return True
    return any(t.matches(pod, ns_labels) for t in qp.required_affinity_terms)


def backoff_duration(attempts: int) -> float:
    """1 s after the first failure, doubling, capped at 10 s."""
    d = INITIAL_BACKOFF
    for _ in range(1, attempts):
        d *= 2
        if d >= MAX_BACKOFF:
            return MAX_BACKOFF
    return d


#: ``backoff_duration`` by attempts, looked up by every failed cycle; past the table the
#: doubling has long reached the cap (checked here)
_BACKOFFS: tuple[float, ...] = tuple(backoff_duration(n) for n in range(64))
assert _BACKOFFS[-1] == MAX_BACKOFF


def _interested(plugins: frozenset[str], event: str) -> bool:
    if not plugins:
        return True
    for p in plugins:
        events = PLUGIN_EVENTS.get(p)
        if events is None or event in events:
            return True
    return False
