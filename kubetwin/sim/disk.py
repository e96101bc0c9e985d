"""Disk and PIDs on a simulated node: its filesystems, image garbage collection, process counts.

A node group's ``disk`` says what the kubelet's cAdvisor would report::

    disk:
      nodefs: 100Gi            # the kubelet's root filesystem: logs, emptyDir volumes (and more, below)
      nodefsUsed: 20Gi         # used outside pods (operating system, kubelet)
      imagefs: 200Gi           # a dedicated image filesystem; absent: images live on nodefs
      writableLayers: imagefs  # containers' writable layers: imagefs (default) or nodefs (KEP-4191
                               # split image filesystem; needs KubeletSeparateDiskGC)
      images: [4Gi, 2Gi, 1Gi]  # unused images, least recently used first: what image GC may delete
      imagesInUse: 6Gi         # images running pods use (never deleted)
      maxPID: 4194304          # kernel.pid_max (the Summary's rlimit.maxpid)
      pids: 400                # processes outside pods
      ioBandwidth: 500Mi       # bytes per second the node's disk serves (kubetwin.sim.io_psi)

Pods add their usage curves (:mod:`.usage`: ``rootfs``, ``logs``, ``emptyDir``, ``pids``). From
them :class:`NodeDisk` fills the Summary the eviction manager reads (``node.fs``,
``node.runtime.imageFs`` / ``containerFs``, ``node.rlimit``; per pod ``containers[].rootfs`` /
``logs``, ``volume``, ``ephemeral-storage``, ``process_stats``), so :mod:`.pressure` drives the
kubelet's own decisions (:mod:`kubetwin.kubelet.eviction`): DiskPressure / PIDPressure with their
taints, per-pod local-storage limit evictions, reclaim before eviction.

Image garbage collection is the kubelet's image manager (``pkg/kubelet/images/image_gc_manager.go``):
every ``ImageGCPeriod`` (5 min), when the image filesystem's usage is at or above
``imageGCHighThresholdPercent`` it frees ``capacity × (100 − imageGCLowThresholdPercent)/100 −
available`` bytes by deleting whole unused images, least recently used first, none younger than
``imageMinimumGCAge`` (images are first seen when the node starts). The eviction manager's node
reclaim (``DeleteUnusedImages``) deletes every unused image old enough; there are no dead
containers to collect.

PIDs: a container's processes are capped by the pod's ``pids.max`` (``podPidsLimit``): the kernel
refuses forks past it — it kills nothing — so the count stays at the limit and a
``PIDLimitReached`` event is recorded once per pod. Inodes are not modelled (no inode figures:
the inode signals have no observation, as on a node whose runtime reports none).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Mapping

from ..errors import InputError
from ..model.strict import unknown_key_error
from ..model.summary import (
    ContainerStats,
    FsStats,
    ProcessStats,
    RlimitStats,
    RuntimeStats,
    Summary,
    VolumeStats,
)
from .usage import _bytes, _count, curve_containers

if TYPE_CHECKING:
    from .loop import SimPod

#: ``ImageGCPeriod`` of the kubelet (pkg/kubelet/kubelet.go): how often image GC runs
IMAGE_GC_PERIOD = 300.0
KEYS = ("nodefs", "nodefsUsed", "imagefs", "writableLayers", "images", "imagesInUse", "maxPID", "pids", "ioBandwidth")


@dataclass(frozen=True, slots=True)
class DiskSpec:
    """A node group's filesystems and process table (bytes, counts)."""

    nodefs: int
    nodefs_used: int = 0
    imagefs: int | None = None
    split: bool = False                  # writable layers on nodefs (KEP-4191)
    images: tuple[int, ...] = ()
    images_in_use: int = 0
    max_pid: int | None = None
    pids: int = 0
    io_bandwidth: int | None = None      # bytes/s of the node's disk; None: I/O not simulated

    @property
    def layout(self) -> Any:
        from ..kubelet.eviction.ranking import DiskLayout

        return DiskLayout(dedicated_image_fs=self.imagefs is not None, split_container_fs=self.split)


def parse_disk(raw: Any, path: str, gates: Any = None) -> DiskSpec | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise InputError("expected {nodefs: SIZE, imagefs: SIZE, images: [SIZE, ...], maxPID: N, ...}", path=path)
    for k in raw:
        if k not in KEYS:
            raise unknown_key_error(str(k), KEYS, path=f"{path}.{k}")
    if raw.get("nodefs") is None:
        raise InputError("Required value: nodefs (the size of the node's root filesystem)", path=f"{path}.nodefs")
    nodefs = _bytes(raw["nodefs"], f"{path}.nodefs")
    imagefs = _bytes(raw["imagefs"], f"{path}.imagefs") if raw.get("imagefs") is not None else None
    where = raw.get("writableLayers", "imagefs" if imagefs is not None else "nodefs")
    if where not in ("imagefs", "nodefs"):
        raise InputError(f"Unsupported value: {where!r}: supported values: \"imagefs\", \"nodefs\"",
                         path=f"{path}.writableLayers")
    if where == "imagefs" and imagefs is None:
        raise InputError("writable layers on imagefs need a dedicated imagefs", path=f"{path}.writableLayers",
                         fix="give imagefs: SIZE, or writableLayers: nodefs")
    split = imagefs is not None and where == "nodefs"
    if split and gates is not None and not gates.enabled("KubeletSeparateDiskGC"):
        raise InputError("a split image filesystem (writable layers on nodefs, images on imagefs) needs feature "
                         "gate KubeletSeparateDiskGC", path=f"{path}.writableLayers",
                         fix="set spec.featureGates: {KubeletSeparateDiskGC: true}")
    images = raw.get("images") or []
    if not isinstance(images, list):
        raise InputError("expected a list of image sizes, least recently used first", path=f"{path}.images")
    spec = DiskSpec(nodefs, _bytes(raw.get("nodefsUsed", 0), f"{path}.nodefsUsed"), imagefs, split,
                    tuple(_bytes(v, f"{path}.images[{k}]") for k, v in enumerate(images)),
                    _bytes(raw.get("imagesInUse", 0), f"{path}.imagesInUse"),
                    _count(raw["maxPID"], f"{path}.maxPID") if raw.get("maxPID") is not None else None,
                    _count(raw.get("pids", 0), f"{path}.pids"),
                    _bandwidth(raw.get("ioBandwidth"), f"{path}.ioBandwidth"))
    image_bytes = sum(spec.images) + spec.images_in_use
    fixed = [("nodefs", spec.nodefs, spec.nodefs_used + (0 if imagefs is not None else image_bytes))]
    if imagefs is not None:
        fixed.append(("imagefs", imagefs, image_bytes))
    for name, cap, used in fixed:
        if used > cap:
            raise InputError(f"{name} of {cap} bytes cannot hold the {used} bytes given as used on it",
                             path=f"{path}.{name}")
    return spec


def _bandwidth(raw: Any, path: str) -> int | None:
    if raw is None:
        return None
    n = _bytes(raw, path)
    if n <= 0:
        raise InputError(f"Invalid value: {raw!r}: must be greater than zero (bytes per second)", path=path)
    return n


@dataclass(slots=True)
class PodDisk:
    """One pod's figures at a sample."""

    rootfs: dict[str, int]
    logs: dict[str, int]
    volumes: dict[str, int]
    pids: dict[str, int]

    @property
    def ephemeral(self) -> int:
        return sum(self.rootfs.values()) + sum(self.logs.values()) + sum(self.volumes.values())


class NodeDisk:
    """One node's filesystems over time: unused images left, image GC, per-pod usage."""

    def __init__(self, spec: DiskSpec, config: Any):
        self.spec = spec
        self.config = config
        self.images = list(spec.images)          # unused images still on the node, LRU first
        self.next_gc = 0.0                       # wait.Until runs it at once, then every period
        self.min_age = int(config.image_minimum_gc_age) / 1e9 if config is not None else 120.0
        self.pid_capped: set[int] = set()
        #: (time, nodefs used, imagefs used, processes) per sample; per pod (time, ephemeral bytes, processes)
        self.series: list[tuple[float, int, int, int]] = []
        self.pod_series: dict[str, list[tuple[float, int, int]]] = {}

    # --- usage ---------------------------------------------------------------------------------
    def pod_usage(self, sp: "SimPod", t: float, pids_limit: int) -> PodDisk:
        u = sp.usage
        out = PodDisk({}, {}, {}, {})
        if u is None:
            return out
        age = t - sp.origin
        for c, lead in curve_containers(sp.pod):
            for kind, into in (("rootfs", out.rootfs), ("logs", out.logs), ("pids", out.pids)):
                curve = u.curve(kind, c.name, lead)
                if curve is not None:
                    into[c.name] = curve.at(age)
        for name, curve in u.empty_dir:
            out.volumes[name] = curve.at(age)
        if pids_limit > 0 and sum(out.pids.values()) > pids_limit:
            scale = pids_limit / sum(out.pids.values())
            out.pids = {k: int(v * scale) for k, v in out.pids.items()}
        return out

    def pids_over_limit(self, sp: "SimPod", t: float, pids_limit: int) -> bool:
        """The pod's processes reached ``pids.max`` for the first time (forks fail from now on)."""
        if pids_limit <= 0 or sp.usage is None or not sp.usage.pids or sp.i in self.pid_capped:
            return False
        d = self.pod_usage_uncapped_pids(sp, t)
        if d >= pids_limit:
            self.pid_capped.add(sp.i)
            return True
        return False

    def pod_usage_uncapped_pids(self, sp: "SimPod", t: float) -> int:
        return sum(self.pod_usage(sp, t, 0).pids.values())

    # --- the Summary ---------------------------------------------------------------------------
    def decorate(self, summary: Summary, usage: Mapping[str, PodDisk], t: float, stamp: str) -> Summary:
        """The Summary with the filesystems, the process table and each pod's disk figures."""
        import msgspec

        s = self.spec
        layers = sum(sum(d.rootfs.values()) for d in usage.values())
        nodefs_pods = sum(sum(d.logs.values()) + sum(d.volumes.values()) for d in usage.values())
        images = sum(self.images) + s.images_in_use
        nodefs_used = s.nodefs_used + nodefs_pods
        if s.imagefs is None:
            nodefs_used += images + layers
            imagefs_used = nodefs_used
        else:
            imagefs_used = images + (0 if s.split else layers)
            if s.split:
                nodefs_used += layers
        nodefs = FsStats(time=stamp, capacity_bytes=s.nodefs, used_bytes=nodefs_used,
                         available_bytes=max(s.nodefs - nodefs_used, 0))
        if s.imagefs is None:
            image_fs = nodefs
        else:
            image_fs = FsStats(time=stamp, capacity_bytes=s.imagefs, used_bytes=imagefs_used,
                               available_bytes=max(s.imagefs - imagefs_used, 0))
        container_fs = nodefs if s.split else image_fs
        rlimit = None
        if s.max_pid is not None:
            procs = s.pids + sum(sum(d.pids.values()) for d in usage.values())
            # the kernel hands out no pid past pid_max: forks fail there
            rlimit = RlimitStats(time=stamp, maxpid=s.max_pid, curproc=min(procs, s.max_pid))
        node = msgspec.structs.replace(summary.node, fs=nodefs, runtime=RuntimeStats(image_fs=image_fs,
                                                                                     container_fs=container_fs),
                                       rlimit=rlimit)
        pods = []
        for p in summary.pods:
            d = usage.get(p.pod_ref.uid)
            if d is None:
                pods.append(p)
                continue
            conts = [msgspec.structs.replace(c, rootfs=FsStats(time=stamp, used_bytes=d.rootfs.get(c.name, 0)),
                                             logs=FsStats(time=stamp, used_bytes=d.logs.get(c.name, 0)))
                     for c in p.containers]
            names = {c.name for c in conts}
            conts += [ContainerStats(name=n, rootfs=FsStats(time=stamp, used_bytes=d.rootfs.get(n, 0)),
                                     logs=FsStats(time=stamp, used_bytes=d.logs.get(n, 0)))
                      for n in sorted(set(d.rootfs) | set(d.logs)) if n not in names]
            pods.append(msgspec.structs.replace(
                p, containers=conts,
                volume_stats=[VolumeStats(name=n, time=stamp, used_bytes=v) for n, v in d.volumes.items()],
                ephemeral_storage=FsStats(time=stamp, used_bytes=d.ephemeral),
                process_stats=ProcessStats(process_count=sum(d.pids.values()))))
        return Summary(node=node, pods=pods)

    def record(self, t: float, summary: Summary, usage: Mapping[str, PodDisk], keys: Mapping[str, str]) -> None:
        node = summary.node
        image_fs = node.runtime.image_fs if node.runtime is not None else None
        self.series.append((t, (node.fs.used_bytes or 0) if node.fs is not None else 0,
                            (image_fs.used_bytes or 0) if image_fs is not None else 0,
                            (node.rlimit.curproc or 0) if node.rlimit is not None else 0))
        for uid, d in usage.items():
            self.pod_series.setdefault(keys[uid], []).append((t, d.ephemeral, sum(d.pids.values())))

    def result(self) -> dict[str, Any]:
        s = self.spec
        return {"nodefsBytes": s.nodefs, "imagefsBytes": s.imagefs if s.imagefs is not None else s.nodefs,
                "maxPID": s.max_pid, "unusedImagesLeft": len(self.images),
                "series": [list(x) for x in self.series],
                "pods": {k: [list(x) for x in v] for k, v in self.pod_series.items()}}

    # --- garbage collection ---------------------------------------------------------------------
    def image_fs_figures(self, summary: Summary) -> tuple[int, int]:
        """(capacity, available) of the filesystem images live on."""
        rt = summary.node.runtime
        fs = rt.image_fs if rt is not None and rt.image_fs is not None else summary.node.fs
        assert fs is not None and fs.capacity_bytes is not None and fs.available_bytes is not None
        return fs.capacity_bytes, fs.available_bytes

    def free_space(self, want: int, t: float) -> int:
        """``freeSpace``: delete whole unused images, least recently used first, until ``want``
        bytes are freed; images younger than ``imageMinimumGCAge`` stay."""
        if t < self.min_age:
            return 0
        freed = 0
        while self.images and freed < want:
            freed += self.images.pop(0)
        return freed

    def periodic_gc(self, summary: Summary, t: float) -> tuple[int, int] | None:
        """Image GC when its period has come: (bytes it had to free, bytes freed), or None when it
        did not run or the usage was below the high threshold."""
        if t < self.next_gc:
            return None
        self.next_gc = (t // IMAGE_GC_PERIOD + 1) * IMAGE_GC_PERIOD
        high = self.config.image_gc_high_threshold_percent if self.config is not None else 85
        low = self.config.image_gc_low_threshold_percent if self.config is not None else 80
        cap, available = self.image_fs_figures(summary)
        if cap <= 0 or high >= 100:
            return None
        usage_percent = 100 - available * 100 // cap
        if usage_percent < high:
            return None
        to_free = cap * (100 - low) // 100 - available
        return to_free, self.free_space(to_free, t)


def stamp_at(t: float) -> str:
    from .loop import EPOCH

    return (EPOCH + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def disk_summary(sim: Any, i: int, disk: NodeDisk, config: Any, rows: list[tuple["SimPod", Any]],
                 summary: Summary, t: float) -> tuple[Summary, Any]:
    """Node ``i``'s Summary with its disk and PID figures, after the periodic image GC; and the
    eviction manager's node reclaim (``DeleteUnusedImages``; no dead containers to collect)."""
    node = sim.cluster.names[i]
    stamp = stamp_at(t)
    limit = config.pod_pids_limit if config is not None else -1
    usage: dict[str, PodDisk] = {}
    for sp, _ in rows:
        if sp.usage is None or not sp.usage.disk:
            continue
        if disk.pids_over_limit(sp, t, limit):
            sim.events.append({"time": t, "type": "PIDLimitReached", "pod": sp.pod.key, "node": node,
                               "message": f"the pod's processes reached pids.max ({limit}, podPidsLimit): "
                                          "the kernel refuses further forks"})
        usage[sp.pod.uid] = disk.pod_usage(sp, t, limit)
    out = disk.decorate(summary, usage, t, stamp)
    disk.record(t, out, usage, {sp.pod.uid: sp.pod.key for sp, _ in rows})
    gc = disk.periodic_gc(out, t)
    if gc is not None:
        to_free, freed = gc
        ev: dict[str, Any] = {"time": t, "type": "ImageGC", "node": node, "bytesToFree": to_free, "freed": freed}
        if freed < to_free:
            ev["type"] = "FreeDiskSpaceFailed"
            ev["message"] = (f"Failed to garbage collect required amount of images. Attempted to free {to_free} "
                             f"bytes, but only found {freed} bytes eligible to free.")
        sim.events.append(ev)
        if freed:
            out = disk.decorate(summary, usage, t, stamp)

    def reclaim(funcs: tuple[str, ...]) -> Summary:
        from ..kubelet.eviction.manager import IMAGES

        if IMAGES in funcs:
            freed = disk.free_space(1 << 62, t)
            if freed:
                sim.events.append({"time": t, "type": "ImageGC", "node": node, "reason": "eviction manager reclaim",
                                   "freed": freed})
        return disk.decorate(summary, usage, t, stamp)

    return out, reclaim
