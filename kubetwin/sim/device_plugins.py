"""Device plugins on a simulated node group: the devices its kubelet's Device Manager is told
about, and the extended resources the node then reports.

    nodeGroups: [{name: gpu, machine: 2s2n16c2t:gpus=8, devices: machine}]   # or a DeviceInventory file

The kubelet learns devices through the device plugins' ``ListAndWatch`` stream and reports them
in the node's capacity (every device) and allocatable (the healthy ones)
(``pkg/kubelet/cm/devicemanager/manager.go``'s ``GetCapacity``, added by ``setters.go``'s
``MachineInfo``). ``machine`` derives them from the machine's PCI GPUs as their vendors' plugins
advertise them, a path reads a DeviceInventory (docs/device-inventory.md) — the sources
``kubetwin admit --devices-from-machine`` / ``--devices`` read (:mod:`kubetwin.kubelet.devices`).

Not an upstream module: the node group's field is kubetwin's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..kubelet.devices import DeviceInventory, devices_from_machine, load_device_inventory

FROM_MACHINE = "machine"


def parse_devices(value: Any, path: str, root: Path, machine: Any) -> DeviceInventory:
    """A node group's ``devices``: ``machine`` or a DeviceInventory file (relative to ``root``)."""
    if not isinstance(value, str) or not value:
        raise InputError(f"Invalid value: {value!r}: 'machine' or the path of a DeviceInventory file", path=path)
    if machine is None:
        raise InputError("Required value: machine (device plugins advertise the devices of a machine)",
                         path=path.rsplit(".", 1)[0] + ".machine")
    if value == FROM_MACHINE:
        inv = devices_from_machine(machine)
        if inv.is_empty():
            raise InputError("the machine has no GPUs for a device plugin to advertise", path=path,
                             fix="give a machine with GPUs (e.g. 2s2n16c2t:gpus=8) or a DeviceInventory file")
        return inv
    file = root / value
    if not file.is_file():
        raise InputError(f"no such file: {value}", path=path, fix="'machine' or the path of a DeviceInventory file")
    inv = load_device_inventory(str(file), machine)
    if inv.is_empty():
        raise InputError("the inventory lists no devices", path=path, file=str(file))
    return inv


def device_resources(inv: DeviceInventory) -> tuple[dict[str, str], dict[str, str]]:
    """``GetCapacity``: per resource, every device in capacity, the healthy ones in allocatable."""
    cap = {name: str(len(devs)) for name, devs in inv.resources.items()}
    alloc = {name: str(sum(1 for d in devs if d.healthy)) for name, devs in inv.resources.items()}
    return cap, alloc
