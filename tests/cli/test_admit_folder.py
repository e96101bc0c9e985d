"""``kubetwin admit SNAPSHOT/nodes/NAME`` (``kubetwin.cli.admit_folder``): a snapshot's node folder
gives admit its pods, its kubelet configuration and, when it holds one, the node's machine; a
folder without a machine asks for ``--machine``."""

from __future__ import annotations

import json
import subprocess
import sys

from kubetwin.machine import load_machine
from kubetwin.machine.machineinfo import to_machineinfo

PODS = {"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db", "namespace": "default", "uid": "u-db"},
     "spec": {"nodeName": "worker-0", "containers": [{"name": "db", "image": "db", "resources": {
         "requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}}}]}}]}
KUBELET = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
           "cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubetwin", *args], capture_output=True, text=True)


def node_folder(tmp_path, *, machine: bool = True):
    folder = tmp_path / "snap" / "nodes" / "worker-0"
    folder.mkdir(parents=True)
    (folder / "pods.json").write_text(json.dumps(PODS))
    (folder / "kubelet.json").write_text(json.dumps(KUBELET))
    if machine:
        (folder / "machine.json").write_text(json.dumps(to_machineinfo(load_machine("1s2n4c1t"))))
    return folder


def test_a_node_folder_with_its_machine_needs_no_flags(tmp_path):
    r = run("admit", str(node_folder(tmp_path)), "-o", "json")
    assert r.returncode == 0, r.stderr
    [pod] = json.loads(r.stdout)["pods"]
    assert pod["admitted"] and pod["name"] == "db"


def test_the_folders_kubelet_configuration_is_used(tmp_path):
    r = run("admit", str(node_folder(tmp_path)), "-o", "json")
    [pod] = json.loads(r.stdout)["pods"]
    [db] = pod["containers"]
    assert db["resources"]["cpusetCpus"] == "1-2"   # static policy, CPU 0 reserved: exclusive CPUs


def test_a_node_folder_without_a_machine_names_the_flag(tmp_path):
    folder = node_folder(tmp_path, machine=False)
    r = run("admit", str(folder))
    assert r.returncode == 1
    assert "--machine" in r.stderr and "machine.json" in r.stderr and "Traceback" not in r.stderr


def test_machine_given_with_a_node_folder_wins(tmp_path):
    r = run("admit", "--machine", "1s1n4c1t", str(node_folder(tmp_path, machine=False)), "-o", "json")
    assert r.returncode == 0, r.stderr


def test_a_folder_that_is_not_a_node_folder_is_refused(tmp_path):
    r = run("admit", str(tmp_path))
    assert r.returncode == 1 and "pods.json" in r.stderr


def test_without_a_folder_machine_is_still_required(tmp_path):
    (tmp_path / "pods.json").write_text(json.dumps(PODS))
    r = run("admit", str(tmp_path / "pods.json"))
    assert r.returncode == 2 and "--machine" in r.stderr
