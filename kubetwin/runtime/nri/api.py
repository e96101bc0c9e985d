"""NRI's messages (``nri.pkg.api.v1alpha1``) with its field names, in protobuf JSON shape.

Each message is a mutable dataclass (the runtime adaptation edits requests and replies in
place, as NRI's Go code does); :func:`to_json` writes it as ``protojson`` would: lowerCamelCase
names (``podSandboxId``, ``CDIDevices`` as the proto spells it), default values left out, 64-bit
integers as strings, optional values as ``{"value": ...}`` wrappers, enums by name.

Optional values (``OptionalInt64`` & co.) are plain Python values here, ``None`` meaning
"not set". The setters mirror NRI's Go helpers (``SetLinuxCPUSetCPUs`` →
:meth:`ContainerAdjustment.set_linux_cpuset_cpus`) so a policy written against NRI's stub
reads the same in Python.

Upstream: containerd/nri v0.12.2 ``pkg/api/api.proto``, ``pkg/api/{adjustment,update,
resources,event}.go``.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from . import message_copy

# --- enums -------------------------------------------------------------------------------------
EVENTS = ("UNKNOWN", "RUN_POD_SANDBOX", "STOP_POD_SANDBOX", "REMOVE_POD_SANDBOX", "CREATE_CONTAINER",
          "POST_CREATE_CONTAINER", "START_CONTAINER", "POST_START_CONTAINER", "UPDATE_CONTAINER",
          "POST_UPDATE_CONTAINER", "STOP_CONTAINER", "REMOVE_CONTAINER", "UPDATE_POD_SANDBOX",
          "POST_UPDATE_POD_SANDBOX", "VALIDATE_CONTAINER_ADJUSTMENT", "LAST")
EVENT = {name: i for i, name in enumerate(EVENTS)}
#: ``ValidEvents``: every event below LAST (a plugin subscribing to more fails registration)
VALID_EVENTS = (1 << (EVENT["LAST"] - 1)) - 1

CONTAINER_STATES = ("CONTAINER_UNKNOWN", "CONTAINER_CREATED", "CONTAINER_PAUSED", "CONTAINER_RUNNING",
                    "CONTAINER_STOPPED")
SCHEDULER_POLICIES = ("SCHED_NONE", "SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH", "SCHED_ISO",
                      "SCHED_IDLE", "SCHED_DEADLINE")
SCHEDULER_FLAGS = ("SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_RECLAIM", "SCHED_FLAG_DL_OVERRUN",
                   "SCHED_FLAG_KEEP_POLICY", "SCHED_FLAG_KEEP_PARAMS", "SCHED_FLAG_UTIL_CLAMP_MIN",
                   "SCHED_FLAG_UTIL_CLAMP_MAX")
IOPRIO_CLASSES = ("IOPRIO_CLASS_NONE", "IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE", "IOPRIO_CLASS_IDLE")
MPOL_MODES = ("MPOL_DEFAULT", "MPOL_PREFERRED", "MPOL_BIND", "MPOL_INTERLEAVE", "MPOL_LOCAL",
              "MPOL_PREFERRED_MANY", "MPOL_WEIGHTED_INTERLEAVE")


def event_mask(*names: str) -> int:
    """``MustParseEventMask("RunPodSandbox,CreateContainer", ...)``: names in either spelling."""
    mask = 0
    for group in names:
        for name in group.split(","):
            name = name.strip()
            if not name:
                continue
            key = name.upper() if "_" in name else _camel_to_event(name)
            if key not in EVENT or key in ("UNKNOWN", "LAST"):
                raise ValueError(f'invalid event "{name}"')
            mask |= 1 << (EVENT[key] - 1)
    return mask


def _camel_to_event(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0:
            out.append("_")
        out.append(ch.upper())
    return "".join(out)


def event_names(mask: int) -> list[str]:
    return [EVENTS[i + 1] for i in range(EVENT["LAST"] - 1) if mask & (1 << i)]


# --- field metadata and JSON -------------------------------------------------------------------
def _f(json: str, kind: str, default: Any = None, factory: Any = None) -> Any:
    md = {"json": json, "kind": kind}
    if factory is not None:
        return field(default_factory=factory, metadata=md)
    return field(default=default, metadata=md)


_INT64 = {"int64", "uint64"}
_OPT_INT64 = {"opt_int64", "opt_uint64", "opt_int"}


def to_json(msg: Any) -> dict[str, Any]:
    """The message as protojson writes it (defaults omitted)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(msg):
        v = getattr(msg, f.name)
        kind = f.metadata["kind"]
        enc = _encode(v, kind)
        if enc is not _OMIT:
            out[f.metadata["json"]] = enc
    return out


class _Omit:
    pass


_OMIT = _Omit()


def _encode(v: Any, kind: str) -> Any:
    if v is None:
        return _OMIT
    if kind == "msg":
        return to_json(v)
    if kind == "list_msg":
        return [to_json(x) for x in v] if v else _OMIT
    if kind == "map_msg":
        return {k: (to_json(x) if x is not None else {}) for k, x in v.items()} if v else _OMIT
    if kind in ("list_str", "list_enum", "list_uint32"):
        return list(v) if v else _OMIT
    if kind == "map_str":
        return dict(v) if v else _OMIT
    if kind in _INT64:
        return str(v) if v else _OMIT
    if kind in ("int32", "uint32"):
        return v if v else _OMIT
    if kind == "string" or kind.startswith("enum"):
        return v if v else _OMIT
    if kind == "bool":
        return True if v else _OMIT
    # optional wrappers: present even with a default value inside
    if kind in _OPT_INT64:
        return {"value": str(v)} if v else {}
    if kind in ("opt_uint32", "opt_filemode", "opt_int32"):
        return {"value": v} if v else {}
    if kind == "opt_string":
        return {"value": v} if v else {}
    if kind == "opt_bool":
        return {"value": True} if v else {}
    if kind == "opt_repeated_string":
        return {"value": list(v)} if v else {}
    raise ValueError(kind)


def clone(msg: Any) -> Any:
    """A deep copy of a message. Messages are trees of dataclasses, dicts, lists and scalars (no
    shared parts, no cycles), so they are copied field by field — what ``copy.deepcopy`` gives,
    several times faster (the runtime copies each request for every plugin). A message goes
    through its own copier, generated from its field kinds (:mod:`.message_copy`, a fast path)."""
    if message_copy.ENABLED:
        c = message_copy.copier(type(msg), _clone)
        if c is not None:
            return c(msg)
    return _clone(msg)


_SCALAR, _DICT, _LIST, _TUPLE, _STRUCT, _OTHER = range(6)
_KINDS: dict[type, int] = {str: _SCALAR, int: _SCALAR, bool: _SCALAR, float: _SCALAR, type(None): _SCALAR,
                           bytes: _SCALAR, dict: _DICT, list: _LIST, tuple: _TUPLE}


def _clone(v: Any) -> Any:
    t = type(v)
    kind = _KINDS.get(t)
    if kind is None:
        kind = _KINDS[t] = (_STRUCT if dataclasses.is_dataclass(t) and "__slots__" not in t.__dict__
                            and "__dict__" in dir(t) else _OTHER)
    if kind == _SCALAR:
        return v
    if kind == _DICT:
        return {k: x if _KINDS.get(type(x)) == _SCALAR else _clone(x) for k, x in v.items()}
    if kind == _LIST:
        return [x if _KINDS.get(type(x)) == _SCALAR else _clone(x) for x in v]
    if kind == _STRUCT:
        new = object.__new__(t)
        new.__dict__.update({k: x if _KINDS.get(type(x)) == _SCALAR else _clone(x) for k, x in v.__dict__.items()})
        return new
    if kind == _TUPLE:
        return tuple(_clone(x) for x in v)
    return copy.deepcopy(v)


# --- messages ----------------------------------------------------------------------------------
@dataclass
class LinuxMemory:
    limit: int | None = _f("limit", "opt_int64")
    reservation: int | None = _f("reservation", "opt_int64")
    swap: int | None = _f("swap", "opt_int64")
    kernel: int | None = _f("kernel", "opt_int64")
    kernel_tcp: int | None = _f("kernelTcp", "opt_int64")
    swappiness: int | None = _f("swappiness", "opt_uint64")
    disable_oom_killer: bool | None = _f("disableOomKiller", "opt_bool")
    use_hierarchy: bool | None = _f("useHierarchy", "opt_bool")


@dataclass
class LinuxCPU:
    shares: int | None = _f("shares", "opt_uint64")
    quota: int | None = _f("quota", "opt_int64")
    period: int | None = _f("period", "opt_uint64")
    realtime_runtime: int | None = _f("realtimeRuntime", "opt_int64")
    realtime_period: int | None = _f("realtimePeriod", "opt_uint64")
    cpus: str = _f("cpus", "string", "")
    mems: str = _f("mems", "string", "")


@dataclass
class HugepageLimit:
    page_size: str = _f("pageSize", "string", "")
    limit: int = _f("limit", "uint64", 0)


@dataclass
class LinuxDeviceCgroup:
    allow: bool = _f("allow", "bool", False)
    type: str = _f("type", "string", "")
    major: int | None = _f("major", "opt_int64")
    minor: int | None = _f("minor", "opt_int64")
    access: str = _f("access", "string", "")


@dataclass
class LinuxPids:
    limit: int = _f("limit", "int64", 0)


@dataclass
class LinuxResources:
    memory: LinuxMemory | None = _f("memory", "msg")
    cpu: LinuxCPU | None = _f("cpu", "msg")
    hugepage_limits: list[HugepageLimit] = _f("hugepageLimits", "list_msg", factory=list)
    blockio_class: str | None = _f("blockioClass", "opt_string")
    rdt_class: str | None = _f("rdtClass", "opt_string")
    unified: dict[str, str] = _f("unified", "map_str", factory=dict)
    devices: list[LinuxDeviceCgroup] = _f("devices", "list_msg", factory=list)
    pids: LinuxPids | None = _f("pids", "msg")

    def ensure(self) -> "LinuxResources":
        if self.memory is None:
            self.memory = LinuxMemory()
        if self.cpu is None:
            self.cpu = LinuxCPU()
        return self

    def ensure_memory(self) -> LinuxMemory:
        """``memory``, created empty when missing."""
        if self.memory is None:
            self.memory = LinuxMemory()
        return self.memory

    def ensure_cpu(self) -> LinuxCPU:
        """``cpu``, created empty when missing."""
        if self.cpu is None:
            self.cpu = LinuxCPU()
        return self.cpu


@dataclass
class LinuxNamespace:
    type: str = _f("type", "string", "")
    path: str = _f("path", "string", "")


@dataclass
class LinuxPodSandbox:
    pod_overhead: LinuxResources | None = _f("podOverhead", "msg")
    pod_resources: LinuxResources | None = _f("podResources", "msg")
    cgroup_parent: str = _f("cgroupParent", "string", "")
    cgroups_path: str = _f("cgroupsPath", "string", "")
    namespaces: list[LinuxNamespace] = _f("namespaces", "list_msg", factory=list)
    resources: LinuxResources | None = _f("resources", "msg")


@dataclass
class PodSandbox:
    id: str = _f("id", "string", "")
    name: str = _f("name", "string", "")
    uid: str = _f("uid", "string", "")
    namespace: str = _f("namespace", "string", "")
    labels: dict[str, str] = _f("labels", "map_str", factory=dict)
    annotations: dict[str, str] = _f("annotations", "map_str", factory=dict)
    runtime_handler: str = _f("runtimeHandler", "string", "")
    linux: LinuxPodSandbox | None = _f("linux", "msg")
    pid: int = _f("pid", "uint32", 0)
    ips: list[str] = _f("ips", "list_str", factory=list)


@dataclass
class Mount:
    destination: str = _f("destination", "string", "")
    type: str = _f("type", "string", "")
    source: str = _f("source", "string", "")
    options: list[str] = _f("options", "list_str", factory=list)


@dataclass
class Hook:
    path: str = _f("path", "string", "")
    args: list[str] = _f("args", "list_str", factory=list)
    env: list[str] = _f("env", "list_str", factory=list)
    timeout: int | None = _f("timeout", "opt_int")


@dataclass
class Hooks:
    prestart: list[Hook] = _f("prestart", "list_msg", factory=list)
    create_runtime: list[Hook] = _f("createRuntime", "list_msg", factory=list)
    create_container: list[Hook] = _f("createContainer", "list_msg", factory=list)
    start_container: list[Hook] = _f("startContainer", "list_msg", factory=list)
    poststart: list[Hook] = _f("poststart", "list_msg", factory=list)
    poststop: list[Hook] = _f("poststop", "list_msg", factory=list)


@dataclass
class LinuxDevice:
    path: str = _f("path", "string", "")
    type: str = _f("type", "string", "")
    major: int = _f("major", "int64", 0)
    minor: int = _f("minor", "int64", 0)
    file_mode: int | None = _f("fileMode", "opt_filemode")
    uid: int | None = _f("uid", "opt_uint32")
    gid: int | None = _f("gid", "opt_uint32")


@dataclass
class LinuxIOPriority:
    class_: str = _f("class", "enum:IOPrioClass", "")
    priority: int = _f("priority", "int32", 0)


@dataclass
class LinuxScheduler:
    policy: str = _f("policy", "enum:LinuxSchedulerPolicy", "")
    nice: int = _f("nice", "int32", 0)
    priority: int = _f("priority", "int32", 0)
    flags: list[str] = _f("flags", "list_enum", factory=list)
    runtime: int = _f("runtime", "uint64", 0)
    deadline: int = _f("deadline", "uint64", 0)
    period: int = _f("period", "uint64", 0)


@dataclass
class LinuxRdt:
    clos_id: str | None = _f("closId", "opt_string")
    schemata: list[str] | None = _f("schemata", "opt_repeated_string")
    enable_monitoring: bool | None = _f("enableMonitoring", "opt_bool")
    remove: bool = _f("remove", "bool", False)


@dataclass
class LinuxMemoryPolicy:
    mode: str = _f("mode", "enum:MpolMode", "")
    nodes: str = _f("nodes", "string", "")
    flags: list[str] = _f("flags", "list_enum", factory=list)


@dataclass
class LinuxNetDevice:
    name: str = _f("name", "string", "")


@dataclass
class LinuxSeccomp:
    default_action: str = _f("defaultAction", "string", "")


@dataclass
class POSIXRlimit:
    type: str = _f("type", "string", "")
    hard: int = _f("hard", "uint64", 0)
    soft: int = _f("soft", "uint64", 0)


@dataclass
class CDIDevice:
    name: str = _f("name", "string", "")


@dataclass
class KeyValue:
    key: str = _f("key", "string", "")
    value: str = _f("value", "string", "")


@dataclass
class LinuxContainer:
    namespaces: list[LinuxNamespace] = _f("namespaces", "list_msg", factory=list)
    devices: list[LinuxDevice] = _f("devices", "list_msg", factory=list)
    resources: LinuxResources | None = _f("resources", "msg")
    oom_score_adj: int | None = _f("oomScoreAdj", "opt_int")
    cgroups_path: str = _f("cgroupsPath", "string", "")
    io_priority: LinuxIOPriority | None = _f("ioPriority", "msg")
    seccomp_policy: LinuxSeccomp | None = _f("seccompPolicy", "msg")
    sysctl: dict[str, str] = _f("sysctl", "map_str", factory=dict)
    net_devices: dict[str, LinuxNetDevice] = _f("netDevices", "map_msg", factory=dict)
    scheduler: LinuxScheduler | None = _f("scheduler", "msg")
    rdt: LinuxRdt | None = _f("rdt", "msg")


@dataclass
class Container:
    id: str = _f("id", "string", "")
    pod_sandbox_id: str = _f("podSandboxId", "string", "")
    name: str = _f("name", "string", "")
    state: str = _f("state", "enum:ContainerState", "")
    labels: dict[str, str] = _f("labels", "map_str", factory=dict)
    annotations: dict[str, str] = _f("annotations", "map_str", factory=dict)
    args: list[str] = _f("args", "list_str", factory=list)
    env: list[str] = _f("env", "list_str", factory=list)
    mounts: list[Mount] = _f("mounts", "list_msg", factory=list)
    hooks: Hooks | None = _f("hooks", "msg")
    linux: LinuxContainer | None = _f("linux", "msg")
    pid: int = _f("pid", "uint32", 0)
    rlimits: list[POSIXRlimit] = _f("rlimits", "list_msg", factory=list)
    created_at: int = _f("createdAt", "int64", 0)
    started_at: int = _f("startedAt", "int64", 0)
    finished_at: int = _f("finishedAt", "int64", 0)
    exit_code: int = _f("exitCode", "int32", 0)
    status_reason: str = _f("statusReason", "string", "")
    status_message: str = _f("statusMessage", "string", "")
    cdi_devices: list[CDIDevice] = _f("CDIDevices", "list_msg", factory=list)

    def resources(self) -> LinuxResources:
        """``container.linux.resources`` (created empty when missing)."""
        if self.linux is None:
            self.linux = LinuxContainer()
        if self.linux.resources is None:
            self.linux.resources = LinuxResources()
        return self.linux.resources.ensure()


@dataclass
class LinuxContainerAdjustment:
    devices: list[LinuxDevice] = _f("devices", "list_msg", factory=list)
    resources: LinuxResources | None = _f("resources", "msg")
    cgroups_path: str = _f("cgroupsPath", "string", "")
    oom_score_adj: int | None = _f("oomScoreAdj", "opt_int")
    io_priority: LinuxIOPriority | None = _f("ioPriority", "msg")
    seccomp_policy: LinuxSeccomp | None = _f("seccompPolicy", "msg")
    namespaces: list[LinuxNamespace] = _f("namespaces", "list_msg", factory=list)
    sysctl: dict[str, str] = _f("sysctl", "map_str", factory=dict)
    net_devices: dict[str, LinuxNetDevice] = _f("netDevices", "map_msg", factory=dict)
    scheduler: LinuxScheduler | None = _f("scheduler", "msg")
    rdt: LinuxRdt | None = _f("rdt", "msg")
    memory_policy: LinuxMemoryPolicy | None = _f("memoryPolicy", "msg")


class _ResourceSetters:
    """NRI's ``SetLinux*`` helpers, shared by :class:`ContainerAdjustment` and :class:`ContainerUpdate`."""

    def _res(self) -> LinuxResources:  # pragma: no cover - overridden
        raise NotImplementedError

    def set_linux_memory_limit(self, value: int) -> None:
        self._res().ensure_memory().limit = value

    def set_linux_memory_reservation(self, value: int) -> None:
        self._res().ensure_memory().reservation = value

    def set_linux_memory_swap(self, value: int) -> None:
        self._res().ensure_memory().swap = value

    def set_linux_cpu_shares(self, value: int) -> None:
        self._res().ensure_cpu().shares = value

    def set_linux_cpu_quota(self, value: int) -> None:
        self._res().ensure_cpu().quota = value

    def set_linux_cpu_period(self, value: int) -> None:
        self._res().ensure_cpu().period = value

    def set_linux_cpuset_cpus(self, value: str) -> None:
        self._res().ensure_cpu().cpus = value

    def set_linux_cpuset_mems(self, value: str) -> None:
        self._res().ensure_cpu().mems = value

    def add_linux_hugepage_limit(self, page_size: str, limit: int) -> None:
        self._res().hugepage_limits.append(HugepageLimit(page_size, limit))

    def set_linux_blockio_class(self, value: str) -> None:
        self._res().blockio_class = value

    def set_linux_rdt_class(self, value: str) -> None:
        self._res().rdt_class = value

    def add_linux_unified(self, key: str, value: str) -> None:
        self._res().unified[key] = value

    def set_linux_pids_limit(self, value: int) -> None:
        self._res().pids = LinuxPids(value)


@dataclass
class ContainerAdjustment(_ResourceSetters):
    annotations: dict[str, str] = _f("annotations", "map_str", factory=dict)
    mounts: list[Mount] = _f("mounts", "list_msg", factory=list)
    env: list[KeyValue] = _f("env", "list_msg", factory=list)
    hooks: Hooks | None = _f("hooks", "msg")
    linux: LinuxContainerAdjustment | None = _f("linux", "msg")
    rlimits: list[POSIXRlimit] = _f("rlimits", "list_msg", factory=list)
    cdi_devices: list[CDIDevice] = _f("CDIDevices", "list_msg", factory=list)
    args: list[str] = _f("args", "list_str", factory=list)

    def ensure_linux(self) -> LinuxContainerAdjustment:
        if self.linux is None:
            self.linux = LinuxContainerAdjustment()
        return self.linux

    def _res(self) -> LinuxResources:
        lx = self.ensure_linux()
        if lx.resources is None:
            lx.resources = LinuxResources()
        return lx.resources.ensure()

    def add_annotation(self, key: str, value: str) -> None:
        self.annotations[key] = value

    def remove_annotation(self, key: str) -> None:
        self.annotations[mark_for_removal(key)] = ""

    def add_mount(self, m: Mount) -> None:
        self.mounts.append(m)

    def add_env(self, key: str, value: str) -> None:
        self.env.append(KeyValue(key, value))

    def set_args(self, args: list[str]) -> None:
        self.args = list(args)

    def set_linux_oom_score_adj(self, value: int) -> None:
        self.ensure_linux().oom_score_adj = value

    def set_linux_scheduler(self, sch: LinuxScheduler) -> None:
        self.ensure_linux().scheduler = sch

    def set_linux_io_priority(self, iop: LinuxIOPriority) -> None:
        self.ensure_linux().io_priority = iop

    def set_linux_rdt_clos_id(self, value: str) -> None:
        lx = self.ensure_linux()
        lx.rdt = lx.rdt or LinuxRdt()
        lx.rdt.clos_id = value

    def set_linux_rdt_schemata(self, lines: list[str]) -> None:
        lx = self.ensure_linux()
        lx.rdt = lx.rdt or LinuxRdt()
        lx.rdt.schemata = list(lines)


@dataclass
class LinuxContainerUpdate:
    resources: LinuxResources | None = _f("resources", "msg")


@dataclass
class ContainerUpdate(_ResourceSetters):
    container_id: str = _f("containerId", "string", "")
    linux: LinuxContainerUpdate | None = _f("linux", "msg")
    ignore_failure: bool = _f("ignoreFailure", "bool", False)

    def ensure_linux(self) -> LinuxContainerUpdate:
        if self.linux is None:
            self.linux = LinuxContainerUpdate()
        return self.linux

    def _res(self) -> LinuxResources:
        if self.linux is None:
            self.linux = LinuxContainerUpdate()
        if self.linux.resources is None:
            self.linux.resources = LinuxResources()
        return self.linux.resources.ensure()


@dataclass
class ContainerEviction:
    container_id: str = _f("containerId", "string", "")
    reason: str = _f("reason", "string", "")


# --- removal markers (``MarkForRemoval`` / ``IsMarkedForRemoval``) ------------------------------
def mark_for_removal(key: str) -> str:
    return "-" + key


def is_marked_for_removal(key: str) -> tuple[str, bool]:
    if key.startswith("-"):
        return key[1:], True
    return key, False
