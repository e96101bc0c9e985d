"""CFS bandwidth control (``cpu.max``) and the CFS fair share of a contended CPU pool.

Models the kernel's ``kernel/sched/fair.c`` bandwidth code as cgroup v2 exposes it:

* a cgroup with ``cpu.max`` = ``QUOTA PERIOD`` may run ``QUOTA`` µs of CPU time per ``PERIOD``;
  a runqueue that has used up the quota is *throttled* until the period timer refills it
  (``do_sched_cfs_period_timer`` → ``__refill_cfs_bandwidth_runtime``, ``distribute_cfs_runtime``);
* ``cpu.stat`` counts: ``nr_periods`` — every period-timer expiry while the bandwidth timer is
  active (``cfs_b->nr_periods += overrun``, including the expiry that finds the group idle and stops
  the timer); ``nr_throttled`` — expiries that found throttled runqueues; ``throttled_usec`` — the
  time each runqueue spent throttled (``cfs_b->throttled_time += rq_clock - throttled_clock`` on
  unthrottle), summed over runqueues;
* the timer runs on the period grid: ``start_cfs_bandwidth`` forwards the timer by whole periods
  (``hrtimer_forward_now``), so the first period of a task is cut short by its *phase* on that grid.

Two levels of detail:

:func:`run_task` — one single-threaded task with a fixed amount of work on an otherwise idle CPU,
period by period (the latency example of docs/cpu-throttling.md).

:func:`fluid_step` — steady demand over a simulation step (vectorised over many containers): a
container wanting ``d`` cores under a quota of ``q = QUOTA/PERIOD`` cores runs ``min(d, q)``; with
``d > q`` every period is throttled, its runqueues (``ceil(d)`` of them, each running at ``d/ceil(d)``)
use the quota up ``q·P/d`` into the period and wait the rest.

:func:`fair_share` — CFS's split of a contended pool by ``cpu.weight``: every runnable group gets
CPU in proportion to its weight, and what a group does not want is shared among the others
(water-filling). The kubelet's weights come from ``cpu.shares`` (:mod:`kubetwin.kubelet.cgroups`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np

#: the kernel's default ``cpu.max`` period and the kubelet's ``cpuCFSQuotaPeriod`` default, µs
DEFAULT_PERIOD_US = 100_000


@dataclass(frozen=True, slots=True)
class CPUMax:
    """The content of cgroup v2 ``cpu.max``: ``quota_us`` None is ``max`` (no limit)."""

    quota_us: int | None
    period_us: int = DEFAULT_PERIOD_US

    def __post_init__(self) -> None:
        if self.period_us <= 0:
            raise ValueError("cpu.max period must be positive")
        if self.quota_us is not None and self.quota_us <= 0:
            raise ValueError("cpu.max quota must be positive or max")

    @property
    def cores(self) -> float:
        """The quota as a number of CPUs (``inf`` without a limit)."""
        return math.inf if self.quota_us is None else self.quota_us / self.period_us

    def text(self) -> str:
        return f"{'max' if self.quota_us is None else self.quota_us} {self.period_us}"


@dataclass(frozen=True, slots=True)
class CPUStat:
    """The bandwidth part of cgroup v2 ``cpu.stat`` (``cpu_extra_stat_show``) and the usage line."""

    usage_usec: int = 0
    nr_periods: int = 0
    nr_throttled: int = 0
    throttled_usec: int = 0
    nr_bursts: int = 0
    burst_usec: int = 0

    def text(self) -> str:
        """As ``cat cpu.stat`` prints these keys (user/system split not modelled)."""
        return "".join(f"{k} {getattr(self, k)}\n" for k in
                       ("usage_usec", "nr_periods", "nr_throttled", "throttled_usec", "nr_bursts", "burst_usec"))


@dataclass(frozen=True, slots=True)
class TaskRun:
    """One task's run under ``cpu.max``: when it finished (µs after it became runnable) and the
    cgroup's ``cpu.stat`` once the bandwidth timer has gone idle again."""

    latency_us: int
    stat: CPUStat
    #: (start, end) µs of each stretch the task ran
    runs: tuple[tuple[int, int], ...]


def run_task(work_us: int, cpu_max: CPUMax, phase_us: int = 0) -> TaskRun:
    """A single-threaded task needing ``work_us`` of CPU, alone on a CPU, in a fresh cgroup.

    ``phase_us`` is where on the period-timer grid the task wakes (0: just as a period starts).
    No ``cpu.max.burst``. Without a quota the task runs straight through and no period is counted.
    """
    if work_us <= 0:
        raise ValueError("work must be positive")
    if cpu_max.quota_us is None:
        return TaskRun(work_us, CPUStat(usage_usec=work_us), ((0, work_us),))
    period, quota = cpu_max.period_us, cpu_max.quota_us
    if not 0 <= phase_us < period:
        raise ValueError("phase must lie within one period")
    now = 0
    boundary = period - phase_us          # the first period-timer expiry
    left = work_us
    runs: list[tuple[int, int]] = []
    nr_periods = nr_throttled = throttled = 0
    runtime = quota                       # refilled when the timer starts
    while left > 0:
        take = min(left, runtime, boundary - now)
        if take > 0:
            runs.append((now, now + take))
            now += take
            left -= take
            runtime -= take
        if left == 0:
            break
        if now < boundary:                # quota used up: throttled until the timer fires
            throttled += boundary - now
            nr_throttled += 1
        now = boundary
        nr_periods += 1
        runtime = quota
        boundary += period
    # the timer keeps firing: the expiry closing the last busy period (idle is cleared by the
    # runtime it handed out), then one that finds the group idle and stops (both counted)
    nr_periods += 2
    return TaskRun(now, CPUStat(usage_usec=work_us, nr_periods=nr_periods, nr_throttled=nr_throttled,
                                throttled_usec=throttled), tuple(runs))


def fluid_step(demand: "np.ndarray", quota: "np.ndarray", period_us: "np.ndarray", dt_us: "np.ndarray | float"
               ) -> tuple["np.ndarray", "np.ndarray", "np.ndarray", "np.ndarray"]:
    """Steady demand for ``dt_us``: per container (arrays of equal length; ``quota`` in cores,
    ``inf`` without a limit) → (cores it may run under its quota, periods, throttled periods,
    throttled µs summed over its runqueues)."""
    import numpy as np

    active = demand > 0
    periods = np.where(active & np.isfinite(quota), dt_us / period_us, 0.0)
    over = active & (demand > quota)
    throttled_periods = np.where(over, periods, 0.0)
    safe = np.where(over, demand, 1.0)
    runqueues = np.ceil(safe)
    per_period = np.where(over, runqueues * period_us * (1.0 - quota / safe), 0.0)
    return np.minimum(demand, quota), periods, throttled_periods, per_period * throttled_periods


def fair_share(capacity: float, wants: Sequence[float], weights: Sequence[float]) -> list[float]:
    """CFS's split of ``capacity`` cores among groups wanting ``wants`` with ``weights``: each gets
    ``min(want, capacity·weight/Σweight of the still hungry)``, repeated until the pool is used up
    or everyone is satisfied."""
    got = [0.0] * len(wants)
    hungry = [k for k, w in enumerate(wants) if w > 0]
    left = float(capacity)
    while hungry and left > 1e-12:
        total = sum(weights[k] for k in hungry)
        if total <= 0:
            break
        done = [k for k in hungry if wants[k] - got[k] <= left * weights[k] / total + 1e-15]
        if not done:
            for k in hungry:
                got[k] += left * weights[k] / total
            break
        for k in done:
            left -= wants[k] - got[k]
            got[k] = float(wants[k])
        hungry = [k for k in hungry if k not in set(done)]
    return got


def fair_share_pools(capacity: "np.ndarray", pool: "np.ndarray", wants: "np.ndarray", weights: "np.ndarray"
                     ) -> "np.ndarray":
    """:func:`fair_share` for many pools at once (``capacity`` per pool id; ``pool``, ``wants``,
    ``weights`` per member): the same rounds of water-filling, each round over every pool."""
    import numpy as np

    got = np.zeros(len(wants))
    left = capacity.astype(float).copy()
    hungry = wants > 0
    for _ in range(len(wants) + 1):
        if not hungry.any():
            break
        total = np.bincount(pool[hungry], weights=weights[hungry], minlength=len(left))
        live = hungry & (left[pool] > 1e-12) & (total[pool] > 0)
        if not live.any():
            break
        share = np.where(live, left[pool] * weights / np.where(total[pool] > 0, total[pool], 1.0), 0.0)
        done = live & (wants - got <= share + 1e-15)
        # pools where nobody is satisfied split what is left by weight and are finished
        settled = np.bincount(pool[done], minlength=len(left)) > 0
        split = live & ~settled[pool]
        got[split] += share[split]
        left -= np.bincount(pool[done], weights=(wants - got)[done], minlength=len(left))
        got[done] = wants[done]
        hungry = live & ~done & ~split
    return got
