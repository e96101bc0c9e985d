"""PodTopologySpread's vectorised Filter, whose domain sums are kept from one cycle to the next,
answers as the plugin run node by node while pods are bound and removed and node labels change."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetwin.model.meta import convert, to_builtins
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.profile import Profile

from ...randomcluster import scheduler_pair

KEYS = ["topology.kubernetes.io/zone", "kubernetes.io/hostname", "disk"]


def _spread_shape(rng: random.Random) -> dict:
    cons = []
    for key in rng.sample(KEYS, rng.randint(1, 2)):
        tsc: dict = {"maxSkew": rng.choice([1, 1, 2]), "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                     "labelSelector": rng.choice([{"matchLabels": {"app": "x"}}, {}])}
        if rng.random() < 0.3:
            tsc["minDomains"] = rng.randint(1, 4)
        if rng.random() < 0.3:
            tsc["nodeTaintsPolicy"] = "Honor"
        if rng.random() < 0.2:
            tsc["nodeAffinityPolicy"] = "Ignore"
        if rng.random() < 0.3:   # the selector takes the pod's own value (pods of one shape differ)
            tsc["matchLabelKeys"] = ["app"]
        cons.append(tsc)
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
                  "topologySpreadConstraints": cons}
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"disk": rng.choice(["ssd", "hdd"])}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"operator": "Exists"}]
    return spec


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9), st.sampled_from([None, 100]))
def test_spread_filter_with_kept_domain_sums_matches_the_plugin_node_by_node(seed, pct):
    rng, fast, slow = scheduler_pair(seed, 24, Profile(percentage_of_nodes_to_score=pct))
    fast.fast.window_min_nodes = 0   # the windowed Filter too
    shapes = [_spread_shape(rng) for _ in range(3)]
    bound: list[Pod] = []
    for k in range(40):
        r = rng.random()
        if bound and r < 0.2:
            pod = bound.pop(rng.randrange(len(bound)))
            fast.remove(pod)
            slow.remove(pod)
            continue
        if r < 0.3:   # a node's labels change: domains appear and vanish
            raw = to_builtins(fast.cluster.infos[rng.randrange(fast.cluster.n)].node)
            labels = raw["metadata"].setdefault("labels", {})
            labels["disk"] = rng.choice(["ssd", "hdd", "nvme"])
            if rng.random() < 0.3:
                labels.pop("topology.kubernetes.io/zone", None)
            node = convert(raw, Node)
            fast.update_node(node)
            slow.update_node(node)
            continue
        pod = convert({"metadata": {"name": f"p{k}", "labels": {"app": rng.choice(["x", "x", "y"])}},
                       "spec": rng.choice(shapes)}, Pod)
        a, b = fast.schedule(pod), slow.schedule(pod)
        assert (a.node, a.code, a.message, a.feasible, a.evaluated) == (
            b.node, b.code, b.message, b.feasible, b.evaluated), f"seed {seed}, step {k}"
        if a.node is not None:
            fast.bind(pod, a.node)
            slow.bind(pod, b.node)
            bound.append(pod)
