"""Default spread constraints (from Services, ReplicationControllers, ReplicaSets and
StatefulSets selecting the pod) are vectorised like the pod's own: their selector has a
cache key, matching pods are counted once and kept in step. The vectorised scores and
cycles equal the plugin's PreScore/Score/NormalizeScore and Filter run node by node —
under System defaulting (nodes missing a key sit in the empty-value domain) and List
defaulting (hard and soft constraints, every key required)."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.framework.interface import CycleState
from kubetwin.scheduler.profile import Profile
from kubetwin.scheduler.scheduler import Scheduler
from kubetwin.scheduler.fastpath.vector import SKIPPED
from kubetwin.scheduler.plugins.podtopologyspread.vector import score_pod_topology_spread, spread_constraints

ZONE = "topology.kubernetes.io/zone"
LIST_PROFILE = Profile(plugin_args={"PodTopologySpread": {"defaultingType": "List", "defaultConstraints": [
    {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
    {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"},
    {"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "ScheduleAnyway"}]}})


def _node(rng: random.Random, i: int) -> Node:
    labels = {"kubernetes.io/hostname": f"n{i}"}
    r = rng.random()
    if r < 0.75:
        labels[ZONE] = rng.choice(["a", "b", "c"])
    elif r < 0.85:
        labels[ZONE] = ""                      # an empty value is a domain of its own
    if rng.random() < 0.7:
        labels["rack"] = rng.choice(["r1", "r2"])
    taints = [{"key": "spot", "effect": "NoSchedule"}] if rng.random() < 0.15 else []
    return convert({"metadata": {"name": f"n{i}", "labels": labels}, "spec": {"taints": taints},
                    "status": {"allocatable": {"cpu": "16", "memory": "32Gi", "pods": "20"}}}, Node)


def _objects() -> dict:
    return {
        "Service": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                     "spec": {"selector": {"app": "web"}}},
                    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "tier", "namespace": "default"},
                     "spec": {"selector": {"tier": "front"}}},
                    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "other"},
                     "spec": {"selector": {"app": "web"}}}],
        "ReplicaSet": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "default"},
                        "spec": {"selector": {"matchExpressions": [
                            {"key": "app", "operator": "In", "values": ["web", "db"]}]}}}],
    }


def _pod(rng: random.Random, name: str, node: str | None = None) -> Pod:
    meta: dict = {"name": name, "namespace": rng.choice(["default", "default", "other"]),
                  "labels": {"app": rng.choice(["web", "db", "batch"]), "tier": rng.choice(["front", "back"])}}
    if rng.random() < 0.4:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-1",
                                    "controller": True}]
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}
    if rng.random() < 0.2:
        spec["nodeSelector"] = {"rack": rng.choice(["r1", "r2"])}
    if rng.random() < 0.2:
        spec["tolerations"] = [{"key": "spot", "operator": "Exists"}]
    if node:
        spec["nodeName"] = node
    return convert({"metadata": meta, "spec": spec}, Pod)


def _cluster(seed: int, profile: Profile | None, vectorised: bool = True) -> tuple[random.Random, Scheduler]:
    rng = random.Random(seed)
    nodes = [_node(rng, i) for i in range(12)]
    running = [_pod(rng, f"r{k}", f"n{rng.randrange(12)}") for k in range(16)]
    return rng, Scheduler(profile, nodes, gates_for(), seed, pods=running, objects=_objects(), vectorised=vectorised)


def _plugin_scores(s: Scheduler, pod: Pod, idx: np.ndarray) -> list[int] | None:
    plugin = next(p for p, _ in s.plugins if p.name == "PodTopologySpread")
    infos = s.cluster.infos_array[idx].tolist()
    state = CycleState()
    if plugin.pre_score(state, pod, infos).is_skip:
        return None
    scores = {ni.name: plugin.score(state, pod, ni)[0] for ni in infos}
    plugin.normalize_score(state, pod, scores)
    return [scores[ni.name] for ni in infos]


def _check_scores(s: Scheduler, pod: Pod, rng: random.Random) -> None:
    idx = np.array(sorted(rng.sample(range(s.cluster.n), rng.randint(2, s.cluster.n))), dtype=np.int64)
    plugin = next(p for p, _ in s.plugins if p.name == "PodTopologySpread")
    sv = score_pod_topology_spread(s.cluster, pod, plugin, idx)
    assert sv is not None, "default constraints must be vectorised"
    want = _plugin_scores(s, pod, idx)
    if sv is SKIPPED:
        assert want is None
    else:
        assert sv.normalized.tolist() == want


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9), st.booleans())
def test_default_constraint_scores_equal_the_plugin(seed, system):
    rng, s = _cluster(seed, None if system else LIST_PROFILE)
    for k in range(10):
        p = _pod(rng, f"q{k}")
        _check_scores(s, p, rng)
        r = s.schedule(p)
        if r.node is not None:
            s.bind(p, r.node)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9), st.booleans())
def test_cycles_with_default_constraints_match_node_by_node(seed, system):
    profile = None if system else LIST_PROFILE
    rng, fast = _cluster(seed, profile)
    _, slow = _cluster(seed, profile, vectorised=False)
    for k in range(15):
        p = _pod(rng, f"p{k}")
        a, b = fast.schedule(p), slow.schedule(p)
        assert (a.node, a.code, a.message, a.feasible, a.evaluated) == (b.node, b.code, b.message, b.feasible,
                                                                         b.evaluated), f"pod {k}"
        if a.node is not None:
            fast.bind(p, a.node)
            slow.bind(p, b.node)


def test_hard_default_constraints_carry_the_default_selector_key():
    rng, s = _cluster(1, LIST_PROFILE)
    plugin = next(p for p, _ in s.plugins if p.name == "PodTopologySpread")
    pod = convert({"metadata": {"name": "w", "labels": {"app": "web", "tier": "front"}},
                   "spec": {"containers": [{"name": "c"}]}}, Pod)
    (con, key), = spread_constraints(s.cluster, pod, plugin)
    assert con.topology_key == ZONE
    assert key == ("default-selector", (("app", "web"), ("tier", "front")), ())


def test_pod_selected_by_nothing_has_no_default_constraints():
    rng, s = _cluster(1, None)
    plugin = next(p for p, _ in s.plugins if p.name == "PodTopologySpread")
    pod = convert({"metadata": {"name": "lone", "labels": {"app": "batch"}}, "spec": {"containers": [{"name": "c"}]}},
                  Pod)
    assert spread_constraints(s.cluster, pod, plugin) == []
    idx = np.arange(s.cluster.n)
    assert score_pod_topology_spread(s.cluster, pod, plugin, idx) is SKIPPED
