"""Extended resources backed by DRA (gate DRAExtendedResource, KEP-5004).

A DeviceClass maps an extended resource name to its devices, explicitly
(``spec.extendedResourceName``) or implicitly (``deviceclass.resource.kubernetes.io/<class>``).
NodeResourcesFit leaves such a resource to DynamicResources in Filter when the node does not
advertise it, and scores it against the number of matching devices in the node's slices.
"""

from __future__ import annotations

from typing import Any

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"


def device_class_for(handle: Any, resource: str) -> dict | None:
    """The DeviceClass that backs ``resource``, or None."""
    classes = handle.objects.get("DeviceClass", [])
    for dc in classes:
        if (dc.get("spec") or {}).get("extendedResourceName") == resource:
            return dc
    if resource.startswith(IMPLICIT_PREFIX):
        name = resource[len(IMPLICIT_PREFIX):]
        for dc in classes:
            if (dc.get("metadata") or {}).get("name") == name:
                return dc
    return None


def dra_extended_allocatable(handle: Any, node: Any, resource: str) -> tuple[int, int] | None:
    """(devices of the class on the node, devices already allocated there) or None if not DRA-backed.

    Devices are counted from the node's ResourceSlices; a class with CEL selectors needs the
    DRA allocator to decide which devices match — counted only when every device qualifies
    (no selectors), otherwise reported as not available.
    """
    dc = device_class_for(handle, resource)
    if dc is None:
        return None
    selectors = (dc.get("spec") or {}).get("selectors") or []
    if selectors:
        from ...errors import KubetwinError

        raise KubetwinError(f"DeviceClass {dc.get('metadata', {}).get('name')} has selectors: scoring the "
                            f"DRA-backed extended resource {resource} needs the DRA allocator (not available yet)")
    total = 0
    for rs in handle.objects.get("ResourceSlice", []):
        spec = rs.get("spec") or {}
        if spec.get("nodeName") != node.name and not spec.get("allNodes"):
            continue
        total += len(spec.get("devices") or [])
    return total, 0
