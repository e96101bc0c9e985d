"""Runs of leftover flushes answered in one step (the simulation's shortcut around
``flushUnschedulablePodsLeftover``, ``pkg/scheduler/backend/queue/scheduling_queue.go``).

Between two cluster changes the 30-second leftover flushes move the same parked pods again and
again, and each fails as it failed before. :class:`LeftoverFlushes` runs those ticks in one loop:
each pod is answered once from its kept verdict (the scheduler's ``kept_answers``) and its later
retries are counted at the end, leaving the queue, the counters and the sampling rotation as the
cycle-by-cycle drain leaves them (``tests/sim/test_reused_verdicts.py`` compares both).
Not an upstream module: kubetwin's own shortcut, apart from the event loop (:mod:`.loop`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .. import tracing as _tracing
from ..model.pod import Pod
from ..scheduler.backend.queue import QueuedPod
from . import flush_runs

if TYPE_CHECKING:
    from .loop import SimPod, Simulator


class LeftoverFlushes:
    """The simulator's leftover flushes answered in bulk, and how many retries that saved."""

    def __init__(self, sim: "Simulator"):
        self.sim = sim
        #: retries answered in bulk from kept failed cycles
        self.bulk_retries = 0

    def retry(self, t: float) -> bool:
        """The leftover flush at ``t`` and the drain after it in one step, when every pod it
        moves meets the cluster its kept failed cycle saw (same generation) and nothing else is
        queued: each pod fails again with that answer, in the order the scheduler would pop
        them, and is parked again exactly as the one-by-one drain leaves it (attempts, sequence
        number, ``Timestamp``, backoff, rotation of ``nextStartNodeIndex``). Returns False, with
        nothing done, when the drain must run cycle by cycle.

        The flushes that follow before the next event that can change the cluster
        (:meth:`_until`) run here too, one after the other instead of as clock events,
        as long as they can be answered so; the first that cannot is left to the clock. No
        flush is planned here: the caller plans the next from the oldest parked pod, as each
        tick did. A pod's first retry of the run takes its kept answer (:meth:`_answer_first`);
        its later ones, the same answer at the same generation, are counted once at the end
        (:meth:`_settle`). The ticks are worked out per group of pods parked together
        (:func:`.flush_runs.run_flushes`); the loop below, one tick at a time, is the plain
        version of the same (``flush_runs.ENABLED`` off, or a queue sort other than PrioritySort)."""
        q = self.sim.queue
        if not q.idle:
            return False
        max_parked = self.sim.sc.settings.pod_max_in_unschedulable
        until: float | None = None   # worked out once the first flush is done
        #: uid -> (pod, its queue record, attempts before this run, its answer's ``advance``);
        #: the answer's plugins
        retried: dict[str, tuple[SimPod, QueuedPod, int, int]] = {}
        plugins: dict[str, frozenset[str]] = {}
        if flush_runs.ENABLED:
            got = flush_runs.run_flushes(q, t, self._until, max_parked, self.sim.flush_due,
                                         lambda due: self._answer_first(due, retried, plugins), plugins)
            if got is not None:
                if retried:
                    self._settle(retried)
                return got > 0
        tick = t
        ticks = 0
        # bound once: a run is ~9 ticks of a few pods each, so the lookups would weigh
        due_leftover, retry_parked, oldest_unschedulable = q.due_leftover, q.retry_parked, q.oldest_unschedulable
        flush_due, answer_first = self.sim.flush_due, self._answer_first
        while True:
            due = due_leftover(tick, max_parked)
            if due is None:
                break
            if due:
                if not answer_first(due, retried, plugins):
                    break
                retry_parked(due, plugins, tick)
            ticks += 1
            oldest = oldest_unschedulable()
            if oldest is None:
                break
            tick = flush_due(oldest)
            if until is None:
                until = self._until()
            if tick >= until:
                break
        if retried:
            self._settle(retried)
        return ticks > 0

    def _until(self) -> float:
        """Where flushes stop being run ahead of the clock: at the next event that can change
        the cluster (samples in between read nothing they change) and past the horizon. With
        node pressure (samples may evict) the clock runs them one by one."""
        if self.sim.pressure is not None or not self.sim.live_times:
            return -math.inf
        until = self.sim.live_times[0]
        horizon = self.sim.sc.settings.horizon
        if horizon is not None and horizon < until:
            until = math.nextafter(horizon, math.inf)   # a flush at the horizon itself still runs
        return until

    def _answer_first(self, due: list[QueuedPod], retried: dict[str, tuple[SimPod, QueuedPod, int, int]],
                      plugins: dict[str, frozenset[str]]) -> bool:
        """Kept answers for the pods of ``due`` retried for the first time in this run of
        flushes, all or none: False when one is no longer the pending pod it was, or needs a
        real cycle."""
        by_uid = self.sim.by_uid
        new: list[tuple[str, SimPod, QueuedPod]] = []
        pods: list[Pod] = []
        for qp in due:
            pod = qp.pod
            uid = pod.metadata.uid or pod.uid   # (``Pod.uid``, its property call saved when the uid is set)
            if uid in plugins:
                continue
            sp = by_uid.get(uid)
            if sp is None or sp.pod is not pod or sp.phase != "Pending":
                return False
            new.append((uid, sp, qp))
            pods.append(pod)
        if not new:
            return True
        advances: list[int] = []
        answers = self.sim.sched.kept_answers(pods, advances=advances)
        if answers is None:
            return False
        for (uid, sp, qp), r, advance in zip(new, answers, advances):
            sp.reason = "Unschedulable"
            sp.message = r.message
            retried[uid] = (sp, qp, qp.attempts, advance)
            plugins[uid] = r.unschedulable_plugins
        return True

    def _settle(self, retried: dict[str, tuple[SimPod, QueuedPod, int, int]]) -> None:
        """Counters and attempts of a run of flushes, and the scheduler's count of the cycles
        answered after each pod's first (which :meth:`_answer_first` took). The run's cluster
        stood still, so each later cycle is its pod's first answer again: counted with the
        advance :meth:`_answer_first` noted (``Scheduler.kept_again``), or — plain path, or
        traced (each cycle a span) — looked up again."""
        total = 0
        if flush_runs.ENABLED and _tracing.ACTIVE is None:
            again_cycles = advance = 0
            for sp, qp, before, adv in retried.values():
                n = qp.attempts - before
                sp.attempts += n
                total += n
                if n > 1:
                    again_cycles += n - 1
                    advance += (n - 1) * adv
            if again_cycles:
                self.sim.sched.kept_again(again_cycles, advance)
        else:
            again: list[Pod] = []
            times: list[int] = []
            for sp, qp, before, _ in retried.values():
                n = qp.attempts - before
                sp.attempts += n
                total += n
                if n > 1:
                    again.append(qp.pod)
                    times.append(n - 1)
            if again and self.sim.sched.kept_answers(again, times) is None:
                raise AssertionError("a kept answer was lost between two flushes")
        c = self.sim.counters
        c.attempts += total
        c.unschedulable_attempts += total
        self.bulk_retries += total
