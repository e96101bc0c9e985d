"""``admit --state-dir`` / ``--write-state`` with ``allocated_pods_state``: a restarted kubelet keeps
what it allocated (``AddPod`` → ``UpdatePodFromAllocation``), and a spec that differs is a pending
resize retried with ``pods_added`` (``HandlePodAdditions``)."""

from __future__ import annotations

import json
import subprocess
import sys

PODS = """apiVersion: v1
kind: Pod
metadata: {name: web, uid: u-web}
spec:
  containers:
  - name: app
    resources: {requests: {cpu: %s, memory: 256Mi}, limits: {cpu: "%s", memory: 512Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: big, uid: u-big}
spec:
  containers:
  - name: app
    resources: {requests: {cpu: "3", memory: 1Gi}}
"""
GROW = 'spec: {containers: [{name: app, resources: {requests: {cpu: "2"}, limits: {cpu: "2"}}}]}'


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubetwin", *args], capture_output=True, text=True)


def admit(tmp_path, pods: str, *extra: str) -> subprocess.CompletedProcess:
    (tmp_path / "pods.yaml").write_text(pods)
    return run("admit", "--machine", "1s1n4c1t:mem=8Gi", str(tmp_path / "pods.yaml"), "-o", "json", *extra)


def _deferred_state(tmp_path):
    (tmp_path / "grow.yaml").write_text(GROW)
    out = admit(tmp_path, PODS % ("500m", "1"), "--resize", f"web={tmp_path / 'grow.yaml'}",
                "--write-state", str(tmp_path / "st"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["resizes"][0]["status"] == "Deferred"
    return tmp_path / "st"


def test_write_state_writes_the_allocation_not_the_deferred_spec(tmp_path):
    st = _deferred_state(tmp_path)
    data = json.loads(json.loads((st / "allocated_pods_state").read_text())["data"])
    assert data["entries"]["u-web"]["ContainerResources"]["app"]["requests"]["cpu"] == "500m"


def test_a_restarted_kubelet_admits_the_pod_with_its_allocated_resources(tmp_path):
    st = _deferred_state(tmp_path)
    out = admit(tmp_path, PODS % ('"2"', "2"), "--state-dir", str(st))
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    web = next(p for p in d["pods"] if p["name"] == "web")
    assert web["admitted"] and web["containers"][0]["resources"]["cpuQuota"] == 100000  # the 1-cpu limit kept


def test_a_spec_that_differs_from_the_allocation_is_retried_as_pods_added(tmp_path):
    st = _deferred_state(tmp_path)
    d = json.loads(admit(tmp_path, PODS % ('"2"', "2"), "--state-dir", str(st)).stdout)
    [r] = d["restoredResizes"]
    assert (r["pod"], r["trigger"], r["status"]) == ("web", "pods_added", "Deferred")


def test_a_corrupt_allocated_pods_state_stops_admission_naming_the_file(tmp_path):
    st = _deferred_state(tmp_path)
    f = st / "allocated_pods_state"
    f.write_text(f.read_text().replace('"checksum":', '"checksum":1'))
    out = admit(tmp_path, PODS % ("500m", "1"), "--state-dir", str(st))
    assert out.returncode == 1
    assert "checkpoint is corrupted, please drain this node and delete pod resource information checkpoint file" \
        in out.stderr
    assert str(f) in out.stderr and "Traceback" not in out.stderr


def test_with_in_place_resize_off_the_file_is_neither_read_nor_written(tmp_path):
    st = _deferred_state(tmp_path)
    (tmp_path / "kubelet.yaml").write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                                           "featureGates: {InPlacePodVerticalScaling: false}\n")
    (tmp_path / "pods.yaml").write_text(PODS % ('"2"', "2"))
    out = run("--kubernetes-version", "1.34", "admit", "--machine", "1s1n4c1t:mem=8Gi", "--config",
              str(tmp_path / "kubelet.yaml"), "--state-dir", str(st), "--write-state", str(tmp_path / "out"),
              str(tmp_path / "pods.yaml"), "-o", "json")
    assert out.returncode == 0, out.stderr
    assert "NewNoopStateCheckpoint" in out.stderr
    assert not (tmp_path / "out" / "allocated_pods_state").exists()


def test_a_release_whose_format_is_not_modelled_is_refused(tmp_path):
    st = _deferred_state(tmp_path)
    (tmp_path / "pods.yaml").write_text(PODS % ('"2"', "2"))
    out = run("--kubernetes-version", "1.34", "admit", "--machine", "1s1n4c1t:mem=8Gi", "--state-dir", str(st),
              str(tmp_path / "pods.yaml"), "-o", "json")
    assert out.returncode == 1
    assert "allocated_pods_state format of Kubernetes v1.34 is not modelled" in out.stderr
