"""``simulate --write-end-state``: the cluster at the end as manifests that ``snapshot`` and
``simulate`` read back — a second run from them is where the first ended."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kubetwin.sim import load_scenario, simulate
from kubetwin.sim.end_state import end_state  # noqa: F401 - the module under test
from kubetwin.sim.snapshot import load, write

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "snapshot"


def run_end_state(scenario):
    sc = load_scenario(scenario)
    sc.want_end_state = True
    return simulate(sc)


def snapshot_of_example(tmp_path):
    return write(load([EXAMPLE]), tmp_path / "snap")


def items(folder, name):
    return json.loads((folder / name).read_text())["items"]


def placements(folder):
    return sorted((p["metadata"]["name"], p["spec"].get("nodeName")) for p in items(folder, "pods.json"))


def test_running_pods_are_written_bound_to_their_node(tmp_path):
    result = run_end_state(snapshot_of_example(tmp_path) / "scenario.yaml")
    pods = result.end_state.pods
    assert pods and all(p["spec"]["nodeName"] and p["status"]["phase"] == "Running" for p in pods)
    assert {(p["metadata"]["name"], p["spec"]["nodeName"]) for p in pods} == {
        (r.name, r.node) for r in result.pods if r.phase == "Running"}


def test_every_node_of_the_cluster_is_written(tmp_path):
    result = run_end_state(snapshot_of_example(tmp_path) / "scenario.yaml")
    assert sorted(n["metadata"]["name"] for n in result.end_state.nodes) == ["gpu-0", "node-a", "node-b"]


def test_a_deployments_replica_sets_are_written_owned_by_it(tmp_path):
    result = run_end_state(snapshot_of_example(tmp_path) / "scenario.yaml")
    sets = [w for w in result.end_state.workloads if w["kind"] == "ReplicaSet"]
    assert sets and all(s["metadata"]["ownerReferences"][0]["kind"] == "Deployment" for s in sets)
    assert sum(s["spec"]["replicas"] for s in sets) == 3


def test_reading_the_end_state_back_runs_from_where_the_first_run_ended(tmp_path):
    first = tmp_path / "end"
    out = subprocess.run([sys.executable, "-m", "kubetwin", "simulate", str(snapshot_of_example(tmp_path) / "scenario.yaml"),
                          "--no-progress", "--write-end-state", str(first)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    second = tmp_path / "end2"
    out = subprocess.run([sys.executable, "-m", "kubetwin", "simulate", str(first / "scenario.yaml"), "--no-progress",
                          "--write-end-state", str(second)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert placements(second) == placements(first)
    assert items(second, "pending.json") == []


def test_the_end_state_is_a_folder_snapshot_reads(tmp_path):
    end = tmp_path / "end"
    subprocess.run([sys.executable, "-m", "kubetwin", "simulate", str(snapshot_of_example(tmp_path) / "scenario.yaml"),
                    "--no-progress", "--write-end-state", str(end)], capture_output=True, text=True, check=True)
    snap = load([end / f for f in ("nodes.json", "pods.json", "pending.json", "workloads.json", "objects.json")])
    assert len(snap.nodes) == 3 and len(snap.pods) == len(items(end, "pods.json"))


def test_several_runs_write_one_folder_each_and_an_index(tmp_path):
    end = tmp_path / "end"
    out = subprocess.run([sys.executable, "-m", "kubetwin", "simulate", str(snapshot_of_example(tmp_path) / "scenario.yaml"),
                          "--no-progress", "--variant", "packed:scheduler.scoringStrategy=MostAllocated",
                          "--write-end-state", str(end)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    listed = (end / "END-STATES.txt").read_text().split()
    assert len(listed) == 2 and all((end / p).is_file() for p in listed)


def test_a_folder_that_is_not_a_snapshot_is_refused_before_the_run(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    out = subprocess.run([sys.executable, "-m", "kubetwin", "simulate", str(snapshot_of_example(tmp_path) / "scenario.yaml"),
                          "--no-progress", "--write-end-state", str(tmp_path / "mine")], capture_output=True, text=True)
    assert out.returncode == 1 and "not a kubetwin snapshot" in out.stderr
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"
