"""Specifications of DRA over the served cluster (``kubetwin.serve.dra_views``): ``POST
/api/v1/dra`` and the ``dra`` key of a pod's drill-down (docs/serve.md)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from kubetwin.errors import InputError
from kubetwin.serve import views
from kubetwin.serve.app import create_app
from kubetwin.serve.cluster import load_cluster
from kubetwin.serve.dra_views import what_if_dra

from .cluster_fixture import pod
from .dra_fixture import write_dra_scenario


@pytest.fixture
def cluster(tmp_path):
    return load_cluster([str(write_dra_scenario(tmp_path))])


def claim(name: str, model: str | None = None) -> dict:
    exactly: dict = {"deviceClassName": "gpu"}
    if model:
        exactly["selectors"] = [{"cel": {"expression": f'device.attributes["gpu.example.com"].model == "{model}"'}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


def requests_of(detail: dict) -> dict:
    return detail["dra"]["claims"][0]["requests"][0]


def test_a_running_pods_drill_down_names_its_allocated_device(cluster):
    r = requests_of(views.pod_detail(cluster, "default", "trainer"))
    assert r["name"] == "gpu" and r["deviceClass"] == "gpu"
    assert r["allocated"] == [{"driver": "gpu.example.com", "pool": "gpu-0", "device": "gpu-1"}]


def test_a_running_pods_other_devices_are_passed_over_as_eligible(cluster):
    r = requests_of(views.pod_detail(cluster, "default", "trainer"))
    assert [(p["device"], p["eligible"]) for p in r["passedOver"]] == [("gpu-0", True), ("gpu-2", True)]


def test_a_pending_pod_is_allocated_on_the_node_the_scheduler_picks(cluster):
    detail = views.pod_detail(cluster, "default", "waiting")
    assert detail["dra"]["node"] == detail["scheduling"]["node"] == "gpu-0"
    assert detail["dra"]["outcome"] == "allocated"
    assert [d["device"] for d in requests_of(detail)["allocated"]] == ["gpu-0"]


def test_a_pending_pods_generated_claim_is_the_one_the_scheduling_cycle_names(cluster):
    detail = views.pod_detail(cluster, "default", "waiting")
    [status] = detail["scheduling"]["podStatus"]["resourceClaimStatuses"]
    assert detail["dra"]["claims"][0]["name"] == status["resourceClaimName"]


def test_passed_over_devices_carry_the_allocators_failed_check(cluster):
    reasons = {p["device"]: p["reason"] for p in requests_of(views.pod_detail(cluster, "default", "waiting"))[
        "passedOver"]}
    assert reasons["gpu-1"] == "not in use failed (allocated to another claim)"
    assert reasons["gpu-2"].startswith("request selector #0 failed")


def test_a_pod_without_claims_has_no_dra_key(tmp_path):
    from .cluster_fixture import write_scenario

    plain = load_cluster([str(write_scenario(tmp_path))])
    assert "dra" not in views.pod_detail(plain, "default", "running")


def test_what_if_claims_are_allocated_around_the_devices_in_use(cluster):
    out = what_if_dra(cluster, {"node": "gpu-0", "claims": [claim("two"), claim("three")]}, None)
    got = [c["status"]["allocation"]["devices"]["results"][0]["device"] for c in out["claims"]]
    assert out["outcome"] == "allocated" and sorted(got) == ["gpu-0", "gpu-2"]


def test_what_if_unsatisfiable_claims_carry_the_diagnosis(cluster):
    out = what_if_dra(cluster, {"node": "gpu-0", "claims": [claim("a", "a100"), claim("b", "a100")]}, None)
    assert out["outcome"] == "unsatisfiable" and out["diagnosis"]["claims"]


def test_what_if_explain_answers_as_dra_explain(cluster):
    out = what_if_dra(cluster, {"node": "gpu-0", "claims": [claim("x", "t4")], "explain": True}, None)
    assert out["claims"] == [{"claim": "x", "allocatable": True, "problems": []}]
    assert {d["device"] for d in out["requests"][0]["devices"] if d["eligible"]} == {"gpu.example.com/gpu-0/gpu-2"}


def test_what_if_a_pods_claims(cluster):
    from kubetwin.serve.extender import decode_pod

    p = pod("solo", "1")
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "a100"}]
    out = what_if_dra(cluster, {"node": "gpu-0", "pod": p}, decode_pod(p, "pod"))
    assert out["outcome"] == "allocated" and out["pod"]["name"] == "solo"
    assert {p["device"] for p in out["passedOver"]} == {"gpu.example.com/gpu-0/gpu-1", "gpu.example.com/gpu-0/gpu-2"}


def test_a_claim_with_an_unknown_field_is_refused_naming_it(cluster):
    bad = claim("x")
    bad["spec"]["devices"]["requests"][0]["exactyl"] = {}
    with pytest.raises(InputError) as err:
        what_if_dra(cluster, {"node": "gpu-0", "claims": [bad]}, None)
    assert "exactyl" in str(err.value) and err.value.file is None


def test_an_unknown_node_is_not_found(cluster):
    with pytest.raises(LookupError):
        what_if_dra(cluster, {"node": "gpu-9", "claims": [claim("x")]}, None)


def test_dra_over_http(cluster):
    r = TestClient(create_app(cluster)).post("/api/v1/dra", json={"node": "gpu-0", "claims": [claim("x")]})
    assert r.status_code == 200 and r.json()["outcome"] == "allocated"


def test_dra_over_http_needs_a_pod_or_claims(cluster):
    r = TestClient(create_app(cluster)).post("/api/v1/dra", json={"node": "gpu-0"})
    assert r.status_code == 400 and "pod or claims" in r.json()["error"]


def test_dra_over_http_refuses_an_unknown_field(cluster):
    r = TestClient(create_app(cluster)).post("/api/v1/dra", json={"node": "gpu-0", "claim": []})
    assert r.status_code == 400 and r.json()["path"] == "claim" and "claims" in r.json()["fix"]
