"""Vectorised scores equal the plugin's PreScore/Score/NormalizeScore run node by node, on
random clusters, random pods and random subsets of feasible nodes."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetwin.model.meta import convert
from kubetwin.model.pod import Pod
from kubetwin.scheduler.fastpath.vector import SKIPPED, vectorised
from kubetwin.scheduler.framework.interface import CycleState, ScoreExtensions
from kubetwin.scheduler.scheduler import Scheduler

from ..randomcluster import random_pod as _pod
from ..randomcluster import scheduler_pair as _pair

KEYS = ["topology.kubernetes.io/zone", "kubernetes.io/hostname", "disk"]


def _soft_spread_pod(rng: random.Random, name: str) -> Pod:
    cons = []
    for key in rng.sample(KEYS, rng.randint(1, 3)):
        tsc: dict = {"maxSkew": rng.choice([1, 2, 3]), "topologyKey": key,
                     "whenUnsatisfiable": rng.choice(["ScheduleAnyway", "ScheduleAnyway", "DoNotSchedule"]),
                     "labelSelector": rng.choice([{"matchLabels": {"app": "x"}}, {}, {"matchExpressions": [
                         {"key": "app", "operator": "In", "values": ["x", "y"]}]}])}
        if rng.random() < 0.3:
            tsc["nodeTaintsPolicy"] = "Honor"
        if rng.random() < 0.3:
            tsc["nodeAffinityPolicy"] = "Ignore"
        if rng.random() < 0.2:
            tsc["matchLabelKeys"] = ["tier"]
        cons.append(tsc)
    spec: dict = {"containers": [{"name": "c"}], "topologySpreadConstraints": cons}
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"disk": rng.choice(["ssd", "hdd"])}
    return convert({"metadata": {"name": name, "namespace": rng.choice(["default", "other"]),
                                 "labels": {"app": rng.choice(["x", "y"]), "tier": rng.choice(["a", "b"])}},
                    "spec": spec}, Pod)


def _plugin_scores(s: Scheduler, name: str, pod: Pod, idx: np.ndarray) -> list[int] | None:
    plugin = next(p for p, _ in s.plugins if p.name == name)
    infos = s.cluster.infos_array[idx].tolist()
    state = CycleState()
    st_ = plugin.pre_score(state, pod, infos)
    if st_.is_skip:
        return None
    scores = {ni.name: plugin.score(state, pod, ni)[0] for ni in infos}
    if isinstance(plugin, ScoreExtensions):
        plugin.normalize_score(state, pod, scores)
    return [scores[ni.name] for ni in infos]


def _check(s: Scheduler, name: str, pod: Pod, rng: random.Random) -> None:
    n = s.cluster.n
    idx = np.array(sorted(rng.sample(range(n), rng.randint(2, n))), dtype=np.int64)
    plugin = next(p for p, _ in s.plugins if p.name == name)
    sv = vectorised(name).score(s.cluster, pod, plugin, idx)
    if sv is None:
        return
    want = _plugin_scores(s, name, pod, idx)
    if sv is SKIPPED:
        assert want is None
        return
    assert want is not None and sv.normalized.tolist() == want


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9))
def test_soft_spread_vector_score_equals_the_plugin(seed):
    rng, fast, _ = _pair(seed, 14, None)
    for k in range(12):
        _check(fast, "PodTopologySpread", _soft_spread_pod(rng, f"q{k}"), rng)
        bound = _pod(rng, f"b{k}")
        r = fast.schedule(bound)
        if r.node is not None:
            fast.bind(bound, r.node)


def _pref_term(rng: random.Random) -> dict:
    term: dict = {"topologyKey": rng.choice(KEYS + ["gen"]),
                  "labelSelector": rng.choice([{"matchLabels": {"app": "x"}}, {"matchLabels": {"tier": "a"}},
                                               {"matchExpressions": [{"key": "app", "operator": "Exists"}]}])}
    r = rng.random()
    if r < 0.2:
        term["namespaces"] = ["other"]
    elif r < 0.3:
        term["namespaceSelector"] = {}
    return {"weight": rng.randint(1, 100), "podAffinityTerm": term}


def _pref_pod(rng: random.Random, name: str, node: str | None = None) -> Pod:
    aff: dict = {}
    if rng.random() < 0.7:
        aff["podAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            _pref_term(rng) for _ in range(rng.randint(1, 2))]}
    if rng.random() < 0.6:
        aff["podAntiAffinity"] = {"preferredDuringSchedulingIgnoredDuringExecution": [
            _pref_term(rng) for _ in range(rng.randint(1, 2))]}
    if rng.random() < 0.2:
        aff.setdefault("podAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = [
            {"topologyKey": rng.choice(KEYS), "labelSelector": {"matchLabels": {"app": rng.choice(["x", "y"])}}}]
    spec: dict = {"containers": [{"name": "c"}]}
    if aff:
        spec["affinity"] = aff
    if node:
        spec["nodeName"] = node
    return convert({"metadata": {"name": name, "namespace": rng.choice(["default", "default", "other"]),
                                 "labels": {"app": rng.choice(["x", "y"]), "tier": rng.choice(["a", "b"])}},
                    "spec": spec}, Pod)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9))
def test_preferred_inter_pod_affinity_vector_score_equals_the_plugin(seed):
    rng, fast, _ = _pair(seed, 14, None)
    for k in range(10):
        _check(fast, "InterPodAffinity", _pref_pod(rng, f"q{k}"), rng)
        bound = _pref_pod(rng, f"b{k}") if rng.random() < 0.5 else _pod(rng, f"b{k}")
        fast.bind(bound, fast.cluster.names[rng.randrange(fast.cluster.n)])


def _weighted_profile(fit_weight: int, balanced_weight: int, cpu_weight: int, memory_weight: int):
    from kubetwin.scheduler.profile import profile_from_config

    return profile_from_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"enabled": [
                          {"name": "NodeResourcesFit", "weight": fit_weight},
                          {"name": "NodeResourcesBalancedAllocation", "weight": balanced_weight}]}},
                      "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                          "type": "LeastAllocated",
                          "resources": [{"name": "cpu", "weight": cpu_weight},
                                        {"name": "memory", "weight": memory_weight}]}}}]}]})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9), st.integers(1, 5), st.integers(1, 5), st.integers(1, 4), st.integers(1, 4))
def test_resource_scorers_together_equal_the_two_plugins_weighted(seed, fit_w, bal_w, cpu_w, mem_w):
    from kubetwin.scheduler.plugins.noderesources.vector import score_resources_together

    rng, fast, _ = _pair(seed, 14, _weighted_profile(fit_w, bal_w, cpu_w, mem_w))
    fit = next(p for p, _ in fast.plugins if p.name == "NodeResourcesFit")
    bal = next(p for p, _ in fast.plugins if p.name == "NodeResourcesBalancedAllocation")
    for k in range(8):
        pod = _pod(rng, f"q{k}")
        idx = np.array(sorted(rng.sample(range(fast.cluster.n), rng.randint(1, fast.cluster.n))), dtype=np.int64)
        got = score_resources_together(fast.cluster, pod, (fit, fit_w), (bal, bal_w), idx)
        assert got is not None   # every node has cpu and memory
        want = np.array(_plugin_scores(fast, "NodeResourcesFit", pod, idx), dtype=np.int64) * fit_w
        bal_scores = _plugin_scores(fast, "NodeResourcesBalancedAllocation", pod, idx)
        if bal_scores is not None:
            want += np.array(bal_scores, dtype=np.int64) * bal_w
        assert got.tolist() == want.tolist()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9))
def test_resource_scores_kept_between_cycles_equal_the_plugins_after_binds_and_removals(seed):
    from kubetwin.scheduler.plugins.noderesources.vector import score_resources_together

    rng, fast, _ = _pair(seed, 30)
    fit = next(p for p, _ in fast.plugins if p.name == "NodeResourcesFit")
    bal = next(p for p, _ in fast.plugins if p.name == "NodeResourcesBalancedAllocation")
    shapes = [_pod(rng, f"shape{k}") for k in range(3)]
    bound = []
    for k in range(25):
        pod = rng.choice(shapes)
        idx = np.array(sorted(rng.sample(range(fast.cluster.n), rng.randint(1, fast.cluster.n))), dtype=np.int64)
        got = score_resources_together(fast.cluster, pod, (fit, 1), (bal, 1), idx)
        want = np.array(_plugin_scores(fast, "NodeResourcesFit", pod, idx), dtype=np.int64)
        bal_scores = _plugin_scores(fast, "NodeResourcesBalancedAllocation", pod, idx)
        if bal_scores is not None:
            want += np.array(bal_scores, dtype=np.int64)
        assert got is not None and got.tolist() == want.tolist(), f"seed {seed}, cycle {k}"
        if bound and rng.random() < 0.3:
            fast.remove(bound.pop(rng.randrange(len(bound))))
        else:
            new = _pod(rng, f"b{k}")
            fast.bind(new, fast.cluster.names[rng.randrange(fast.cluster.n)])
            bound.append(new)
