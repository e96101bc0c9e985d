"""``kubetwin evict``: rankings and timelines in, the FORMAT.md JSON out; bad input named by file and field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "default", "uid": "a"},
       "spec": {"containers": [{"name": "a", "resources": {"requests": {"memory": "100Mi"}}}]}}
POD_B = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "namespace": "default", "uid": "b"},
         "spec": {"containers": [{"name": "b"}], "priority": 5}}
SUMMARY = {"node": {"memory": {"availableBytes": 10 * 2**20, "workingSetBytes": 2**30}},
           "pods": [{"podRef": {"name": "a", "namespace": "default", "uid": "a"}, "memory": {"workingSetBytes": 2**29}},
                    {"podRef": {"name": "b", "namespace": "default", "uid": "b"}, "memory": {"workingSetBytes": 1}}]}


def run(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubetwin", "evict", *args], capture_output=True, text=True,
                          cwd=tmp, timeout=60)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump_all([POD, POD_B]))
    (tmp_path / "summary.json").write_text(json.dumps(SUMMARY))
    (tmp_path / "kubelet.yaml").write_text(yaml.safe_dump({"apiVersion": "kubelet.config.k8s.io/v1beta1",
                                                           "kind": "KubeletConfiguration",
                                                           "evictionHard": {"memory.available": "100Mi"}}))
    (tmp_path / "timeline.yaml").write_text(yaml.safe_dump([{"after": "0s", "summary": SUMMARY},
                                                            {"after": "10s"}]))
    return tmp_path


def test_signal_ranking_as_json(files: Path):
    out = run(files, "--signal", "memory.available", "--summary", "summary.json", "-o", "json", "pods.yaml")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["ranking"] == ["a", "b"]


def test_signal_ranking_as_a_table_names_the_order_rule(files: Path):
    out = run(files, "--signal", "memory.available", "--summary", "summary.json", "pods.yaml")
    assert out.returncode == 0, out.stderr
    assert "default/a" in out.stdout and "usage above request first" in out.stdout


def test_timeline_reports_thresholds_conditions_and_the_eviction(files: Path):
    out = run(files, "--config", "kubelet.yaml", "--timeline", "timeline.yaml", "-o", "json", "pods.yaml")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {t["signal"] for t in data["thresholds"]} == {"memory.available", "allocatableMemory.available"}
    assert data["steps"][0]["conditions"] == ["MemoryPressure"]
    assert [e["name"] for e in data["steps"][0]["evicted"]] == ["a"]


def test_timeline_table_shows_the_eviction_message(files: Path):
    out = run(files, "--config", "kubelet.yaml", "--timeline", "timeline.yaml", "pods.yaml")
    assert out.returncode == 0, out.stderr
    assert "The node was low on resource: memory." in " ".join(out.stdout.split())


def test_bad_summary_field_names_file_and_field(files: Path):
    bad = json.loads(json.dumps(SUMMARY))
    bad["pods"][1]["memory"]["workingSetBytes"] = "lots"
    (files / "summary.json").write_text(json.dumps(bad))
    out = run(files, "--signal", "memory.available", "--summary", "summary.json", "pods.yaml")
    assert out.returncode == 1
    assert "summary.json" in out.stderr and "pods[1].memory.workingSetBytes" in out.stderr


def test_negative_usage_is_rejected(files: Path):
    bad = json.loads(json.dumps(SUMMARY))
    bad["node"]["memory"]["availableBytes"] = -5
    (files / "summary.json").write_text(json.dumps(bad))
    out = run(files, "--signal", "memory.available", "--summary", "summary.json", "pods.yaml")
    assert out.returncode == 1 and "node.memory.availableBytes" in out.stderr


@pytest.mark.parametrize("hard, field", [({"mem.available": "1Gi"}, "evictionHard"),
                                          ({"memory.available": "-1Gi"}, "evictionHard"),
                                          ({"memory.available": "150%"}, "evictionHard")])
def test_bad_threshold_names_the_config_file_and_field(files: Path, hard, field):
    (files / "kubelet.yaml").write_text(yaml.safe_dump({"kind": "KubeletConfiguration", "evictionHard": hard}))
    out = run(files, "--config", "kubelet.yaml", "--timeline", "timeline.yaml", "pods.yaml")
    assert out.returncode == 1
    assert "kubelet.yaml" in out.stderr and field in out.stderr


def test_soft_threshold_without_grace_period_is_rejected(files: Path):
    (files / "kubelet.yaml").write_text(yaml.safe_dump({"kind": "KubeletConfiguration",
                                                        "evictionSoft": {"memory.available": "1Gi"}}))
    out = run(files, "--config", "kubelet.yaml", "--timeline", "timeline.yaml", "pods.yaml")
    assert out.returncode == 1 and "grace period must be specified" in out.stderr


def test_bad_step_duration_names_the_step(files: Path):
    (files / "timeline.yaml").write_text(yaml.safe_dump([{"after": "soon"}]))
    out = run(files, "--config", "kubelet.yaml", "--timeline", "timeline.yaml", "pods.yaml")
    assert out.returncode == 1 and "timeline.yaml" in out.stderr and "[0].after" in out.stderr


def test_unknown_step_field_is_rejected(files: Path):
    (files / "timeline.yaml").write_text(yaml.safe_dump([{"after": "1s", "summery": {}}]))
    out = run(files, "--config", "kubelet.yaml", "--timeline", "timeline.yaml", "pods.yaml")
    assert out.returncode == 1 and "[0].summery" in out.stderr


def test_bad_pod_in_a_step_names_its_path(files: Path):
    bad = json.loads(json.dumps(POD))
    bad["spec"]["containers"][0]["resources"]["requests"]["memory"] = "ten"
    (files / "timeline.yaml").write_text(yaml.safe_dump([{"after": "1s", "admit": [bad]}]))
    out = run(files, "--config", "kubelet.yaml", "--timeline", "timeline.yaml", "pods.yaml")
    assert out.returncode == 1
    assert "[0].admit[0].spec.containers[0].resources.requests.memory" in out.stderr


def test_signal_and_timeline_together_is_a_usage_error(files: Path):
    out = run(files, "--signal", "memory.available", "--timeline", "timeline.yaml", "pods.yaml")
    assert out.returncode == 2


def test_unknown_signal_is_a_usage_error(files: Path):
    out = run(files, "--signal", "memory.free", "--summary", "summary.json", "pods.yaml")
    assert out.returncode == 2


def test_oom_without_the_nodes_memory_in_the_summary_names_the_summary(files: Path):
    summary = {**SUMMARY, "node": {}}
    (files / "summary.json").write_text(json.dumps(summary))
    out = run(files, "--signal", "memory.available", "--summary", "summary.json", "--oom", "pods.yaml", "-o", "json")
    assert out.returncode == 1
    assert out.stderr.startswith("error: summary.json: node.memory: the node's memory capacity")
