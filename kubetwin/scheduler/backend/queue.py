"""The scheduling queue: activeQ ordered by the queue sort, backoff, and the unschedulable pool
(``pkg/scheduler/backend/queue/scheduling_queue.go``, ``active_queue.go``, ``backoff_queue.go``;
the order is the default profile's queue-sort plugin, ``queuesort/priority_sort.go``).

The queue sort pops the highest ``spec.priority`` first and, among equals, the pod that
entered the queue first (its ``PodInfo.Timestamp``: creation time when known, else the order
of arrival). A pod that failed a cycle waits out a backoff (1 s doubled per attempt, at most
10 s, its expiry rounded down to the whole second: ``SchedulerPopFromBackoffQ``'s ordering window)
and sits among the unschedulable pods until a cluster event moves it back.

``SchedulerQueueingHints`` (GA, locked in 1.36): events are a resource and an ``ActionType``
(:mod:`..framework.events`); each plugin registers the kinds it cares about with a
``QueueingHintFn`` (its folder's ``hints`` module, listed by :mod:`..plugins.registry`). ``MoveAllToActiveOrBackoffQueue`` asks, for each parked pod, its rejecting
plugins' hints for the event and moves the pod when any says ``Queue`` (``isPodWorthRequeuing``);
a pod without rejecting plugins (an error) is moved by every event, a plugin that registered
nothing by every event, an out-of-tree registration without a hint by every matching event. The
pod goes to backoffQ while its backoff lasts, else to activeQ (kubetwin has no ``PendingPlugins``,
so never straight to activeQ). An assigned pod's arrival goes through the same path (upstream's
event handler calls ``MoveAllToActiveOrBackoffQueue`` for it when hints are on). Per event only the
pods whose plugins registered its kind are looked at (``_by_kind``); hints work out what they need
of a pod once (``QueuedPod.hint_data``).

In-flight events: upstream records events seen while a pod is being scheduled and replays them
when it fails (``determineSchedulingHintForInFlightPod``). The simulation runs each cycle
synchronously, so the only such events are the deletions of a preemption's victims; they are
handed to :meth:`SchedulingQueue.requeue_unschedulable` (``in_flight``).
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from ...model.features import FeatureGates
from ...model.pod import Pod
from ..framework.events import ADD as ADD_ACTION

if TYPE_CHECKING:
    from ..framework.interface import Plugin

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0
#: ``podMaxInUnschedulablePodsDuration``: a pod parked this long is retried without any event
POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
#: ``flushUnschedulablePodsLeftover`` runs this often in kube-scheduler
UNSCHEDULABLE_FLUSH_INTERVAL = 30.0
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"

from ..framework.events import (  # noqa: F401
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_UPDATE,
    NODE_ADD,
    NODE_DELETE,
    NODE_UPDATE,
    POD_UPDATE,
    RESOURCE_CLAIM_CHANGE,
    RESOURCE_CLAIM_UPDATE,
    RESOURCE_SLICE_CHANGE,
    ClusterEvent,
    Registration,
)
from ..framework.status import SUCCESS, Status
from ..plugins.queuesort.priority_sort import PrioritySort
from ..plugins.registry import in_tree_events
from ..plugins.schedulinggates.scheduling_gates import SchedulingGates

#: ``EventsToRegister`` by plugin name: the events that may make a pod the plugin rejected
#: schedulable, each with its queueing hint. A plugin not listed is woken by every event.
PLUGIN_EVENTS: dict[str, tuple[Registration, ...]] = in_tree_events()
_REGISTRY_VERSION = [0]


def register_plugin_events(plugin: str, events: Iterable[ClusterEvent]) -> None:
    """``EventsToRegister`` of an out-of-tree plugin without queueing hints: the cluster events
    that may make a pod it rejected schedulable, each of which always moves the pod (a plugin
    never registered is woken by every event). ``NODE_UPDATE`` covers every kind of node update."""
    PLUGIN_EVENTS[plugin] = tuple(Registration(e) for e in events)
    _REGISTRY_VERSION[0] += 1


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
    #: what the queueing hints need of the pod, by plugin (worked out when first needed)
    hint_data: dict | None = None

    def key(self) -> tuple[int, float, int]:
        """The default profile's queue order (PrioritySort's heap key)."""
        return PrioritySort.sort_key(self)


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
    #: parked pods by the kind of event (resource, action) their rejecting plugins registered
    #: for: the only ones an event of that kind asks the queueing hints about
    _by_kind: dict[tuple[str, int], set[str]] = field(default_factory=dict)
    #: kinds of event each set of rejecting plugins registered for (a cache)
    _interest: dict[frozenset[str], frozenset[tuple[str, int]]] = field(default_factory=dict)
    _registry: int = -1
    #: the profile's plugins by name and the feature gates (what some hints read; optional)
    plugins: dict[str, Plugin] | None = None
    gates: FeatureGates | None = None
    #: events seen while a pod is in flight (``inFlightEvents``), when recording
    in_flight: list[tuple[ClusterEvent, Any, Any]] | None = None
    #: the profile's QueueSort order as a heap key, and its PreEnqueue plugins (a rejected pod
    #: stays out of activeQ); the default profile's until the framework sets its own
    #: (:meth:`~..framework.runtime.Framework.configure_queue`)
    sort_key: Callable[[QueuedPod], tuple[int, float, int]] = field(default=PrioritySort.sort_key)
    pre_enqueue: Callable[[Pod], Status] = field(default=SchedulingGates.pre_enqueue)

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
        heapq.heappush(self._active, (self.sort_key(qp), pod.uid))

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
            st = self.pre_enqueue(qp.pod)
            if st is not SUCCESS and not st.is_success:   # PreEnqueue keeps it out
                continue
            del self._pods[uid]
            self._popped = qp
            return qp.pod
        if now is None and self._backoff:
            uid = min(self._backoff, key=lambda u: (self._pods[u].backoff_until, self.sort_key(self._pods[u])))
            self._backoff.discard(uid)
            qp = self._pods.pop(uid)
            self._popped = qp
            return qp.pod
        return None

    def requeue_unschedulable(self, pod: Pod, plugins: Iterable[str], now: float | None = None,
                              attempts: int | None = None,
                              in_flight: Sequence[tuple[ClusterEvent, Any, Any]] = ()) -> None:
        """A failed cycle (``AddUnschedulableIfNotPresent``): the pod waits for an event its
        rejecting plugins care about. Its ``Timestamp`` is refreshed to ``now`` — the queue sort
        breaks ties with it and the leftover flush measures the time parked from it — and
        its backoff runs from then (1 s doubled per failed attempt, at most 10 s).

        ``in_flight``: events seen while the pod was being scheduled (``inFlightEvents``); one
        its plugins' hints queue on sends it to backoff/activeQ at once
        (``determineSchedulingHintForInFlightPod``). The simulation runs cycles synchronously,
        so the only such events are the deletions a preemption made."""
        prev = self._popped
        same = prev is not None and prev.pod.uid == pod.uid
        n = ((prev.attempts if prev is not None and same else 0) + 1) if attempts is None else attempts
        seq = next(self._seq)
        ts = now if now is not None else float(seq)
        t = now if now is not None else 0.0
        qp = QueuedPod(pod, ts, seq, n, backoff_expiry(t, n), frozenset(plugins), ts)
        if pod.uid in self._pods:
            self.drop(pod.uid)
        self._park(qp)
        for event, old, new in in_flight:
            if self.worth_requeuing(qp, event, old, new):
                self._unpark(pod.uid, qp, t)
                break

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
        self._index(uid, qp.unschedulable_plugins)

    def _unpark(self, uid: str, qp: QueuedPod, now: float) -> None:
        """Out of the unschedulable pool: to backoffQ while backing off, else to activeQ."""
        self._unschedulable.discard(uid)
        self._unindex(uid)
        self._unpark_index(uid, qp.timestamp)
        if is_backing_off(qp, now):
            self._backoff.add(uid)
        else:
            heapq.heappush(self._active, (self.sort_key(qp), uid))

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
        first = self.next_seq()
        self.park_retried(due, plugins, now, first, 1)
        self._seq = itertools.count(first + len(due))

    def next_seq(self) -> int:
        """The sequence number the next record will get (none is taken)."""
        first = next(self._seq)
        self._seq = itertools.count(first)
        return first

    def continue_seq(self, n: int) -> None:
        """The sequence numbers before ``n`` are taken (given out by :meth:`park_retried`)."""
        self._seq = itertools.count(max(n, self.next_seq()))

    def parked_groups(self) -> tuple[list[float], Mapping[float, Mapping[str, None]], Mapping[str, QueuedPod]]:
        """The unschedulable pool as it stands: a copy of its heap of ``Timestamp`` values (may
        hold stale and repeated entries), the uids parked at each in the order parked, and the
        queue's records by uid."""
        return list(self._parked_times), self._parked_at, self._pods

    def park_retried(self, pods: Sequence[QueuedPod], plugins: Mapping[str, frozenset[str]], now: float,
                     first_seq: int, retries: int) -> None:
        """:meth:`retry_parked` for a run of flushes worked out elsewhere: each pod of ``pods``
        (in the order the flush at ``now`` popped them) failed ``retries`` more times, the last at
        ``now``, where it took sequence number ``first_seq`` + its position. Those numbers are
        taken from the counter by the caller (:meth:`next_seq`, :meth:`continue_seq`)."""
        parked_at = self._parked_at
        at = parked_at.get(now)
        if at is None:
            at = parked_at[now] = {}
            heapq.heappush(self._parked_times, now)
        seq = first_seq
        backoffs, known = _BACKOFFS, len(_BACKOFFS)
        floor = math.floor
        for qp in pods:
            pod = qp.pod
            uid = pod.metadata.uid or pod.uid   # (``Pod.uid``, its property call saved when the uid is set)
            pl = plugins[uid]
            old = parked_at.get(qp.timestamp)   # _unpark_index, inline: called for every pod retried
            if old is not None:
                old.pop(uid, None)
                if not old:
                    del parked_at[qp.timestamp]
            n = qp.attempts + retries
            qp.timestamp = qp.unschedulable_since = now
            qp.seq = seq
            seq += 1
            qp.attempts = n
            # backoff_expiry(now, n), inline: called for every pod retried
            qp.backoff_until = float(floor(now + (backoffs[n] if n < known else MAX_BACKOFF))) if n > 0 else 0.0
            if pl != qp.unschedulable_plugins:
                self._unindex(uid)
                self._index(uid, pl)
            qp.unschedulable_plugins = pl
            at[uid] = None

    def drop(self, uid: str) -> None:
        """Forget a pod the queue holds (it was deleted or bound elsewhere)."""
        qp = self._pods.pop(uid, None)
        if qp is None:
            return
        self._unschedulable.discard(uid)
        self._unindex(uid)
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
            out.sort(key=self.sort_key)
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

    # --- cluster events ------------------------------------------------------------------------

    def _kinds_of(self, plugins: frozenset[str]) -> frozenset[tuple[str, int]]:
        """The kinds of event (among those seen so far) a pod rejected by ``plugins`` may be
        moved by: all of them without a rejecting plugin or with one that registered nothing."""
        got = self._interest.get(plugins)
        if got is None:
            kinds = []
            for kind in self._by_kind:
                incoming = ClusterEvent(*kind)
                if _interested(plugins, incoming):
                    kinds.append(kind)
            got = self._interest[plugins] = frozenset(kinds)
        return got

    def _check_registry(self) -> None:
        """A plugin registered its events after pods were parked: sort them again."""
        if self._registry == _REGISTRY_VERSION[0]:
            return
        self._registry = _REGISTRY_VERSION[0]
        self._interest.clear()
        pods = self._pods
        for kind, got in self._by_kind.items():
            event = ClusterEvent(*kind)
            got.clear()
            got.update(u for u in self._unschedulable if _interested(pods[u].unschedulable_plugins, event))

    def _index(self, uid: str, plugins: frozenset[str]) -> None:
        self._check_registry()
        by = self._by_kind
        for kind in self._kinds_of(plugins):
            by[kind].add(uid)

    def _unindex(self, uid: str) -> None:
        for s in self._by_kind.values():
            s.discard(uid)

    def _pods_for(self, event: ClusterEvent) -> set[str]:
        """The parked pods whose rejecting plugins registered ``event``'s kind (the set is built
        the first time the kind is seen)."""
        self._check_registry()
        kind = event.kind
        got = self._by_kind.get(kind)
        if got is None:
            self._interest.clear()
            pods = self._pods
            got = self._by_kind[kind] = {u for u in self._unschedulable
                                         if _interested(pods[u].unschedulable_plugins, ClusterEvent(*kind))}
        return got

    @property
    def _cross_topology(self) -> set[str]:
        """The parked pods an assigned pod's arrival asks the hints about."""
        return set(self._by_kind.get(ASSIGNED_POD_ADD.kind, ()))

    def worth_requeuing(self, qp: QueuedPod, event: ClusterEvent, old: Any = None, new: Any = None) -> bool:
        """``isPodWorthRequeuing``: no rejecting plugin, or one whose registration matches the
        event and whose hint (if any) says ``Queue``. (kubetwin has no ``PendingPlugins``, so the
        answer is always "after backoff": backoffQ while backing off, else activeQ.)"""
        return _interested(qp.unschedulable_plugins, event, lambda hint: hint(self, qp, event, old, new))

    def on_event(self, event: ClusterEvent, now: float = 0.0, pod: Pod | None = None,
                 namespace_labels: Mapping[str, str] | None = None, *, old: Any = None, new: Any = None,
                 pre_check: Any = None) -> int:
        """``MoveAllToActiveOrBackoffQueue``: the parked pods this event may help go to backoffQ
        (still backing off) or activeQ; returns how many.

        ``old``/``new`` are the objects before and after (a deleted pod is ``old``, an added one
        ``new``); ``pod`` is the assigned pod of an ``AssignedPodAdd`` (``new``) or
        ``AssignedPodDelete`` (``old``). Only pods whose rejecting plugins registered the event's
        kind are looked at, and their plugins' queueing hints decide. (``namespace_labels`` is
        accepted for callers of the pre-hint queue; the inter-pod affinity hint matches terms without
        namespace labels, as upstream's does.) ``pre_check`` (``PreEnqueueCheck``) narrows the
        pods looked at, e.g. to lower or equal priority for a nominated pod's deletion."""
        if pod is not None:
            if event.action & ADD_ACTION and new is None:
                new = pod
            elif old is None and new is None:
                old = pod
        if self.in_flight is not None:
            self.in_flight.append((event, old, new))
        uids = self._pods_for(event)
        if not uids:
            return 0
        moved = 0
        pods = self._pods
        for uid in list(uids):
            qp = pods[uid]
            if pre_check is not None and not pre_check(qp.pod):
                continue
            if self.worth_requeuing(qp, event, old, new):
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
                heapq.heappush(self._active, (self.sort_key(qp), uid))

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


def _interested(plugins: frozenset[str], event: ClusterEvent, ask: Any = None) -> bool:
    """Whether some rejecting plugin registered ``event``'s kind and — when ``ask`` puts a
    registration's hint to the event — that hint says ``Queue``."""
    if not plugins:
        return True
    for p in plugins:
        regs = PLUGIN_EVENTS.get(p)
        if regs is None:
            return True
        for r in regs:
            if r.event.matches(event) and (ask is None or r.hint is None or ask(r.hint)):
                return True
    return False
