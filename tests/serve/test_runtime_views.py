"""Specifications of ``POST /api/v1/runtime`` (``kubetwin.serve.runtime_views``): ``kubetwin
runtime`` on a served node, its running pods first, the served cluster unchanged."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from kubetwin.errors import InputError
from kubetwin.serve.app import create_app
from kubetwin.serve.cluster import load_cluster
from kubetwin.serve.limits import ServeLimits
from kubetwin.serve.runtime_views import what_if_runtime

from .cluster_fixture import pod, write_scenario


@pytest.fixture
def cluster(tmp_path):
    return load_cluster([str(write_scenario(tmp_path))])


def cpus(out: dict) -> dict[str, str]:
    return {c["pod"]: c["cpus"] for c in out["containers"]}


def test_the_nodes_running_pods_are_created_before_the_requests(cluster):
    out = what_if_runtime(cluster, {"node": "numa-0", "policy": "topology-aware", "pods": [pod("a", "2")]}, None)
    assert set(cpus(out)) == {"running", "a"} and out["rejected"] == []


def test_a_pod_the_topology_aware_policy_places_keeps_clear_of_the_running_pods_cpus(cluster):
    from kubetwin.model.cpuset import CPUSet

    got = cpus(what_if_runtime(cluster, {"node": "numa-0", "policy": "topology-aware",
                                         "pods": [pod("a", "2")]}, None))
    assert not CPUSet.parse(got["a"]) & CPUSet.parse(got["running"])


def test_delete_removes_a_running_pod_first(cluster):
    out = what_if_runtime(cluster, {"node": "numa-0", "delete": ["running"], "pods": [pod("a", "2")]}, None)
    assert set(cpus(out)) == {"a"}


def test_the_served_cluster_is_unchanged(cluster):
    what_if_runtime(cluster, {"node": "numa-0", "delete": ["running"], "pods": [pod("a", "2")]}, None)
    assert [p.key for p in cluster.bound["numa-0"]] == ["default/running"]


def test_an_unknown_pod_to_delete_names_the_field_and_the_running_pods(cluster):
    with pytest.raises(InputError) as err:
        what_if_runtime(cluster, {"node": "numa-0", "delete": ["nope"]}, None)
    assert err.value.path == "delete" and "default/running" in (err.value.fix or "")


def test_a_node_without_a_machine_is_refused(cluster):
    with pytest.raises(InputError) as err:
        what_if_runtime(cluster, {"node": "plain-0"}, None)
    assert err.value.path == "node"


def test_a_policy_file_is_read_only_inside_the_data_folder(cluster, tmp_path):
    with pytest.raises(InputError) as err:
        what_if_runtime(cluster, {"node": "numa-0", "policy": "../policy.yaml"}, tmp_path / "data")
    assert err.value.path == "policy"


def test_a_policy_file_in_the_data_folder_is_used(cluster, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "policy.yaml").write_text("apiVersion: config.nri/v1alpha1\nkind: BalloonsPolicy\n"
                                      "metadata: {name: default}\nspec: {reservedResources: {cpu: '1'}}\n")
    out = what_if_runtime(cluster, {"node": "numa-0", "policy": "policy.yaml"}, data)
    assert out["node"]["policy"]["policy"] == "balloons"


def test_a_pod_annotation_the_policy_refuses_names_the_pod(cluster):
    p = pod("a", "1")
    p["metadata"]["annotations"] = {"cpu.preserve.resource-policy.nri.io/pod": "maybe"}
    with pytest.raises(InputError) as err:
        what_if_runtime(cluster, {"node": "numa-0", "policy": "topology-aware", "pods": [p]}, None)
    assert (err.value.path or "").startswith("pods[0].metadata")


def test_runtime_over_http(cluster):
    r = TestClient(create_app(cluster, ServeLimits())).post("/api/v1/runtime", json={"node": "numa-1"})
    assert r.status_code == 200 and r.json()["containers"] == []


def test_runtime_over_http_refuses_an_unknown_field(cluster):
    r = TestClient(create_app(cluster)).post("/api/v1/runtime", json={"node": "numa-1", "polcy": "none"})
    assert r.status_code == 400 and r.json()["path"] == "polcy"
