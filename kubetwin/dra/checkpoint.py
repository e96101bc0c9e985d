"""The kubelet DRA manager's checkpoint file ``dra_manager_state``, byte for byte.

Format (``pkg/kubelet/cm/dra/checkpoint``): the file is Go's ``json.Marshal`` of
``{"Data": <string>, "Checksum": <crc32 IEEE of Data>}``, and ``Data`` is itself the
``json.Marshal`` of ``{"kind": "DRACheckpoint", "apiVersion":
"checkpoint.dra.kubelet.k8s.io/v1", "Entries": [ClaimInfoState...]}``. Field names are the
Go struct names (no JSON tags), maps are written with sorted keys, nil slices as ``null``,
and Go escapes ``<``, ``>``, ``&``, U+2028 and U+2029 in strings — all reproduced here so the
checksum the kubelet verifies is the one we write.

Since 1.36 a device also carries ``ShareID`` (consumable capacity), written between
``DeviceName`` and ``RequestNames``; a missing one is ``null``. Files without the field (older
kubelets) read fine.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from typing import Any, Final, Mapping

from ..errors import InputError

CHECKPOINT_NAME: Final = "dra_manager_state"
CHECKPOINT_KIND: Final = "DRACheckpoint"
CHECKPOINT_API_VERSION: Final = "checkpoint.dra.kubelet.k8s.io/v1"


@dataclass(frozen=True, slots=True)
class CheckpointDevice:
    """``state.Device``: how a driver described one prepared device to the kubelet."""

    pool_name: str
    device_name: str
    request_names: tuple[str, ...] | None = None   # None: Go nil (``null``)
    cdi_device_ids: tuple[str, ...] | None = None
    share_id: str | None = None

    def to_go(self, share_id_field: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"PoolName": self.pool_name, "DeviceName": self.device_name}
        if share_id_field:
            out["ShareID"] = self.share_id
        out["RequestNames"] = list(self.request_names) if self.request_names is not None else None
        out["CDIDeviceIDs"] = list(self.cdi_device_ids) if self.cdi_device_ids is not None else None
        return out


@dataclass(frozen=True, slots=True)
class ClaimInfoState:
    """``state.ClaimInfoState``: one prepared claim and the pods using it."""

    claim_uid: str
    claim_name: str
    namespace: str
    pod_uids: frozenset[str] = frozenset()
    driver_state: Mapping[str, tuple[CheckpointDevice, ...]] = field(default_factory=dict)

    def to_go(self, share_id_field: bool = True) -> dict[str, Any]:
        return {"ClaimUID": self.claim_uid, "ClaimName": self.claim_name, "Namespace": self.namespace,
                "PodUIDs": {uid: {} for uid in sorted(self.pod_uids)},
                "DriverState": {d: {"Devices": [dev.to_go(share_id_field) for dev in self.driver_state[d]]}
                                for d in sorted(self.driver_state)}}

    def with_pod(self, pod_uid: str) -> "ClaimInfoState":
        return ClaimInfoState(self.claim_uid, self.claim_name, self.namespace, self.pod_uids | {pod_uid},
                              self.driver_state)


def go_json(value: Any) -> str:
    """``encoding/json.Marshal`` output for plain JSON values (compact, HTML-safe escapes)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # These characters only ever occur inside JSON strings, so replacing them is safe.
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def encode_checkpoint(entries: list[ClaimInfoState] | tuple[ClaimInfoState, ...],
                      share_id_field: bool = True) -> bytes:
    """The file content the kubelet would write for these entries (in this order).

    ``share_id_field=False`` writes the device shape of kubelets before 1.36 (no ``ShareID``).
    """
    data = go_json({"kind": CHECKPOINT_KIND, "apiVersion": CHECKPOINT_API_VERSION,
                    "Entries": [e.to_go(share_id_field) for e in entries]})
    checksum = zlib.crc32(data.encode("utf-8")) & 0xFFFFFFFF
    return go_json({"Data": data, "Checksum": checksum}).encode("utf-8")


def decode_checkpoint(blob: bytes, file: str = CHECKPOINT_NAME) -> list[ClaimInfoState]:
    """Entries of a checkpoint; a corrupt file is an :class:`InputError` like the kubelet's."""
    try:
        outer = json.loads(blob)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise InputError(f"checkpoint is not JSON: {exc}", file=file) from None
    if not isinstance(outer, dict) or not isinstance(outer.get("Data"), str) \
            or not isinstance(outer.get("Checksum"), int):
        raise InputError("checkpoint must be an object with a string Data and an integer Checksum", file=file)
    extra = sorted(k for k in outer if k not in ("Data", "Checksum"))
    if extra:  # the kubelet's json.Unmarshal would drop it; kubetwin never reads a field it does not act on
        from ..model.strict import unknown_key_error

        raise unknown_key_error(extra[0], ("Data", "Checksum"), path=extra[0], file=file,
                                what="field (strict decoding error)")
    data = outer["Data"]
    actual = zlib.crc32(data.encode("utf-8")) & 0xFFFFFFFF
    if actual != outer["Checksum"]:
        raise InputError(f"checkpoint is corrupted: checksum {outer['Checksum']} does not match the data "
                         f"(expected {actual})", path="Checksum", file=file)
    try:
        inner = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"checkpoint Data is not JSON: {exc}", path="Data", file=file) from None
    if not isinstance(inner, dict):
        raise InputError("checkpoint Data must be an object", path="Data", file=file)
    entries = []
    for i, e in enumerate(inner.get("Entries") or []):
        where = f"Data.Entries[{i}]"
        if not isinstance(e, dict):
            raise InputError("must be an object", path=where, file=file)
        drivers: dict[str, tuple[CheckpointDevice, ...]] = {}
        for driver, ds in (e.get("DriverState") or {}).items():
            devices = []
            for d in (ds or {}).get("Devices") or []:
                rn, ids = d.get("RequestNames"), d.get("CDIDeviceIDs")
                devices.append(CheckpointDevice(str(d.get("PoolName", "")), str(d.get("DeviceName", "")),
                                                tuple(rn) if rn is not None else None,
                                                tuple(ids) if ids is not None else None, d.get("ShareID")))
            drivers[driver] = tuple(devices)
        entries.append(ClaimInfoState(str(e.get("ClaimUID", "")), str(e.get("ClaimName", "")),
                                      str(e.get("Namespace", "")), frozenset(e.get("PodUIDs") or {}), drivers))
    return entries
