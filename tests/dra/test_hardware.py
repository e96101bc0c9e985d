"""Devices from hardware: the ResourceSlices a node-local driver publishes for a machine's
PCI devices, partitionable GPUs sharing counters, and the matching CDI specs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from kubetwin.dra.allocator import Allocator
from kubetwin.dra.api import Node, parse_device_class, parse_resource_claim, parse_resource_slice
from kubetwin.dra.features import AllocatorFeatures
from kubetwin.dra.hardware import PCI_BUS_ID, PCIE_ROOT, devices_for_machine
from kubetwin.errors import InputError
from kubetwin.machine import load_machine, parse_spec

from .conftest import KUBETWIN

XML = Path("/work/shared/data/topologies/hwloc/xml")
DGX2 = XML / "nvidiaDGX2.xml"
NORMALIO = XML / "32em64t-2n8c2t-pci-normalio.xml"
pytestmark = pytest.mark.skipif(not DGX2.exists(), reason="shared topology data not available")


def devices(published):
    return [d for s in published.slices for d in s["spec"].get("devices", [])]


def test_dgx2_publishes_its_sixteen_gpus_with_model_memory_numa_and_pci_address():
    pub = devices_for_machine(load_machine(str(DGX2)), "gpu.nvidia.com", "node-1", kinds=("gpu",))
    gpus = devices(pub)
    assert len(gpus) == 16
    first = gpus[0]
    assert first["name"] == "gpu-0"
    assert first["attributes"]["model"] == {"string": "Tesla V100-SXM3-32GB"}
    assert first["attributes"][PCI_BUS_ID] == {"string": "0000:34:00.0"}
    assert first["attributes"]["numaNode"] == {"int": 0}
    assert first["capacity"] == {"memory": {"value": "32Gi"}}
    assert [g["attributes"]["numaNode"]["int"] for g in gpus] == [0] * 8 + [1] * 8


def test_published_slices_are_one_node_local_pool_that_validates_as_v1():
    pub = devices_for_machine(load_machine(str(NORMALIO)), "dev.example.com", "worker-3")
    for s in pub.slices:
        parsed = parse_resource_slice(s)
        assert (parsed.pool, parsed.node_name, parsed.generation) == ("worker-3", "worker-3", 1)
        assert parsed.resource_slice_count == len(pub.slices)


def test_nics_and_gpus_of_the_normalio_machine_are_published_with_hwloc_model_names():
    pub = devices_for_machine(load_machine(str(NORMALIO)), "dev.example.com", "node-1")
    by_name = {d["name"]: d for d in devices(pub)}
    assert by_name["nic-0"]["attributes"]["model"] == {"string": "MT27700 Family [ConnectX-4]"}
    assert by_name["nic-0"]["attributes"]["type"] == {"string": "nic"}
    assert sum(1 for n in by_name if n.startswith("gpu-")) == 5


def test_vendor_filter_keeps_only_that_vendors_devices():
    pub = devices_for_machine(load_machine(str(NORMALIO)), "gpu.nvidia.com", "node-1", kinds=("gpu",),
                              vendor_ids=(0x10DE,))
    assert [d["attributes"]["vendorID"]["string"] for d in devices(pub)] == ["10de"] * 3


def test_partitioned_gpus_put_counters_and_devices_in_separate_slices_within_limits():
    pub = devices_for_machine(load_machine(str(DGX2)), "gpu.nvidia.com", "node-1", kinds=("gpu",), partitions=4)
    counter_slices = [s for s in pub.slices if "sharedCounters" in s["spec"]]
    device_slices = [s for s in pub.slices if "devices" in s["spec"]]
    assert [len(s["spec"]["sharedCounters"]) for s in counter_slices] == [8, 8]
    assert all(len(s["spec"]["devices"]) <= 64 for s in device_slices)
    assert sum(len(s["spec"]["devices"]) for s in device_slices) == 16 * 5


def test_a_gpu_is_offered_whole_or_in_partitions_never_both():
    pub = devices_for_machine(load_machine(str(DGX2)), "gpu.nvidia.com", "node-1", kinds=("gpu",), partitions=2)
    cls = parse_device_class({"metadata": {"name": "gpu"}, "spec": {"selectors": [
        {"cel": {"expression": 'device.attributes["gpu.nvidia.com"].index == 0'}}]}})
    alloc = Allocator(AllocatorFeatures(), {"gpu": cls}, [parse_resource_slice(s) for s in pub.slices])
    claim = parse_resource_claim({"metadata": {"name": "c"}, "spec": {"devices": {"requests": [
        {"name": "part", "exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression":
            'has(device.attributes["gpu.nvidia.com"].partition)'}}]}},
        {"name": "whole", "exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression":
            '!has(device.attributes["gpu.nvidia.com"].partition)'}}]}}]}}})
    assert not alloc.allocate(Node("node-1"), [claim]).allocated


def test_partitions_need_the_partitionable_devices_gate():
    with pytest.raises(InputError, match="DRAPartitionableDevices"):
        devices_for_machine(load_machine(str(DGX2)), "gpu.nvidia.com", "node-1", partitions=2,
                            partitionable_devices=False)


def test_cdi_spec_names_the_published_devices_with_nvidia_device_nodes():
    pub = devices_for_machine(load_machine(str(DGX2)), "gpu.nvidia.com", "node-1", kinds=("gpu",))
    spec = pub.cdi_specs["gpu.nvidia.com-gpu.json"].to_json()
    assert spec["kind"] == "gpu.nvidia.com/gpu" and spec["cdiVersion"] == "1.1.0"
    assert spec["devices"][3]["name"] == "gpu-3"
    assert spec["devices"][3]["containerEdits"]["deviceNodes"] == [{"path": "/dev/nvidia3"}]


def test_cli_slices_output_feeds_dra_allocate(tmp_path: Path):
    out = subprocess.run(KUBETWIN + ["dra", "slices", "--machine", str(NORMALIO), "--driver", "gpu.nvidia.com",
                                     "--kind", "gpu", "--vendor-id", "10de", "--cdi-dir", "."],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    (tmp_path / "slices.yaml").write_text(out.stdout)
    (tmp_path / "class.yaml").write_text(yaml.safe_dump({
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.nvidia.com"'}}]}}))
    (tmp_path / "claim.yaml").write_text(yaml.safe_dump({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
        "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu", "selectors": [
            {"cel": {"expression": 'device.attributes["gpu.nvidia.com"].numaNode == 1'}}]}}]}}}))
    (tmp_path / "node.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Node",
                                                        "metadata": {"name": "node-1"}}))
    res = subprocess.run(KUBETWIN + ["dra", "allocate", "-f", "slices.yaml", "-f", "class.yaml", "--node", "node.yaml",
                                     "-o", "json", "claim.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["claims"][0]["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-1"
    assert json.loads((tmp_path / "gpu.nvidia.com-gpu.json").read_text())["kind"] == "gpu.nvidia.com/gpu"


@pytest.mark.parametrize("args,needle", [(["--driver", "Not_A_Driver"], "--driver"),
                                         (["--driver", "d.example.com", "--partitions", "1"], "--partitions"),
                                         (["--driver", "d.example.com", "--vendor-id", "zz"], "--vendor-id")])
def test_cli_slices_bad_input_exits_1_naming_the_option(args, needle):
    out = subprocess.run(KUBETWIN + ["dra", "slices", "--machine", str(NORMALIO), *args], capture_output=True, text=True)
    assert out.returncode == 1 and needle in out.stderr


def test_cli_slices_with_a_missing_machine_exits_1():
    out = subprocess.run(KUBETWIN + ["dra", "slices", "--machine", "/nonexistent.xml", "--driver", "d.example.com"],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "nonexistent" in out.stderr


def test_each_device_publishes_the_pcie_root_it_hangs_off():
    pub = devices_for_machine(load_machine(str(DGX2)), "gpu.nvidia.com", "node-1", kinds=("gpu",))
    roots = [d["attributes"][PCIE_ROOT]["string"] for d in devices(pub)]
    assert roots == ["pci0000:2b"] * 4 + ["pci0000:4e"] * 4 + ["pci0000:ae"] * 4 + ["pci0000:d7"] * 4


def test_partitions_inherit_the_pcie_root_of_their_gpu():
    pub = devices_for_machine(load_machine(str(DGX2)), "gpu.nvidia.com", "node-1", kinds=("gpu",), partitions=2)
    by_name = {d["name"]: d for d in devices(pub)}
    assert by_name["gpu-5-part-1"]["attributes"][PCIE_ROOT] == {"string": "pci0000:4e"}


def test_a_machine_source_without_pci_topology_publishes_no_pcie_root():
    import dataclasses

    machine = parse_spec("1s1n2c:gpus=1")
    bare = dataclasses.replace(machine, pci_devices=tuple(dataclasses.replace(d, pcie_root="")
                                                          for d in machine.pci_devices))
    (gpu,) = devices(devices_for_machine(bare, "gpu.example.com", "node-1", kinds=("gpu",)))
    assert PCIE_ROOT not in gpu["attributes"] and PCI_BUS_ID in gpu["attributes"]


def test_match_attribute_on_pcie_root_pairs_a_gpu_with_a_nic_under_the_same_host_bridge():
    machine = parse_spec("2s1n4c:gpus=2:nics=2")  # one GPU and one NIC under each NUMA node's root
    pub = devices_for_machine(machine, "dev.example.com", "node-1")
    classes = {k: parse_device_class({"metadata": {"name": k}, "spec": {"selectors": [{"cel": {"expression":
               f'device.attributes["dev.example.com"].type == "{k}"'}}]}}) for k in ("gpu", "nic")}
    claim = parse_resource_claim({"metadata": {"name": "c"}, "spec": {"devices": {
        "requests": [{"name": "nic", "exactly": {"deviceClassName": "nic", "selectors": [{"cel": {"expression":
                         'device.attributes["dev.example.com"].numaNode == 1'}}]}},
                     {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}],
        "constraints": [{"matchAttribute": PCIE_ROOT}]}}})
    outcome = Allocator(AllocatorFeatures(), classes, [parse_resource_slice(s) for s in pub.slices]).allocate(
        Node("node-1"), [claim])
    assert outcome.allocated
    got = {r.request: r.device for r in outcome.results[0].results}
    assert got == {"nic": "nic-1", "gpu": "gpu-1"}  # without the constraint: gpu-0
