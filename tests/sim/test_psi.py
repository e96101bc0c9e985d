"""Pressure stall averages as kernel/sched/psi.c computes them (calc_avgs, calc_load, psi_show)."""

from __future__ import annotations

import numpy as np

from kubetwin.sim.psi import EXP_10S, EXP_60S, EXP_300S, FIXED_1, PSIAverages, calc_avgs, calc_load, load_text


def test_the_decay_constants_are_the_kernels():
    # psi.c: EXP_10s 1677, EXP_60s 1981, EXP_300s 2034 (1/exp(2s/Ns) in 11-bit fixed point)
    assert (FIXED_1, EXP_10S, EXP_60S, EXP_300S) == (2048, 1677, 1981, 2034)


def test_calc_load_rounds_up_while_the_average_rises():
    assert calc_load(0, EXP_10S, 100 * FIXED_1) == (100 * FIXED_1 * (FIXED_1 - EXP_10S) + FIXED_1 - 1) // FIXED_1
    assert calc_load(1000, EXP_10S, 0) == 1000 * EXP_10S // FIXED_1


def test_one_fully_stalled_period_moves_avg10_to_18_11_percent():
    # calc_load(0, 1677, 100 << 11) = (204800 * 371 + 2047) >> 11 = 37100; 37100 >> 11 = 18, (236 * 100) >> 11 = 11
    avg = calc_avgs((0, 0, 0), 0, 2_000_000_000, 2_000_000_000)
    assert [load_text(a) for a in avg] == ["18.11", "3.27", "0.68"]


def test_the_stall_share_is_taken_as_a_whole_percentage():
    # div_u64(time * 100, period): 49.9% of a period counts as 49%
    assert calc_avgs((0, 0, 0), 0, 998, 2000) == calc_avgs((0, 0, 0), 0, 980, 2000)


def test_missed_periods_decay_the_averages_with_no_stall():
    avg = calc_avgs((0, 0, 0), 0, 100, 100)
    assert calc_avgs(avg, 3, 0, 100) == calc_avgs(calc_avgs(calc_avgs(calc_avgs(avg, 0, 0, 100), 0, 0, 100), 0, 0,
                                                            100), 0, 0, 100)


def test_steady_full_stall_converges_to_100_percent_on_avg10():
    avg = (0, 0, 0)
    for _ in range(60):
        avg = calc_avgs(avg, 0, 1, 1)
    assert load_text(avg[0]) == "100.00"


def test_the_vectorised_averages_match_the_scalar_kernel_steps():
    p = PSIAverages(2)
    p.advance(np.array([0.5, 1.0]), np.array([0.0, 1.0]), 2.001e9 * 3)
    want = (0, 0, 0)
    for _ in range(3):
        want = calc_avgs(want, 0, 50, 100)
    assert tuple(int(x) for x in p.avg[0, 0]) == want
    assert p.line(0, 0).total_us == 3_001_500   # totals are µs of stall, as psi_show prints them


def test_a_line_prints_as_the_pressure_file_does():
    p = PSIAverages(1)
    p.advance(np.array([1.0]), np.array([1.0]), 2.001e9)
    assert p.line(0, 0).text("some") == "some avg10=18.11 avg60=3.27 avg300=0.68 total=2001000"


def test_the_vectorised_averages_match_the_kernel_steps_for_rising_falling_and_idle_groups():
    import random

    rng = random.Random(5)
    n = 40
    p = PSIAverages(n)
    want = [(0, 0, 0)] * n
    for _ in range(25):
        some = np.array([rng.choice([0.0, 0.0, rng.random(), 1.0]) for _ in range(n)])
        steps = rng.randint(0, 40)
        p.carry_ns = 0.0
        p.advance(some, some, 2.001e9 * steps)
        for k in range(n):
            pct = int(np.floor(some[k] * 100 + 1e-9))
            for _ in range(steps):
                want[k] = calc_avgs(want[k], 0, pct, 100)
    assert [tuple(int(x) for x in p.avg[0, k]) for k in range(n)] == want
