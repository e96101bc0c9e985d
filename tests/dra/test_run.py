"""Specifications of ``kubetwin.dra.run``: ``dra allocate`` / ``dra explain`` as library calls,
the devices passed over with the allocator's reasons, and the drill-down shape per request."""

from __future__ import annotations

import pytest

from kubetwin.dra.api import Node
from kubetwin.dra.objects import collect
from kubetwin.dra.run import (
    allocate_claims,
    allocate_pod,
    allocation_of_running_pod,
    allocator_features,
    devices_by_request,
    explain_claims,
    passed_over,
)
from kubetwin.errors import InputError
from kubetwin.model.loader import Document
from kubetwin.model.pod import pod_from_dict

from .conftest import CLASS, claim, slice_

NODE = Node("node-1", {"zone": "a"})


def objects(*objs):
    return collect([Document(o, f"doc-{i}", i) for i, o in enumerate(objs)])


def features():
    return allocator_features("1.34")


def test_an_unknown_feature_gate_is_refused_naming_the_flag():
    with pytest.raises(InputError) as err:
        allocator_features("1.34", "DRANoSuchGate=true")
    assert err.value.path == "--feature-gates"


def test_allocated_claims_come_back_with_their_allocation():
    a = allocate_claims(features(), objects(CLASS, slice_()), NODE, objects(claim()).claims)
    assert a.data["outcome"] == "allocated" and a.rejections == []
    results = a.data["claims"][0]["status"]["allocation"]["devices"]["results"]
    assert [r["device"] for r in results] == ["gpu-0"]


def test_the_device_not_taken_is_passed_over_as_eligible():
    a = allocate_claims(features(), objects(CLASS, slice_()), NODE, objects(claim()).claims)
    [p] = passed_over(a)
    assert (p.device, p.eligible) == ("gpu.example.com/pool-1/gpu-1", True)
    assert "search chose other devices" in p.reason


def test_a_device_failing_a_selector_is_passed_over_with_that_check():
    wanted = objects(claim(selectors=['device.attributes["gpu.example.com"].model == "x"'])).claims
    a = allocate_claims(features(), objects(CLASS, slice_(devices=[
        {"name": "gpu-0", "attributes": {"model": {"string": "x"}}},
        {"name": "gpu-1", "attributes": {"model": {"string": "y"}}}])), NODE, wanted)
    [p] = passed_over(a)
    assert p.device.endswith("/gpu-1") and not p.eligible and "selector" in p.reason


def test_unsatisfiable_claims_are_rejections_with_a_diagnosis():
    a = allocate_claims(features(), objects(CLASS, slice_()), NODE, objects(claim(count=3)).claims)
    assert a.data["outcome"] == "unsatisfiable" and "diagnosis" in a.data
    assert a.rejections and a.rejections[0].startswith("claim claim-0:")


def test_explain_gives_one_verdict_per_claim_and_no_separate_diagnosis():
    e = explain_claims(features(), objects(CLASS, slice_()), NODE, objects(claim()).claims)
    assert e.data["claims"] == [{"claim": "claim-0", "allocatable": True, "problems": []}]
    assert "diagnosis" not in e.data and len(e.data["requests"][0]["devices"]) == 2


def test_the_drill_down_shape_lists_allocated_and_passed_over_per_request():
    a = allocate_claims(features(), objects(CLASS, slice_()), NODE, objects(claim()).claims)
    [c] = devices_by_request(a)
    [r] = c["requests"]
    assert c["name"] == "claim-0" and r["name"] == "req-0" and r["deviceClass"] == "gpu"
    assert r["allocated"] == [{"driver": "gpu.example.com", "pool": "pool-1", "device": "gpu-0"}]
    assert [(p["device"], p["eligible"]) for p in r["passedOver"]] == [("gpu-1", True)]


def _pod(**spec):
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default",
                                                                        "uid": "p-uid"},
                          "spec": {"containers": [{"name": "c", "image": "x"}], **spec}})


def test_a_pods_claim_named_by_resource_claim_name_is_allocated_for_it():
    c = claim()
    c["metadata"]["namespace"] = "default"
    pod = _pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "claim-0"}])
    a = allocate_pod(features(), objects(CLASS, slice_(), c), NODE, pod)
    assert a.allocated and a.pod_claims == [("gpu", "default/claim-0", False)]


def test_a_pod_whose_claim_does_not_exist_is_a_rejection_not_an_error():
    pod = _pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "nope"}])
    a = allocate_pod(features(), objects(CLASS, slice_()), NODE, pod)
    assert a.allocator is None and a.data["outcome"] == "unsatisfiable" and a.rejections


def test_a_running_pods_own_devices_are_not_passed_over_as_in_use():
    c = claim()
    c["metadata"]["namespace"] = "default"
    c["status"] = {"allocation": {"devices": {"results": [
        {"request": "req-0", "driver": "gpu.example.com", "pool": "pool-1", "device": "gpu-1"}]}},
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "p-uid"}]}
    pod = _pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "claim-0"}])
    a = allocation_of_running_pod(features(), objects(CLASS, slice_(), c), NODE, pod)
    [req] = devices_by_request(a)[0]["requests"]
    assert [d["device"] for d in req["allocated"]] == ["gpu-1"]
    assert [(p["device"], p["eligible"]) for p in req["passedOver"]] == [("gpu-0", True)]
