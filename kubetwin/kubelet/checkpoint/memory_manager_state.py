"""``memory_manager_state`` (``memorymanager/state/checkpoint.go``): V1, V2 (podEntries), V3 (data).

The checksum is verified as the kubelet verifies it (``gohash``, struct ``MemoryManagerCheckpoint``);
a file without a ``checksum`` key (hand-written, as the conformance cases) is accepted. Pod-level
budgets (``podEntries``) live in the in-memory state under the container name ``""``.

Decoding is strict, as for ``cpu_manager_state``: names matched case-insensitively as Go's
``encoding/json`` matches them, unknown fields refused with the nearest name, sizes and NUMA
ids checked as the ``uint64``/``int`` fields they fill (never negative, never past 2^63).
Entries that do not fit the machine or its free memory are refused when the Memory Manager
starts (``validateState``, :class:`~kubetwin.kubelet.memory.policy_static.StaticMemoryPolicy`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...model.strict import INTEGER, STRING, Spec, check, fold_case, list_of, map_of, obj
from ..memory.state import Block, MemoryState, MemoryTable, NUMANodeState
from .cpu_manager_state import corrupt_error
from .files import atomic_write, read_json
from .gohash import checksum, memory_checkpoint_struct, string_checksum

FILE_NAME = "memory_manager_state"
VERSIONS = ("v1", "v2", "v3")

_BLOCK = obj(numaAffinity=list_of(INTEGER), type=STRING, size=INTEGER)
_TABLE = obj(total=INTEGER, systemReserved=INTEGER, allocatable=INTEGER, reserved=INTEGER, free=INTEGER)
_NODE = obj(numberOfAssignments=INTEGER, memoryMap=map_of(_TABLE), cells=list_of(INTEGER))
#: ``MemoryManagerCheckpointV1``/``V2`` (V2 adds ``podEntries``); V3 carries it as a string in ``data``.
_PAYLOAD: dict[str, Spec] = {"policyName": STRING, "machineState": map_of(_NODE), "entries": map_of(map_of(list_of(_BLOCK))),
            "podEntries": map_of(list_of(_BLOCK)), "checksum": INTEGER}
PAYLOAD_SPEC = obj(_PAYLOAD)
FILE_SPEC = obj({**_PAYLOAD, "data": STRING, "dataChecksum": INTEGER})
_MAX = 2**63 - 1
_UNKNOWN_FIX = "the kubelet's checkpoint reader ignores unknown fields; kubetwin refuses them"


def _strict(doc: dict, spec) -> dict:
    folded = fold_case(doc, spec)
    try:
        check(folded, spec)
    except InputError as exc:
        exc.fix = f"{exc.fix}; {_UNKNOWN_FIX}" if exc.fix else _UNKNOWN_FIX
        raise
    return folded


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
        variants: list[dict[str, Any] | None] = [None] if "podEntries" not in doc else [doc.get("podEntries") or {}]
        if "podEntries" not in doc:
            variants.append({})
        for pe in variants:
            if checksum(memory_checkpoint_struct(doc.get("policyName", ""), ms, entries, pe)) == ck:
                return
    except (AttributeError, TypeError, ValueError, KeyError):
        pass
    raise _corrupt(file)


def _int(v: Any, path: str) -> int:
    """A ``uint64``/``int`` field: a whole number from 0 to 2^63-1 (``null`` or absent: 0)."""
    if v is None:
        return 0
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not isinstance(v, int) or isinstance(v, bool):
        raise InputError(f"must be an integer, not {v!r}", path=path)
    if not 0 <= v <= _MAX:
        raise InputError(f"must be a whole number from 0 to {_MAX}, not {v}", path=path)
    return v


def _numa_id(key: Any, path: str) -> int:
    """A NUMA node id: the key of ``machineState`` (Go's ``map[int]``: a decimal string)."""
    if not isinstance(key, str) or not key.isascii() or not key.lstrip("-").isdigit() or len(key) > 19:
        raise InputError(f'NUMA node id "{key}" is not a number', path=path)
    return _int(int(key), path)


def _blocks(raw: Any, path: str) -> list[Block]:
    return [Block(tuple(_int(n, f"{path}[{i}].numaAffinity[{j}]") for j, n in enumerate(b.get("numaAffinity") or [])),
                  str(b.get("type") or ""), _int(b.get("size"), f"{path}[{i}].size"))
            for i, b in enumerate(raw or [])]


def memory_state_from_json(doc: Any, file: str | None = None) -> MemoryState:
    try:
        if not isinstance(doc, dict):
            raise InputError("checkpoint must be a JSON object", path="")
        doc = _strict(doc, FILE_SPEC)
        _verify(doc, file)
        payload = doc
        if isinstance(doc.get("data"), str):
            try:
                payload = json.loads(doc["data"])
            except (ValueError, RecursionError):
                raise _corrupt(file, "failed to deserialize memory manager checkpoint data") from None
            if not isinstance(payload, dict):
                raise _corrupt(file, "failed to deserialize memory manager checkpoint data")
            try:
                payload = _strict(payload, PAYLOAD_SPEC)
            except InputError as exc:
                raise exc.within("data") from None
        policy = payload.get("policyName")
        if not isinstance(policy, str):
            raise InputError("policyName is required", path="policyName")
        st = MemoryState(policy)
        for key, node in (payload.get("machineState") or {}).items():
            p = f"machineState.{key}"
            node = node or {}
            ns = NUMANodeState(number_of_assignments=_int(node.get("numberOfAssignments"), f"{p}.numberOfAssignments"),
                               cells=[_int(c, f"{p}.cells[{i}]") for i, c in enumerate(node.get("cells") or [])])
            for r, t in (node.get("memoryMap") or {}).items():
                q = f"{p}.memoryMap.{r}"
                t = t or {}
                ns.memory_map[r] = MemoryTable(*(_int(t.get(k), f"{q}.{k}") for k in
                                                 ("total", "systemReserved", "allocatable", "reserved", "free")))
            st.machine_state[_numa_id(key, p)] = ns
        for uid, conts in (payload.get("entries") or {}).items():
            for name, blocks in (conts or {}).items():
                st.entries.setdefault(uid, {})[name] = _blocks(blocks, f"entries.{uid}.{name}")
        for uid, blocks in (payload.get("podEntries") or {}).items():
            st.entries.setdefault(uid, {})[""] = _blocks(blocks, f"podEntries.{uid}")
        if not st.machine_state and st.entries:
            raise InputError("[memorymanager] machine state can not be empty when it has memory assignments",
                             path="machineState", fix="drain the node and remove the memory_manager_state file")
        return st
    except InputError as exc:
        raise exc.in_file(file) from None
    except (AttributeError, TypeError, ValueError) as exc:
        raise InputError(f"checkpoint is corrupted: {exc}", file=file) from None


def read_memory_manager_state(path: str | Path) -> MemoryState:
    p = Path(path)
    return memory_state_from_json(read_json(p, "memory"), str(p))


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
