"""ResourceSlices for a machine's PCI devices, as a node-local DRA driver publishes them.

A driver on one node publishes one pool named after the node (``nodeName`` set, generation 1)
with a device per GPU, NIC or NVMe controller it manages. Attributes follow what the known
drivers and the standard attributes (``k8s.io/dynamic-resource-allocation/deviceattribute``)
use: ``resource.kubernetes.io/pciBusID`` (extended BDF), ``type``, ``index``, ``model``,
``vendor``, ``vendorID``/``deviceID`` (4 hex digits), ``numaNode``; ``memory`` capacity where
the model is known; ``resource.kubernetes.io/pcieRoot`` (``pci<domain>:<root bus>``, the
root complex the device hangs off, for ``matchAttribute`` constraints that keep a GPU and a
NIC under one host bridge) when the machine source tells it — a MachineInfo does not, and
a driver that cannot resolve it publishes no such attribute either.

Partitionable GPUs (gate DRAPartitionableDevices) follow the v1 shape: counters live in
slices of their own (``sharedCounters``, at most 8 counter sets per slice), devices in other
slices of the same pool (at most 64 per slice when they consume counters). Each GPU gets a
counter set ``<gpu>-counters`` holding its memory (or ``partitions`` units when the memory is
unknown); the whole GPU consumes all of it and each of the N partitions an N-th, so the
allocator offers the GPU whole *or* in parts, never both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from ..errors import InputError
from ..machine.model import Machine, PCIDevice
from .api import (
    COUNTER_SETS_MAX,
    DEVICES_PER_SLICE_MAX,
    DEVICES_PER_SLICE_WITH_EXTRAS_MAX,
    parse_resource_slice,
    validate_qualified_name,
)
from .cdi import CDIDevice, CDISpec, ContainerEdits

PCI_BUS_ID: Final = "resource.kubernetes.io/pciBusID"
PCIE_ROOT: Final = "resource.kubernetes.io/pcieRoot"
KINDS: Final = ("gpu", "nic", "nvme")
_GI: Final = 1024 ** 3

#: (vendor id, device id) -> (model, memory bytes) for GPUs whose memory a driver would report.
KNOWN_GPUS: Final[dict[tuple[int, int], tuple[str, int]]] = {
    (0x10DE, 0x1094): ("Tesla M2075", 6 * _GI),
    (0x10DE, 0x1DB4): ("Tesla V100-PCIE-16GB", 16 * _GI),
    (0x10DE, 0x1DB5): ("Tesla V100-SXM2-32GB", 32 * _GI),
    (0x10DE, 0x1DB8): ("Tesla V100-SXM3-32GB", 32 * _GI),
    (0x10DE, 0x1EB8): ("Tesla T4", 16 * _GI),
    (0x10DE, 0x20B0): ("A100-SXM4-40GB", 40 * _GI),
    (0x10DE, 0x20B2): ("A100-SXM4-80GB", 80 * _GI),
    (0x10DE, 0x20B5): ("A100 80GB PCIe", 80 * _GI),
    (0x10DE, 0x2330): ("H100 SXM5 80GB", 80 * _GI),
    (0x10DE, 0x2331): ("H100 PCIe", 80 * _GI),
}
KNOWN_VENDORS: Final = {0x10DE: "NVIDIA Corporation", 0x1002: "Advanced Micro Devices, Inc. [AMD/ATI]",
                        0x8086: "Intel Corporation", 0x15B3: "Mellanox Technologies", 0x144D: "Samsung"}

_BDF = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


@dataclass(frozen=True, slots=True)
class PublishedDevices:
    """What the driver publishes: ResourceSlice manifests (v1) and CDI specs by file name."""

    slices: tuple[dict[str, Any], ...]
    cdi_specs: dict[str, CDISpec]

    def as_list(self) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "List", "items": list(self.slices)}


def _quantity(n: int) -> str:
    """Binary-SI text (``32Gi``) when exact, as drivers write memory; plain digits otherwise."""
    for suffix, unit in (("Ti", 1024 ** 4), ("Gi", 1024 ** 3), ("Mi", 1024 ** 2), ("Ki", 1024)):
        if n and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)


def _string(value: str) -> dict[str, str]:
    return {"string": value[:64]}


def _attributes(dev: PCIDevice, kind: str, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    known = KNOWN_GPUS.get((dev.vendor_id, dev.device_id)) if kind == "gpu" else None
    model = dev.model or (known[0] if known else f"{dev.vendor_id:04x}:{dev.device_id:04x}")
    vendor = dev.vendor or KNOWN_VENDORS.get(dev.vendor_id, f"{dev.vendor_id:04x}")
    attrs: dict[str, Any] = {
        "type": _string(kind), "index": {"int": index}, "model": _string(model), "vendor": _string(vendor),
        "vendorID": _string(f"{dev.vendor_id:04x}"), "deviceID": _string(f"{dev.device_id:04x}"),
    }
    if _BDF.match(dev.address):
        attrs[PCI_BUS_ID] = _string(dev.address.lower())
    if dev.pcie_root:
        attrs[PCIE_ROOT] = _string(dev.pcie_root)
    if dev.numa_node is not None:
        attrs["numaNode"] = {"int": dev.numa_node}
    capacity: dict[str, Any] = {}
    if known:
        capacity["memory"] = {"value": _quantity(known[1])}
    return attrs, capacity


def _edits(dev: PCIDevice, kind: str, index: int) -> ContainerEdits:
    env = (f"PCI_BUS_ID={dev.address.lower()}",)
    if kind == "gpu" and dev.vendor_id == 0x10DE:
        return ContainerEdits(env=env, device_nodes=({"path": f"/dev/nvidia{index}"},))
    if kind == "gpu":
        return ContainerEdits(env=env, device_nodes=({"path": f"/dev/dri/renderD{128 + index}"},))
    if kind == "nvme":
        return ContainerEdits(env=env, device_nodes=({"path": f"/dev/nvme{index}"},))
    return ContainerEdits(env=env)


def devices_for_machine(machine: Machine, driver: str, node_name: str, *, kinds: tuple[str, ...] = KINDS,
                        vendor_ids: tuple[int, ...] = (), partitions: int = 0,
                        partitionable_devices: bool = True) -> PublishedDevices:
    """The slices (and CDI specs) ``driver`` publishes for ``machine`` on node ``node_name``.

    ``vendor_ids`` limits the devices to those vendors (a vendor's driver manages only its
    own); ``partitions`` ≥ 2 offers each GPU whole or as that many partitions sharing counters.
    """
    for k in kinds:
        if k not in KINDS:
            raise InputError(f"unknown device kind {k!r}: use {', '.join(KINDS)}", path="--kind")
    if partitions == 1 or partitions < 0 or partitions > 16:
        raise InputError(f"--partitions {partitions}: must be 0 (whole devices) or 2 to 16", path="--partitions")
    if partitions and not partitionable_devices:
        raise InputError("partitioned GPUs need the DRAPartitionableDevices feature gate", path="--feature-gates",
                         fix="set --feature-gates DRAPartitionableDevices=true")
    selected = sorted((d for d in machine.pci_devices
                       if d.kind in kinds and (not vendor_ids or d.vendor_id in vendor_ids)),
                      key=lambda d: (KINDS.index(d.kind), d.numa_node if d.numa_node is not None else 1 << 30,
                                     d.address))
    devices: list[dict[str, Any]] = []
    counter_sets: list[dict[str, Any]] = []
    cdi: dict[str, list[CDIDevice]] = {}
    counts = dict.fromkeys(KINDS, 0)
    for dev in selected:
        kind = dev.kind
        index = counts[kind]
        counts[kind] += 1
        name = f"{kind}-{index}"
        attrs, capacity = _attributes(dev, kind, index)
        edits = _edits(dev, kind, index)
        whole: dict[str, Any] = {"name": name, "attributes": attrs}
        if capacity:
            whole["capacity"] = capacity
        if kind == "gpu" and partitions:
            memory = KNOWN_GPUS.get((dev.vendor_id, dev.device_id), (None, 0))[1]
            counter, total = ("memory", memory) if memory else ("partitions", partitions)
            set_name = f"{name}-counters"
            counter_sets.append({"name": set_name, "counters": {counter: {"value": _quantity(total)}}})
            whole["consumesCounters"] = [{"counterSet": set_name, "counters": {counter: {"value": _quantity(total)}}}]
            devices.append(whole)
            cdi.setdefault(kind, []).append(CDIDevice(name, edits))
            share = total // partitions
            for p in range(partitions):
                part_attrs = dict(attrs)
                part_attrs["partition"] = {"int": p}
                part_attrs["parentDevice"] = _string(name)
                part: dict[str, Any] = {"name": f"{name}-part-{p}", "attributes": part_attrs,
                                        "consumesCounters": [{"counterSet": set_name,
                                                              "counters": {counter: {"value": _quantity(share)}}}]}
                if memory:
                    part["capacity"] = {"memory": {"value": _quantity(share)}}
                devices.append(part)
                cdi.setdefault(kind, []).append(CDIDevice(part["name"], ContainerEdits(
                    env=edits.env + (f"DRA_PARTITION={p}/{partitions}",), device_nodes=edits.device_nodes)))
            continue
        devices.append(whole)
        cdi.setdefault(kind, []).append(CDIDevice(name, edits))
    slices = _slices(driver, node_name, devices, counter_sets)
    for s in slices:
        parse_resource_slice(s)  # what we publish must be valid v1
    specs = {}
    for kind, items in cdi.items():
        spec = CDISpec(driver, kind, tuple(items))
        spec.validate()
        specs[spec.file_name()] = spec
    return PublishedDevices(tuple(slices), specs)


def _slices(driver: str, node: str, devices: list[dict[str, Any]], counter_sets: list[dict[str, Any]]
            ) -> list[dict[str, Any]]:
    per_slice = DEVICES_PER_SLICE_WITH_EXTRAS_MAX if counter_sets else DEVICES_PER_SLICE_MAX
    bodies: list[dict[str, Any]] = []
    for i in range(0, len(counter_sets), COUNTER_SETS_MAX):
        bodies.append({"sharedCounters": counter_sets[i:i + COUNTER_SETS_MAX]})
    for i in range(0, len(devices), per_slice):
        bodies.append({"nodeName": node, "devices": devices[i:i + per_slice]})
    if not bodies:
        bodies.append({"nodeName": node, "devices": []})
    out = []
    for i, body in enumerate(bodies):
        spec: dict[str, Any] = {"driver": driver, "pool": {"name": node, "generation": 1,
                                                           "resourceSliceCount": len(bodies)}}
        spec["nodeName"] = node
        if "sharedCounters" in body:
            spec["sharedCounters"] = body["sharedCounters"]
        else:
            spec["devices"] = body["devices"]
        out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                    "metadata": {"name": f"{node}-{driver}-{i}"}, "spec": spec})
    return out


def check_driver_name(driver: str) -> None:
    validate_qualified_name(f"{driver}/x", "--driver")
