"""``kubetwin schedule``: the plugin contract and every bad-input path (exit 1, file and field named)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
spec: {taints: [{key: k, value: v, effect: NoSchedule}]}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]
"""


def run(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubetwin", "schedule", *args], cwd=tmp, capture_output=True,
                          text=True)


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    (tmp_path / "nodes.yaml").write_text(NODES)
    (tmp_path / "pod.yaml").write_text(POD)
    return tmp_path


def test_plugin_alone_reports_filter_and_scores_per_node(files):
    proc = run(files, "--nodes", "nodes.yaml", "--plugin", "NodeResourcesFit", "-o", "json", "pod.yaml")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["filter"]["n1"] == {"code": "UnschedulableAndUnresolvable", "reasons": ["Insufficient cpu"]}
    assert out["filter"]["n2"] == {"code": "Success"}
    assert set(out["scores"]) == {"n1", "n2"}


def test_cycle_explains_why_no_node_fits(files):
    proc = run(files, "--nodes", "nodes.yaml", "-o", "json", "pod.yaml")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["node"] is None
    assert out["message"].startswith(
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s).")


def test_unknown_plugin_is_refused(files):
    proc = run(files, "--nodes", "nodes.yaml", "--plugin", "NoSuchPlugin", "pod.yaml")
    assert proc.returncode == 1
    assert "--plugin: unknown scheduler plugin 'NoSuchPlugin'" in proc.stderr


def test_plugin_args_of_another_kind_are_refused(files):
    (files / "args.yaml").write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: NodeAffinityArgs\n")
    proc = run(files, "--nodes", "nodes.yaml", "--plugin", "NodeResourcesFit", "--plugin-args", "args.yaml",
               "pod.yaml")
    assert proc.returncode == 1
    assert "args.yaml" in proc.stderr and "kind: expected kind NodeResourcesFitArgs" in proc.stderr


def test_unknown_scoring_strategy_names_the_field(files):
    (files / "args.yaml").write_text("kind: NodeResourcesFitArgs\nscoringStrategy: {type: Cheapest}\n")
    proc = run(files, "--nodes", "nodes.yaml", "--plugin", "NodeResourcesFit", "--plugin-args", "args.yaml",
               "pod.yaml")
    assert proc.returncode == 1
    assert "args.yaml" in proc.stderr and "scoringStrategy.type" in proc.stderr


def test_resource_weight_out_of_range_names_the_field(files):
    (files / "args.yaml").write_text(
        "kind: NodeResourcesFitArgs\nscoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 0}]}\n")
    proc = run(files, "--nodes", "nodes.yaml", "--plugin", "NodeResourcesFit", "--plugin-args", "args.yaml",
               "pod.yaml")
    assert proc.returncode == 1
    assert "scoringStrategy.resources[0].weight" in proc.stderr


def test_bad_node_quantity_names_file_and_field(files):
    (files / "nodes.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                                      "status: {allocatable: {cpu: lots}}\n")
    proc = run(files, "--nodes", "nodes.yaml", "--plugin", "NodeName", "pod.yaml")
    assert proc.returncode == 1
    assert "nodes.yaml" in proc.stderr and "status.allocatable.cpu" in proc.stderr


def test_pod_file_with_two_pods_is_refused(files):
    (files / "pod.yaml").write_text(POD + "---\n" + POD.replace("name: p}", "name: q}"))
    proc = run(files, "--nodes", "nodes.yaml", "--plugin", "NodeName", "pod.yaml")
    assert proc.returncode == 1
    assert "pod.yaml: expected exactly one Pod, found 2" in proc.stderr


def test_unknown_feature_gate_is_refused(files):
    proc = run(files, "--nodes", "nodes.yaml", "--plugin", "NodeName", "--feature-gates", "Nope=true", "pod.yaml")
    assert proc.returncode == 1
    assert "--feature-gates.Nope: unrecognized feature gate: Nope" in proc.stderr


def test_config_of_another_kind_is_refused(files):
    (files / "cfg.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n")
    proc = run(files, "--nodes", "nodes.yaml", "--config", "cfg.yaml", "pod.yaml")
    assert proc.returncode == 1
    assert "cfg.yaml" in proc.stderr and "kind: expected kind KubeSchedulerConfiguration" in proc.stderr


def test_percentage_of_nodes_to_score_out_of_range_names_the_field(files):
    (files / "cfg.yaml").write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                                    "profiles: [{percentageOfNodesToScore: 120}]\n")
    proc = run(files, "--nodes", "nodes.yaml", "--config", "cfg.yaml", "pod.yaml")
    assert proc.returncode == 1
    assert "profiles[0].percentageOfNodesToScore" in proc.stderr


def test_admission_is_reported_unavailable_not_faked(files):
    proc = run(files, "--nodes", "nodes.yaml", "--admit", "pod.yaml")
    assert proc.returncode == 1
    assert "admission controllers" in proc.stderr
