"""The kubelet's eviction order per signal (``rankMemoryPressure``, ``rankPIDPressure``,
``rankDiskPressureFunc``): a chain of comparators, first = evicted first.

Every comparator first puts pods without stats before pods with stats. QoS class is not a
comparator: BestEffort pods simply exceed their zero request as soon as they use anything.

Upstream: ``pkg/kubelet/eviction/helpers.go``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cmp_to_key
from typing import Callable, Final, Iterable, Sequence

from ...model.features import FeatureGates, gates_for
from ...model.pod import Pod
from ...model.quantity import BINARY_SI, DECIMAL_SI, Quantity
from ...model.resources import PodResourcesOptions, is_pod_level_resources_set, pod_requests
from ...model.summary import ContainerStats, FsStats, PodStats, Summary
from .signals import (
    ALLOCATABLE_MEMORY_AVAILABLE,
    CONTAINERFS_AVAILABLE,
    CONTAINERFS_INODES_FREE,
    IMAGEFS_AVAILABLE,
    IMAGEFS_INODES_FREE,
    MEMORY_AVAILABLE,
    NODEFS_AVAILABLE,
    NODEFS_INODES_FREE,
    PID_AVAILABLE,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_INODES,
    RESOURCE_MEMORY,
)


class FsStatsType(Enum):
    """Which of a pod's disk figures a ranking counts (``fsStatsType``)."""

    ROOT = "root"            # containers' writable layers
    LOGS = "logs"            # containers' logs
    LOCAL_VOLUME = "localVolumeSource"  # hostPath, gitRepo, configMap, disk-backed emptyDir


ALL_FS: Final = (FsStatsType.ROOT, FsStatsType.LOGS, FsStatsType.LOCAL_VOLUME)


@dataclass(frozen=True, slots=True)
class DiskLayout:
    """The node's filesystems as cAdvisor reports them."""

    dedicated_image_fs: bool = False
    #: Writable layers apart from images (KEP-4191), i.e. on nodefs.
    split_container_fs: bool = False


StatsFunc = Callable[[Pod], "PodStats | None"]


def stats_func(summary: Summary) -> StatsFunc:
    """``cachedStatsFunc``: stats are matched to pods by UID only."""
    by_uid = summary.pod_stats_by_uid()
    return lambda pod: by_uid.get(pod.metadata.uid)


# --- what a pod requests and uses ---------------------------------------------------------------


def resource_request(pod: Pod, resource: str, gates: FeatureGates | None = None) -> Quantity:
    """``GetResourceRequestQuantity``: PodRequests without overhead — with pod-level resources
    set (gate PodLevelResources), container requests are skipped altogether — then overhead is
    added only to a non-zero request."""
    g = gates or _default_gates()
    pod_level = g.enabled("PodLevelResources")
    opts = PodResourcesOptions(exclude_overhead=True, skip_pod_level_resources=not pod_level,
                               skip_container_level_resources=pod_level and is_pod_level_resources_set(pod))
    fmt = BINARY_SI if resource in (RESOURCE_MEMORY, RESOURCE_EPHEMERAL_STORAGE, "storage") else DECIMAL_SI
    request = Quantity(0, 0, fmt) + pod_requests(pod, opts).get(resource, Quantity(0, 0, fmt))
    overhead = pod.spec.overhead.get(resource)
    if overhead is not None and not request.is_zero():
        request = request + overhead
    return request


_GATES: list[FeatureGates] = []


def _default_gates() -> FeatureGates:
    if not _GATES:
        _GATES.append(gates_for(None))
    return _GATES[0]


def _used(fs: FsStats | None) -> int:
    return fs.used_bytes or 0 if fs is not None else 0


def _inodes(fs: FsStats | None) -> int:
    return fs.inodes_used or 0 if fs is not None else 0


def memory_usage(stats: PodStats) -> int:
    return stats.memory.working_set_bytes or 0 if stats.memory is not None else 0


def process_usage(stats: PodStats) -> int:
    return stats.process_stats.process_count or 0 if stats.process_stats is not None else 0


def local_volume_names(pod: Pod) -> list[str]:
    """Volumes that live on the node's disk: hostPath, gitRepo, configMap and disk-backed emptyDir
    (a memory-backed emptyDir is charged to memory, not local storage)."""
    out = []
    for v in pod.spec.volumes:
        if (v.host_path is not None or v.git_repo is not None or v.config_map is not None
                or (v.empty_dir is not None and v.empty_dir.medium == "")):
            out.append(v.name)
    return out


def pod_disk_usage(stats: PodStats, pod: Pod, measure: Sequence[FsStatsType]) -> tuple[int, int]:
    """``podDiskUsage``: (bytes, inodes) over the measured figures."""
    disk = inodes = 0
    for c in stats.containers:
        if FsStatsType.ROOT in measure:
            disk += _used(c.rootfs)
            inodes += _inodes(c.rootfs)
        if FsStatsType.LOGS in measure:
            disk += _used(c.logs)
            inodes += _inodes(c.logs)
    if FsStatsType.LOCAL_VOLUME in measure:
        by_name = {v.name: v for v in stats.volume_stats}
        for name in local_volume_names(pod):
            v = by_name.get(name)
            if v is not None:
                disk += v.used_bytes or 0
                inodes += v.inodes_used or 0
    return disk, inodes


# --- comparators ------------------------------------------------------------------------------
# Comparators run O(n log n) times; requests and disk usage are computed once per pod and rank.


def _cached_request(gates: FeatureGates | None) -> Callable[[Pod, str], Quantity]:
    cache: dict[tuple[int, str], Quantity] = {}

    def get(pod: Pod, resource: str) -> Quantity:
        key = (id(pod), resource)
        q = cache.get(key)
        if q is None:
            q = cache[key] = resource_request(pod, resource, gates)
        return q
    return get


def _cached_disk(measure: Sequence[FsStatsType]) -> Callable[[PodStats, Pod], tuple[int, int]]:
    cache: dict[int, tuple[int, int]] = {}

    def get(stats: PodStats, pod: Pod) -> tuple[int, int]:
        v = cache.get(id(pod))
        if v is None:
            v = cache[id(pod)] = pod_disk_usage(stats, pod, measure)
        return v
    return get


Cmp = Callable[[Pod, Pod], int]


def _cmp_bool(a: bool, b: bool) -> int:
    """true before false."""
    if a == b:
        return 0
    return -1 if a else 1


def _with_stats(stats: StatsFunc, inner: Callable[[Pod, PodStats, Pod, PodStats], int]) -> Cmp:
    def cmp(p1: Pod, p2: Pod) -> int:
        s1, s2 = stats(p1), stats(p2)
        if s1 is None or s2 is None:
            return _cmp_bool(s1 is None, s2 is None)
        return inner(p1, s1, p2, s2)
    return cmp


def _exceeds(usage: int, request: Quantity) -> bool:
    """Strictly above the request (usage equal to the request does not exceed it)."""
    return request.cmp(Quantity(usage, 0)) < 0


def _above(usage: int, request: Quantity) -> Quantity:
    return Quantity(usage, 0) - request


def priority(p1: Pod, p2: Pod) -> int:
    """Lower priority first."""
    a, b = p1.spec.priority or 0, p2.spec.priority or 0
    return (a > b) - (a < b)


def exceed_memory_requests(stats: StatsFunc, gates: FeatureGates | None) -> Cmp:
    req = _cached_request(gates)

    def inner(p1: Pod, s1: PodStats, p2: Pod, s2: PodStats) -> int:
        e1 = _exceeds(memory_usage(s1), req(p1, RESOURCE_MEMORY))
        e2 = _exceeds(memory_usage(s2), req(p2, RESOURCE_MEMORY))
        return _cmp_bool(e1, e2)
    return _with_stats(stats, inner)


def memory(stats: StatsFunc, gates: FeatureGates | None) -> Cmp:
    """Larger usage above request first."""
    req = _cached_request(gates)

    def inner(p1: Pod, s1: PodStats, p2: Pod, s2: PodStats) -> int:
        d1 = _above(memory_usage(s1), req(p1, RESOURCE_MEMORY))
        d2 = _above(memory_usage(s2), req(p2, RESOURCE_MEMORY))
        return d2.cmp(d1)
    return _with_stats(stats, inner)


def process(stats: StatsFunc) -> Cmp:
    """More processes first."""
    def inner(p1: Pod, s1: PodStats, p2: Pod, s2: PodStats) -> int:
        a, b = process_usage(s1), process_usage(s2)
        return (b > a) - (b < a)
    return _with_stats(stats, inner)


def _disk_figure(usage: Callable[[PodStats, Pod], tuple[int, int]], stats: PodStats, pod: Pod, resource: str) -> int:
    disk, inodes = usage(stats, pod)
    return inodes if resource == RESOURCE_INODES else disk


def exceed_disk_requests(stats: StatsFunc, measure: Sequence[FsStatsType], resource: str,
                         gates: FeatureGates | None) -> Cmp:
    req, usage = _cached_request(gates), _cached_disk(measure)

    def inner(p1: Pod, s1: PodStats, p2: Pod, s2: PodStats) -> int:
        e1 = _exceeds(_disk_figure(usage, s1, p1, resource), req(p1, resource))
        e2 = _exceeds(_disk_figure(usage, s2, p2, resource), req(p2, resource))
        return _cmp_bool(e1, e2)
    return _with_stats(stats, inner)


def disk(stats: StatsFunc, measure: Sequence[FsStatsType], resource: str, gates: FeatureGates | None) -> Cmp:
    """Larger usage above the *ephemeral-storage* request first — for inodes too, as upstream
    subtracts the byte request from the inode count (kubernetes/kubernetes#109643, unmerged)."""
    req, usage = _cached_request(gates), _cached_disk(measure)

    def inner(p1: Pod, s1: PodStats, p2: Pod, s2: PodStats) -> int:
        d1 = _above(_disk_figure(usage, s1, p1, resource), req(p1, RESOURCE_EPHEMERAL_STORAGE))
        d2 = _above(_disk_figure(usage, s2, p2, resource), req(p2, RESOURCE_EPHEMERAL_STORAGE))
        return d2.cmp(d1)
    return _with_stats(stats, inner)


def ordered_by(pods: Iterable[Pod], *cmps: Cmp) -> list[Pod]:
    """``orderedBy(...).Sort``: the first comparator that tells two pods apart decides."""
    def chain(a: Pod, b: Pod) -> int:
        for c in cmps:
            r = c(a, b)
            if r:
                return r
        return 0
    return sorted(pods, key=cmp_to_key(chain))


# --- rank functions per signal -----------------------------------------------------------------

RankFunc = Callable[[Sequence[Pod], StatsFunc], list[Pod]]


def rank_memory_pressure(gates: FeatureGates | None = None) -> RankFunc:
    return lambda pods, stats: ordered_by(pods, exceed_memory_requests(stats, gates), priority,
                                          memory(stats, gates))


def rank_pid_pressure(pods: Sequence[Pod], stats: StatsFunc) -> list[Pod]:
    return ordered_by(pods, priority, process(stats))


def rank_disk_pressure(measure: Sequence[FsStatsType], resource: str, gates: FeatureGates | None = None) -> RankFunc:
    return lambda pods, stats: ordered_by(pods, exceed_disk_requests(stats, measure, resource, gates), priority,
                                          disk(stats, measure, resource, gates))


def signal_to_rank_func(layout: DiskLayout, gates: FeatureGates | None = None) -> dict[str, RankFunc]:
    """``buildSignalToRankFunc``: what a disk signal measures depends on where the writable
    layers and images live (images are never charged to a pod)."""
    out: dict[str, RankFunc] = {
        MEMORY_AVAILABLE: rank_memory_pressure(gates),
        ALLOCATABLE_MEMORY_AVAILABLE: rank_memory_pressure(gates),
        PID_AVAILABLE: rank_pid_pressure,
    }
    nodefs: tuple[FsStatsType, ...]
    imagefs: tuple[FsStatsType, ...]
    containerfs: tuple[FsStatsType, ...]
    if layout.dedicated_image_fs and layout.split_container_fs:
        nodefs, imagefs, containerfs = ALL_FS, (), ALL_FS
    elif layout.dedicated_image_fs:
        nodefs, imagefs = (FsStatsType.LOGS, FsStatsType.LOCAL_VOLUME), (FsStatsType.ROOT,)
        containerfs = imagefs
    else:
        nodefs = imagefs = containerfs = ALL_FS
    for (avail, inodes), measure in (((NODEFS_AVAILABLE, NODEFS_INODES_FREE), nodefs),
                                     ((IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE), imagefs),
                                     ((CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE), containerfs)):
        out[avail] = rank_disk_pressure(measure, RESOURCE_EPHEMERAL_STORAGE, gates)
        out[inodes] = rank_disk_pressure(measure, RESOURCE_INODES, gates)
    return out


def rank_pods(signal: str, pods: Sequence[Pod], summary: Summary, *, layout: DiskLayout = DiskLayout(),
              gates: FeatureGates | None = None) -> list[Pod]:
    """The eviction order of ``pods`` for ``signal``, first evicted first."""
    return signal_to_rank_func(layout, gates)[signal](pods, stats_func(summary))


def container_usage(c: ContainerStats, resource: str) -> int | None:
    """A container's usage as eviction messages report it (None when not measured)."""
    if resource == RESOURCE_MEMORY:
        if c.memory is not None and c.memory.working_set_bytes is not None:
            return c.memory.working_set_bytes
        return None
    if resource == RESOURCE_EPHEMERAL_STORAGE:
        if (c.rootfs is not None and c.rootfs.used_bytes is not None and c.logs is not None
                and c.logs.used_bytes is not None):
            return c.rootfs.used_bytes + c.logs.used_bytes
    return None
