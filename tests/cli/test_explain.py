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


# --- cgroups above the pod: qosCgroup, nodeCgroup, cgroupPaths --------------------------------

RUNNING = """apiVersion: v1
kind: Pod
metadata: {name: other, uid: other-uid}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: "2", memory: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: g, uid: g-uid}
spec:
  containers:
  - name: c
    resources:
      requests: {cpu: "1", memory: 128Mi}
      limits: {cpu: "1", memory: 128Mi}
"""
KUBELET = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"


def with_config(tmp_path, body):
    (tmp_path / "k.yaml").write_text(KUBELET + body)
    return ("--config", "k.yaml")


def test_format_keys_stay_and_upper_cgroups_are_extra_keys(tmp_path):
    out = explain_json(tmp_path)
    assert {"qosClass", "podCgroup", "containers", "qosCgroup", "nodeCgroup", "cgroupPaths"} <= set(out)


def test_qos_cgroup_sums_the_running_pods_and_the_pod_itself(tmp_path):
    (tmp_path / "running.yaml").write_text(RUNNING)
    out = explain_json(tmp_path, "--cgroup", "v1", "--pods", "running.yaml")
    qos = out["qosCgroup"]
    assert qos["name"] == "burstable" and qos["path"] == "/kubepods/burstable"
    assert qos["files"]["cpu.shares"] == (2000 + 600) * 1024 // 1000  # other 2 CPUs + web 500m + proxy 100m
    assert qos["pods"]["Burstable"] == ["default/other", "default/web"] and qos["pods"]["Guaranteed"] == ["default/g"]
    assert qos["tiers"]["besteffort"]["files"]["cpu.shares"] == 2


def test_a_pod_listed_in_running_pods_counts_once(tmp_path):
    (tmp_path / "running.yaml").write_text(POD)
    out = explain_json(tmp_path, "--cgroup", "v1", "--pods", "running.yaml")
    assert out["qosCgroup"]["files"]["cpu.shares"] == 614


def test_memory_qos_tiered_reservation_in_qos_and_node_cgroups(tmp_path):
    (tmp_path / "running.yaml").write_text(RUNNING)
    cfg = with_config(tmp_path, "featureGates: {MemoryQoS: true}\nmemoryReservationPolicy: TieredReservation\n")
    out = explain_json(tmp_path, *cfg, "--pods", "running.yaml")
    assert out["qosCgroup"]["files"]["memory.low"] == (1 << 30) + (256 << 20) + (64 << 20)
    assert out["nodeCgroup"]["files"]["memory.min"] == (1 << 30) + (320 << 20) + (128 << 20)


def test_node_cgroup_from_allocatable_when_enforcing_pods(tmp_path):
    cfg = with_config(tmp_path, "kubeReserved: {cpu: 500m, memory: 1Gi, pid: '100'}\n")
    out = explain_json(tmp_path, *cfg, "--cgroup", "v1", "--pid-max", "4194304")
    node = out["nodeCgroup"]
    assert node["enforced"] is True and node["path"] == "/kubepods"
    assert node["files"]["cpu.shares"] == 7680 and node["files"]["memory.limit_in_bytes"] == 31 << 30
    assert node["files"]["pids.max"] == 4194304 - 100
    assert node["files"]["hugetlb.2MB.limit_in_bytes"] == 1 << 62


def test_node_cgroup_from_capacity_without_enforcement(tmp_path):
    cfg = with_config(tmp_path, "kubeReserved: {cpu: 500m}\nenforceNodeAllocatable: []\n")
    node = explain_json(tmp_path, *cfg, "--cgroup", "v1")["nodeCgroup"]
    assert node["enforced"] is False and node["files"]["cpu.shares"] == 8192


def test_systemd_paths_escape_the_uid(tmp_path):
    cfg = with_config(tmp_path, "cgroupDriver: systemd\n")
    pod = POD.replace("metadata: {name: web}", "metadata: {name: web, uid: 12ab-34cd}")
    paths = explain_json(tmp_path, *cfg, pod=pod)["cgroupPaths"]
    assert paths["pod"] == "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12ab_34cd.slice"
    assert paths["containers"]["app"].endswith("kubepods-burstable-pod12ab_34cd.slice/cri-containerd-<container-id>.scope")


def test_cgroupfs_paths_with_cgroup_root(tmp_path):
    cfg = with_config(tmp_path, "cgroupRoot: /custom\n")
    paths = explain_json(tmp_path, *cfg)["cgroupPaths"]
    assert paths["node"] == "/custom/kubepods" and paths["pod"] == "/custom/kubepods/burstable/pod<uid>"


def test_without_cgroups_per_qos_there_is_no_qos_or_node_cgroup(tmp_path):
    cfg = with_config(tmp_path, "cgroupsPerQOS: false\nenforceNodeAllocatable: []\n")
    out = explain_json(tmp_path, *cfg)
    assert out["qosCgroup"] is None and out["nodeCgroup"] is None and out["cgroupPaths"]["pod"] is None
    assert out["podCgroup"]  # the pod's own values are still what ResourceConfigForPod computes


def test_qos_reserved_limits_the_tiers_with_the_alpha_gate(tmp_path):
    cfg = with_config(tmp_path, "featureGates: {QOSReserved: true}\nqosReserved: {memory: 100%}\n")
    (tmp_path / "running.yaml").write_text(RUNNING)
    tiers = explain_json(tmp_path, *cfg, "--cgroup", "v1", "--pods", "running.yaml")["qosCgroup"]["tiers"]
    assert tiers["burstable"]["files"]["memory.limit_in_bytes"] == (32 << 30) - (128 << 20)


def test_table_shows_qos_node_cgroups_and_paths(tmp_path):
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", "--pid-max", "32768")
    assert proc.returncode == 0, proc.stderr
    for text in ("QoS cgroup /kubepods/burstable", "node allocatable cgroup /kubepods", "cgroup paths",
                 "/kubepods/burstable/pod<uid>"):
        assert text in proc.stdout


def test_missing_running_pods_file_is_exit_1_naming_it(tmp_path):
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", "--pods", "gone.yaml")
    assert proc.returncode == 1 and "gone.yaml" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_quantity_in_running_pods_names_file_and_field(tmp_path):
    (tmp_path / "running.yaml").write_text(RUNNING.replace('cpu: "2"', "cpu: 2x"))
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", "--pods", "running.yaml")
    assert proc.returncode == 1
    assert "running.yaml" in proc.stderr and "spec.containers[0].resources.requests.cpu" in proc.stderr


def test_running_pods_file_with_a_node_is_refused(tmp_path):
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", "--pods", "node.yaml")
    assert proc.returncode == 1 and "expected Pod" in proc.stderr and "node.yaml" in proc.stderr


@pytest.mark.parametrize("value,message", [("{cpu: 10%}", 'cannot reserve "cpu" resource'),
                                           ("{memory: '50'}", "percentage expected"),
                                           ("{memory: 150%}", "percentage must be between 0 and 100")])
def test_bad_qos_reserved_is_exit_1_naming_file_and_field(tmp_path, value, message):
    cfg = with_config(tmp_path, f"qosReserved: {value}\n")
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", *cfg)
    assert proc.returncode == 1 and "k.yaml" in proc.stderr and "qosReserved." in proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_invalid_systemd_cgroup_root_is_exit_1_naming_the_field(tmp_path):
    cfg = with_config(tmp_path, "cgroupDriver: systemd\ncgroupRoot: /a//b\n")
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", *cfg)
    assert proc.returncode == 1 and "k.yaml" in proc.stderr and "cgroupRoot" in proc.stderr
    assert "invalid slice name" in proc.stderr


@pytest.mark.parametrize("value", ["0", "-5", "many"])
def test_bad_pid_max_is_a_usage_error(tmp_path, value):
    proc = run(tmp_path, "pod.yaml", "--node", "node.yaml", "--pid-max", value)
    assert proc.returncode == 2 and "--pid-max" in proc.stderr


def test_cgroup_v1_with_fail_cgroup_v1_on_is_reported(tmp_path):
    r = run(tmp_path, "pod.yaml", "--node", "node.yaml", "--cgroup", "v1")
    assert r.returncode == 0
    assert "warning: failCgroupV1: failCgroupV1 is true" in r.stderr and "refuses to start" in r.stderr


def test_cgroup_v1_with_fail_cgroup_v1_off_is_quiet(tmp_path):
    (tmp_path / "k.yaml").write_text("failCgroupV1: false\n")
    r = run(tmp_path, "pod.yaml", "--node", "node.yaml", "--cgroup", "v1", "--config", str(tmp_path / "k.yaml"))
    assert r.returncode == 0 and "failCgroupV1" not in r.stderr


def test_a_machine_with_swap_and_fail_swap_on_is_reported(tmp_path):
    (tmp_path / "m.json").write_text(json.dumps(machine(8 << 30, swap=1 << 30)))
    r = run(tmp_path, "pod.yaml", "--node", "node.yaml", "--machine", str(tmp_path / "m.json"))
    assert r.returncode == 0 and "warning: failSwapOn: failSwapOn is true" in r.stderr
