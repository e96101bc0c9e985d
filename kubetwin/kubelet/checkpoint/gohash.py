"""Checkpoint checksums exactly as the kubelet computes them.

``checksum.New(obj)`` is FNV-32a over ``dump.ForHash(obj)``: go-spew's ``%#v`` formatter with
sorted map keys, methods disabled and no pointer addresses. Its rendering rules, which every
checksum depends on:

* a value shows its Go type in parentheses — ``(string)static``, ``(uint64)512`` — unless it is
  an element of a slice or a map (key or value), or the target of a pointer;
* strings are written raw (no quotes), structs as ``{Field:value Field:value}``, slices as
  ``[a b]``, maps as ``map[k:v k:v]`` with keys sorted, a nil map or slice as ``<nil>``;
* a pointer prints ``(*T)`` where a type would be shown, ``<*>`` where it would not, then the
  value it points to without its type.

Go values are modelled by the small node classes below; each carries its Go type name. The
rendering was checked against the checksums in upstream's cpumanager and memorymanager state
tests (V1, V2, V3 and string-payload checkpoints).

Upstream: ``pkg/kubelet/checkpointmanager/checksum/checksum.go`` over
``k8s.io/apimachinery/pkg/util/dump`` (go-spew).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


@dataclass(frozen=True)
class GoStruct:
    type: str
    fields: Sequence[tuple[str, Any]]


@dataclass(frozen=True)
class GoMap:
    type: str
    items: dict | None  # None = nil map; keys are str or int


@dataclass(frozen=True)
class GoSlice:
    type: str
    items: Sequence | None  # None = nil slice


@dataclass(frozen=True)
class GoPtr:
    type: str  # the pointee's type, e.g. "state.MemoryTable"
    value: Any


@dataclass(frozen=True)
class GoScalar:
    type: str  # "string", "int", "uint64", "checksum.Checksum", "v1.ResourceName", ...
    value: Any


def _key(k: Any) -> Any:
    return (0, k, "") if isinstance(k, int) else (1, 0, str(k))


def spew(v: Any, show_type: bool = True) -> str:
    """go-spew ``%#v`` of a modelled Go value."""
    if isinstance(v, GoPtr):
        head = f"(*{v.type})" if show_type else "<*>"
        return head + spew(v.value, False)
    if isinstance(v, GoScalar):
        body = str(v.value).lower() if isinstance(v.value, bool) else str(v.value)
        return (f"({v.type})" if show_type else "") + body
    prefix = f"({v.type})" if show_type else ""
    if isinstance(v, GoStruct):
        return prefix + "{" + " ".join(f"{name}:{spew(val)}" for name, val in v.fields) + "}"
    if isinstance(v, GoSlice):
        if v.items is None:
            return prefix + "<nil>"
        return prefix + "[" + " ".join(spew(x, False) for x in v.items) + "]"
    if isinstance(v, GoMap):
        if v.items is None:
            return prefix + "<nil>"
        parts = [f"{spew(_as_node(k), False)}:{spew(_as_node(val), False)}"
                 for k, val in sorted(v.items.items(), key=lambda kv: _key(kv[0]))]
        return prefix + "map[" + " ".join(parts) + "]"
    return spew(_as_node(v), show_type)


def _as_node(x: Any) -> Any:
    if isinstance(x, (GoStruct, GoMap, GoSlice, GoPtr, GoScalar)):
        return x
    if isinstance(x, bool):
        return GoScalar("bool", x)
    if isinstance(x, int):
        return GoScalar("int", x)
    if isinstance(x, str):
        return GoScalar("string", x)
    raise TypeError(f"not a modelled Go value: {x!r}")


def checksum(v: Any) -> int:
    """``checksum.New(v)``."""
    return fnv32a(spew(v).encode())


def string_checksum(s: str) -> int:
    """``checksum.New(s)`` of a string payload (the ``data`` of V4-style checkpoints)."""
    return fnv32a(("(string)" + s).encode())


# --- the kubelet's checkpoint structs --------------------------------------------------------
def _str_map(m: dict[str, str]) -> GoMap:
    return GoMap("map[string]string", {k: GoScalar("string", v) for k, v in m.items()})


def _cpuset_struct(cpus: Sequence[int]) -> GoStruct:
    """``k8s.io/utils/cpuset.CPUSet``: ``{elems map[int]struct{}}``."""
    return GoStruct("cpuset.CPUSet", [("elems", GoMap("map[int]struct {}", {c: GoStruct("struct {}", [])
                                                                          for c in cpus}))])


def cpu_checkpoint_struct(name: str, policy: str, default: str, entries: dict[str, dict[str, str]] | None,
                          pod_entries: Mapping[str, Sequence[int]] | None = None, v1: bool = False,
                          checksum_value: int = 0) -> GoPtr:
    """``*state.<name>`` as the cpumanager hashes it; ``pod_entries`` None = a struct without the field."""
    if v1:
        ent: GoMap = GoMap("map[string]string", None if entries is None else
                           {k: GoScalar("string", v) for k, v in entries.items()})
    else:
        ent = GoMap("map[string]map[string]string", None if entries is None else
                    {k: GoMap("map[string]string", {c: GoScalar("string", s) for c, s in v.items()})
                     for k, v in entries.items()})
    fields: list[tuple[str, Any]] = [("PolicyName", GoScalar("string", policy)),
                                     ("DefaultCPUSet", GoScalar("string", default)), ("Entries", ent)]
    if pod_entries is not None:
        fields.append(("PodEntries", GoMap("state.PodCPUAssignments",
                                           {u: GoStruct("state.PodEntry", [("CPUSet", _cpuset_struct(c))])
                                            for u, c in pod_entries.items()})))
    fields.append(("Checksum", GoScalar("checksum.Checksum", checksum_value)))
    return GoPtr(f"state.{name}", GoStruct(f"state.{name}", fields))


def memory_checkpoint_struct(policy: str, machine_state: dict[int, dict], entries: dict[str, dict[str, list[dict]]],
                             pod_entries: dict[str, list[dict]] | None = None) -> GoPtr:
    """``*state.MemoryManagerCheckpoint`` from its JSON shape (``machineState`` keys as ints)."""
    def table(t: dict) -> GoPtr:
        return GoPtr("state.MemoryTable", GoStruct("state.MemoryTable", [
            ("TotalMemSize", GoScalar("uint64", t.get("total", 0))),
            ("SystemReserved", GoScalar("uint64", t.get("systemReserved", 0))),
            ("Allocatable", GoScalar("uint64", t.get("allocatable", 0))),
            ("Reserved", GoScalar("uint64", t.get("reserved", 0))),
            ("Free", GoScalar("uint64", t.get("free", 0)))]))

    def node(n: dict) -> GoPtr:
        mm = n.get("memoryMap")
        cells = n.get("cells")
        return GoPtr("state.NUMANodeState", GoStruct("state.NUMANodeState", [
            ("NumberOfAssignments", GoScalar("int", n.get("numberOfAssignments", 0))),
            ("MemoryMap", GoMap("map[v1.ResourceName]*state.MemoryTable",
                                None if mm is None else {k: table(t) for k, t in mm.items()})),
            ("Cells", GoSlice("[]int", None if cells is None else [GoScalar("int", c) for c in cells]))]))

    def blocks(bs: list[dict] | None) -> GoSlice:
        return GoSlice("[]state.Block", None if bs is None else [GoStruct("state.Block", [
            ("NUMAAffinity", GoSlice("[]int", None if b.get("numaAffinity") is None else
                                     [GoScalar("int", x) for x in b["numaAffinity"]])),
            ("Type", GoScalar("v1.ResourceName", b.get("type", ""))),
            ("Size", GoScalar("uint64", b.get("size", 0)))]) for b in bs])

    fields: list[tuple[str, Any]] = [
        ("PolicyName", GoScalar("string", policy)),
        ("MachineState", GoMap("state.NUMANodeMap", {k: node(v) for k, v in machine_state.items()})),
        ("Entries", GoMap("state.ContainerMemoryAssignments",
                          {u: GoMap("map[string][]state.Block", {c: blocks(bs) for c, bs in conts.items()})
                           for u, conts in entries.items()}))]
    if pod_entries is not None:
        fields.append(("PodEntries", GoMap("state.PodMemoryAssignments",
                                           {u: blocks(bs) for u, bs in pod_entries.items()})))
    fields.append(("Checksum", GoScalar("checksum.Checksum", 0)))
    return GoPtr("state.MemoryManagerCheckpoint", GoStruct("state.MemoryManagerCheckpoint", fields))


def device_checkpoint_data(entries: list[dict], registered: dict[str, list[str]]) -> GoStruct:
    """``checkpoint.checkpointData`` (hashed by value) of ``kubelet_internal_checkpoint``."""
    def entry(e: dict) -> GoStruct:
        ids = e.get("DeviceIDs")
        resp = e.get("AllocResp")
        return GoStruct("checkpoint.PodDevicesEntry", [
            ("PodUID", GoScalar("string", e["PodUID"])),
            ("ContainerName", GoScalar("string", e["ContainerName"])),
            ("ResourceName", GoScalar("string", e["ResourceName"])),
            ("DeviceIDs", GoMap("checkpoint.DevicesPerNUMA", None if ids is None else
                                {int(k): GoSlice("[]string", [GoScalar("string", d) for d in v])
                                 for k, v in ids.items()})),
            ("AllocResp", GoSlice("[]uint8", None if resp is None else [GoScalar("uint8", b) for b in resp]))])

    return GoStruct("checkpoint.checkpointData", [
        ("PodDeviceEntries", GoSlice("[]checkpoint.PodDevicesEntry", [entry(e) for e in entries])),
        ("RegisteredDevices", GoMap("map[string][]string",
                                    {k: GoSlice("[]string", [GoScalar("string", d) for d in v])
                                     for k, v in registered.items()}))])
