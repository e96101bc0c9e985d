"""``kubelet_internal_checkpoint`` of the Device Manager (``devicemanager/checkpoint/checkpoint.go``).

``{"Data": {"PodDeviceEntries": [{"PodUID", "ContainerName", "ResourceName", "DeviceIDs":
{"<numa>": [ids]}, "AllocResp": base64}], "RegisteredDevices": {resource: [ids]}}, "Checksum": N}``
with the checksum over ``checkpointData`` (``gohash``). Older files list ``DeviceIDs`` as a plain
array (no NUMA nodes); they are read as devices without topology.

Unlike the CPU and memory managers, the kubelet does not refuse to start on a corrupt device
checkpoint: it logs "Continue after failing to read checkpoint file" and starts with no device
allocations. :func:`read_device_manager_state` reports that through ``warn`` and does the same.
An unknown field (which the kubelet's ``json.Unmarshal`` would skip) is refused, with the
nearest name: such a file was written by hand, and a misspelt field would silently drop devices.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Callable

from ...errors import InputError
from ...model.strict import ANY, INTEGER, STRING, check, fold_case, list_of, map_of, obj
from ..devices.manager import NODE_WITHOUT_TOPOLOGY, DeviceCheckpointData
from .files import atomic_write
from .gohash import checksum, device_checkpoint_data

FILE_NAME = "kubelet_internal_checkpoint"

#: ``checkpoint.Data`` (``DeviceIDs``: NUMA node -> ids, or a plain list in the pre-NUMA format).
FILE_SPEC = obj(Data=obj(PodDeviceEntries=list_of(obj(PodUID=STRING, ContainerName=STRING, ResourceName=STRING,
                                                      DeviceIDs=ANY, AllocResp=STRING)),
                         RegisteredDevices=map_of(list_of(STRING))),
                Checksum=INTEGER)


class CorruptDeviceCheckpoint(Exception):
    pass


def _entries_of(data: DeviceCheckpointData) -> list[dict[str, Any]]:
    out = []
    for uid, conts in sorted(data.pod_devices.items()):
        for cname, res in sorted(conts.items()):
            for rname, per_numa in sorted(res.items()):
                out.append({"PodUID": uid, "ContainerName": cname, "ResourceName": rname,
                            "DeviceIDs": {str(n): sorted(ids) for n, ids in sorted(per_numa.items())},
                            "AllocResp": ""})
    return out


def device_state_to_json(data: DeviceCheckpointData) -> dict[str, Any]:
    entries = _entries_of(data)
    registered = {r: sorted(ids) for r, ids in sorted(data.registered.items())}
    hashed = [dict(e, AllocResp=b"") for e in entries]
    return {"Data": {"PodDeviceEntries": entries, "RegisteredDevices": registered},
            "Checksum": checksum(device_checkpoint_data(hashed, registered))}


def write_device_manager_state(path: str | Path, data: DeviceCheckpointData) -> None:
    atomic_write(path, json.dumps(device_state_to_json(data), separators=(",", ":")).encode())


def device_state_from_json(doc: Any) -> DeviceCheckpointData:
    """Parse and verify; raise :class:`CorruptDeviceCheckpoint` with the kubelet's reason."""
    if not isinstance(doc, dict) or not isinstance(doc.get("Data"), dict):
        raise CorruptDeviceCheckpoint("checkpoint is corrupted: no Data object")
    data = doc["Data"]
    raw_entries = data.get("PodDeviceEntries") or []
    registered = data.get("RegisteredDevices") or {}
    if not isinstance(raw_entries, list) or not isinstance(registered, dict):
        raise CorruptDeviceCheckpoint("checkpoint is corrupted: malformed Data")
    hashed: list[dict[str, Any]] = []
    out = DeviceCheckpointData(registered={str(k): list(v or []) for k, v in registered.items()})
    try:
        for e in raw_entries:
            ids = e.get("DeviceIDs")
            if isinstance(ids, list):  # pre-NUMA format
                ids = {str(NODE_WITHOUT_TOPOLOGY): ids}
            resp = e.get("AllocResp")
            resp_bytes = None if resp is None else base64.b64decode(resp)
            hashed.append({"PodUID": str(e.get("PodUID", "")), "ContainerName": str(e.get("ContainerName", "")),
                           "ResourceName": str(e.get("ResourceName", "")), "DeviceIDs": ids,
                           "AllocResp": resp_bytes})
            per_numa = {int(k): [str(d) for d in v] for k, v in (ids or {}).items()}
            out.pod_devices.setdefault(hashed[-1]["PodUID"], {}).setdefault(
                hashed[-1]["ContainerName"], {})[hashed[-1]["ResourceName"]] = per_numa
    except (AttributeError, TypeError, ValueError) as exc:
        raise CorruptDeviceCheckpoint(f"checkpoint is corrupted: {exc}") from None
    ck = doc.get("Checksum")
    if ck is not None and ck != checksum(device_checkpoint_data(hashed, out.registered)):
        raise CorruptDeviceCheckpoint("checkpoint is corrupted")
    return out


def read_device_manager_state(path: str | Path, warn: Callable[[str], None]) -> DeviceCheckpointData | None:
    """The checkpoint, or ``None`` (with a warning) when the kubelet would continue without it."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read checkpoint: {exc.strerror}", file=str(p)) from None
    try:
        doc = json.loads(data.decode("utf-8"))
        if isinstance(doc, dict):
            doc = fold_case(doc, FILE_SPEC)
            try:
                check(doc, FILE_SPEC, file=str(p))
            except InputError as exc:
                if any("unknown field" in part for part in exc.message.split(", ")):
                    exc.fix = (f"{exc.fix}; " if exc.fix else "") + ("the kubelet's checkpoint reader ignores "
                                                                     "unknown fields; kubetwin refuses them")
                    raise
        return device_state_from_json(doc)
    except json.JSONDecodeError as exc:
        reason = f"{exc.msg}"
    except (UnicodeDecodeError, RecursionError):
        reason = "checkpoint is corrupted: not UTF-8 JSON"
    except ValueError as exc:  # a number of thousands of digits
        reason = str(exc)
    except CorruptDeviceCheckpoint as exc:
        reason = str(exc)
    warn(f"{p}: {reason}: Continue after failing to read checkpoint file. Device allocation info may NOT be "
         "up-to-date")
    return None
