"""The windowed Filter finds what one pass over every node finds.

The vectorised cycle reads the nodes in windows from the sampling start and stops once
``numFeasibleNodesToFind`` nodes fit (upstream's early stop). On random clusters — below and
above 100 nodes, random sampling starts, ``percentageOfNodesToScore`` adaptive (unset or 0),
small, large and 100 — its feasible nodes, their order, the nodes it examined, its diagnosis and
the rotation's advance must be those of the whole-cluster pass and of the plugins run node by node.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetwin.model.meta import convert
from kubetwin.model.pod import Pod
from kubetwin.scheduler.framework.interface import CycleState
from kubetwin.scheduler.profile import Profile
from kubetwin.scheduler.scheduler import Scheduler

from ..randomcluster import random_pod, scheduler_pair

PERCENTAGES = [None, 0, 1, 7, 50, 99, 100]


def _always_windowed(s: Scheduler) -> None:
    s.fast.window_min_nodes = 0


def _never_windowed(s: Scheduler) -> None:
    s.fast.window_min_nodes = 10**9


def _found(s: Scheduler, pod, start: int):
    found = s.fast.find_nodes_that_fit_pod(CycleState(), pod, start)
    nodes = [int(i) for i in found.nodes]
    return nodes, found.processed, sorted(found.diagnosis.histogram().items()), found.diagnosis.plugins()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**9), n_nodes=st.sampled_from([30, 99, 100, 101, 160, 400]),
       pct=st.sampled_from(PERCENTAGES), start=st.integers(0, 10**6))
def test_windowed_search_finds_the_feasible_nodes_and_count_of_the_whole_pass(seed, n_nodes, pct, start):
    profile = Profile(percentage_of_nodes_to_score=pct)
    rng, fast, _ = scheduler_pair(seed, n_nodes, profile)
    for k in range(30):
        pod = random_pod(rng, f"p{k}")
        _always_windowed(fast)
        windowed = _found(fast, pod, start)
        _never_windowed(fast)
        whole = _found(fast, pod, start)
        assert windowed == whole, f"seed {seed}, pod {k}"
        if windowed[0]:   # fill the cluster so that later windows find fewer nodes
            fast.bind(pod, fast.cluster.names[windowed[0][rng.randrange(len(windowed[0]))]])
        start += rng.randrange(n_nodes)


@pytest.mark.parametrize("pct", PERCENTAGES)
@pytest.mark.parametrize("n_nodes", [60, 240])
def test_windowed_cycles_match_plugin_by_plugin_cycles_and_advance_the_rotation_alike(n_nodes, pct):
    for seed in range(2):
        rng, fast, slow = scheduler_pair(seed, n_nodes, Profile(percentage_of_nodes_to_score=pct))
        _always_windowed(fast)
        for k in range(40):
            pod = random_pod(rng, f"p{k}")
            a, b = fast.schedule(pod), slow.schedule(pod)
            assert (a.node, a.code, a.message, a.feasible, a.evaluated) == (
                b.node, b.code, b.message, b.feasible, b.evaluated), f"seed {seed}, pod {k}"
            assert a.unschedulable_plugins == b.unschedulable_plugins
            if a.node is not None:
                fast.bind(pod, a.node)
                slow.bind(pod, b.node)
            assert fast.next_start == slow.next_start


def test_windowed_search_stops_reading_nodes_once_enough_fit():
    _, fast, _ = scheduler_pair(7, 2000)
    _always_windowed(fast)
    read: list[int] = []
    cycle = fast.fast
    parts_of = cycle._window_parts

    def counting(state, pod, skipped):
        out = []
        for plugin, twin, verdict, window in parts_of(state, pod, skipped):
            if window is not None:
                def counted(lo, hi, window=window):
                    read.append(hi - lo)
                    return window(lo, hi)
                window = counted
            out.append((plugin, twin, verdict, window))
        return out

    cycle._window_parts = counting
    pod = convert({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}, Pod)
    found = cycle.find_nodes_that_fit_pod(CycleState(), pod, 0)
    assert len(found.nodes) == 680   # adaptive: (50 - 2000 // 125) % of 2,000 nodes
    assert found.processed < 2000
    assert 0 < sum(read) < 2000


def test_a_profile_whose_windowed_filters_are_all_skipped_takes_the_whole_pass(tmp_path):
    from kubetwin.scheduler.profile import load_profile

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      disabled: [{name: NodeResourcesFit}]
""")
    rng, fast, slow = scheduler_pair(5, 150, load_profile(cfg))
    _always_windowed(fast)
    for k in range(10):   # pods without spread constraints: PodTopologySpread's Filter is skipped
        pod = convert({"metadata": {"name": f"p{k}"}, "spec": {"containers": [{"name": "c"}]}}, Pod)
        a, b = fast.schedule(pod), slow.schedule(pod)
        assert (a.node, a.feasible, a.evaluated) == (b.node, b.feasible, b.evaluated)
