"""Specifications of ``kubetwin serve``'s HTTP API: routes, errors, limits, OpenAPI document."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from kubetwin.serve.app import create_app
from kubetwin.serve.cluster import load_cluster
from kubetwin.serve.limits import ServeLimits

from .cluster_fixture import NODES, pod, write_scenario


@pytest.fixture
def cluster(tmp_path):
    return load_cluster([str(write_scenario(tmp_path))])


def client(cluster, **limits) -> TestClient:
    return TestClient(create_app(cluster, ServeLimits(**limits)))


def test_the_openapi_document_validates_as_openapi_3(cluster):
    from openapi_spec_validator import validate

    doc = client(cluster).get("/openapi.json").json()
    validate(doc)
    assert doc["openapi"].startswith("3.")


def test_every_route_is_in_the_openapi_document(cluster):
    app = create_app(cluster)
    doc = app.openapi()
    routes = {(m.lower(), r.path) for r in app.routes if hasattr(r, "methods") and r.include_in_schema
              for m in r.methods if m != "HEAD"}
    documented = {(m, p) for p, ops in doc["paths"].items() for m in ops}
    assert routes and routes <= documented
    assert ("post", "/extender/filter") in documented and ("get", "/metrics") in documented


def test_a_filter_call_over_http(cluster):
    r = client(cluster).post("/extender/filter", json={"Pod": pod("p", "5"), "NodeNames": NODES})
    assert r.status_code == 200
    assert r.json()["NodeNames"] == ["plain-0"]


def test_prioritize_over_http(cluster):
    r = client(cluster).post("/extender/prioritize", json={"Pod": pod("p", "2"), "NodeNames": ["numa-1"]})
    assert r.json() == [{"Host": "numa-1", "Score": 10}]


def test_a_malformed_body_is_a_400_naming_the_field(cluster):
    r = client(cluster).post("/extender/filter", json={"Pod": pod("p", "2"), "NodeNamez": []})
    assert r.status_code == 400
    assert r.json()["path"] == "NodeNamez" and "NodeNames" in r.json()["fix"]


def test_invalid_json_is_a_400(cluster):
    r = client(cluster).post("/extender/filter", content=b'{"Pod": {},}', headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert "invalid JSON" in r.json()["error"]


def test_a_duplicate_key_is_a_400(cluster):
    r = client(cluster).post("/api/v1/schedule", content=b'{"pod": {}, "pod": {}}')
    assert r.status_code == 400 and "duplicate" in r.json()["error"]


def test_an_empty_body_is_a_400(cluster):
    assert client(cluster).post("/extender/filter").status_code == 400


def test_a_body_over_the_limit_is_a_413(cluster):
    r = client(cluster, max_body=100).post("/extender/filter", json={"Pod": pod("p", "2"), "NodeNames": NODES})
    assert r.status_code == 413


def test_a_streamed_body_over_the_limit_is_a_413(cluster):
    def chunks():
        for _ in range(10):
            yield b"x" * 50

    r = client(cluster, max_body=100).post("/extender/filter", content=chunks())
    assert r.status_code == 413


def test_without_the_token_a_request_is_a_401(cluster):
    r = client(cluster, token="s3cret").get("/api/v1/cluster")
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"


def test_with_the_wrong_token_a_request_is_a_401(cluster):
    r = client(cluster, token="s3cret").get("/api/v1/cluster", headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401


def test_with_the_token_a_request_is_answered(cluster):
    r = client(cluster, token="s3cret").get("/api/v1/cluster", headers={"Authorization": "Bearer s3cret"})
    assert r.status_code == 200


def test_healthz_needs_no_token(cluster):
    assert client(cluster, token="s3cret").get("/healthz").status_code == 200


def test_work_over_the_time_limit_is_a_503(cluster, monkeypatch):
    from kubetwin.serve import views

    monkeypatch.setattr(views, "overview", lambda c: time.sleep(1.0))
    r = client(cluster, request_timeout=0.05).get("/api/v1/cluster")
    assert r.status_code == 503 and r.headers["retry-after"] == "1"


def test_bind_on_a_read_only_service_is_a_403(cluster):
    r = client(cluster).post("/extender/bind", json={"PodName": "waiting", "PodNamespace": "default",
                                                     "PodUID": "waiting-uid", "Node": "numa-1"})
    assert r.status_code == 403


def test_bind_with_writes_allowed_binds(cluster):
    r = client(cluster, allow_writes=True).post("/extender/bind", json={
        "PodName": "waiting", "PodNamespace": "default", "PodUID": "waiting-uid", "Node": "numa-1"})
    assert r.status_code == 200 and r.json() == {"Error": ""}
    assert [p.key for p in cluster.bound["numa-1"]] == ["default/waiting"]


def test_the_cluster_overview_lists_nodes_and_pods(cluster):
    data = client(cluster).get("/api/v1/cluster").json()
    assert [n["name"] for n in data["nodes"]] == NODES
    assert (data["runningPods"], data["pendingPods"]) == (1, 1)
    assert [n["kubeletModelled"] for n in data["nodes"]] == [True, True, False]


def test_a_node_shows_its_pods_on_its_numa_nodes(cluster):
    data = client(cluster).get("/api/v1/nodes/numa-0").json()
    assert data["pods"] == ["default/running"]
    exclusive = {k: v for row in data["kubelet"]["numaNodes"] for k, v in row["exclusive"].items()}
    assert exclusive == {"default/running/c": "4-7"}


def test_an_unknown_node_is_a_404_with_the_nearest_name(cluster):
    r = client(cluster).get("/api/v1/nodes/numa-00")
    assert r.status_code == 404 and "did you mean 'numa-0'" in r.json()["error"]


def test_a_running_pod_shows_its_admission_and_cgroups(cluster):
    data = client(cluster).get("/api/v1/pods/default/running").json()
    assert data["node"] == "numa-0" and data["admission"]["admitted"] is True
    assert data["cgroups"]["qosClass"] == "Guaranteed"


def test_a_pending_pod_shows_each_plugin_per_node_and_each_kubelet(cluster):
    data = client(cluster).get("/api/v1/pods/default/waiting").json()
    assert data["phase"] == "Pending"
    assert set(data["scheduling"]["nodes"]) == set(NODES)
    assert data["kubelet"]["plain-0"] == {"modelled": False}
    assert data["kubelet"]["numa-1"]["admitted"] is True


def test_pending_pods_are_listed_with_the_schedulers_message(cluster):
    data = client(cluster).get("/api/v1/pending").json()
    assert [p["pod"] for p in data["pods"]] == ["default/waiting"] and data["truncated"] is False


def test_what_if_schedule_answers_the_cycle_and_the_kubelets(cluster):
    data = client(cluster).post("/api/v1/schedule", json={"pod": pod("p", "5")}).json()
    assert data["scheduling"]["pod"] == "default/p"
    assert data["kubelet"]["numa-0"]["reason"] == "TopologyAffinityError"


def test_what_if_admit_on_a_node(cluster):
    data = client(cluster).post("/api/v1/admit", json={"node": "numa-1", "pods": [pod("a", "2"), pod("b", "4")]}).json()
    assert [p["admitted"] for p in data["pods"]] == [True, True]


def test_what_if_admit_on_a_node_without_a_kubelet_is_a_400(cluster):
    r = client(cluster).post("/api/v1/admit", json={"node": "plain-0", "pods": []})
    assert r.status_code == 400 and r.json()["path"] == "node"


def test_what_if_explain_gives_cgroup_values(cluster):
    data = client(cluster).post("/api/v1/explain", json={"node": "numa-1", "pod": pod("a", "2")}).json()
    assert data["qosClass"] == "Guaranteed"
    assert data["admission"]["containers"][0]["resources"]["cpusetCpus"]


def test_a_config_file_outside_the_data_dir_is_refused(cluster, tmp_path):
    (tmp_path / "data").mkdir()
    r = client(cluster, data_dir=tmp_path / "data").post("/api/v1/schedule", json={"pod": pod("p", "1"),
                                                                                 "config": "../scenario.yaml"})
    assert r.status_code == 400 and "outside the data folder" in r.json()["error"]


def test_a_config_file_without_a_data_dir_is_refused(cluster):
    r = client(cluster).post("/api/v1/schedule", json={"pod": pod("p", "1"), "config": "/etc/passwd"})
    assert r.status_code == 400 and "--data-dir" in r.json()["error"]


def test_metrics_has_the_service_and_each_kubelets_metrics(cluster):
    c = client(cluster)
    c.get("/api/v1/cluster")
    text = c.get("/metrics").text
    assert 'kubetwin_serve_requests_total{code="200",method="GET",route="/api/v1/cluster"} 1.0' in text
    assert 'kubelet_cpu_manager_exclusive_cpu_allocation_count{node="numa-0"} 4' in text


def test_a_simulation_job_runs_and_answers_its_results(cluster):
    with client(cluster) as c:
        r = c.post("/api/v1/simulations", json={})
        assert r.status_code == 202
        job = r.json()["id"]
        for _ in range(600):
            status = c.get(f"/api/v1/simulations/{job}").json()
            if status["state"] not in ("queued", "running"):
                break
            time.sleep(0.05)
        assert status["state"] == "succeeded"
        assert len(status["results"]) == 1


def test_a_bad_variant_is_a_400_at_submission(cluster):
    r = client(cluster).post("/api/v1/simulations", json={"variants": ["x:kubelet.cpuManagerPolcy=none"]})
    assert r.status_code == 400 and r.json()["path"].startswith("variants[0]")


def test_an_unknown_job_is_a_404(cluster):
    assert client(cluster).get("/api/v1/simulations/nope").status_code == 404


def test_static_assets_are_served_under_ui(cluster):
    r = client(cluster).get("/ui/")
    assert r.status_code == 200 and "kubetwin serve" in r.text


def test_the_root_redirects_to_the_web_ui(cluster):
    r = client(cluster).get("/", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == "ui/"


def test_the_web_uis_files_need_no_token(cluster):
    c = client(cluster, token="s3cret")
    assert c.get("/ui/").status_code == 200 and c.get("/ui/app.js").status_code == 200


def test_with_a_token_the_api_the_ui_reads_still_needs_it(cluster):
    assert client(cluster, token="s3cret").get("/ui/../api/v1/cluster").status_code == 401


def test_a_path_that_only_starts_like_the_ui_needs_the_token(cluster):
    assert client(cluster, token="s3cret").get("/uix").status_code == 401
