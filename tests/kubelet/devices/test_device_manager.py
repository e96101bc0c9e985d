"""Specifications of the Device Manager (``pkg/kubelet/cm/devicemanager``) and its admission."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.checkpoint.device_manager_state import (
    CorruptDeviceCheckpoint,
    device_state_from_json,
    device_state_to_json,
)
from kubetwin.kubelet.devices import DeviceManager, devices_from_machine, inventory_from_dict
from kubetwin.kubelet.topology.hint import TopologyHint
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict

KUBETWIN = [sys.executable, "-m", "kubetwin"]
GPU = "nvidia.com/gpu"


def inventory(*devices, resource=GPU):
    return inventory_from_dict({"resources": {resource: [dict(d) for d in devices]}})


def gpus(*numa, unhealthy=()):
    return inventory(*({"id": f"gpu-{i}", "numaNodes": [n], **({"health": "Unhealthy"} if i in unhealthy else {})}
                       for i, n in enumerate(numa)))


def pod(name, gpus_per_container=(1,), init=(), sidecar=None, cpu=None):
    def cont(cname, n):
        lim = {GPU: str(n)}
        if cpu:
            lim.update({"cpu": cpu, "memory": "100Mi"})
        return {"name": cname, "resources": {"limits": lim, "requests": dict(lim)}}

    spec = {"containers": [cont(f"c{i}", n) for i, n in enumerate(gpus_per_container)]}
    inits = [cont(f"init{i}", n) for i, n in enumerate(init)]
    if sidecar is not None:
        inits.append({**cont("side", sidecar), "restartPolicy": "Always"})
    if inits:
        spec["initContainers"] = inits
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": name, "namespace": "default", "uid": name}, "spec": spec})


def manager(inv, affinity=None, nodes=(0, 1)):
    store = affinity or {}
    return DeviceManager(inv, nodes, lambda uid, c: store.get((uid, c), TopologyHint(None, True)))


def node(inv, **cfg):
    base = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
    base.update(cfg)
    return NodeAdmission(load_machine("2s2n4c2t"), KubeletConfiguration.from_dict(base), devices=inv)


# --- hints --------------------------------------------------------------------------------------
def test_hints_prefer_the_narrowest_masks_that_could_hold_the_request():
    m = manager(gpus(0, 0, 1, 1))
    hints = m.get_topology_hints(pod("p"), pod("p").spec.containers[0])[GPU]
    assert [(h.affinity, h.preferred) for h in hints] == [(0b01, True), (0b10, True), (0b11, False)]


def test_preference_counts_all_devices_not_only_free_ones():
    m = manager(gpus(0, 0, 1, 1))
    p = pod("p", (2,))
    m.allocate(pod("first"), pod("first").spec.containers[0])  # one device of node 0 taken
    hints = m.get_topology_hints(p, p.spec.containers[0])[GPU]
    assert [(h.affinity, h.preferred) for h in hints] == [(0b10, True), (0b11, False)]


def test_a_resource_without_topology_has_no_preference():
    m = manager(inventory({"id": "a"}, {"id": "b"}))
    p = pod("p")
    assert m.get_topology_hints(p, p.spec.containers[0]) == {GPU: None}


def test_not_enough_devices_gives_an_empty_hint_list():
    m = manager(gpus(0, 1))
    p = pod("p", (3,))
    assert m.get_topology_hints(p, p.spec.containers[0]) == {GPU: []}


def test_unhealthy_devices_are_not_available():
    m = manager(gpus(0, 1, unhealthy=(0,)))
    p = pod("p", (1,))
    assert [h.affinity for h in m.get_topology_hints(p, p.spec.containers[0])[GPU]] == [0b10, 0b11]


def test_pod_hints_sum_the_containers_limits():
    m = manager(gpus(0, 0, 1, 1))
    p = pod("p", (1, 1))
    assert [(h.affinity, h.preferred) for h in m.get_pod_topology_hints(p)[GPU]] == [
        (0b01, True), (0b10, True), (0b11, False)]


def test_containers_without_device_resources_give_no_hints():
    m = manager(gpus(0))
    p = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "uid": "x"},
                       "spec": {"containers": [{"name": "c"}]}})
    assert m.get_topology_hints(p, p.spec.containers[0]) is None


# --- allocation -----------------------------------------------------------------------------------
def test_allocation_takes_devices_inside_the_merged_affinity():
    p = pod("p", (2,))
    m = manager(gpus(0, 1, 1, 0), {("p", "c0"): TopologyHint(0b10, True)})
    m.allocate(p, p.spec.containers[0])
    assert m.devices_for("p", "c0") == [(GPU, ["gpu-1", "gpu-2"])]


def test_allocation_completes_from_outside_the_affinity_when_it_is_too_small():
    p = pod("p", (3,))
    m = manager(gpus(0, 1, 1, 0), {("p", "c0"): TopologyHint(0b10, True)})
    m.allocate(p, p.spec.containers[0])
    ids = dict(m.devices_for("p", "c0"))[GPU]
    assert {"gpu-1", "gpu-2"} <= set(ids) and len(ids) == 3


def test_no_device_is_handed_out_twice():
    m = manager(gpus(0, 1))
    a, b, c = pod("a"), pod("b"), pod("c")
    m.allocate(a, a.spec.containers[0])
    m.allocate(b, b.spec.containers[0])
    with pytest.raises(Exception, match="requested number of devices unavailable for nvidia.com/gpu. "
                                        "Requested: 1, Available: 0"):
        m.allocate(c, c.spec.containers[0])
    assert set(dict(m.devices_for("a", "c0"))[GPU]).isdisjoint(dict(m.devices_for("b", "c0"))[GPU])


def test_app_containers_reuse_the_devices_of_init_containers():
    p = pod("p", (1,), init=(2,))
    m = manager(gpus(0, 0, 1))
    for c, _ in p.all_containers():
        m.allocate(p, c)
    init_ids = dict(m.devices_for("p", "init0"))[GPU]
    assert dict(m.devices_for("p", "c0"))[GPU][0] in init_ids


def test_sidecar_devices_are_not_reused():
    p = pod("p", (1,), sidecar=1)
    m = manager(gpus(0, 1))
    for c, _ in p.all_containers():
        m.allocate(p, c)
    assert dict(m.devices_for("p", "side"))[GPU] != dict(m.devices_for("p", "c0"))[GPU]


def test_removing_a_pod_frees_its_devices():
    m = manager(gpus(0))
    a = pod("a")
    m.allocate(a, a.spec.containers[0])
    m.remove_pod("a")
    assert m.available(GPU) == {"gpu-0"}


def test_a_resource_with_only_unhealthy_devices_cannot_be_allocated():
    m = manager(gpus(0, unhealthy=(0,)))
    a = pod("a")
    with pytest.raises(Exception, match="no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu"):
        m.allocate(a, a.spec.containers[0])


# --- admission -----------------------------------------------------------------------------------
def test_single_numa_node_rejects_a_request_no_node_can_hold():
    n = node(gpus(0, 1), cpuManagerPolicy="none", topologyManagerPolicy="single-numa-node")
    d = n.admit(pod("p", (2,)))
    assert (d.admitted, d.reason) == (False, "TopologyAffinityError")


def test_device_shortage_without_alignment_is_an_unexpected_admission_error():
    n = node(gpus(0))
    assert n.admit(pod("a")).admitted
    d = n.admit(pod("b"))
    assert d.reason == "UnexpectedAdmissionError"
    assert d.message == ("Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. "
                         "Requested: 1, Available: 0, which is unexpected")


def test_exclusive_cpus_and_devices_land_on_the_same_numa_node():
    n = node(gpus(1, 1), cpuManagerPolicy="static", kubeReserved={"cpu": "1"},
             topologyManagerPolicy="single-numa-node")
    p = pod("p", (1,), cpu="2")
    assert n.admit(p).admitted
    numa1 = n.machine.node(1).cpus
    assert n.cpu.exclusive_cpus("p", "c0").is_subset_of(numa1)


def test_node_allocatable_counts_healthy_devices():
    n = node(gpus(0, 1, unhealthy=(1,)))
    assert n.allocatable[GPU].value() == 1 and n.capacity[GPU].value() == 2


def test_devices_from_machine_are_the_pci_gpus_with_their_numa_nodes():
    inv = devices_from_machine(load_machine("2s2n4c2t:gpus=4"))
    assert sorted(n for d in inv.resources[GPU] for n in d.numa_nodes) == [0, 1, 2, 3]


# --- checkpoint ----------------------------------------------------------------------------------
def test_device_checkpoint_write_then_read_is_the_identity():
    m = manager(gpus(0, 1, 1))
    a = pod("a", (2,))
    m.allocate(a, a.spec.containers[0])
    doc = device_state_to_json(m.checkpoint_data())
    back = device_state_from_json(json.loads(json.dumps(doc)))
    assert back.pod_devices == m.checkpoint_data().pod_devices
    assert back.registered == m.checkpoint_data().registered


def test_a_corrupted_device_checkpoint_is_detected():
    m = manager(gpus(0, 1))
    a = pod("a")
    m.allocate(a, a.spec.containers[0])
    doc = device_state_to_json(m.checkpoint_data())
    doc["Data"]["PodDeviceEntries"][0]["ContainerName"] = "other"
    with pytest.raises(CorruptDeviceCheckpoint, match="checkpoint is corrupted"):
        device_state_from_json(doc)


def test_checkpointed_devices_stay_taken_by_running_pods():
    m = manager(gpus(0, 1))
    a = pod("a")
    m.allocate(a, a.spec.containers[0])
    data = m.checkpoint_data()
    again = DeviceManager(gpus(0, 1), (0, 1), checkpoint=data)
    assert len(again.available(GPU)) == 1


# --- CLI -----------------------------------------------------------------------------------------
def _write(tmp: Path, name: str, text: str) -> str:
    p = tmp / name
    p.write_text(text)
    return str(p)


PODS = """apiVersion: v1
kind: Pod
metadata: {name: a, uid: a}
spec:
  containers:
  - name: c
    resources:
      limits: {nvidia.com/gpu: "1"}
"""


def test_admit_reports_devices_per_container(tmp_path):
    inv = _write(tmp_path, "inv.yaml", "resources:\n  nvidia.com/gpu:\n  - {id: g0, numaNodes: [0]}\n")
    pods = _write(tmp_path, "pods.yaml", PODS)
    out = subprocess.run(KUBETWIN + ["admit", "--machine", "2s2n4c2t", "--devices", inv, pods, "-o", "json"],
                         capture_output=True, text=True, check=True)
    c = json.loads(out.stdout)["pods"][0]["containers"][0]
    assert c["devices"] == [{"resourceName": GPU, "deviceIds": ["g0"]}]


@pytest.mark.parametrize("text,field", [
    ("resources:\n  gpu:\n  - {id: g0}\n", "resources[gpu]"),
    ("resources:\n  nvidia.com/gpu:\n  - {numaNodes: [0]}\n", "resources[nvidia.com/gpu][0].id"),
    ("resources:\n  nvidia.com/gpu:\n  - {id: g0, numaNodes: [7]}\n", "resources[nvidia.com/gpu][0].numaNodes"),
    ("resources:\n  nvidia.com/gpu:\n  - {id: g0, health: Broken}\n", "resources[nvidia.com/gpu][0].health"),
    ("resources:\n  nvidia.com/gpu:\n  - {id: g0}\n  - {id: g0}\n", "resources[nvidia.com/gpu][1].id"),
])
def test_bad_device_inventories_are_refused_naming_file_and_field(tmp_path, text, field):
    inv = _write(tmp_path, "inv.yaml", text)
    pods = _write(tmp_path, "pods.yaml", PODS)
    out = subprocess.run(KUBETWIN + ["admit", "--machine", "2s2n4c2t", "--devices", inv, pods],
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert f"inv.yaml: {field}:" in out.stderr
