"""``admit --state-dir`` / ``--write-state`` with ``actuated_pods_state``: what the kubelet last sent
the runtime per container (``SetActuatedResources`` on container start and after
``UpdateContainerResources``), read back after a restart; a running pod whose actuated resources
differ from its allocation is a resize in progress (``CheckPodResizeInProgress``) that the first
``SyncPod`` actuates (``computePodResizeAction`` / ``doPodResizeAction``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from kubetwin.kubelet.checkpoint.gohash import string_checksum

PODS = """apiVersion: v1
kind: Pod
metadata: {name: web, uid: u-web, generation: 2}
spec:
  initContainers:
  - name: init
    resources: {requests: {cpu: 100m}}
  containers:
  - name: app
    resources: {requests: {cpu: %s, memory: 256Mi}, limits: {cpu: "1", memory: 512Mi}}
"""
OTHER = """---
apiVersion: v1
kind: Pod
metadata: {name: gone, uid: u-gone}
spec:
  containers:
  - name: app
    resources: {requests: {cpu: 100m}}
"""
GROW = 'spec: {containers: [{name: app, resources: {requests: {cpu: 700m}, limits: {cpu: "1"}}}]}'
FLAGS = ("--machine", "1s1n4c1t:mem=8Gi")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubetwin", *args], capture_output=True, text=True)


def admit(tmp_path, pods: str, *extra: str) -> subprocess.CompletedProcess:
    (tmp_path / "pods.yaml").write_text(pods)
    return run("admit", *FLAGS, str(tmp_path / "pods.yaml"), "-o", "json", *extra)


def entries(path) -> dict:
    return json.loads(json.loads(path.read_text())["data"]).get("entries", {})


def _state(tmp_path, pods: str = PODS % "500m", name: str = "s1"):
    out = admit(tmp_path, pods, "--write-state", str(tmp_path / name))
    assert out.returncode == 0, out.stderr
    return tmp_path / name


def _in_progress_state(tmp_path):
    """allocated_pods_state after a 500m → 700m resize was allocated, actuated_pods_state from before it
    (the kubelet restarted between the two)."""
    s1 = _state(tmp_path)
    (tmp_path / "grow.yaml").write_text(GROW)
    out = admit(tmp_path, PODS % "500m", "--state-dir", str(s1), "--resize", f"web={tmp_path / 'grow.yaml'}",
                "--write-state", str(tmp_path / "s2"))
    assert out.returncode == 0, out.stderr
    st = tmp_path / "restart"
    st.mkdir()
    shutil.copy(tmp_path / "s2" / "allocated_pods_state", st)
    shutil.copy(s1 / "actuated_pods_state", st)
    return st


def test_write_state_records_every_started_container_as_actuated(tmp_path):
    e = entries(_state(tmp_path) / "actuated_pods_state")
    assert e == {"u-web": {"ContainerResources": {
        "app": {"limits": {"cpu": "1", "memory": "512Mi"}, "requests": {"cpu": "500m", "memory": "256Mi"}},
        "init": {"requests": {"cpu": "100m"}}}, "PodLevelResources": None}}


def test_the_written_file_is_in_the_kubelets_shape_with_its_checksum(tmp_path):
    doc = json.loads((_state(tmp_path) / "actuated_pods_state").read_text())
    assert list(doc) == ["data", "checksum"] and doc["checksum"] == string_checksum(doc["data"])


def test_a_restarted_kubelet_reads_the_actuated_resources_back(tmp_path):
    s1 = _state(tmp_path)
    out = admit(tmp_path, PODS % "500m", "--state-dir", str(s1), "--write-state", str(tmp_path / "s2"))
    assert out.returncode == 0, out.stderr
    assert "actuatedResizes" not in json.loads(out.stdout)  # actuated == allocated: no resize in progress
    assert (tmp_path / "s2" / "actuated_pods_state").read_bytes() == (s1 / "actuated_pods_state").read_bytes()


def test_a_pod_running_with_other_resources_than_allocated_is_a_resize_in_progress(tmp_path):
    d = json.loads(admit(tmp_path, PODS % "700m", "--state-dir", str(_in_progress_state(tmp_path))).stdout)
    [r] = d["actuatedResizes"]
    assert r["actuatedBefore"]["app"]["requests"]["cpu"] == "500m"
    assert r["conditions"] == [{"type": "PodResizeInProgress", "status": "True", "observedGeneration": 2}]


def test_the_first_sync_actuates_the_allocation_and_clears_the_condition(tmp_path):
    d = json.loads(admit(tmp_path, PODS % "700m", "--state-dir", str(_in_progress_state(tmp_path))).stdout)
    [r] = d["actuatedResizes"]
    assert {"action": "UpdateContainerResources", "resource": "cpu", "container": "app"} in r["actions"]
    assert (r["event"], r["conditionsAfter"]) == ("ResizeCompleted", [])


def test_the_actuated_resources_are_written_after_the_restart_actuation(tmp_path):
    st = _in_progress_state(tmp_path)
    out = admit(tmp_path, PODS % "700m", "--state-dir", str(st), "--write-state", str(tmp_path / "out"))
    assert out.returncode == 0, out.stderr
    assert entries(tmp_path / "out" / "actuated_pods_state")["u-web"]["ContainerResources"]["app"]["requests"][
        "cpu"] == "700m"


def test_a_completed_init_containers_difference_is_not_a_resize_in_progress(tmp_path):
    s1 = _state(tmp_path)
    text = (s1 / "actuated_pods_state").read_text()
    data = json.loads(text)["data"].replace('"init":{"requests":{"cpu":"100m"}}', '"init":{"requests":{"cpu":"50m"}}')
    (s1 / "actuated_pods_state").write_text(json.dumps({"data": data, "checksum": string_checksum(data)}))
    d = json.loads(admit(tmp_path, PODS % "500m", "--state-dir", str(s1)).stdout)
    assert "actuatedResizes" not in d


def test_an_allocated_resize_is_written_as_actuated(tmp_path):
    (tmp_path / "grow.yaml").write_text(GROW)
    out = admit(tmp_path, PODS % "500m", "--resize", f"web={tmp_path / 'grow.yaml'}", "--write-state",
                str(tmp_path / "s"))
    assert out.returncode == 0, out.stderr
    assert entries(tmp_path / "s" / "actuated_pods_state")["u-web"]["ContainerResources"]["app"]["requests"][
        "cpu"] == "700m"


def test_entries_of_pods_not_admitted_again_are_kept_until_garbage_collection(tmp_path):
    s1 = _state(tmp_path, PODS % "500m" + OTHER)
    out = admit(tmp_path, PODS % "500m", "--state-dir", str(s1), "--write-state", str(tmp_path / "s2"))
    assert out.returncode == 0, out.stderr
    assert set(entries(tmp_path / "s2" / "actuated_pods_state")) == {"u-web", "u-gone"}


def test_a_corrupt_actuated_pods_state_stops_admission_naming_the_file(tmp_path):
    s1 = _state(tmp_path)
    f = s1 / "actuated_pods_state"
    f.write_text(f.read_text().replace('"checksum":', '"checksum":1'))
    out = admit(tmp_path, PODS % "500m", "--state-dir", str(s1))
    assert out.returncode == 1
    assert "checkpoint is corrupted, please drain this node and delete pod resource information checkpoint file" \
        in out.stderr
    assert str(f) in out.stderr and "Traceback" not in out.stderr


def test_an_unknown_field_in_actuated_pods_state_is_refused_naming_the_file(tmp_path):
    s1 = _state(tmp_path)
    data = json.loads((s1 / "actuated_pods_state").read_text())["data"].replace("ContainerResources", "ContainerResourcez")
    (s1 / "actuated_pods_state").write_text(json.dumps({"data": data, "checksum": string_checksum(data)}))
    out = admit(tmp_path, PODS % "500m", "--state-dir", str(s1))
    assert out.returncode == 1 and "actuated_pods_state" in out.stderr and "ContainerResources" in out.stderr


def test_with_in_place_resize_off_the_actuated_file_is_neither_read_nor_written(tmp_path):
    s1 = _state(tmp_path)
    (tmp_path / "kubelet.yaml").write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                                           "featureGates: {InPlacePodVerticalScaling: false}\n")
    (tmp_path / "pods.yaml").write_text(PODS % "500m")
    out = run("--kubernetes-version", "1.34", "admit", *FLAGS, "--config", str(tmp_path / "kubelet.yaml"),
              "--state-dir", str(s1), "--write-state", str(tmp_path / "out"), str(tmp_path / "pods.yaml"), "-o", "json")
    assert out.returncode == 0, out.stderr
    assert "actuated_pods_state: not read" in out.stderr
    assert not (tmp_path / "out" / "actuated_pods_state").exists()
