"""``kubetwin admit --resize POD=FILE``: in-place resizes after admission, as the API server and kubelet answer."""

from __future__ import annotations

import json
import subprocess
import sys

KUBELET = """apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
"""
PODS = """apiVersion: v1
kind: Pod
metadata: {name: web, uid: u-web}
spec:
  containers:
  - name: app
    resources: {requests: {cpu: 500m, memory: 256Mi}, limits: {cpu: "1", memory: 512Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db, uid: u-db}
spec:
  containers:
  - name: db
    resources: {requests: {cpu: "2", memory: 1Gi}, limits: {cpu: "2", memory: 1Gi}}
"""


def admit(tmp_path, *resizes: tuple[str, str], output: str = "json", extra: tuple[str, ...] = ()):
    (tmp_path / "kubelet.yaml").write_text(KUBELET)
    (tmp_path / "pods.yaml").write_text(PODS)
    args = ["admit", "--machine", "1s1n4c1t:mem=8Gi", "--config", str(tmp_path / "kubelet.yaml"),
            str(tmp_path / "pods.yaml"), "-o", output, *extra]
    for i, (pod, patch) in enumerate(resizes):
        f = tmp_path / f"patch{i}.yaml"
        f.write_text(patch)
        args += ["--resize", f"{pod}={f}"]
    return run(*args)


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubetwin", *args], capture_output=True, text=True)


GROW_WEB = 'spec: {containers: [{name: app, resources: {requests: {cpu: "1"}, limits: {cpu: "2"}}}]}'


def test_an_allocated_resize_is_completed_with_the_new_cgroup_values(tmp_path):
    out = admit(tmp_path, ("web", GROW_WEB))
    assert out.returncode == 0, out.stderr
    [r] = json.loads(out.stdout)["resizes"]
    assert (r["status"], r["conditions"]) == ("Completed", [])
    res = r["containers"][0]["resources"]
    assert (res["cpuQuota"], res["cpuShares"], res["cpusetCpus"]) == (200000, 1024, "0,3")  # the shared pool
    assert [a["action"] for a in r["actions"]] == ["SetPodCgroupConfig", "SetPodCgroupConfig",
                                                   "UpdateContainerResources", "UpdatePodSandboxResources"]


def test_a_guaranteed_pods_cpu_resize_is_infeasible_under_the_static_policy(tmp_path):
    out = admit(tmp_path, ("db", 'spec: {containers: [{name: db, resources: {requests: {cpu: "3"}, '
                                 'limits: {cpu: "3"}}}]}'))
    [r] = json.loads(out.stdout)["resizes"]
    assert (r["status"], r["message"]) == ("Infeasible", 'Resize is infeasible for Guaranteed Pods alongside CPU '
                                                         'Manager policy "static"')
    assert r["conditions"][0]["type"] == "PodResizePending"


def test_a_resize_the_api_server_refuses_never_reaches_the_kubelet(tmp_path):
    out = admit(tmp_path, ("web", 'spec: {containers: [{name: app, resources: {requests: {cpu: "1", '
                                  'memory: 512Mi}}}]}'))
    [r] = json.loads(out.stdout)["resizes"]
    assert r["status"] == "Refused"
    assert r["message"] == ('Pod "web" is invalid: spec: Invalid value: "Burstable": Pod QOS Class may not change as '
                            'a result of resizing')


def test_a_refused_resize_is_a_rejection_for_fail_on_reject(tmp_path):
    out = admit(tmp_path, ("web", 'spec: {containers: [{name: app, resources: {limits: {cpu: null}}}]}'),
                extra=("--fail-on-reject",))
    assert out.returncode == 3


def test_cri_output_holds_the_resize_calls_and_pod_cgroup_writes(tmp_path):
    out = admit(tmp_path, ("web", GROW_WEB), output="cri")
    data = json.loads(out.stdout)
    whys = [c.get("why", "") for c in data["calls"] if "in-place resize" in c.get("why", "")]
    assert whys == ["in-place resize (cpu)", "in-place resize"]
    assert data["resizes"][0]["actions"][0] == {"action": "SetPodCgroupConfig", "resource": "cpu",
                                                "files": {"cpu.max": "200000 100000"}}


def test_the_table_shows_each_resize(tmp_path):
    out = admit(tmp_path, ("web", GROW_WEB), output="table")
    assert "in-place resizes" in out.stdout and "Completed" in out.stdout


def test_an_unknown_pod_is_an_input_error_naming_the_admitted_pods(tmp_path):
    out = admit(tmp_path, ("nope", GROW_WEB))
    assert out.returncode == 1
    assert 'no admitted pod "nope"' in out.stderr and "default/web, default/db" in out.stderr


def test_a_malformed_resize_option_is_a_usage_error(tmp_path):
    (tmp_path / "kubelet.yaml").write_text(KUBELET)
    (tmp_path / "pods.yaml").write_text(PODS)
    out = run("admit", "--machine", "1s1n4c1t", str(tmp_path / "pods.yaml"), "--resize", "web")
    assert out.returncode == 2 and "expected POD=FILE" in out.stderr


def test_a_bad_patch_file_fails_before_any_resize(tmp_path):
    out = admit(tmp_path, ("web", GROW_WEB), ("db", "spec: {containers: [{name: db, imag: x}]}"))
    assert out.returncode == 1 and 'unknown field "spec.containers[0].imag"' in out.stderr and not out.stdout
