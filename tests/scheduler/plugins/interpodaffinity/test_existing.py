"""The bound pods' distinct (anti-)affinity terms, kept in step with binds, removals and node
updates, are those a table built afresh from the cluster lists; replicas share one entry."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetwin.model.meta import convert, to_builtins
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.plugins.interpodaffinity.existing import (
    ExistingTerms,
    existing_anti_affinity,
    existing_scoring_terms,
)

from ...randomcluster import random_pod, scheduler_pair

KEYS = ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "disk"]


def _with_preferred(rng: random.Random, name: str) -> Pod:
    pod = random_pod(rng, name)
    raw = to_builtins(pod)
    if rng.random() < 0.5:
        aff = raw["spec"].setdefault("affinity", {})
        kind = rng.choice(["podAffinity", "podAntiAffinity"])
        aff.setdefault(kind, {})["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 3), "podAffinityTerm": {
                "topologyKey": rng.choice(KEYS), "labelSelector": {"matchLabels": {"app": rng.choice(["x", "y"])}}}}]
    return convert(raw, Pod)


def _view(table: ExistingTerms) -> dict:
    return {k: dict(nodes) for k, (_, nodes) in table.terms.items()}


def _fresh(cs, anti: bool) -> dict:
    table = ExistingTerms(anti=anti)
    table.refresh(cs)
    return _view(table)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9))
def test_tables_kept_in_step_equal_tables_built_afresh(seed):
    rng, s, _ = scheduler_pair(seed, 10)
    cs = s.cluster
    bound: list[Pod] = []
    for k in range(30):
        r = rng.random()
        if bound and r < 0.3:
            s.remove(bound.pop(rng.randrange(len(bound))))
        elif r < 0.4:   # a node's labels change: the topology keys it carries
            i = rng.randrange(cs.n)
            raw = to_builtins(cs.infos[i].node)
            labels = raw["metadata"].setdefault("labels", {})
            if "disk" in labels:
                del labels["disk"]
            else:
                labels["disk"] = rng.choice(["ssd", "hdd"])
            s.update_node(convert(raw, Node))
        else:
            pod = _with_preferred(rng, f"b{k}")
            s.bind(pod, cs.names[rng.randrange(cs.n)])
            bound.append(pod)
        assert _view(existing_anti_affinity(cs)) == _fresh(cs, True), f"seed {seed}, step {k}"
        assert _view(existing_scoring_terms(cs)) == _fresh(cs, False), f"seed {seed}, step {k}"


def test_replicas_with_equal_terms_share_one_entry_counted_per_node():
    rng, s, _ = scheduler_pair(3, 4)
    cs = s.cluster
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}]}}
    for k, node in enumerate(["n0", "n0", "n1"]):
        s.bind(convert({"metadata": {"name": f"web-{k}", "labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "c"}], "affinity": anti}}, Pod), node)
    mine = [nodes for (kind, *_rest), (_, nodes) in existing_anti_affinity(cs).terms.items()
            if _rest[3] == b'{"matchLabels":{"app":"web"}}']
    assert mine == [{0: 2, 1: 1}]
