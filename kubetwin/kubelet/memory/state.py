"""Memory Manager state: per-NUMA memory tables and per-container blocks (``memorymanager/state``).

Upstream: ``pkg/kubelet/cm/memorymanager/state/state.go``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class MemoryTable:
    total: int = 0
    system_reserved: int = 0
    allocatable: int = 0
    reserved: int = 0
    free: int = 0

    def to_json(self) -> dict[str, int]:
        return {"total": self.total, "systemReserved": self.system_reserved, "allocatable": self.allocatable,
                "reserved": self.reserved, "free": self.free}


@dataclass
class NUMANodeState:
    memory_map: dict[str, MemoryTable] = field(default_factory=dict)
    number_of_assignments: int = 0
    cells: list[int] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"numberOfAssignments": self.number_of_assignments,
                "memoryMap": {k: v.to_json() for k, v in self.memory_map.items()}, "cells": list(self.cells)}


@dataclass(frozen=True)
class Block:
    numa_affinity: tuple[int, ...]
    type: str
    size: int

    def to_json(self) -> dict:
        return {"numaAffinity": list(self.numa_affinity), "type": self.type, "size": self.size}


@dataclass
class MemoryState:
    policy_name: str = "None"
    machine_state: dict[int, NUMANodeState] = field(default_factory=dict)
    entries: dict[str, dict[str, list[Block]]] = field(default_factory=dict)

    def clone(self) -> "MemoryState":
        """An independent copy (blocks are immutable and shared)."""
        machine = {n: NUMANodeState({r: MemoryTable(t.total, t.system_reserved, t.allocatable, t.reserved, t.free)
                                     for r, t in ns.memory_map.items()}, ns.number_of_assignments, list(ns.cells))
                   for n, ns in self.machine_state.items()}
        entries = {uid: {c: list(bs) for c, bs in conts.items()} for uid, conts in self.entries.items()}
        return MemoryState(self.policy_name, machine, entries)
