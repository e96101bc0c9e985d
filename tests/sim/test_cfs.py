"""CFS bandwidth control as kernel/sched/fair.c does it (do_sched_cfs_period_timer, throttle and
unthrottle accounting), and the CFS split of a contended pool by cpu.weight."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kubetwin.kubelet.cgroups import milli_cpu_to_quota
from kubetwin.sim.cfs import CPUMax, fair_share, fluid_step, run_task


def limit(milli: int) -> CPUMax:
    """cpu.max as the kubelet writes it for a CPU limit (MilliCPUToQuota, 100 ms period)."""
    return CPUMax(milli_cpu_to_quota(milli, 100_000), 100_000)


def test_a_30ms_task_under_a_50m_limit_finishes_after_505ms():
    # 5 ms of quota per 100 ms period: 6 periods of work, throttled at the end of the first five
    run = run_task(30_000, limit(50))
    assert run.latency_us == 505_000
    assert run.runs[0] == (0, 5_000) and run.runs[-1] == (500_000, 505_000)


def test_a_30ms_task_under_a_20m_limit_finishes_after_1402ms():
    run = run_task(30_000, limit(20))
    assert run.latency_us == 1_402_000
    assert len(run.runs) == 15


def test_cpu_stat_counts_throttled_periods_and_the_time_spent_throttled():
    assert run_task(30_000, limit(50)).stat.text() == (
        "usage_usec 30000\nnr_periods 7\nnr_throttled 5\nthrottled_usec 475000\nnr_bursts 0\nburst_usec 0\n")
    st = run_task(30_000, limit(20)).stat
    assert (st.nr_periods, st.nr_throttled, st.throttled_usec) == (16, 14, 1_372_000)


def test_nr_periods_counts_the_expiry_that_finds_the_group_idle_and_stops_the_timer():
    # do_sched_cfs_period_timer: nr_periods += overrun before "if (cfs_b->idle && !throttled) goto out_deactivate"
    st = run_task(1_000, limit(50)).stat
    assert (st.nr_periods, st.nr_throttled, st.throttled_usec) == (2, 0, 0)


def test_a_task_without_a_limit_runs_straight_through_and_counts_no_periods():
    run = run_task(30_000, CPUMax(None))
    assert run.latency_us == 30_000 and run.stat.nr_periods == 0


def test_the_first_period_is_cut_short_by_the_tasks_phase_on_the_period_grid():
    # waking 97 ms into a period: 3 ms before the first refill, then 5 ms per period
    run = run_task(30_000, limit(50), phase_us=97_000)
    assert run.runs[:2] == ((0, 3_000), (3_000, 8_000))
    assert run.latency_us == 505_000 and run.stat.nr_throttled == 5


def test_the_kubelets_minimum_quota_is_one_millisecond():
    assert limit(5).text() == "1000 100000"     # MilliCPUToQuota never goes below MinQuotaPeriod
    assert run_task(30_000, limit(5)).latency_us == 2_901_000


def test_steady_demand_over_the_quota_is_throttled_every_period():
    ran, periods, throttled, usec = fluid_step(np.array([1.5]), np.array([1.0]), np.array([100_000.0]), 1e6)
    assert ran[0] == 1.0 and periods[0] == pytest.approx(10) and throttled[0] == pytest.approx(10)
    # two runqueues, each running at 0.75 CPU, use the 100 ms quota up after 66.7 ms
    assert usec[0] == pytest.approx(10 * 2 * 100_000 / 3)


def test_steady_demand_under_the_quota_counts_periods_but_is_never_throttled():
    ran, periods, throttled, usec = fluid_step(np.array([0.5]), np.array([1.0]), np.array([100_000.0]), 1e6)
    assert (ran[0], periods[0], throttled[0], usec[0]) == (0.5, 10, 0, 0)


def test_a_container_without_a_quota_counts_no_periods():
    ran, periods, _, _ = fluid_step(np.array([3.0]), np.array([math.inf]), np.array([100_000.0]), 1e6)
    assert ran[0] == 3.0 and periods[0] == 0


def test_a_contended_pool_is_split_by_weight_and_unused_share_goes_to_the_others():
    # 4 CPUs, weights 100/50/100: 1.6/0.8/1.6, the third wants only 1, its 0.6 goes to the others 2:1
    assert fair_share(4, [3, 3, 1], [100, 50, 100]) == pytest.approx([2.0, 1.0, 1.0])


def test_an_uncontended_pool_gives_everyone_what_they_want():
    assert fair_share(8, [3, 2, 1], [1, 1, 1]) == [3.0, 2.0, 1.0]


def test_the_split_of_many_pools_at_once_is_the_split_of_each_pool():
    import random

    from kubetwin.sim.cfs import fair_share_pools

    rng = random.Random(3)
    caps, pool, wants, weights = [], [], [], []
    for p in range(300):
        caps.append(rng.choice([1, 2, 4, 8, 16]) * 1.0)
        for _ in range(rng.randrange(1, 9)):
            pool.append(p)
            wants.append(rng.choice([0.0, rng.uniform(0, 6), rng.uniform(0, 1)]))
            weights.append(float(rng.randrange(1, 10_000)))
    got = fair_share_pools(np.array(caps), np.array(pool), np.array(wants), np.array(weights))
    for p in range(300):
        at = [k for k, q in enumerate(pool) if q == p]
        want = fair_share(caps[p], [wants[k] for k in at], [weights[k] for k in at])
        assert [got[k] for k in at] == pytest.approx(want, rel=1e-9, abs=1e-12)
