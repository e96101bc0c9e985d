"""The one-request shortcut gives the plain search's outcome: the same devices, results, config,
node selector, attempts, reason and errors, on random slices, selectors, taints, counters,
capacity, devices in use, constraints and claim shapes (where it declines, the plain search runs)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from kubetwin.dra import firstfree
from kubetwin.dra.allocator import AllocatedDevice, AllocatedState, AllocationError, Allocator
from kubetwin.dra.api import Node, parse_device_class, parse_resource_claim, parse_resource_slice
from kubetwin.dra.features import AllocatorFeatures
from kubetwin.errors import InputError

from .conftest import claim, slice_

DRIVER = "gpu.example.com"
NODE = Node("node-1", {"zone": "a"})
NODE_2 = Node("node-2", {"zone": "b"})
SELECTORS = ('device.attributes["gpu.example.com"].model == "a"', 'device.attributes["gpu.example.com"].mem >= 1',
             'device.driver == "gpu.example.com"', 'device.attributes["gpu.example.com"].missing == 1')


def _device(rng: random.Random, name: str, counters: bool) -> dict:
    d: dict = {"name": name, "attributes": {"model": {"string": rng.choice("ab")}, "mem": {"int": rng.randrange(3)}}}
    if rng.random() < 0.2:
        d["taints"] = [{"key": "k", "value": rng.choice("xy"), "effect": rng.choice(["NoSchedule", "None"])}]
    if rng.random() < 0.1:
        d["bindsToNode"] = True
        d["bindingConditions"] = ["ready"]
    if rng.random() < 0.15:
        d["capacity"] = {"memory": {"value": "4Gi"}}
        if rng.random() < 0.5:
            d["allowMultipleAllocations"] = True
    if counters and rng.random() < 0.5:
        d["consumesCounters"] = [{"counterSet": "set", "counters": {"mem": {"value": "1"}}}]
    return d


def _slices(rng: random.Random) -> list[dict]:
    out = []
    for s in range(rng.randrange(1, 4)):
        counters = rng.random() < 0.2
        devices = [_device(rng, f"d{s}-{i}", counters) for i in range(rng.randrange(0, 7))]
        spec: dict = {"pool": {"name": f"pool-{s % 2}", "generation": 1, "resourceSliceCount": 1}}
        where = rng.random()
        if where < 0.15:
            spec["nodeName"] = "node-2"
        elif where < 0.25:
            spec["nodeName"] = None
            spec["allNodes"] = True
        elif where < 0.4:
            spec["nodeName"] = None
            spec["perDeviceNodeSelection"] = True
            for d in devices:
                if rng.random() < 0.3:
                    d["allNodes"] = True
                else:
                    d["nodeName"] = rng.choice(["node-1", "node-2"])
        if counters:
            spec["sharedCounters"] = [{"name": "set", "counters": {"mem": {"value": str(rng.randrange(1, 4))}}}]
        out.append(slice_(f"slice-{s}", devices, **spec))
    # one slice per pool, so that every pool is complete
    seen, kept = set(), []
    for s in out:
        if s["spec"]["pool"]["name"] not in seen:
            seen.add(s["spec"]["pool"]["name"])
            kept.append(s)
    return kept


def _class(rng: random.Random) -> dict:
    spec: dict = {"selectors": [{"cel": {"expression": e}} for e in rng.sample(SELECTORS[:3], rng.randrange(0, 3))]}
    if rng.random() < 0.3:
        spec["config"] = [{"opaque": {"driver": DRIVER, "parameters": {"from": "class"}}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": spec}


def _claim(rng: random.Random, name: str) -> dict:
    extra: dict = {}
    if rng.random() < 0.2:
        extra["tolerations"] = [{"key": "k", "operator": "Exists"}]
    if rng.random() < 0.05:
        extra["adminAccess"] = True
    if rng.random() < 0.05:
        extra["allocationMode"] = "All"
        extra.pop("count", None)
    selectors = rng.sample(SELECTORS, rng.choice([0, 0, 1, 2]))
    c = claim(name, count=rng.choice([1, 1, 1, 2, 3]), selectors=selectors, **extra)
    if extra.get("allocationMode") == "All":
        del c["spec"]["devices"]["requests"][0]["exactly"]["count"]
    devices = c["spec"]["devices"]
    if rng.random() < 0.1:
        devices["requests"].append({"name": "req-1", "exactly": {"deviceClassName": "gpu"}})
    if rng.random() < 0.1:
        devices["constraints"] = [{"matchAttribute": f"{DRIVER}/model"}]
    if rng.random() < 0.3:
        devices["config"] = [{"requests": rng.choice([[], ["req-0"], ["other"]]),
                              "opaque": {"driver": DRIVER, "parameters": {"from": "claim"}}}]
        if not devices["config"][0]["requests"]:
            del devices["config"][0]["requests"]
    return c


def _state(rng: random.Random, slices: list[dict], features: AllocatorFeatures) -> AllocatedState:
    state = AllocatedState()
    for s in slices:
        for d in s["spec"]["devices"]:
            r = rng.random()
            if r < 0.35:
                state.add(AllocatedDevice("r", DRIVER, s["spec"]["pool"]["name"], d["name"]), features)
            elif r < 0.4:
                state.add(AllocatedDevice("r", DRIVER, s["spec"]["pool"]["name"], d["name"], share_id="s-1"), features)
    return state


def _outcome(alloc: Allocator, claims: list, node: Node = NODE) -> object:
    try:
        out = alloc.allocate(node, claims)
    except AllocationError as exc:
        return ("error", str(exc), exc.node_local)
    # a share ID is random (uuid4) on both paths: compare whether there is one
    results = [replace(res, results=tuple(replace(r, share_id=r.share_id and "share") for r in res.results))
               for res in out.results]
    return (out.allocated, results, out.reason, out.attempts, alloc.last_attempts)


def _case(seed: int) -> tuple[object, object, bool]:
    rng = random.Random(seed)
    features = AllocatorFeatures(*(rng.random() < 0.6 for _ in range(7)))
    while True:
        try:
            raw = _slices(rng)
            slices = [parse_resource_slice(s) for s in raw]
            classes = {"gpu": parse_device_class(_class(rng))}
            claims = [parse_resource_claim(_claim(rng, f"c{i}")) for i in range(rng.choice([1, 1, 1, 1, 2]))]
            break
        except InputError:
            continue
    state = _state(rng, raw, features)
    answers = []
    took = False
    for fast in (True, False):
        firstfree.FAST = fast
        try:
            alloc = Allocator(features, classes, slices,
                              allocated_state=AllocatedState(set(state.dedicated), set(state.shared),
                                                             dict(state.aggregated_capacity)))
            answers.append(_outcome(alloc, claims))
            answers.append(_outcome(alloc, claims))   # the kept plan and outcome give the same again
            answers.append(_outcome(alloc, claims, NODE_2))   # another node: device verdicts kept
            if fast:
                took = any(p[4] is not None for p in alloc._plans.values())
        finally:
            firstfree.FAST = True
    return answers[:3], answers[3:], took


@pytest.mark.parametrize("block", range(8))
def test_shortcut_gives_the_plain_searchs_outcome_on_random_inputs(block):
    taken = 0
    for seed in range(block * 150, (block + 1) * 150):
        fast, plain, took = _case(seed)
        assert fast == plain, seed
        taken += took
    assert taken > 30   # the shortcut ran in many of the cases, not only the declined ones


def test_a_device_in_use_moves_the_answer_to_the_next_free_device():
    alloc = Allocator(AllocatorFeatures(), {"gpu": parse_device_class(_class(random.Random(0)) | {"spec": {}})},
                      [parse_resource_slice(slice_(devices=[{"name": f"gpu-{i}"} for i in range(4)]))])
    c = [parse_resource_claim(claim(count=2))]
    first = alloc.allocate(NODE, c)
    alloc.state.add(AllocatedDevice("r", DRIVER, "pool-1", "gpu-1"), alloc.features)
    second = alloc.allocate(NODE, c)
    assert [r.device for r in first.results[0].results] == ["gpu-0", "gpu-1"]
    assert [r.device for r in second.results[0].results] == ["gpu-0", "gpu-2"]
    assert second.attempts == 5


def test_too_few_free_devices_tries_every_subset_as_the_search_does():
    alloc = Allocator(AllocatorFeatures(), {"gpu": parse_device_class(_class(random.Random(0)) | {"spec": {}})},
                      [parse_resource_slice(slice_(devices=[{"name": f"gpu-{i}"} for i in range(3)]))])
    out = alloc.allocate(NODE, [parse_resource_claim(claim(count=4))])
    assert (out.allocated, out.attempts, out.reason) == (False, 8, "cannot allocate all claims")


def test_two_requests_are_left_to_the_plain_search():
    alloc = Allocator(AllocatorFeatures(), {"gpu": parse_device_class(_class(random.Random(0)) | {"spec": {}})},
                      [parse_resource_slice(slice_())])
    c = claim()
    c["spec"]["devices"]["requests"].append({"name": "req-1", "exactly": {"deviceClassName": "gpu"}})
    out = alloc.allocate(NODE, [parse_resource_claim(c)])
    assert out.allocated and all(p[4] is None for p in alloc._plans.values())
