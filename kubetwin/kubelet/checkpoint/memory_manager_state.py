"""``memory_manager_state`` (``memorymanager/state/checkpoint.go``): V1, V2 (podEntries), V3 (data).

The checksum is verified as the kubelet verifies it (``gohash``, struct ``MemoryManagerCheckpoint``);
a file without a ``checksum`` key (hand-written, as the conformance cases) is accepted. Pod-level
budgets (``podEntries``) live in the in-memory state under the container name ``""``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...errors import InputError
from ..memory.state import Block, MemoryState, MemoryTable, NUMANodeState
from .cpu_manager_state import corrupt_error
from .files import atomic_write, read_json
from .gohash import checksum, memory_checkpoint_struct, string_checksum

FILE_NAME = "memory_manager_state"
VERSIONS = ("v1", "v2", "v3")


def _corrupt(file: str | None, reason: str = "checkpoint is corrupted") -> InputError:
    return corrupt_error(file, "memory", FILE_NAME, reason)


def _verify(doc: dict, file: str | None) -> None:
    if isinstance(doc.get("data"), str):
        ck = doc.get("dataChecksum")
        if ck is not None and ck != string_checksum(doc["data"]):
            raise _corrupt(file)
        return
    ck = doc.get("checksum")
    if not ck:
        return
    try:
        ms = {int(k): v for k, v in (doc.get("machineState") or {}).items()}
        entries = doc.get("entries") or {}
        variants = [None] if "podEntries" not in doc else [doc.get("podEntries") or {}]
        if "podEntries" not in doc:
            variants.append({})
        for pe in variants:
            if checksum(memory_checkpoint_struct(doc.get("policyName", ""), ms, entries, pe)) == ck:
                return
    except (AttributeError, TypeError, ValueError, KeyError):
        pass
    raise _corrupt(file)


def _int(v: Any, path: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise InputError(f"must be an integer, not {v!r}", path=path)
    return v


def memory_state_from_json(doc: Any, file: str | None = None) -> MemoryState:
    try:
        if not isinstance(doc, dict):
            raise InputError("checkpoint must be a JSON object", path="")
        _verify(doc, file)
        try:
            payload = json.loads(doc["data"]) if isinstance(doc.get("data"), str) else doc
        except (ValueError, RecursionError):
            raise _corrupt(file, "failed to deserialize memory manager checkpoint data") from None
        policy = payload.get("policyName")
        if not isinstance(policy, str):
            raise InputError("policyName is required", path="policyName")
        st = MemoryState(policy)
        for key, node in (payload.get("machineState") or {}).items():
            p = f"machineState.{key}"
            ns = NUMANodeState(number_of_assignments=_int(node.get("numberOfAssignments", 0), f"{p}.numberOfAssignments"),
                               cells=list(node.get("cells") or []))
            for r, t in (node.get("memoryMap") or {}).items():
                q = f"{p}.memoryMap.{r}"
                ns.memory_map[r] = MemoryTable(*(_int(t.get(k, 0), f"{q}.{k}") for k in
                                                 ("total", "systemReserved", "allocatable", "reserved", "free")))
            st.machine_state[int(key)] = ns
        for uid, conts in (payload.get("entries") or {}).items():
            for name, blocks in conts.items():
                p = f"entries.{uid}.{name}"
                st.entries.setdefault(uid, {})[name] = [
                    Block(tuple(b.get("numaAffinity") or []), str(b.get("type")), _int(b.get("size"), f"{p}[{i}].size"))
                    for i, b in enumerate(blocks)]
        for uid, blocks in (payload.get("podEntries") or {}).items():
            p = f"podEntries.{uid}"
            st.entries.setdefault(uid, {})[""] = [
                Block(tuple(b.get("numaAffinity") or []), str(b.get("type")), _int(b.get("size"), f"{p}[{i}].size"))
                for i, b in enumerate(blocks)]
        if not st.machine_state and st.entries:
            raise InputError("[memorymanager] machine state can not be empty when it has memory assignments",
                             path="machineState", fix="drain the node and remove the memory_manager_state file")
        return st
    except InputError as exc:
        raise exc.in_file(file)
    except (AttributeError, TypeError, ValueError) as exc:
        raise InputError(f"checkpoint is corrupted: {exc}", file=file) from None


def read_memory_manager_state(path: str | Path) -> MemoryState:
    p = Path(path)
    return memory_state_from_json(read_json(p), str(p))


def memory_state_to_json(st: MemoryState, version: str = "v1") -> dict[str, Any]:
    """The document the kubelet writes (``MarshalCheckpoint``); v2 adds ``podEntries``, v3 the data string."""
    if version not in VERSIONS:
        raise InputError(f"unknown memory_manager_state version {version!r}", path="version",
                         fix=f"use one of {', '.join(VERSIONS)}")
    ms = {n: ns.to_json() for n, ns in sorted(st.machine_state.items())}
    entries = {uid: {n: [b.to_json() for b in bs] for n, bs in sorted(conts.items()) if n != ""}
               for uid, conts in sorted(st.entries.items())}
    entries = {u: c for u, c in entries.items() if c}
    pods = {uid: [b.to_json() for b in conts[""]] for uid, conts in sorted(st.entries.items()) if "" in conts}
    doc: dict[str, Any] = {"policyName": st.policy_name, "machineState": {str(n): v for n, v in ms.items()}}
    if entries:
        doc["entries"] = entries
    if version == "v1":
        doc["checksum"] = checksum(memory_checkpoint_struct(st.policy_name, ms, entries))
        return doc
    if pods:
        doc["podEntries"] = pods
    if version == "v2":
        doc["checksum"] = checksum(memory_checkpoint_struct(st.policy_name, ms, entries, pods))
        return doc
    data = json.dumps(doc, separators=(",", ":"))
    doc["checksum"] = 0
    doc["data"] = data
    doc["dataChecksum"] = string_checksum(data)
    return doc


def write_memory_manager_state(path: str | Path, st: MemoryState, version: str = "v1") -> None:
    atomic_write(path, json.dumps(memory_state_to_json(st, version), separators=(",", ":")).encode())
