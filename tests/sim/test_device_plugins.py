"""Device plugins on simulated node groups: the node's extended resources and its kubelet's
Device Manager (kubetwin/sim/device_plugins.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubetwin.errors import InputError
from kubetwin.kubelet.devices import DeviceInventory
from kubetwin.kubelet.devices.inventory import Device
from kubetwin.machine.spec import parse_spec
from kubetwin.sim.device_plugins import device_resources, parse_devices
from kubetwin.sim.loop import simulate

NUMA_KUBELET = {"cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node", "reservedSystemCPUs": "0"}


def gpu_pods(n: int, gpus: int = 2) -> dict:
    res = {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": str(gpus)}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "train"},
            "spec": {"replicas": n, "selector": {"matchLabels": {"app": "train"}},
                     "template": {"metadata": {"labels": {"app": "train"}},
                                  "spec": {"containers": [{"name": "c", "resources": {"requests": res, "limits": res}}]}}}}


def test_capacity_counts_every_device_and_allocatable_the_healthy_ones():
    inv = DeviceInventory({"vendor.com/x": (Device("a", (0,)), Device("b", (1,), "Unhealthy"))})
    assert device_resources(inv) == ({"vendor.com/x": "2"}, {"vendor.com/x": "1"})


def test_devices_from_the_machine_are_its_gpus_under_the_vendors_resource_name():
    inv = parse_devices("machine", "spec.nodeGroups[0].devices", Path("."), parse_spec("2s2n16c2t:gpus=8"))
    assert list(inv.resources) == ["nvidia.com/gpu"] and len(inv.resources["nvidia.com/gpu"]) == 8


def test_a_machine_without_gpus_has_nothing_to_advertise():
    with pytest.raises(InputError, match="no GPUs"):
        parse_devices("machine", "spec.nodeGroups[0].devices", Path("."), parse_spec("1s2n4c2t"))


def test_devices_need_a_machine():
    with pytest.raises(InputError, match="machine"):
        parse_devices("machine", "spec.nodeGroups[0].devices", Path("."), None)


def test_a_missing_inventory_file_is_refused(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        parse_devices("inv.yaml", "spec.nodeGroups[0].devices", tmp_path, parse_spec("1s2n4c2t:gpus=2"))


def test_the_node_reports_the_devices_and_its_kubelet_allocates_them(tmp_path, kit):
    group = kit.group(name="gpu", count=1, machine="2s2n16c2t:gpus=8", kubeletConfig=NUMA_KUBELET, devices="machine")
    group.pop("capacity")
    r = simulate(kit.scenario(tmp_path, {"nodeGroups": [group]}, gpu_pods(5)))
    running = [p for p in r.pods if p.phase == "Running"]
    assert len(running) == 4   # 8 GPUs, two a pod; the fifth pod finds no node
    assert r.node_reports[0].allocatable["nvidia.com/gpu"] == 8


def test_devices_not_on_one_numa_node_are_a_topology_affinity_error(tmp_path, kit):
    # one GPU a NUMA node: two GPUs never come from one NUMA node under single-numa-node
    group = kit.group(name="gpu", count=1, machine="2s2n16c2t:gpus=4", kubeletConfig=NUMA_KUBELET, devices="machine")
    group.pop("capacity")
    r = simulate(kit.scenario(tmp_path, {"nodeGroups": [group]}, gpu_pods(1)))
    assert {p.reason for p in r.pods if p.phase == "Failed"} == {"TopologyAffinityError"}


def test_a_misspelt_devices_field_is_refused(tmp_path, kit):
    group = kit.group(name="gpu", count=1, machine="2s2n16c2t:gpus=4", devics="machine")
    group.pop("capacity")
    with pytest.raises(InputError, match="devices"):
        kit.scenario(tmp_path, {"nodeGroups": [group]})
