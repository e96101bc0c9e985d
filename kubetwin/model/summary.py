"""Typed view of the kubelet Summary API (``/stats/summary``, ``k8s.io/kubelet/pkg/apis/stats/v1alpha1``).

The eviction manager reads nothing else, so a real node's ``kubectl get --raw
/api/v1/nodes/NODE/proxy/stats/summary`` can be fed in as is. Every figure is optional, as in
the Go types (pointers): a missing figure means "not measured", which the kubelet treats
differently from zero (no observation for a signal; pods without stats ranked first).
"""

from __future__ import annotations

import functools
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec

from ..errors import InputError
from .meta import KubeStruct, convert
from .strict import BOOLEAN, INTEGER, NUMBER, STRING, Spec, check, list_of, map_of
from .strict import obj as record


class PSIData(KubeStruct, frozen=True):
    total: int | None = None
    avg10: float | None = None
    avg60: float | None = None
    avg300: float | None = None


class PSIStats(KubeStruct, frozen=True):
    """Pressure stall information (KEP-4205): ``some`` and ``full`` stall figures."""

    full: PSIData | None = None
    some: PSIData | None = None


class CPUStats(KubeStruct, frozen=True):
    time: str | None = None
    usage_nano_cores: int | None = None
    usage_core_nano_seconds: int | None = None
    psi: PSIStats | None = None


class IOStats(KubeStruct, frozen=True):
    """I/O figures: only pressure stall information (KubeletPSI)."""

    time: str | None = None
    psi: PSIStats | None = None


class MemoryStats(KubeStruct, frozen=True):
    time: str | None = None
    available_bytes: int | None = None
    usage_bytes: int | None = None
    working_set_bytes: int | None = None
    rss_bytes: int | None = None
    page_faults: int | None = None
    major_page_faults: int | None = None
    psi: PSIStats | None = None


class SwapStats(KubeStruct, frozen=True):
    time: str | None = None
    swap_available_bytes: int | None = None
    swap_usage_bytes: int | None = None


class FsStats(KubeStruct, frozen=True):
    time: str | None = None
    available_bytes: int | None = None
    capacity_bytes: int | None = None
    used_bytes: int | None = None
    inodes_free: int | None = None
    inodes: int | None = None
    inodes_used: int | None = None


class ContainerStats(KubeStruct, frozen=True):
    name: str = ""
    start_time: str | None = None
    cpu: CPUStats | None = None
    memory: MemoryStats | None = None
    io: IOStats | None = None
    swap: SwapStats | None = None
    rootfs: FsStats | None = None
    logs: FsStats | None = None


class RuntimeStats(KubeStruct, frozen=True):
    image_fs: FsStats | None = None
    #: Writable layers on their own filesystem (KEP-4191 split image filesystem).
    container_fs: FsStats | None = None


class RlimitStats(KubeStruct, frozen=True):
    time: str | None = None
    maxpid: int | None = None
    curproc: int | None = None


class NodeStats(KubeStruct, frozen=True):
    node_name: str = ""
    system_containers: list[ContainerStats] = []
    cpu: CPUStats | None = None
    memory: MemoryStats | None = None
    io: IOStats | None = None
    swap: SwapStats | None = None
    fs: FsStats | None = None
    runtime: RuntimeStats | None = None
    rlimit: RlimitStats | None = None

    def system_container(self, name: str) -> ContainerStats | None:
        for c in self.system_containers:
            if c.name == name:
                return c
        return None


class PodReference(KubeStruct, frozen=True):
    name: str = ""
    namespace: str = ""
    uid: str = ""


class VolumeStats(KubeStruct, frozen=True):
    name: str = ""
    time: str | None = None
    available_bytes: int | None = None
    capacity_bytes: int | None = None
    used_bytes: int | None = None
    inodes_free: int | None = None
    inodes: int | None = None
    inodes_used: int | None = None


class ProcessStats(KubeStruct, frozen=True):
    process_count: int | None = msgspec.field(default=None, name="process_count")


class PodStats(KubeStruct, frozen=True):
    pod_ref: PodReference = PodReference()
    start_time: str | None = None
    containers: list[ContainerStats] = []
    cpu: CPUStats | None = None
    memory: MemoryStats | None = None
    io: IOStats | None = None
    swap: SwapStats | None = None
    volume_stats: list[VolumeStats] = msgspec.field(default_factory=list, name="volume")
    ephemeral_storage: FsStats | None = msgspec.field(default=None, name="ephemeral-storage")
    process_stats: ProcessStats | None = msgspec.field(default=None, name="process_stats")


class Summary(KubeStruct, frozen=True):
    node: NodeStats = NodeStats()
    pods: list[PodStats] = []

    def pod_stats_by_uid(self) -> dict[str, PodStats]:
        """Pod stats keyed by ``podRef.uid``: the kubelet matches stats to pods by UID only."""
        return {p.pod_ref.uid: p for p in self.pods}


# --- strict decoding: every field of k8s.io/kubelet/pkg/apis/stats/v1alpha1 -----------------------------


@lru_cache(maxsize=1)
def summary_spec() -> Spec:
    """The fields of ``stats/v1alpha1.Summary`` (``types.go``), read or not: a real node's
    ``/stats/summary`` is accepted as is, a misspelt field (``workingSetByte``) is refused."""
    time = STRING
    psi_data = record(total=INTEGER, avg10=NUMBER, avg60=NUMBER, avg300=NUMBER)
    psi = record(full=psi_data, some=psi_data)
    cpu = record(time=time, usageNanoCores=INTEGER, usageCoreNanoSeconds=INTEGER, psi=psi)
    memory = record(time=time, availableBytes=INTEGER, usageBytes=INTEGER, workingSetBytes=INTEGER, rssBytes=INTEGER,
                 pageFaults=INTEGER, majorPageFaults=INTEGER, psi=psi)
    io = record(time=time, psi=psi)
    swap = record(time=time, swapAvailableBytes=INTEGER, swapUsageBytes=INTEGER)
    fs_fields = dict(time=time, availableBytes=INTEGER, capacityBytes=INTEGER, usedBytes=INTEGER, inodesFree=INTEGER,
                     inodes=INTEGER, inodesUsed=INTEGER)
    fs = record(**fs_fields)
    interface_fields = dict(name=STRING, rxBytes=INTEGER, rxErrors=INTEGER, txBytes=INTEGER, txErrors=INTEGER)
    network = record(time=time, interfaces=list_of(record(**interface_fields)), **interface_fields)
    accelerator = record(make=STRING, model=STRING, id=STRING, memoryTotal=INTEGER, memoryUsed=INTEGER, dutyCycle=INTEGER)
    user_metric = record(name=STRING, type=STRING, units=STRING, labels=map_of(STRING), time=time, value=NUMBER)
    container = record(name=STRING, startTime=time, cpu=cpu, memory=memory, io=io, accelerators=list_of(accelerator),
                    rootfs=fs, logs=fs, userDefinedMetrics=list_of(user_metric), swap=swap)
    volume = record(name=STRING, pvcRef=record(name=STRING, namespace=STRING),
                 volumeHealthStats=record(abnormal=BOOLEAN), **fs_fields)
    pod = record({"podRef": record(name=STRING, namespace=STRING, uid=STRING), "startTime": time,
               "containers": list_of(container), "cpu": cpu, "memory": memory, "io": io, "network": network,
               "volume": list_of(volume), "ephemeral-storage": fs, "process_stats": record(process_count=INTEGER),
               "swap": swap})
    node = record(nodeName=STRING, systemContainers=list_of(container), startTime=time, cpu=cpu, memory=memory, io=io,
               network=network, fs=fs, runtime=record(imageFs=fs, containerFs=fs),
               rlimit=record(time=time, maxpid=INTEGER, curproc=INTEGER), swap=swap)
    return record(node=node, pods=list_of(pod))


def summary_from_dict(obj: Any, file: str | None = None, path: str = "") -> Summary:
    """A Summary from decoded JSON; type errors name the field (``pods[2].memory.workingSetBytes``)."""
    if obj is None:
        return Summary()
    if not isinstance(obj, dict):
        raise InputError("expected the Summary API JSON object (node, pods)", path=path, file=file)
    if "kind" in obj or "apiVersion" in obj:
        # The Summary API has neither; a manifest here is a swapped argument.
        raise InputError(f"this is a Kubernetes {obj.get('kind') or 'object'} manifest, not a kubelet Summary API "
                         "document", path=path or "kind", file=file,
                         fix="pass the JSON of /api/v1/nodes/NODE/proxy/stats/summary")
    check(obj, summary_spec(), file=file, prefix=path)
    summary = convert(obj, Summary, file=file, path=path)
    _check(summary, file, path)
    return summary


def load_summary(path: str | Path) -> Summary:
    """Read ``/stats/summary`` JSON (or YAML) from a file or ``-`` for stdin."""
    from .loader import load_one

    doc = load_one(path, "Summary")
    return summary_from_dict(doc.obj, file=doc.file)


def parse_time(value: str | None, path: str = "", file: str | None = None) -> datetime | None:
    """An RFC 3339 stats time, or None when the stats carry none."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"invalid time {value!r}: expected RFC 3339 like 2026-01-02T15:04:05Z",
                         path=path, file=file) from None


_MAX_UINT64 = 2 ** 64 - 1


def _check(summary: Summary, file: str | None, prefix: str) -> None:
    """Reject negative figures (Go's uint64 cannot hold them) and unparsable times.

    The walk carries each value's path as a chain of (parent, segment) pairs, joined into text
    only for an error: a Summary of 100,000 containers has millions of fields."""
    def at(chain: tuple, name: str) -> str:
        parts = [name]
        while chain:
            chain, seg = chain
            parts.append(seg)
        text = "".join(reversed(parts))
        return text[1:] if text.startswith(".") else text

    def walk(obj: Any, chain: tuple) -> None:
        if isinstance(obj, msgspec.Struct):
            cls = type(obj)
            for field in obj.__struct_fields__:
                value = getattr(obj, field)
                if field == "time" or field == "start_time":
                    try:
                        parse_time(value, "", file)
                    except InputError as exc:
                        raise InputError(exc.message, path=at(chain, "." + _wire_name(cls, field)), file=file,
                                         fix=exc.fix) from None
                elif isinstance(value, int) and not isinstance(value, bool):
                    if value < 0:
                        raise InputError(f"must not be negative, got {value}",
                                         path=at(chain, "." + _wire_name(cls, field)), file=file)
                    if value > _MAX_UINT64:
                        raise InputError("must fit an unsigned 64-bit integer (the Summary API's uint64)",
                                         path=at(chain, "." + _wire_name(cls, field)), file=file)
                elif isinstance(value, (msgspec.Struct, list)):
                    walk(value, (chain, "." + _wire_name(cls, field)))
        elif isinstance(obj, list):
            for i, item in enumerate(obj):
                if isinstance(item, (msgspec.Struct, list)):
                    walk(item, (chain, f"[{i}]"))

    walk(summary, ((), prefix) if prefix else ())


@functools.cache
def _wire_name(cls: type, field: str) -> str:
    """The JSON name of a struct field (asked once per class and field: ``msgspec.structs.fields``
    evaluates the class's annotations each time, a minute for a Summary of 20,000 pods)."""
    info = msgspec.structs.fields(cls)
    for f in info:
        if f.name == field:
            return f.encode_name
    return field
