"""``kubetwin plan``: the table, the JSON/YAML contract of docs/plan.md, exit statuses, bad input by path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples" / "plan"
NUMA = f"numa=1s2n4c2t:mem=64Gi,kubelet={EX}/kubelet-numa.yaml"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubetwin", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_the_table_gives_the_mix_its_status_and_the_scheduler_only_count() -> None:
    r = run("plan", str(EX / "web.yaml"), "--node-type", NUMA)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("plan: 4 × numa (4 nodes) runs all 8 pods — proven minimal")
    assert "sizes it at 3; the kubelets then reject pods there" in r.stdout
    assert "without numa-3: NUMA alignment" in r.stdout


def test_json_follows_the_documented_contract() -> None:
    r = run("plan", str(EX / "web.yaml"), "--node-type", NUMA, "-o", "json")
    doc = json.loads(r.stdout)
    assert (doc["kind"], doc["status"], doc["objective"], doc["mix"], doc["nodes"]) == \
        ("Plan", "ProvenMinimal", "nodes", {"numa": 4}, 4)
    assert doc["lowerBound"]["nodes"] == 4
    assert doc["nodeTypes"][0]["schedulerOnly"] == 3
    assert [n["numaNode"] for n in doc["headroom"][0]["numa"]] == [0, 1]
    assert doc["why"][0]["bindingConstraints"] == ["NUMA alignment"]


def test_yaml_is_the_same_document() -> None:
    a = json.loads(run("plan", str(EX / "web.yaml"), "--node-type", NUMA, "-o", "json").stdout)
    b = yaml.safe_load(run("plan", str(EX / "web.yaml"), "--node-type", NUMA, "-o", "yaml").stdout)
    assert a == b


def test_prices_make_the_objective_the_price() -> None:
    r = run("plan", str(EX / "web.yaml"), "--node-type", NUMA + ",price=1.5",
            "--node-type", "big=2s2n8c2t:mem=128Gi,price=5", "-o", "json", "--no-scheduler-only")
    doc = json.loads(r.stdout)
    assert (doc["objective"], doc["mix"], doc["price"]) == ("price", {"big": 1}, 5.0)


def test_no_fitting_mix_is_an_answer_and_exit_3_with_fail_on_reject(tmp_path: Path) -> None:
    args = ("plan", str(EX / "web.yaml"), "--node-type", "tiny=1s1n2c1t:mem=64Gi")
    r = run(*args)
    assert r.returncode == 0 and "no mix of the node types runs the workload" in r.stdout
    assert run("--fail-on-reject", *args).returncode == 3


def test_an_unknown_node_type_key_is_an_error_with_its_path() -> None:
    r = run("plan", str(EX / "web.yaml"), "--node-type", "a=1s1n4c2t,prize=3")
    assert r.returncode == 1
    assert r.stderr.startswith('error: --node-type[0].prize: unknown node type key "prize"')
    assert "Traceback" not in r.stderr


def test_an_unknown_machine_is_an_error_with_its_path() -> None:
    r = run("plan", str(EX / "web.yaml"), "--node-type", "a=9q")
    assert r.returncode == 1 and "--node-type[0].machine" in r.stderr


def test_a_price_on_some_types_only_is_refused() -> None:
    r = run("plan", str(EX / "web.yaml"), "--node-type", "a=1s1n4c2t,price=1", "--node-type", "b=1s1n4c2t")
    assert r.returncode == 1 and "--node-type[1].price" in r.stderr


def test_two_node_types_of_one_name_are_refused() -> None:
    r = run("plan", str(EX / "web.yaml"), "--node-type", "a=1s1n4c2t", "--node-type", "a=1s1n8c2t")
    assert r.returncode == 1 and "--node-type[1].name" in r.stderr


def test_a_bad_workload_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text("apiVersion: apps/v1\nkind: Deploymnt\nmetadata: {name: x}\n")
    r = run("plan", str(tmp_path / "w.yaml"), "--node-type", "a=1s1n4c2t")
    assert r.returncode == 1 and "w.yaml" in r.stderr and "Deployment" in r.stderr


def test_a_snapshot_folder_is_planned(tmp_path: Path) -> None:
    assert run("snapshot", str(ROOT / "examples" / "snapshot"), "-o", str(tmp_path / "snap")).returncode == 0
    # the node type carries the label the snapshot's DaemonSet selects (nodeSelector pool: general)
    r = run("plan", str(tmp_path / "snap"), "--node-type", "std=2s1n8c2t:mem=64Gi,labels=pool=general", "-o", "json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0, r.stderr
    assert doc["mix"] == {"std": 1} and doc["pods"] == 4
    assert any("Node object(s) left out" in n for n in doc["notes"])


def test_no_progress_lines_when_stderr_is_not_a_terminal() -> None:
    r = run("plan", str(EX / "web.yaml"), "--node-type", NUMA)
    assert "plan: trial" not in r.stderr


def test_a_workload_of_daemon_pods_only_needs_no_node(tmp_path: Path) -> None:
    (tmp_path / "ds.yaml").write_text(yaml.safe_dump({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"containers": [{"name": "a", "image": "x"}]}}}}))
    r = run("plan", str(tmp_path / "ds.yaml"), "--node-type", "a=1s1n4c2t")
    assert r.returncode == 0 and r.stdout.startswith("plan: no nodes")
