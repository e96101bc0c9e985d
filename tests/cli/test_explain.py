"""``kubetwin explain``: the PodResourceConfig contract, a readable table, and clear errors."""

import json
import subprocess
import sys

import pytest

POD = """apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
  - name: proxy
    restartPolicy: Always
    resources: {requests: {cpu: 100m, memory: 64Mi}}
  containers:
  - name: app
    resources:
      requests: {cpu: 500m, memory: 256Mi}
      limits: {cpu: "1", memory: 512Mi}
"""
NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "8", memory: 32Gi, hugepages-2Mi: 1Gi, hugepages-1Gi: 2Gi}
"""


def machine(memory, swap=0):
    """A one-NUMA-node cAdvisor MachineInfo."""
    return {"num_cores": 2, "num_sockets": 1, "memory_capacity": memory, "swap_capacity": swap, "hugepages": [],
            "topology": [{"node_id": 0, "memory": memory, "hugepages": [],
                          "cores": [{"core_id": 0, "thread_ids": [0, 1], "socket_id": 0}], "distances": [10]}]}


def run(tmp_path, *args, pod=POD, node=NODE):
    (tmp_path / "pod.yaml").write_text(pod)
    (tmp_path / "node.yaml").write_text(node)
    return subprocess.run([sys.executable, "-m", "kubetwin", "explain", *args], cwd=tmp_path,
                          capture_output=True, text=True)


def explain_json(tmp_path, *args, **kw):
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", "-o", "json", *args, **kw)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_json_follows_the_pod_resource_config_contract(tmp_path):
    out = explain_json(tmp_path, "--cgroup", "v1")
    assert out["qosClass"] == "Burstable"
    assert out["podCgroup"]["cpu.shares"] == 614
    names = [c["name"] for c in out["containers"]]
    assert names == ["proxy", "app"]
    app = out["containers"][1]["resources"]
    assert (app["cpuShares"], app["cpuQuota"], app["cpuPeriod"], app["memoryLimitInBytes"]) == (512, 100000, 100000,
                                                                                                536870912)
    assert [h["pageSize"] for h in app["hugepageLimits"]] == ["1GB", "2MB"]


def test_v2_pod_cgroup_lists_kernel_defaults(tmp_path):
    out = explain_json(tmp_path)
    assert out["podCgroup"]["cpu.max"] == "max 100000" and out["podCgroup"]["memory.max"] == "max"


def test_oom_score_from_node_capacity_or_machine(tmp_path):
    out = explain_json(tmp_path)
    assert out["containers"][1]["resources"]["oomScoreAdj"] == 1000 - (1000 * (256 << 20)) // (32 << 30)
    (tmp_path / "m.json").write_text(json.dumps(machine(4 << 30)))
    out = explain_json(tmp_path, "--machine", "m.json")
    assert out["containers"][1]["resources"]["oomScoreAdj"] == 1000 - (1000 * (256 << 20)) // (4 << 30)


def test_kubelet_config_turns_cfs_quota_off(tmp_path):
    (tmp_path / "k.yaml").write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                                     "cpuCFSQuota: false\n")
    out = explain_json(tmp_path, "--config", "k.yaml", "--cgroup", "v1")
    assert out["containers"][1]["resources"]["cpuQuota"] == 0


def test_weight_curve_is_selectable(tmp_path):
    quad = explain_json(tmp_path)["containers"][1]["runtimeCpuWeight"]["value"]
    lin = explain_json(tmp_path, "--weight-curve", "linear")["containers"][1]["runtimeCpuWeight"]["value"]
    assert (quad, lin) == (59, 20)


def test_table_names_the_rules(tmp_path):
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml")
    assert proc.returncode == 0, proc.stderr
    assert "Burstable" in proc.stdout and "cpu.weight" in proc.stdout and "oomScoreAdj" in proc.stdout


def test_missing_pod_file_is_exit_1_naming_the_file(tmp_path):
    proc = run(tmp_path, "nope.yaml", "--node", "node.yaml")
    assert proc.returncode == 1 and "nope.yaml" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_yaml_is_exit_1_naming_the_file(tmp_path):
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", pod="kind: Pod\n  bad: [\n")
    assert proc.returncode == 1 and "pod.yaml" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_quantity_names_file_and_field(tmp_path):
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", pod=POD.replace("cpu: 500m", "cpu: 5x"))
    assert proc.returncode == 1
    assert "pod.yaml" in proc.stderr and "spec.containers[0].resources.requests.cpu" in proc.stderr


def test_wrong_kind_is_refused(tmp_path):
    proc = run(tmp_path, "node.yaml", "--node", "node.yaml")
    assert proc.returncode == 1 and "expected Pod" in proc.stderr and "node.yaml" in proc.stderr


def test_node_file_with_a_pod_is_refused(tmp_path):
    proc = run(tmp_path, "pod.yaml", "--node", "pod.yaml")
    assert proc.returncode == 1 and "expected Node" in proc.stderr


def test_bad_node_capacity_names_the_field(tmp_path):
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", node=NODE.replace("memory: 32Gi", "memory: lots"))
    assert proc.returncode == 1 and "status.capacity.memory" in proc.stderr


def test_bad_machine_value_names_the_field(tmp_path):
    (tmp_path / "m.json").write_text(json.dumps({**machine(1 << 30), "memory_capacity": "big"}))
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", "--machine", "m.json")
    assert proc.returncode == 1 and "m.json" in proc.stderr and "memory_capacity" in proc.stderr


def test_bad_cgroup_version_is_a_usage_error(tmp_path):
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", "--cgroup", "v3")
    assert proc.returncode == 2 and "--cgroup" in proc.stderr


def test_two_pods_are_refused(tmp_path):
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", pod=POD + "---\n" + POD.replace("name: web", "name: w2"))
    assert proc.returncode == 1 and "exactly one Pod" in proc.stderr


def test_burstable_pod_without_memory_capacity_is_refused(tmp_path):
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", node=NODE.replace("memory: 32Gi, ", ""))
    assert proc.returncode == 1 and "memory" in proc.stderr


def test_machine_swap_capacity_feeds_limited_swap(tmp_path):
    (tmp_path / "k.yaml").write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                                     "failSwapOn: false\nmemorySwap: {swapBehavior: LimitedSwap}\n")
    (tmp_path / "m.json").write_text(json.dumps(machine(40 << 30, 5 << 30)))
    out = explain_json(tmp_path, "--config", "k.yaml", "--machine", "m.json")
    assert out["containers"][1]["resources"]["unified"]["memory.swap.max"] == str((256 << 20) // 8)
