"""``cpu_manager_state`` (``cpumanager/state/checkpoint.go``, ``state_checkpoint.go``).

Shapes: V1 (entries keyed by container id — needs the runtime's container map to migrate, which
a file alone cannot give, so it is refused as the kubelet refuses an unknown id), V2 (entries by
pod and container), V3 (V2 + ``podEntries``, pod-level resource managers), V4 (the V3 fields
inline with checksum 0 for older readers, plus ``data`` — the payload as a JSON string — and
``dataChecksum`` over it).

Checksums are verified as the kubelet verifies them (``gohash``): a V2/V3 file with checksum 0
is accepted (old file backend); V3 checksums are accepted under either struct name the kubelet
has hashed them with. A hand-written file without a ``checksum`` key is accepted too: that is
how the conformance cases and people write state, and the kubelet itself never writes one.

Decoding is strict: the kubelet reads checkpoints with plain ``json.Unmarshal`` (field names
matched case-insensitively, unknown fields ignored); kubetwin matches names the same way
(:func:`~kubetwin.model.strict.fold_case`) but refuses an unknown field, with the nearest name,
and a CPU held by containers of two different pods (which no kubelet writes: containers of one
pod may share CPUs, as an app container reuses its init containers'). CPUs the machine lacks
are refused when the CPU Manager starts (``validateState``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...model.cpuset import CPUSet
from ...model.strict import ANY, INTEGER, STRING, Spec, check, fold_case, map_of, obj
from ..cpu.state import CPUState
from .files import atomic_write, read_json
from .gohash import checksum, cpu_checkpoint_struct, string_checksum

FILE_NAME = "cpu_manager_state"
VERSIONS = ("v2", "v3", "v4")

#: The fields of a V2/V3 checkpoint (``CPUManagerCheckpointV2``/``V3``); ``entries`` map pod UIDs to
#: container names to cpusets (V1: container ids to cpusets, refused below with the kubelet's words).
_PAYLOAD: dict[str, Spec] = {"policyName": STRING, "defaultCpuSet": STRING, "entries": map_of(ANY),
            "podEntries": map_of(obj(cpuSet=STRING)), "checksum": INTEGER}
PAYLOAD_SPEC = obj(_PAYLOAD)
#: A file: the payload inline, and for V4 the payload again as a JSON string with its checksum.
FILE_SPEC = obj({**_PAYLOAD, "data": STRING, "dataChecksum": INTEGER})
_UNKNOWN_FIX = "the kubelet's checkpoint reader ignores unknown fields; kubetwin refuses them"


def _strict(doc: dict, spec, file: str | None) -> dict:
    folded = fold_case(doc, spec)
    try:
        check(folded, spec, file=file)
    except InputError as exc:
        exc.fix = f"{exc.fix}; {_UNKNOWN_FIX}" if exc.fix else _UNKNOWN_FIX
        raise
    return folded


def corrupt_error(file: str | None, manager: str = "CPU", name: str = FILE_NAME,
                  reason: str = "checkpoint is corrupted") -> InputError:
    """The kubelet's start-up refusal (``NewCheckpointState``), naming the file to delete."""
    where = file or name
    return InputError(f"could not restore state from checkpoint: {reason}, please drain this node and delete "
                      f'the {manager} manager checkpoint file "{where}" before restarting Kubelet',
                      path="checksum", file=file)


def _cpuset(value: Any, path: str) -> CPUSet:
    if not isinstance(value, str):
        raise InputError(f"cpuset must be a string, not {type(value).__name__}", path=path)
    return CPUSet.parse(value, path)


def _checksum_value(doc: dict, key: str) -> int | None:
    if key not in doc:
        return None
    v = doc[key]
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise InputError("checksum must be a non-negative integer", path=key)
    return v


def _verify_inline(doc: dict, file: str | None) -> None:
    """V2/V3 ``VerifyChecksum``: 0 or absent passes; otherwise one of the kubelet's struct names must match."""
    ck = _checksum_value(doc, "checksum")
    if not ck:
        return
    policy = doc.get("policyName", "")
    default = doc.get("defaultCpuSet", doc.get("defaultCPUSet", ""))
    entries = doc.get("entries") or {}
    if not isinstance(policy, str) or not isinstance(default, str) or not isinstance(entries, dict):
        raise corrupt_error(file)
    if any(isinstance(v, str) for v in entries.values()):  # V1: container id -> cpuset
        if checksum(cpu_checkpoint_struct("CPUManagerCheckpoint", policy, default, entries, v1=True)) == ck:
            return
        raise corrupt_error(file)
    pods = None
    if "podEntries" in doc:
        pods = {}
        for uid, e in (doc.get("podEntries") or {}).items():
            cs = e.get("cpuSet", "") if isinstance(e, dict) else ""
            pods[uid] = list(_cpuset(cs, f"podEntries.{uid}.cpuSet"))
    candidates = []
    if pods is None:
        candidates += [("CPUManagerCheckpoint", None), ("CPUManagerCheckpointV2", None), ("CPUManagerCheckpointV3", {})]
    else:
        candidates += [("CPUManagerCheckpointV3", pods), ("CPUManagerCheckpoint", pods)]
    for name, pe in candidates:
        if checksum(cpu_checkpoint_struct(name, policy, default, entries, pe)) == ck:
            return
    raise corrupt_error(file)


def cpu_state_from_json(doc: Any, file: str | None = None) -> CPUState:
    try:
        if not isinstance(doc, dict):
            raise InputError("checkpoint must be a JSON object", path="")
        doc = _strict(doc, FILE_SPEC, file)
        payload = doc
        if isinstance(doc.get("data"), str):
            ck = _checksum_value(doc, "dataChecksum")
            if ck is not None and ck != string_checksum(doc["data"]):
                raise corrupt_error(file)
            try:
                payload = json.loads(doc["data"])
            except (ValueError, RecursionError):
                raise corrupt_error(file, reason="failed to deserialize cpu manager checkpoint data") from None
            if not isinstance(payload, dict):
                raise corrupt_error(file, reason="failed to deserialize cpu manager checkpoint data")
            try:
                payload = _strict(payload, PAYLOAD_SPEC, file)
            except InputError as exc:
                raise exc.within("data") from None
        else:
            _verify_inline(doc, file)
        policy = payload.get("policyName")
        if not isinstance(policy, str):
            raise InputError("policyName is required", path="policyName")
        default = payload.get("defaultCpuSet") or ""
        state = CPUState(policy, _cpuset(default, "defaultCpuSet"))
        entries = payload.get("entries") or {}
        if not isinstance(entries, dict):
            raise InputError("entries must map pod UIDs to containers", path="entries")
        for uid, conts in entries.items():
            if not isinstance(conts, dict):
                raise InputError(f"could not restore state from checkpoint: error migrating v1 checkpoint state to "
                                 f"v2 checkpoint state: containerID '{uid}' not found in initial containers list",
                                 path=f"entries.{uid}",
                                 fix="V1 checkpoints (entries by container id) need the running containers; "
                                     "rewrite the entries by pod UID and container name")
            for name, cs in conts.items():
                state.set(uid, name, _cpuset(cs, f"entries.{uid}.{name}"))
        for uid, entry in (payload.get("podEntries") or {}).items():
            state.pod_entries[uid] = _cpuset((entry or {}).get("cpuSet") or "", f"podEntries.{uid}.cpuSet")
        _check_one_pod_per_cpu(state)
        return state
    except InputError as exc:
        raise exc.in_file(file) from None


def _check_one_pod_per_cpu(state: CPUState) -> None:
    """No CPU is held by two pods (their containers' entries, or their pod-level bubbles)."""
    owner: dict[int, tuple[str, str]] = {}
    held = [(uid, f"entries.{uid}.{name}", cpus) for uid, conts in state.entries.items()
            for name, cpus in conts.items()]
    held += [(uid, f"podEntries.{uid}.cpuSet", cpus) for uid, cpus in state.pod_entries.items()]
    for uid, path, cpus in held:
        for cpu in cpus:
            first = owner.setdefault(cpu, (uid, path))
            if first[0] != uid:
                raise InputError(f"CPU {cpu} is assigned to pods {first[0]} ({first[1]}) and {uid}", path=path,
                                 fix="an exclusive CPU belongs to one pod; the checkpoint was not written by a "
                                     "kubelet: drain the node and delete the file, or correct it")
            # containers of one pod may share CPUs: app containers reuse their init containers'


def read_cpu_manager_state(path: str | Path) -> CPUState:
    p = Path(path)
    return cpu_state_from_json(read_json(p, "CPU"), str(p))


def _entries(state: CPUState) -> dict[str, dict[str, str]]:
    return {uid: {n: str(c) for n, c in sorted(conts.items())} for uid, conts in sorted(state.entries.items())}


def _pod_entries(state: CPUState) -> dict[str, dict[str, str]]:
    return {uid: {"cpuSet": str(c)} for uid, c in sorted(state.pod_entries.items())}


def cpu_state_to_json(state: CPUState, version: str = "v2") -> dict[str, Any]:
    """The document the kubelet writes in checkpoint format ``version`` (``MarshalCheckpoint``)."""
    if version not in VERSIONS:
        raise InputError(f"unknown cpu_manager_state version {version!r}", path="version",
                         fix=f"use one of {', '.join(VERSIONS)}")
    entries = _entries(state)
    doc: dict[str, Any] = {"policyName": state.policy_name, "defaultCpuSet": str(state.default_cpuset)}
    if entries:
        doc["entries"] = entries
    if version == "v2":
        doc["checksum"] = checksum(cpu_checkpoint_struct("CPUManagerCheckpoint", state.policy_name,
                                                         str(state.default_cpuset), entries))
        return doc
    if state.pod_entries:
        doc["podEntries"] = _pod_entries(state)
    pods = {uid: list(c) for uid, c in state.pod_entries.items()}
    if version == "v3":
        doc["checksum"] = checksum(cpu_checkpoint_struct("CPUManagerCheckpointV3", state.policy_name,
                                                         str(state.default_cpuset), entries, pods))
        return doc
    data = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    doc["checksum"] = 0
    doc["data"] = data
    doc["dataChecksum"] = string_checksum(data)
    return doc


def write_cpu_manager_state(path: str | Path, state: CPUState, version: str = "v2") -> None:
    text = json.dumps(cpu_state_to_json(state, version), separators=(",", ":"), ensure_ascii=False)
    atomic_write(path, text.encode())
