"""DynamicResources over all nodes at once (verdicts kept per claim specs and node until the
node's devices change) answers exactly as the plugin run node by node.

Random clusters — node-local GPU pools of different sizes and models, a pool every node can
reach (``allNodes``), classes with CEL selectors — and random pods (one or two GPUs, a model
selector, a prioritized list, several claims) are scheduled, bound and removed by two
schedulers with the same seed: one vectorised, one running every plugin per node. Decisions,
messages and the claims' allocations must agree at every step.
"""

from __future__ import annotations

import random

import pytest

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.scheduler import Scheduler

GATES = gates_for()
DRIVER = "gpu.example.com"


def _node(i: int) -> Node:
    return convert({"metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}",
                                                             "topology.kubernetes.io/zone": "abc"[i % 3]}},
                    "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "20"}}}, Node)


def _objects(rng: random.Random, n: int) -> dict:
    slices = []
    for i in range(n):
        k = rng.choice((0, 1, 2, 4))
        if not k:
            continue
        slices.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"n{i}-gpus"},
                       "spec": {"driver": DRIVER, "nodeName": f"n{i}",
                                "pool": {"name": f"n{i}", "generation": 1, "resourceSliceCount": 1},
                                "devices": [{"name": f"gpu-{j}", "attributes": {
                                    "model": {"string": rng.choice(("A100", "H100"))}}} for j in range(k)]}})
    slices.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "fabric"},
                   "spec": {"driver": DRIVER, "allNodes": True,
                            "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                            "devices": [{"name": f"fgpu-{j}", "attributes": {"model": {"string": "L4"}}}
                                        for j in range(rng.choice((0, 2)))]}})

    def template(name: str, requests: list) -> dict:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": requests}}}}

    h100 = {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "H100"'}}
    return {
        "DeviceClass": [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}],
        "ResourceSlice": slices,
        "ResourceClaimTemplate": [
            template("one", [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]),
            template("two", [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2}}]),
            template("h100", [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [h100]}}]),
            template("ranked", [{"name": "gpu", "firstAvailable": [
                {"name": "big", "deviceClassName": "gpu", "selectors": [h100], "count": 2},
                {"name": "small", "deviceClassName": "gpu"}]}]),
        ],
    }


def _pod(rng: random.Random, k: int) -> Pod:
    names = rng.sample(("one", "two", "h100", "ranked"), rng.choice((1, 1, 1, 2)))
    claims = [{"name": f"c{j}", "resourceClaimTemplateName": t} for j, t in enumerate(names)]
    return convert({"metadata": {"name": f"p{k}", "namespace": "default", "uid": f"uid-{k}"},
                    "spec": {"containers": [{"name": "c", "resources": {
                        "requests": {"cpu": "1"}, "claims": [{"name": c["name"]} for c in claims]}}],
                             "resourceClaims": claims}}, Pod)


def _step(s: Scheduler, p: Pod) -> tuple:
    r = s.schedule(p)
    if r.node is not None:
        s.bind(p, r.node)
    plugin = next(pl for pl, _ in s.plugins if pl.name == "DynamicResources")
    return r.node, r.message, r.feasible, r.evaluated, plugin.claims_of(p) if r.node else None


@pytest.mark.parametrize("seed", range(8))
def test_vector_filter_gives_the_per_node_answers_cycle_after_cycle(seed):
    rng = random.Random(seed)
    n = rng.choice((4, 9, 30))
    nodes = [_node(i) for i in range(n)]
    objs = _objects(rng, n)
    fast = Scheduler(None, nodes, GATES, objects=objs, seed=seed)
    slow = Scheduler(None, nodes, GATES, objects=objs, seed=seed, vectorised=False)
    bound: list[Pod] = []
    for k in range(40):
        if bound and rng.random() < 0.3:
            gone = bound.pop(rng.randrange(len(bound)))
            assert fast.remove(gone) == slow.remove(gone)
            continue
        p = _pod(rng, k)
        a, b = _step(fast, p), _step(slow, p)
        assert a == b, f"cycle {k}"
        if a[0] is not None:
            bound.append(p)


def test_verdicts_are_recomputed_where_devices_were_taken():
    objs = _objects(random.Random(1), 0)
    objs["ResourceSlice"] = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                              "metadata": {"name": "n0-gpus"},
                              "spec": {"driver": DRIVER, "nodeName": "n0",
                                       "pool": {"name": "n0", "generation": 1, "resourceSliceCount": 1},
                                       "devices": [{"name": "gpu-0"}]}}]
    s = Scheduler(None, [_node(0), _node(1)], GATES, objects=objs)
    one = {"resourceClaims": [{"name": "c0", "resourceClaimTemplateName": "one"}]}
    first = convert({"metadata": {"name": "a", "namespace": "default"}, "spec": {"containers": [{"name": "c"}], **one}}, Pod)
    second = convert({"metadata": {"name": "b", "namespace": "default"}, "spec": {"containers": [{"name": "c"}], **one}}, Pod)
    assert s.schedule(first).node == "n0"
    s.bind(first, "n0")
    r = s.schedule(second)
    assert r.node is None and "cannot allocate all claims" in r.message
    s.remove(first)
    assert s.schedule(second).node == "n0"
