"""What the device plugins of a node advertise: resource name -> devices, each with its NUMA nodes.

The kubelet learns devices only through the device-plugin ``ListAndWatch`` stream
(``pluginapi.Device``: ``ID``, ``Health``, ``Topology.Nodes``). kubetwin has no plugins to ask,
so the same facts come from an inventory file (``docs/device-inventory.md``) or are derived from
the machine's PCI functions, as the common GPU plugins would advertise them.

Upstream: the ``pluginapi.Device`` of ``k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto`` as
``pkg/kubelet/cm/devicemanager/manager.go`` records it; reading it from files is kubetwin's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ...errors import InputError
from ...model.strict import suggest, unknown_key_error

HEALTHY, UNHEALTHY = "Healthy", "Unhealthy"

#: PCI vendor id -> the resource name that vendor's device plugin advertises its GPUs under.
GPU_RESOURCE_BY_VENDOR: dict[int, str] = {
    0x10DE: "nvidia.com/gpu",
    0x1002: "amd.com/gpu",
    0x8086: "gpu.intel.com/i915",
}
#: GPUs of other vendors (and accelerators) from ``--devices-from-machine``.
GENERIC_GPU_RESOURCE = "kubetwin.io/gpu"


@dataclass(frozen=True, slots=True)
class Device:
    """One ``pluginapi.Device``; ``numa_nodes`` empty = no topology (the plugin sent none)."""

    id: str
    numa_nodes: tuple[int, ...] = ()
    health: str = HEALTHY

    @property
    def healthy(self) -> bool:
        return self.health == HEALTHY


@dataclass(frozen=True)
class DeviceInventory:
    """resource name -> its devices, in the order the source lists them."""

    resources: Mapping[str, tuple[Device, ...]]

    def is_empty(self) -> bool:
        return not self.resources


EMPTY_INVENTORY = DeviceInventory({})


def _is_extended_resource_name(name: str) -> bool:
    """Device plugins register fully qualified names outside ``kubernetes.io`` (``IsExtendedResourceName``)."""
    if "/" not in name:
        return False
    prefix, _, rest = name.partition("/")
    return bool(prefix and rest) and prefix != "kubernetes.io" and not prefix.endswith(".kubernetes.io")


#: The fields of the inventory format (docs/device-inventory.md): anything else is refused, with
#: the nearest field, instead of being ignored (a misspelt ``numaNode`` would drop the topology).
_INVENTORY_FIELDS = ("kind", "resources")
_DEVICE_FIELDS = ("id", "numaNodes", "numaNode", "health")


def inventory_from_dict(doc: Any, file: str | None = None, num_numa: set[int] | None = None) -> DeviceInventory:
    """Validate an inventory document; errors name the field path."""
    try:
        if not isinstance(doc, Mapping):
            raise InputError("a device inventory must be a mapping with a 'resources' key", path="")
        for key in doc:
            if key not in _INVENTORY_FIELDS:
                raise unknown_key_error(str(key), _INVENTORY_FIELDS, path=str(key))
        kind = doc.get("kind")
        if kind is not None and kind != "DeviceInventory":
            near = suggest(kind, ("DeviceInventory",)) if isinstance(kind, str) else None
            raise InputError(f"unsupported kind {kind!r}, expected DeviceInventory", path="kind",
                             fix=f'did you mean "{near}"?' if near else None)
        raw = doc.get("resources")
        if not isinstance(raw, Mapping):
            raise InputError("must map resource names to lists of devices", path="resources")
        out: dict[str, tuple[Device, ...]] = {}
        seen_ids: dict[str, set[str]] = {}
        for name, devices in raw.items():
            p = f"resources[{name}]"
            if not isinstance(name, str) or not _is_extended_resource_name(name):
                raise InputError(f"{name!r} is not an extended resource name (vendor-domain/resource, "
                                 "outside kubernetes.io)", path=p)
            if not isinstance(devices, list):
                raise InputError("must be a list of devices", path=p)
            lst = []
            ids = seen_ids.setdefault(name, set())
            for i, d in enumerate(devices):
                q = f"{p}[{i}]"
                if not isinstance(d, Mapping):
                    raise InputError("a device must be a mapping with an 'id'", path=q)
                for key in d:
                    if key not in _DEVICE_FIELDS:
                        raise unknown_key_error(str(key), _DEVICE_FIELDS, path=f"{q}.{key}")
                if "numaNode" in d and "numaNodes" in d:
                    raise InputError("give numaNode or numaNodes, not both", path=f"{q}.numaNode")
                did = d.get("id")
                if not isinstance(did, str) or not did:
                    raise InputError("id is required and must be a non-empty string", path=f"{q}.id")
                if did in ids:
                    raise InputError(f"duplicate device id {did!r}", path=f"{q}.id")
                ids.add(did)
                nodes = d.get("numaNodes", [])
                if "numaNode" in d:
                    nodes = [d["numaNode"]]
                if nodes is None:
                    nodes = []
                if not isinstance(nodes, list) or not all(isinstance(n, int) and not isinstance(n, bool)
                                                          and n >= 0 for n in nodes):
                    raise InputError("must be a list of NUMA node ids (non-negative integers)",
                                     path=f"{q}.numaNodes")
                if num_numa is not None:
                    for n in nodes:
                        if n not in num_numa:
                            raise InputError(f"NUMA node {n} does not exist on this machine "
                                             f"(nodes: {sorted(num_numa)})", path=f"{q}.numaNodes")
                health = d.get("health", HEALTHY)
                if health not in (HEALTHY, UNHEALTHY):
                    raise InputError(f"must be {HEALTHY} or {UNHEALTHY}, not {health!r}", path=f"{q}.health")
                lst.append(Device(did, tuple(nodes), health))
            out[name] = tuple(lst)
        return DeviceInventory(out)
    except InputError as exc:
        raise exc.in_file(file) from None


def load_device_inventory(path: str, machine=None) -> DeviceInventory:
    from ...model.loader import load_documents

    docs = load_documents(path)
    if len(docs) != 1:
        raise InputError(f"expected one DeviceInventory document, found {len(docs)}", file=path)
    nodes = {n.id for n in machine.nodes} if machine is not None else None
    return inventory_from_dict(docs[0].obj, path, nodes)


def devices_from_machine(machine) -> DeviceInventory:
    """GPUs (and accelerators) of the machine's PCI devices, as their vendors' plugins advertise them.

    The device id is the PCI address (plugins use UUIDs or indices; the address is stable and
    unique), its NUMA node the one sysfs reports; a device with unknown locality has no topology.
    """
    out: dict[str, list[Device]] = {}
    for d in sorted(machine.pci_devices, key=lambda d: d.address):
        if d.kind != "gpu":
            continue
        name = GPU_RESOURCE_BY_VENDOR.get(d.vendor_id, GENERIC_GPU_RESOURCE)
        out.setdefault(name, []).append(Device(d.address, tuple(d.numa_nodes)))
    return DeviceInventory({k: tuple(v) for k, v in out.items()})


def merge_inventories(a: DeviceInventory, b: DeviceInventory) -> DeviceInventory:
    """``b``'s resources replace ``a``'s of the same name (an explicit file wins over the machine)."""
    merged = dict(a.resources)
    merged.update(b.resources)
    return DeviceInventory(merged)
