"""``cpu_manager_state`` (``cpumanager/state/checkpoint.go``): V2, V3 (podEntries) and V4 (data + dataChecksum).

Loading tries the newest shape first, as the kubelet does; cpusets are Linux list strings.
Checksums are written (FNV-32a over Go's ``dump.ForHash`` text, see ``gohash``) but not yet
verified on reading: the ``ForHash`` rendering has not been checked against a real kubelet file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...model.cpuset import CPUSet
from ..cpu.state import CPUState
from .files import atomic_write, read_json
from .gohash import cpu_checkpoint_checksum

FILE_NAME = "cpu_manager_state"


def _cpuset(value: Any, path: str) -> CPUSet:
    if not isinstance(value, str):
        raise InputError(f"cpuset must be a string, not {type(value).__name__}", path=path)
    return CPUSet.parse(value, path)


def cpu_state_from_json(doc: Any, file: str | None = None) -> CPUState:
    try:
        if not isinstance(doc, dict):
            raise InputError("checkpoint must be a JSON object", path="")
        payload = doc
        if isinstance(doc.get("data"), str):
            try:
                payload = json.loads(doc["data"])
            except json.JSONDecodeError:
                raise InputError("checkpoint is corrupted: data is not valid JSON", path="data") from None
        policy = payload.get("policyName")
        if not isinstance(policy, str):
            raise InputError("policyName is required", path="policyName")
        state = CPUState(policy, _cpuset(payload.get("defaultCpuSet", ""), "defaultCpuSet"))
        entries = payload.get("entries") or {}
        if not isinstance(entries, dict):
            raise InputError("entries must map pod UIDs to containers", path="entries")
        for uid, conts in entries.items():
            if not isinstance(conts, dict):
                raise InputError("must map container names to cpusets (V1 checkpoints are no longer read)",
                                 path=f"entries.{uid}")
            for name, cs in conts.items():
                state.set(uid, name, _cpuset(cs, f"entries.{uid}.{name}"))
        for uid, entry in (payload.get("podEntries") or {}).items():
            cs = entry.get("cpuSet", "") if isinstance(entry, dict) else entry
            state.pod_entries[uid] = _cpuset(cs, f"podEntries.{uid}.cpuSet")
        for key in ("checksum", "dataChecksum"):
            if key in doc and not isinstance(doc[key], int):
                raise InputError("checksum must be an integer", path=key)
        return state
    except InputError as exc:
        raise exc.in_file(file)


def read_cpu_manager_state(path: str | Path) -> CPUState:
    p = Path(path)
    return cpu_state_from_json(read_json(p), str(p))


def cpu_state_to_json(state: CPUState) -> dict[str, Any]:
    """The V3 shape (podEntries only when there are any), with its checksum."""
    doc: dict[str, Any] = {"policyName": state.policy_name, "defaultCpuSet": str(state.default_cpuset)}
    if state.entries:
        doc["entries"] = {uid: {n: str(c) for n, c in conts.items()} for uid, conts in state.entries.items()}
    if state.pod_entries:
        doc["podEntries"] = {uid: {"cpuSet": str(c)} for uid, c in state.pod_entries.items()}
    doc["checksum"] = cpu_checkpoint_checksum(state, with_pod_entries=bool(state.pod_entries))
    return doc


def write_cpu_manager_state(path: str | Path, state: CPUState) -> None:
    atomic_write(path, json.dumps(cpu_state_to_json(state), separators=(",", ":")).encode())
