"""Device Manager: extended resources of device plugins, with NUMA-aware hints and allocation.

Upstream: ``pkg/kubelet/cm/devicemanager``."""

from .inventory import (
    EMPTY_INVENTORY,
    Device,
    DeviceInventory,
    devices_from_machine,
    inventory_from_dict,
    load_device_inventory,
    merge_inventories,
)
from .manager import DeviceCheckpointData, DeviceManager

__all__ = ["Device", "DeviceInventory", "DeviceManager", "DeviceCheckpointData", "EMPTY_INVENTORY",
           "devices_from_machine", "inventory_from_dict", "load_device_inventory", "merge_inventories"]
