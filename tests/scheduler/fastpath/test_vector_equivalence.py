"""The vectorised scheduler answers exactly as the plugins run node by node.

Random clusters (labels, taints, cordons, extended resources, host ports, pods already
bound) and random pods (requests, selectors, required/preferred node affinity, tolerations,
ports, spread constraints, anti-affinity) are scheduled and bound one after another by two
schedulers with the same seed: one vectorised, one running every plugin object per node.
Every decision, message and sampling count must agree, cycle after cycle.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetwin.model.features import gates_for
from kubetwin.scheduler.profile import Profile, load_profile
from kubetwin.scheduler.scheduler import Scheduler

from ..randomcluster import random_node as _node
from ..randomcluster import random_pod as _pod
from ..randomcluster import scheduler_pair as _pair

def _run(seed: int, n_nodes: int, n_pods: int, profile: Profile | None = None) -> None:
    rng, fast, slow = _pair(seed, n_nodes, profile)
    for k in range(n_pods):
        pod = _pod(rng, f"p{k}")
        a, b = fast.schedule(pod), slow.schedule(pod)
        assert (a.node, a.code, a.message, a.feasible, a.evaluated) == (
            b.node, b.code, b.message, b.feasible, b.evaluated), f"seed {seed}, pod {k}"
        assert a.unschedulable_plugins == b.unschedulable_plugins
        assert a.nominated_node == b.nominated_node
        if a.node is not None:
            fast.bind(pod, a.node)
            slow.bind(pod, b.node)
        assert fast.next_start == slow.next_start


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9))
def test_vectorised_cycles_match_plugin_by_plugin_cycles_on_small_clusters(seed):
    _run(seed, n_nodes=12, n_pods=25)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_vectorised_cycles_match_with_node_sampling_and_rotation(seed):
    # 150 nodes: 100 feasible nodes are enough, so cycles stop early and rotate
    _run(seed, n_nodes=150, n_pods=30)


@pytest.mark.parametrize("strategy", ["MostAllocated", "RequestedToCapacityRatio"])
def test_vectorised_scoring_strategies_match(tmp_path, strategy):
    rtcr = ("\n        requestedToCapacityRatio:\n          shape: [{utilization: 0, score: 0}, "
            "{utilization: 60, score: 10}, {utilization: 100, score: 2}]") if strategy == "RequestedToCapacityRatio" else ""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: {strategy}
        resources: [{{name: cpu, weight: 2}}, {{name: memory, weight: 1}}, {{name: example.com/gpu, weight: 3}}]{rtcr}
  - name: NodeResourcesBalancedAllocation
    args:
      resources: [{{name: cpu, weight: 1}}, {{name: memory, weight: 1}}, {{name: example.com/gpu, weight: 1}}]
""")
    profile = load_profile(cfg)
    for seed in range(5):
        _run(seed, n_nodes=15, n_pods=20, profile=profile)


@pytest.mark.parametrize("seed", range(8))
def test_first_cycle_matches_the_explained_one_shot_cycle(seed):
    from kubetwin.scheduler.cycle import schedule_one
    from kubetwin.scheduler.inputs import ClusterInputs

    rng = random.Random(seed)
    nodes = [_node(rng, i) for i in range(20)]
    running = [_pod(rng, f"r{k}", f"n{rng.randrange(20)}") for k in range(20)]
    cluster = ClusterInputs(nodes, running)
    for k in range(10):
        pod = _pod(rng, f"p{k}")
        explained = schedule_one(cluster, pod, gates_for(), seed=seed)
        fast = Scheduler(None, nodes, gates_for(), seed, pods=running).schedule(pod)
        assert (fast.node, fast.message if fast.node is None else "") == (
            explained.node, explained.message if explained.node is None else "")
        assert fast.feasible == len(explained.feasible)
