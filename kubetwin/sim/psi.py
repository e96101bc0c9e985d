"""Pressure stall information: the kernel's running averages over stall time (``kernel/sched/psi.c``).

The kernel samples each cgroup's stall time every ``PSI_FREQ`` (2 s plus one tick) and folds the
share of that period spent stalled into three exponentially decaying averages, in the fixed-point
arithmetic of the load average (``calc_load`` with ``FSHIFT`` = 11):

* ``pct = stall_ns * 100 / period_ns`` — a whole percentage, then ``pct * FIXED_1``;
* ``avg = calc_load(avg, EXP_x, pct)`` with ``EXP_10s`` = 1677, ``EXP_60s`` = 1981, ``EXP_300s`` = 2034
  (``FIXED_1 / exp(2 s / 10 s | 60 s | 300 s)``), rounding up while the average rises;
* periods the averaging work missed decay the averages with no stall (``calc_load_n(avg, EXP, 0, n)``);
* ``cpu.pressure`` prints ``avg10=%lu.%02lu`` from ``LOAD_INT`` / ``LOAD_FRAC``, and ``total=`` in µs.

``some`` is the share of time at least one task of the group is stalled, ``full`` the share in
which all its non-idle tasks are (``psi_group_change``: ``PSI_CPU_SOME``, ``PSI_CPU_FULL``, ...).

:class:`PSIAverages` keeps the averages of many groups at once (numpy arrays; the simulation has
one row per container per resource). The stall shares themselves come from the CPU model
(:mod:`kubetwin.sim.cpu`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

FSHIFT = 11
FIXED_1 = 1 << FSHIFT
EXP_10S = 1677
EXP_60S = 1981
EXP_300S = 2034
EXPS = (EXP_10S, EXP_60S, EXP_300S)
#: the default ``CONFIG_HZ`` of distribution kernels; ``PSI_FREQ`` is ``2*HZ+1`` jiffies
HZ = 1000
PSI_PERIOD_NS = (2 * HZ + 1) * (1_000_000_000 // HZ)


def calc_load(load: int, exp: int, active: int) -> int:
    """``calc_load`` (include/linux/sched/loadavg.h): one fixed-point decay step."""
    new = load * exp + active * (FIXED_1 - exp)
    if active >= load:
        new += FIXED_1 - 1
    return new // FIXED_1


def calc_avgs(avg: tuple[int, int, int], missed_periods: int, stall_ns: int, period_ns: int
              ) -> tuple[int, int, int]:
    """``calc_avgs``: decay over missed periods, then fold in the latest one."""
    out = list(avg)
    for _ in range(missed_periods):
        out = [calc_load(a, e, 0) for a, e in zip(out, EXPS)]
    pct = (stall_ns * 100 // period_ns) * FIXED_1
    return tuple(calc_load(a, e, pct) for a, e in zip(out, EXPS))  # type: ignore[return-value]


def load_text(avg: int) -> str:
    """``LOAD_INT.LOAD_FRAC`` as psi_show prints it (``%lu.%02lu``)."""
    return f"{avg >> FSHIFT}.{((avg & (FIXED_1 - 1)) * 100) >> FSHIFT:02d}"


def load_value(avg: int) -> float:
    """The printed average read back as a number (what runc / cAdvisor parse into the Summary API)."""
    return float(load_text(avg))


@dataclass(frozen=True, slots=True)
class PSILine:
    """One ``some`` or ``full`` line of a ``*.pressure`` file."""

    avg10: float
    avg60: float
    avg300: float
    total_us: int

    def text(self, kind: str) -> str:
        return f"{kind} avg10={self.avg10:.2f} avg60={self.avg60:.2f} avg300={self.avg300:.2f} total={self.total_us}"


class PSIAverages:
    """The ``some`` and ``full`` averages and totals of ``n`` groups, updated once per PSI period."""

    def __init__(self, n: int = 0):
        import numpy as np

        #: [some|full, group, 10s|60s|300s]: at most 100 << 11, so int32 holds every figure and step
        self.avg = np.zeros((2, n, 3), dtype=np.int32)
        self.total_ns = np.zeros((2, n), dtype=np.int64)
        self.carry_ns = 0.0   # time since the last PSI period ended

    def grow(self, n: int) -> None:
        import numpy as np

        have = self.avg.shape[1]
        if n > have:
            more = max(n, 2 * have)
            self.avg = np.concatenate([self.avg, np.zeros((2, more - have, 3), dtype=np.int32)], axis=1)
            self.total_ns = np.concatenate([self.total_ns, np.zeros((2, more - have), dtype=np.int64)], axis=1)

    def reset(self, rows: "np.ndarray") -> None:
        """New groups in reused rows start at zero."""
        self.avg[:, rows, :] = 0
        self.total_ns[:, rows] = 0

    def advance(self, some: "np.ndarray", full: "np.ndarray", dt_ns: float) -> None:
        """``dt_ns`` of steady stall shares (0..1 per group, length ≤ n): totals grow by the stalled
        time; the averages take one ``calc_avgs`` step per PSI period that ends within it."""
        import numpy as np

        n = len(some)
        shares = np.stack([some, full])
        self.total_ns[:, :n] += (shares * dt_ns).astype(np.int64)
        self.carry_ns += dt_ns
        steps = int(self.carry_ns // PSI_PERIOD_NS)
        if steps == 0:
            return
        self.carry_ns -= steps * PSI_PERIOD_NS
        # pct of each period: a whole percentage (div_u64(time * 100, period)), then fixed point
        pct = (np.floor(shares * 100 + 1e-9).astype(np.int64)) * FIXED_1
        # a group with no stall and all-zero averages stays at zero: only the others are stepped
        live = (pct != 0).any(axis=0) | (self.avg[:, :n, :] != 0).any(axis=(0, 2))
        rows = np.flatnonzero(live)
        if not len(rows):
            return
        every = len(rows) == n
        # averages are at most 100 << 11 and calc_load's sum below 2**31: int32 holds every step.
        # Worked on as [some|full, 10s|60s|300s, group]: each average's groups side by side in
        # memory, so every operation below runs over long contiguous rows.
        avg = (self.avg[:, :n, :] if every else self.avg[:, rows, :]).transpose(0, 2, 1).copy()
        p = (pct if every else pct[:, rows]).astype(np.int32)[:, None, :]
        exps = np.array(EXPS, dtype=np.int32)[None, :, None]
        # calc_load adds FIXED_1 - 1 while active >= load. With the same active every period the
        # average moves towards it and never crosses it (rising: at most active; falling: at
        # least active, and at active the rounding changes nothing), so which groups round up is
        # known before the first period: one constant term per group for the whole interval.
        add = p * (FIXED_1 - exps) + (p >= avg) * np.int32(FIXED_1 - 1)
        new = np.empty_like(avg)
        for _ in range(steps):   # calc_load; the figures are never negative, so >> FSHIFT is / FIXED_1
            np.multiply(avg, exps, out=new)
            new += add
            np.right_shift(new, FSHIFT, out=avg)
        if every:
            self.avg[:, :n, :] = avg.transpose(0, 2, 1)
        else:
            self.avg[:, rows, :] = avg.transpose(0, 2, 1)

    def line(self, kind: int, row: int) -> PSILine:
        a = [int(x) for x in self.avg[kind, row]]
        return PSILine(load_value(a[0]), load_value(a[1]), load_value(a[2]), int(self.total_ns[kind, row]) // 1000)

    def avg10(self, kind: int, n: int) -> "np.ndarray":
        """avg10 of the first ``n`` groups as the kernel prints them (two decimals, as floats)."""
        a = self.avg[kind, :n, 0]
        return (a >> FSHIFT) + (((a & (FIXED_1 - 1)) * 100) >> FSHIFT) / 100.0
