"""Commands that stand for the API server and what follows it (admit, schedule, simulate) read a pod
as the API server stores it: a container with limits only has them as requests (Guaranteed, counted
by the scheduler); ``--no-api-defaulting`` reads it as written. ``explain`` and ``evict`` model
kubelet functions on the pod they are given, exactly as written (the conformance FORMAT.md), name on
stderr a pod the defaulting would change, and read it as stored with ``--api-defaulting``."""

from __future__ import annotations

import json
import subprocess
import sys

LIMITS_ONLY = """apiVersion: v1
kind: Pod
metadata: {name: lo, uid: u-lo}
spec:
  containers:
  - name: c
    resources: {limits: {cpu: "2", memory: 1Gi}}
"""
NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
"""
SMALL_NODE = NODE.replace('cpu: "8"', 'cpu: "1"')
KUBELET = """apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
"""


def kubetwin(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubetwin", *args], cwd=tmp_path, capture_output=True, text=True)


def test_explain_with_api_defaulting_shows_a_limits_only_pod_as_guaranteed(tmp_path):
    (tmp_path / "pod.yaml").write_text(LIMITS_ONLY)
    (tmp_path / "node.yaml").write_text(NODE)
    out = kubetwin(tmp_path, "explain", "pod.yaml", "--node", "node.yaml", "--api-defaulting", "-o", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["qosClass"] == "Guaranteed"


def test_explain_takes_a_limits_only_pod_as_written_and_says_so(tmp_path):
    (tmp_path / "pod.yaml").write_text(LIMITS_ONLY)
    (tmp_path / "node.yaml").write_text(NODE)
    out = kubetwin(tmp_path, "explain", "pod.yaml", "--node", "node.yaml", "-o", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["qosClass"] == "Burstable"
    assert "pod default/lo: evaluated as written" in out.stderr and "--api-defaulting" in out.stderr


def test_explain_under_strict_refuses_a_pod_the_defaulting_would_change(tmp_path):
    (tmp_path / "pod.yaml").write_text(LIMITS_ONLY)
    (tmp_path / "node.yaml").write_text(NODE)
    out = kubetwin(tmp_path, "--strict", "explain", "pod.yaml", "--node", "node.yaml", "-o", "json")
    assert out.returncode == 1 and "evaluated as written" in out.stderr


def test_explain_with_no_api_defaulting_takes_the_pod_as_written(tmp_path):
    (tmp_path / "pod.yaml").write_text(LIMITS_ONLY)
    (tmp_path / "node.yaml").write_text(NODE)
    out = kubetwin(tmp_path, "--no-api-defaulting", "explain", "pod.yaml", "--node", "node.yaml", "-o", "json")
    assert json.loads(out.stdout)["qosClass"] == "Burstable"


def test_admit_gives_a_limits_only_pod_exclusive_cpus(tmp_path):
    (tmp_path / "pods.yaml").write_text(LIMITS_ONLY)
    (tmp_path / "kubelet.yaml").write_text(KUBELET)
    out = kubetwin(tmp_path, "admit", "--machine", "1s1n4c2t", "--config", "kubelet.yaml", "pods.yaml", "-o", "json")
    assert out.returncode == 0, out.stderr
    (pod,) = json.loads(out.stdout)["pods"]
    assert pod["admitted"] and pod["containers"][0]["resources"]["cpusetCpus"] == "1,5"  # one core, not the shared pool


def test_schedule_counts_a_limits_only_pods_requests(tmp_path):
    (tmp_path / "pod.yaml").write_text(LIMITS_ONLY)
    (tmp_path / "nodes.yaml").write_text(SMALL_NODE)
    out = kubetwin(tmp_path, "schedule", "--nodes", "nodes.yaml", "pod.yaml", "-o", "json")
    assert out.returncode == 0, out.stderr
    assert "Insufficient cpu" in out.stdout


def test_simulate_defaults_workload_templates_and_pod_objects(tmp_path):
    scenario = f"""apiVersion: kubetwin.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec:
  horizon: 5m
  nodeGroups:
  - {{name: g, count: 1, capacity: {{cpu: "1", memory: 8Gi, pods: "110"}}}}
  workloads:
  - name: w
    template: {{spec: {{containers: [{{name: c, resources: {{limits: {{cpu: "2"}}}}}}]}}}}
---
{LIMITS_ONLY}"""
    (tmp_path / "scenario.yaml").write_text(scenario)
    out = kubetwin(tmp_path, "simulate", "scenario.yaml", "--no-progress", "--report", "-", "-o", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["pods"] == 2 and result.get("unschedulable", result.get("pending")) == 2, result
