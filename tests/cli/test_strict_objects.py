"""On the command line: a bad object is exit status 1 naming the file; an object or field a command
does not act on is a warning on stderr, and an error under ``kubetwin --strict``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

POD = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, resources: {requests: {cpu: 500m}}}]
"""
NODE = """apiVersion: v1
kind: Node
metadata: {name: n}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}, allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}
"""


def kubetwin(tmp_path: Path, *args: str, **files: str) -> subprocess.CompletedProcess[str]:
    for name, text in files.items():
        (tmp_path / f"{name}.yaml").write_text(text)
    return subprocess.run([sys.executable, "-m", "kubetwin", *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)


def test_a_misspelt_pod_kind_is_exit_1_with_the_nearest_kind(tmp_path):
    proc = kubetwin(tmp_path, "explain", "pod.yaml", "--node", "node.yaml", pod=POD.replace("kind: Pod", "kind: Pdo"),
                    node=NODE)
    assert proc.returncode == 1
    assert proc.stderr == 'error: pod.yaml: document 1: kind: kind "Pdo" is not supported here (fix: did you mean "Pod"?)\n'


def test_a_kind_the_scheduler_does_not_read_is_a_warning(tmp_path):
    proc = kubetwin(tmp_path, "schedule", "--nodes", "node.yaml", "-f", "deploy.yaml", "pod.yaml", "-o", "json",
                    pod=POD, node=NODE, deploy=DEPLOYMENT)
    assert proc.returncode == 0
    assert "warning: deploy.yaml: document 1 (Deployment d): kind: Deployment objects are not read by kube-scheduler" \
        in proc.stderr


def test_under_strict_a_kind_the_scheduler_does_not_read_is_an_error(tmp_path):
    proc = kubetwin(tmp_path, "--strict", "schedule", "--nodes", "node.yaml", "-f", "deploy.yaml", "pod.yaml",
                    pod=POD, node=NODE, deploy=DEPLOYMENT)
    assert proc.returncode == 1 and "error: deploy.yaml" in proc.stderr and "--strict" in proc.stderr


def test_a_not_modelled_pod_field_is_a_warning_naming_file_and_field(tmp_path):
    pod = POD.replace("spec:\n", "spec:\n  runtimeClassName: kata\n")
    proc = kubetwin(tmp_path, "explain", "pod.yaml", "--node", "node.yaml", "-o", "json", pod=pod, node=NODE)
    assert proc.returncode == 0
    assert "warning: pod.yaml: document 1 (Pod p): spec.runtimeClassName: field is not modelled by kubetwin" \
        in proc.stderr


def test_a_misspelt_field_in_a_list_item_is_exit_1(tmp_path):
    pods = "apiVersion: v1\nkind: List\nitems:\n- " + POD.replace("\n", "\n  ").replace("name: c,", "name: c, resorces: {},")
    proc = kubetwin(tmp_path, "explain", "pod.yaml", "--node", "node.yaml", pod=pods, node=NODE)
    assert proc.returncode == 1
    assert 'pod.yaml: document 1 (Pod p): strict decoding error: unknown field "spec.containers[0].resorces"' in proc.stderr
