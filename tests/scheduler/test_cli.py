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
    assert "args.yaml" in proc.stderr and "kind: args for plugin NodeResourcesFit were not of type NodeResourcesFitArgs" in proc.stderr


def test_unknown_scoring_strategy_names_the_field(files):
    (files / "args.yaml").write_text("kind: NodeResourcesFitArgs\nscoringStrategy: {type: Cheapest}\n")
    proc = run(files, "--nodes", "nodes.yaml", "--plugin", "NodeResourcesFit", "--plugin-args", "args.yaml",
               "pod.yaml")
    assert proc.returncode == 1
    assert "args.yaml" in proc.stderr and "scoringStrategy.type" in proc.stderr


def test_resource_weight_out_of_range_names_the_field(files):
    (files / "args.yaml").write_text(
        "kind: NodeResourcesFitArgs\nscoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 101}]}\n")
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


def test_admit_applies_priority_class_before_scheduling(files):
    (files / "pc.yaml").write_text("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                                   "metadata: {name: high}\nvalue: 1000\nglobalDefault: true\n")
    proc = run(files, "--nodes", "nodes.yaml", "-f", "pc.yaml", "--admit", "-o", "json", "pod.yaml")
    assert proc.returncode == 0, proc.stderr
    assert any("priority=1000" in c for c in json.loads(proc.stdout)["admission"])


def test_admit_rejection_exits_1_with_the_api_server_message(files):
    (files / "lr.yaml").write_text("apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\n"
                                   "spec: {limits: [{type: Container, max: {cpu: '1'}}]}\n")
    proc = run(files, "--nodes", "nodes.yaml", "-f", "lr.yaml", "--admit", "pod.yaml")
    assert proc.returncode == 1
    # the default limit comes from max (1 cpu); the 3-cpu request then exceeds it
    assert proc.stderr == 'error: pods "p" is forbidden: maximum cpu usage per Container is 1, but request is 3\n'


def test_admit_with_an_invalid_quota_names_file_and_field(files):
    (files / "q.yaml").write_text("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\n"
                                  "spec: {hard: {pods: lots}}\n")
    proc = run(files, "--nodes", "nodes.yaml", "-f", "q.yaml", "--admit", "pod.yaml")
    assert proc.returncode == 1
    assert "q.yaml" in proc.stderr and "spec.hard.pods" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_admit_with_two_default_priority_classes_is_refused(files):
    (files / "pc.yaml").write_text("".join(
        f"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: c{i}}}\nvalue: {i}\n"
        "globalDefault: true\n" for i in range(2)))
    proc = run(files, "--nodes", "nodes.yaml", "-f", "pc.yaml", "--admit", "pod.yaml")
    assert proc.returncode == 1
    assert "globalDefault" in proc.stderr


def test_unschedulable_pod_shows_what_preemption_would_do(files):
    (files / "running.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: low}\nspec: {nodeName: n1, priority: 1, containers: "
        "[{name: c, resources: {requests: {cpu: '2'}}}]}\n")
    (files / "hi.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: hi}\nspec: {priority: 9, "
                                   "containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n")
    proc = run(files, "--nodes", "nodes.yaml", "--pods", "running.yaml", "-o", "json", "hi.yaml")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["preemption"] == {"nominatedNode": "n1", "victims": ["default/low"]}
    assert out["message"] == "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s)."


DRA_OBJECTS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}
"""
GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: default, uid: 4c1f3a2e-0000-4000-8000-000000000001}
spec:
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
"""


@pytest.mark.parametrize("seed", ["0", "5"])
def test_schedule_names_template_claims_as_dra_allocate_does(files: Path, seed: str):
    (files / "dra.yaml").write_text(DRA_OBJECTS)
    (files / "gpu-pod.yaml").write_text(GPU_POD)
    (files / "n1.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    sched = run(files, "--nodes", "nodes.yaml", "-f", "dra.yaml", "--seed", seed, "gpu-pod.yaml", "-o", "json")
    assert sched.returncode == 0, sched.stderr
    out = json.loads(sched.stdout)
    assert out["node"] == "n1"
    dra = subprocess.run([sys.executable, "-m", "kubetwin", "dra", "allocate", "-f", "dra.yaml", "--node", "n1.yaml",
                          "--pod", "gpu-pod.yaml", "--seed", seed, "-o", "json"], cwd=files, capture_output=True,
                         text=True)
    assert dra.returncode == 0, dra.stderr
    expected = json.loads(dra.stdout)
    assert [c["metadata"]["name"] for c in out["resourceClaims"]] == \
        [c["metadata"]["name"] for c in expected["claims"]]
    assert out["resourceClaims"][0]["status"] == expected["claims"][0]["status"]
    assert out["podStatus"]["resourceClaimStatuses"] == expected["pod"]["resourceClaimStatuses"]
