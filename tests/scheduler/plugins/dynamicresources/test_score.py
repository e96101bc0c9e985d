"""DynamicResources Score: nodes where a better-ranked ``firstAvailable`` subrequest can be
allocated score higher (``8 - index`` per subrequest, then DefaultNormalizeScore)."""

from __future__ import annotations

import pytest

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.framework.interface import CycleState
from kubetwin.scheduler.plugins.registry import DEFAULT_MULTI_POINT
from kubetwin.scheduler.scheduler import Scheduler

GATES = gates_for()


def node(name: str) -> Node:
    return convert({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                    "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}}, Node)


def slice_of(node_name: str, model: str, n: int) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-{model}"},
            "spec": {"driver": "gpu.example.com", "nodeName": node_name,
                     "pool": {"name": f"{node_name}-{model}", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"{model}-{i}", "attributes": {"model": {"string": model}}}
                                 for i in range(n)]}}


def device_class(model: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": model},
            "spec": {"selectors": [{"cel": {"expression": f'device.attributes["gpu.example.com"].model == "{model}"'}}]}}


def objects(inventory: dict[str, dict[str, int]], ranked=("big", "medium", "small")) -> dict:
    return {
        "DeviceClass": [device_class(m) for m in ("big", "medium", "small")],
        "ResourceSlice": [slice_of(n, m, k) for n, models in inventory.items() for m, k in models.items()],
        "ResourceClaimTemplate": [{
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
                {"name": m, "deviceClassName": m} for m in ranked]}]}}}}],
    }


def pod(name: str, claims: tuple[str, ...] = ("gpu",)) -> Pod:
    return convert({"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                    "spec": {"containers": [{"name": "c"}],
                             "resourceClaims": [{"name": c, "resourceClaimTemplateName": "gpu"} for c in claims]}},
                   Pod)


def plugin_scores(s: Scheduler, p: Pod) -> dict[str, int]:
    """PreFilter, Filter on every node, Score and NormalizeScore of the plugin alone."""
    plugin = next(pl for pl, _ in s.plugins if pl.name == "DynamicResources")
    state = CycleState()
    plugin.pre_filter(state, p, s.cluster.infos)
    feasible = [ni for ni in s.cluster.infos if plugin.filter(state, p, ni).is_success]
    scores = {ni.name: plugin.score(state, p, ni)[0] for ni in feasible}
    plugin.normalize_score(state, p, scores)
    return scores


INVENTORY = {"n-small": {"small": 1}, "n-medium": {"medium": 1}, "n-big": {"big": 1}}


def test_default_profile_scores_dynamic_resources_with_weight_one():
    assert dict(DEFAULT_MULTI_POINT)["DynamicResources"] == 1


def test_node_with_the_first_ranked_subrequest_is_chosen():
    s = Scheduler(None, [node(n) for n in INVENTORY], GATES, objects=objects(INVENTORY))
    assert s.schedule(pod("a")).node == "n-big"


def test_scores_are_eight_minus_the_subrequest_index_normalised():
    s = Scheduler(None, [node(n) for n in INVENTORY], GATES, objects=objects(INVENTORY))
    # raw 6, 7, 8 -> 100 * raw // 8
    assert plugin_scores(s, pod("a")) == {"n-small": 75, "n-medium": 87, "n-big": 100}


def test_scores_add_up_over_the_pods_claims():
    inv = {"n1": {"big": 1, "small": 1}, "n2": {"big": 2}}
    s = Scheduler(None, [node(n) for n in inv], GATES, objects=objects(inv))
    # n1: big (8) + small (6) = 14, n2: big + big = 16
    assert plugin_scores(s, pod("a", ("one", "two"))) == {"n1": 87, "n2": 100}


def test_exact_requests_do_not_score():
    objs = objects(INVENTORY)
    objs["ResourceClaimTemplate"][0]["spec"]["spec"]["devices"]["requests"] = [
        {"name": "gpu", "exactly": {"deviceClassName": "small"}}]
    s = Scheduler(None, [node(n) for n in INVENTORY], GATES, objects=objs)
    assert plugin_scores(s, pod("a")) == {"n-small": 0}


def test_prioritized_list_gate_off_scores_nothing():
    gates = gates_for(overrides={"DRAPrioritizedList": False})
    s = Scheduler(None, [node(n) for n in INVENTORY], gates, objects=objects(INVENTORY))
    assert set(plugin_scores(s, pod("a")).values()) <= {0}


def test_claim_allocated_earlier_counts_with_its_own_allocation():
    inv = {"n1": {"big": 1, "small": 1}, "n2": {"medium": 1, "small": 1}}
    objs = objects(inv)
    objs["ResourceClaim"] = [{
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "shared", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
            {"name": "big", "deviceClassName": "big"}, {"name": "small", "deviceClassName": "small"}]}]}},
        "status": {"allocation": {"devices": {"results": [
            {"request": "gpu/small", "driver": "gpu.example.com", "pool": "n2-small", "device": "small-0"}]}}}}]
    p = convert({"metadata": {"name": "a", "namespace": "default", "uid": "uid-a"},
                 "spec": {"containers": [{"name": "c"}],
                          "resourceClaims": [{"name": "shared", "resourceClaimName": "shared"},
                                             {"name": "own", "resourceClaimTemplateName": "gpu"}]}}, Pod)
    s = Scheduler(None, [node(n) for n in inv], GATES, objects=objs)
    # shared: small = 7 on every node; own: n1 big (8), n2 medium (7)
    assert plugin_scores(s, p) == {"n1": 100, "n2": 93}


def test_pods_without_claims_score_zero_everywhere():
    s = Scheduler(None, [node(n) for n in INVENTORY], GATES, objects=objects(INVENTORY))
    p = convert({"metadata": {"name": "plain"}, "spec": {"containers": [{"name": "c"}]}}, Pod)
    assert plugin_scores(s, p) == {"n-small": 0, "n-medium": 0, "n-big": 0}


@pytest.mark.parametrize("seed", range(4))
def test_vectorised_scheduler_places_pods_as_the_node_by_node_one(seed):
    inv = {"n1": {"big": 1, "small": 2}, "n2": {"medium": 2}, "n3": {"small": 3}, "n4": {"big": 1, "medium": 1}}
    fast = Scheduler(None, [node(n) for n in inv], GATES, seed, objects=objects(inv))
    slow = Scheduler(None, [node(n) for n in inv], GATES, seed, objects=objects(inv), vectorised=False)
    for k in range(8):
        p = pod(f"p{k}")
        a, b = fast.schedule(p), slow.schedule(p)
        assert a.node == b.node and a.message == b.message
        if a.node:
            fast.bind(p, a.node)
            slow.bind(p, b.node)
