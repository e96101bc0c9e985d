"""Checkpoint checksums: FNV-32a over the text Go's ``dump.ForHash`` prints for the struct.

``ForHash`` is spew with sorted map keys, no pointer addresses and methods disabled; the
kubelet hashes the checkpoint struct with its checksum zeroed, under the type name
``CPUManagerCheckpoint``.
"""

from __future__ import annotations

from ..cpu.state import CPUState


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _map_str_str(m: dict[str, str]) -> str:
    if not m:
        return "map[string]string{}"
    return "map[string]string{" + ", ".join(f"{_q(k)}: {_q(v)}" for k, v in sorted(m.items())) + "}"


def cpu_checkpoint_checksum(state: CPUState, with_pod_entries: bool = False) -> int:
    entries = {uid: {n: str(c) for n, c in conts.items()} for uid, conts in state.entries.items()}
    if entries:
        body = ", ".join(f"{_q(uid)}: {_map_str_str(conts)}" for uid, conts in sorted(entries.items()))
        ent = "map[string]map[string]string{" + body + "}"
    else:
        ent = "map[string]map[string]string{}" if entries == {} else "map[string]map[string]string(nil)"
    text = (f"(checkpoint.CPUManagerCheckpoint){{PolicyName:({_q(state.policy_name)}) "
            f"DefaultCPUSet:({_q(str(state.default_cpuset))}) Entries:({ent})")
    if with_pod_entries:
        pe = ", ".join(f"{_q(uid)}: {{CPUSet:{_q(str(c))}}}" for uid, c in sorted(state.pod_entries.items()))
        text += f" PodEntries:(map[string]PodEntry{{{pe}}})"
    text += " Checksum:(0)}"
    return fnv32a(text.encode())
