"""``kubetwin admit -o cri``: the kubelet's CRI calls for the node and each container's cgroup end state."""

import json
import subprocess
import sys

KUBELET = """apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
cgroupDriver: systemd
"""
PODS = """apiVersion: v1
kind: Pod
metadata: {name: web, uid: u-web}
spec:
  containers:
  - name: app
    resources: {requests: {cpu: 500m, memory: 256Mi}, limits: {memory: 512Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db, uid: u-db}
spec:
  containers:
  - name: db
    resources: {requests: {cpu: "2", memory: 1Gi}, limits: {cpu: "2", memory: 1Gi}}
"""


def admit(tmp_path, *args, pods=PODS):
    (tmp_path / "kubelet.yaml").write_text(KUBELET)
    (tmp_path / "pods.yaml").write_text(pods)
    return subprocess.run([sys.executable, "-m", "kubetwin", "admit", "--machine", "1s1n4c2t", "--config",
                           str(tmp_path / "kubelet.yaml"), str(tmp_path / "pods.yaml"), *args],
                          capture_output=True, text=True)


def test_cri_output_lists_the_calls_in_order(tmp_path):
    out = admit(tmp_path, "-o", "cri")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [(c["rpc"], c.get("pod", ""), c.get("container", "")) for c in data["calls"]] == [
        ("RunPodSandbox", "default/web", ""), ("CreateContainer", "default/web", "app"),
        ("StartContainer", "default/web", "app"), ("RunPodSandbox", "default/db", ""),
        ("CreateContainer", "default/db", "db"), ("StartContainer", "default/db", "db"),
        ("UpdateContainerResources", "default/web", "app")]
    assert data["runtime"]["runtime"] == "containerd" and data["runtime"]["cgroupDriver"] == "systemd"


def test_cri_output_gives_each_containers_cgroup_files(tmp_path):
    data = json.loads(admit(tmp_path, "-o", "cri").stdout)
    db = data["pods"][1]["containers"][0]
    assert db["files"]["cpuset.cpus"] == "1,5" and db["files"]["cpu.max"] == "max 100000"
    assert db["files"]["memory.max"] == str(1 << 30) and db["oomScoreAdj"] == -997
    assert data["pods"][1]["podCgroup"]["path"] == "/sys/fs/cgroup/kubepods.slice/kubepods-podu_db.slice"


def test_rejected_pods_are_listed_without_calls(tmp_path):
    pods = PODS + """---
apiVersion: v1
kind: Pod
metadata: {name: huge, uid: u-huge}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: "64", memory: 1Gi}, limits: {cpu: "64", memory: 1Gi}}
"""
    data = json.loads(admit(tmp_path, "-o", "cri", pods=pods).stdout)
    assert [r["pod"] for r in data["rejected"]] == ["huge"]
    assert all(c.get("pod") != "default/huge" for c in data["calls"])


def test_other_outputs_are_unchanged(tmp_path):
    data = json.loads(admit(tmp_path, "-o", "json").stdout)
    assert set(data) == {"pods", "node"}


def test_pods_without_a_uid_get_a_pod_slice_named_after_a_uuid_under_the_systemd_driver(tmp_path):
    out = admit(tmp_path, "-o", "cri", pods=PODS.replace(", uid: u-web", "").replace(", uid: u-db", ""))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    sandbox = next(c for c in data["calls"] if c["rpc"] == "RunPodSandbox")
    uid = sandbox["request"]["config"]["metadata"]["uid"]
    parent = sandbox["request"]["config"]["linux"]["cgroupParent"]
    assert len(uid) == 36 and parent == f"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{uid.replace('-', '_')}.slice"
