"""``kubetwin snapshot`` of a live cluster, end to end: the command against a local API server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.live.fakeapi import cluster, kubeconfig


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "kubetwin", "snapshot", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def api():
    api = cluster()
    server, url = api.serve()
    api.url = url
    yield api
    server.shutdown()


def test_a_live_cluster_is_written_as_a_scenario_folder(api, tmp_path):
    out = run("--kubeconfig", kubeconfig(tmp_path, api.url), "-o", str(tmp_path / "snap"))
    assert out.returncode == 0, out.stderr
    assert "3 nodes, 7 pods" in out.stdout
    nodes = json.loads((tmp_path / "snap" / "nodes.json").read_text())["items"]
    assert [n["metadata"]["name"] for n in nodes] == ["worker-0", "worker-1", "worker-2"]
    assert json.loads((tmp_path / "snap" / "nodes" / "worker-0" / "kubelet.json").read_text())["cpuManagerPolicy"] == "static"


def test_progress_is_on_stderr(api, tmp_path):
    out = run("--kubeconfig", kubeconfig(tmp_path, api.url), "-o", str(tmp_path / "snap"))
    assert "snapshot: pods: 7 (1 page)" in out.stderr


def test_kubeconfig_env_is_used_with_no_dump(api, tmp_path):
    out = run("-o", str(tmp_path / "snap"), env={"KUBECONFIG": kubeconfig(tmp_path, api.url)})
    assert out.returncode == 0, out.stderr


def test_the_written_folder_loads_as_a_scenario(api, tmp_path):
    from kubetwin.sim import load_scenario

    run("--kubeconfig", kubeconfig(tmp_path, api.url), "-o", str(tmp_path / "snap"))
    scenario = load_scenario(tmp_path / "snap" / "scenario.yaml")
    assert len(scenario.nodes) == 3


def test_a_forbidden_list_exits_1_naming_the_permission_and_writes_nothing(api, tmp_path):
    api.forbid.add("/api/v1/pods")
    out = run("--kubeconfig", kubeconfig(tmp_path, api.url), "-o", str(tmp_path / "snap"))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert 'cannot list resource "pods" in API group ""' in out.stderr
    assert not (tmp_path / "snap").exists()


def test_an_unreachable_server_exits_1(tmp_path):
    out = run("--kubeconfig", kubeconfig(tmp_path, "http://127.0.0.1:9"), "-o", str(tmp_path / "snap"))
    assert out.returncode == 1 and "cannot reach the API server" in out.stderr and "Traceback" not in out.stderr


def test_dumps_and_a_live_cluster_together_are_refused(tmp_path):
    (tmp_path / "d.json").write_text('{"apiVersion": "v1", "kind": "List", "items": []}')
    out = run("-f", str(tmp_path / "d.json"), "--kubeconfig", "k", "-o", str(tmp_path / "snap"))
    assert out.returncode == 1 and "cannot be read together" in out.stderr


def test_per_node_folders_hold_each_node_and_the_pods_bound_to_it(api, tmp_path):
    out = run("--kubeconfig", kubeconfig(tmp_path, api.url), "--per-node", "-o", str(tmp_path / "snap"))
    assert out.returncode == 0, out.stderr
    node = tmp_path / "snap" / "nodes" / "worker-1"
    assert json.loads((node / "node.json").read_text())["metadata"]["name"] == "worker-1"
    pods = json.loads((node / "pods.json").read_text())["items"]
    assert pods and {p["spec"]["nodeName"] for p in pods} == {"worker-1"}


def test_admit_reads_a_nodes_folder_as_is(api, tmp_path):
    run("--kubeconfig", kubeconfig(tmp_path, api.url), "--per-node", "-o", str(tmp_path / "snap"))
    node = tmp_path / "snap" / "nodes" / "worker-0"
    out = subprocess.run([sys.executable, "-m", "kubetwin", "admit", "--machine", "1s1n8c1t:mem=32Gi", "--config",
                          str(node / "kubelet.json"), str(node / "pods.json"), "-o", "json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    pods = json.loads(out.stdout)["pods"]
    assert [p["name"] for p in pods] == ["web-0", "web-3"] and all(p["admitted"] for p in pods)
