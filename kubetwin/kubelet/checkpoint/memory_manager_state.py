"""``memory_manager_state`` (``memorymanager/state/checkpoint.go``): V1, V2 (podEntries), V3 (data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...errors import InputError
from ..memory.state import Block, MemoryState, MemoryTable, NUMANodeState
from .files import atomic_write, read_json


def _int(v: Any, path: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise InputError(f"must be an integer, not {v!r}", path=path)
    return v


def memory_state_from_json(doc: Any, file: str | None = None) -> MemoryState:
    try:
        if not isinstance(doc, dict):
            raise InputError("checkpoint must be a JSON object", path="")
        payload = json.loads(doc["data"]) if isinstance(doc.get("data"), str) else doc
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


def memory_state_to_json(st: MemoryState) -> dict[str, Any]:
    return {"policyName": st.policy_name,
            "machineState": {str(n): ns.to_json() for n, ns in sorted(st.machine_state.items())},
            "entries": {uid: {n: [b.to_json() for b in bs] for n, bs in conts.items()}
                        for uid, conts in st.entries.items()},
            "checksum": 0}


def write_memory_manager_state(path: str | Path, st: MemoryState) -> None:
    atomic_write(path, json.dumps(memory_state_to_json(st), separators=(",", ":")).encode())
