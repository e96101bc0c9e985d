"""Eviction signals: their names, what they reclaim, which node condition they raise, and how
each is observed from the kubelet Summary (``makeSignalObservations``).

Upstream: ``pkg/kubelet/eviction/api/types.go`` and ``makeSignalObservations`` in
``pkg/kubelet/eviction/helpers.go``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from ...model.quantity import BINARY_SI, DECIMAL_SI, Quantity
from ...model.summary import FsStats, Summary, parse_time

MEMORY_AVAILABLE: Final = "memory.available"
ALLOCATABLE_MEMORY_AVAILABLE: Final = "allocatableMemory.available"
NODEFS_AVAILABLE: Final = "nodefs.available"
NODEFS_INODES_FREE: Final = "nodefs.inodesFree"
IMAGEFS_AVAILABLE: Final = "imagefs.available"
IMAGEFS_INODES_FREE: Final = "imagefs.inodesFree"
CONTAINERFS_AVAILABLE: Final = "containerfs.available"
CONTAINERFS_INODES_FREE: Final = "containerfs.inodesFree"
PID_AVAILABLE: Final = "pid.available"

#: Every signal the kubelet accepts in evictionHard/Soft/SoftGracePeriod/MinimumReclaim.
SIGNALS: Final = (MEMORY_AVAILABLE, ALLOCATABLE_MEMORY_AVAILABLE, NODEFS_AVAILABLE, NODEFS_INODES_FREE,
                  IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE, CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE,
                  PID_AVAILABLE)

MEMORY_PRESSURE: Final = "MemoryPressure"
DISK_PRESSURE: Final = "DiskPressure"
PID_PRESSURE: Final = "PIDPressure"

#: The node condition each signal raises (``signalToNodeCondition``).
SIGNAL_TO_CONDITION: Final = {
    MEMORY_AVAILABLE: MEMORY_PRESSURE, ALLOCATABLE_MEMORY_AVAILABLE: MEMORY_PRESSURE,
    NODEFS_AVAILABLE: DISK_PRESSURE, NODEFS_INODES_FREE: DISK_PRESSURE,
    IMAGEFS_AVAILABLE: DISK_PRESSURE, IMAGEFS_INODES_FREE: DISK_PRESSURE,
    CONTAINERFS_AVAILABLE: DISK_PRESSURE, CONTAINERFS_INODES_FREE: DISK_PRESSURE,
    PID_AVAILABLE: PID_PRESSURE,
}

#: The NoSchedule taint the node lifecycle controller puts on a node with each condition.
CONDITION_TO_TAINT: Final = {
    MEMORY_PRESSURE: "node.kubernetes.io/memory-pressure",
    DISK_PRESSURE: "node.kubernetes.io/disk-pressure",
    PID_PRESSURE: "node.kubernetes.io/pid-pressure",
}

RESOURCE_MEMORY: Final = "memory"
RESOURCE_EPHEMERAL_STORAGE: Final = "ephemeral-storage"
RESOURCE_INODES: Final = "inodes"
RESOURCE_PIDS: Final = "pids"

#: What reclaiming each signal frees (``signalToResource``); named in eviction messages.
SIGNAL_TO_RESOURCE: Final = {
    MEMORY_AVAILABLE: RESOURCE_MEMORY, ALLOCATABLE_MEMORY_AVAILABLE: RESOURCE_MEMORY,
    NODEFS_AVAILABLE: RESOURCE_EPHEMERAL_STORAGE, NODEFS_INODES_FREE: RESOURCE_INODES,
    IMAGEFS_AVAILABLE: RESOURCE_EPHEMERAL_STORAGE, IMAGEFS_INODES_FREE: RESOURCE_INODES,
    CONTAINERFS_AVAILABLE: RESOURCE_EPHEMERAL_STORAGE, CONTAINERFS_INODES_FREE: RESOURCE_INODES,
    PID_AVAILABLE: RESOURCE_PIDS,
}

#: Memory pressure is relieved before anything else (``byEvictionPriority``).
MEMORY_SIGNALS: Final = frozenset({MEMORY_AVAILABLE, ALLOCATABLE_MEMORY_AVAILABLE})


def is_valid_signal(signal: str) -> bool:
    return signal in SIGNAL_TO_RESOURCE


@dataclass(frozen=True, slots=True)
class SignalObservation:
    """What the kubelet saw for one signal: available and capacity (a quantity) at ``time``."""

    available: Quantity
    capacity: Quantity | None
    time: datetime | None = None


Observations = dict[str, SignalObservation]


def _bytes(value: int) -> Quantity:
    return Quantity(value, 0, BINARY_SI)


def _count(value: int) -> Quantity:
    return Quantity(value, 0, DECIMAL_SI)


def make_signal_observations(summary: Summary) -> Observations:
    """One observation per signal the Summary has figures for; a signal without them has none
    (and a threshold on it is then never met)."""
    obs: Observations = {}
    node = summary.node
    mem = node.memory
    if mem is not None and mem.available_bytes is not None and mem.working_set_bytes is not None:
        obs[MEMORY_AVAILABLE] = SignalObservation(_bytes(mem.available_bytes),
                                                  _bytes(mem.available_bytes + mem.working_set_bytes),
                                                  parse_time(mem.time))
    pods_cg = node.system_container("pods")
    if pods_cg is not None and pods_cg.memory is not None:
        m = pods_cg.memory
        if m.available_bytes is not None and m.working_set_bytes is not None:
            obs[ALLOCATABLE_MEMORY_AVAILABLE] = SignalObservation(_bytes(m.available_bytes),
                                                                  _bytes(m.available_bytes + m.working_set_bytes),
                                                                  parse_time(m.time))
    _observe_fs(obs, node.fs, NODEFS_AVAILABLE, NODEFS_INODES_FREE)
    if node.runtime is not None:
        _observe_fs(obs, node.runtime.image_fs, IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE)
        _observe_fs(obs, node.runtime.container_fs, CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE)
    rl = node.rlimit
    if rl is not None and rl.maxpid is not None and rl.curproc is not None:
        obs[PID_AVAILABLE] = SignalObservation(_count(rl.maxpid - rl.curproc), _count(rl.maxpid), parse_time(rl.time))
    return obs


def _observe_fs(obs: Observations, fs: FsStats | None, bytes_signal: str, inodes_signal: str) -> None:
    if fs is None:
        return
    t = parse_time(fs.time)
    if fs.available_bytes is not None and fs.capacity_bytes is not None:
        obs[bytes_signal] = SignalObservation(_bytes(fs.available_bytes), _bytes(fs.capacity_bytes), t)
    if fs.inodes_free is not None and fs.inodes is not None:
        obs[inodes_signal] = SignalObservation(_count(fs.inodes_free), _count(fs.inodes), t)
