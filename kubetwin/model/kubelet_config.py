"""KubeletConfiguration (``kubelet.config.k8s.io/v1beta1``): a typed, immutable view with the kubelet's defaults.

Defaulting follows ``pkg/kubelet/apis/config/v1beta1/defaults.go`` *including its Go zero-value
quirks*: a non-pointer field written as its zero value is defaulted as if absent (``maxPods: 0``
is 110, ``evictionPressureTransitionPeriod: 0s`` is 5m), while pointer fields keep an explicit
value (``cpuCFSQuota: false``) and an explicit empty list stays empty
(``enforceNodeAllocatable: []``). Validation follows ``pkg/kubelet/apis/config/validation`` and
the start-up checks of the managers and of ``ParseThresholdConfig``; messages are the kubelet's,
prefixed by the field path. Decoding is strict (:mod:`kubetwin.model.kubelet_fields`): an unknown
or mistyped field is an error naming the nearest valid one; a known field that resource
management never reads is accepted silently, one that it reads but kubetwin does not model is
reported (partial configs are the norm in tests).

``evictionHard`` keeps whether it was given: absent means the kubelet's default hard
thresholds, given (even ``{}``) replaces them unless ``mergeDefaultEvictionSettings``.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, Final, Mapping

import msgspec

from ..errors import InputError, join_path
from .cpuset import CPUSet
from .duration import MILLISECOND, MINUTE, SECOND, Duration, DurationError, parse_duration, parse_go_duration
from .features import FeatureGates, default_for, gates_for, normalize_version
from .kubelet_fields import check_fields
from .quantity import BINARY_SI, DECIMAL_SI, Quantity, QuantityError, parse_quantity

API_VERSION: Final = "kubelet.config.k8s.io/v1beta1"
KIND: Final = "KubeletConfiguration"

# --- policy names (k8s.io/kubelet/config/v1beta1 types.go) -------------------------------------
CPU_MANAGER_POLICIES: Final = ("none", "static")
MEMORY_MANAGER_POLICIES: Final = ("None", "Static")
TOPOLOGY_MANAGER_POLICIES: Final = ("none", "best-effort", "restricted", "single-numa-node")
TOPOLOGY_MANAGER_SCOPES: Final = ("container", "pod")
SWAP_BEHAVIORS: Final = ("NoSwap", "LimitedSwap")
MEMORY_RESERVATION_POLICIES: Final = ("None", "TieredReservation")
CGROUP_DRIVERS: Final = ("cgroupfs", "systemd")
ENFORCE_NODE_ALLOCATABLE_KEYS: Final = ("pods", "system-reserved", "kube-reserved", "system-reserved-compressible",
                                       "kube-reserved-compressible", "none")
RESERVABLE_RESOURCES: Final = ("cpu", "memory", "ephemeral-storage", "pid")

# --- eviction signals (pkg/kubelet/eviction/api/types.go) -----------------------------------------
SIGNAL_MEMORY_AVAILABLE: Final = "memory.available"
SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE: Final = "allocatableMemory.available"
SIGNAL_NODEFS_AVAILABLE: Final = "nodefs.available"
SIGNAL_NODEFS_INODES_FREE: Final = "nodefs.inodesFree"
SIGNAL_IMAGEFS_AVAILABLE: Final = "imagefs.available"
SIGNAL_IMAGEFS_INODES_FREE: Final = "imagefs.inodesFree"
SIGNAL_CONTAINERFS_AVAILABLE: Final = "containerfs.available"
SIGNAL_CONTAINERFS_INODES_FREE: Final = "containerfs.inodesFree"
SIGNAL_PID_AVAILABLE: Final = "pid.available"
SIGNALS: Final = (
    SIGNAL_MEMORY_AVAILABLE, SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE, SIGNAL_NODEFS_AVAILABLE,
    SIGNAL_NODEFS_INODES_FREE, SIGNAL_IMAGEFS_AVAILABLE, SIGNAL_IMAGEFS_INODES_FREE,
    SIGNAL_CONTAINERFS_AVAILABLE, SIGNAL_CONTAINERFS_INODES_FREE, SIGNAL_PID_AVAILABLE,
)
OP_LESS_THAN: Final = "LessThan"

#: Linux defaults (pkg/kubelet/eviction/defaults_linux.go); no pid.available and no soft defaults.
DEFAULT_EVICTION_HARD: Final[Mapping[str, str]] = {
    SIGNAL_MEMORY_AVAILABLE: "100Mi",
    SIGNAL_NODEFS_AVAILABLE: "10%",
    SIGNAL_NODEFS_INODES_FREE: "5%",
    SIGNAL_IMAGEFS_AVAILABLE: "15%",
    SIGNAL_IMAGEFS_INODES_FREE: "5%",
}

_DEFAULT_CFS_PERIOD: Final = Duration(100 * MILLISECOND)


def _float32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


# --- small typed values ---------------------------------------------------------------------------
class ThresholdValue(msgspec.Struct, frozen=True):
    """A threshold amount: a quantity, or a fraction of capacity (``percentage``, float32 in 0..1)."""

    quantity: Quantity | None = None
    percentage: float = 0.0
    text: str = ""  # as configured, for reports (``"10%"``, ``"100Mi"``)

    def amount(self, capacity: Quantity) -> Quantity:
        """``GetThresholdQuantity``: the quantity, or ``int(capacity * percentage)`` truncated, BinarySI."""
        if self.quantity is not None:
            return self.quantity
        return Quantity.from_int(int(float(capacity.value()) * float(self.percentage)), BINARY_SI)

    def __str__(self) -> str:
        if self.text:
            return self.text
        if self.quantity is not None:
            return str(self.quantity)
        return f"{self.percentage * 100:g}%"


class Threshold(msgspec.Struct, frozen=True):
    """One eviction threshold (``evictionapi.Threshold``): signal < value, held for ``grace_period``."""

    signal: str
    value: ThresholdValue
    operator: str = OP_LESS_THAN
    grace_period: Duration = Duration(0)
    min_reclaim: ThresholdValue | None = None

    @property
    def is_hard(self) -> bool:
        return self.grace_period == 0

    def to_dict(self) -> dict[str, Any]:
        return {"signal": self.signal, "operator": self.operator, "value": str(self.value),
                "gracePeriod": str(self.grace_period),
                "minReclaim": None if self.min_reclaim is None else str(self.min_reclaim)}


class MemoryReservation(msgspec.Struct, frozen=True):
    """One ``reservedMemory`` entry: memory (and hugepages) reserved on a NUMA node."""

    numa_node: int = msgspec.field(name="numaNode", default=0)
    limits: dict[str, Quantity] = msgspec.field(default_factory=dict)


class MemorySwapConfiguration(msgspec.Struct, frozen=True):
    swap_behavior: str = msgspec.field(name="swapBehavior", default="")


# --- the configuration ----------------------------------------------------------------------------
class KubeletConfiguration(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The resource-management fields of a KubeletConfiguration, defaulted for ``kubernetes_version``.

    Construct with :meth:`from_dict` / :func:`load_kubelet_config`; ``KubeletConfiguration()`` alone
    has no version-dependent defaults applied.
    """

    # CPU / memory / topology managers
    cpu_manager_policy: str = "none"
    cpu_manager_policy_options: dict[str, str] = msgspec.field(default_factory=dict)
    cpu_manager_reconcile_period: Duration = Duration(10 * SECOND)
    memory_manager_policy: str = "None"
    reserved_memory: tuple[MemoryReservation, ...] = ()
    topology_manager_policy: str = "none"
    topology_manager_scope: str = "container"
    topology_manager_policy_options: dict[str, str] = msgspec.field(default_factory=dict)
    reserved_system_cpus: CPUSet = msgspec.field(name="reservedSystemCPUs", default_factory=CPUSet)
    # node allocatable
    kube_reserved: dict[str, Quantity] = msgspec.field(default_factory=dict)
    system_reserved: dict[str, Quantity] = msgspec.field(default_factory=dict)
    kube_reserved_cgroup: str = ""
    system_reserved_cgroup: str = ""
    enforce_node_allocatable: tuple[str, ...] = ("pods",)
    # eviction
    eviction_hard: dict[str, str] | None = None
    eviction_soft: dict[str, str] = msgspec.field(default_factory=dict)
    eviction_soft_grace_period: dict[str, str] = msgspec.field(default_factory=dict)
    eviction_minimum_reclaim: dict[str, str] = msgspec.field(default_factory=dict)
    eviction_pressure_transition_period: Duration = Duration(5 * MINUTE)
    eviction_max_pod_grace_period: int = 0
    merge_default_eviction_settings: bool = False
    kernel_memcg_notification: bool = False
    local_storage_capacity_isolation: bool = True
    # cgroups, CFS, memory QoS, swap
    cgroup_driver: str = "cgroupfs"
    cgroups_per_qos: bool = msgspec.field(name="cgroupsPerQOS", default=True)
    cgroup_root: str = ""
    system_cgroups: str = ""
    kubelet_cgroups: str = ""
    cpu_cfs_quota: bool = msgspec.field(name="cpuCFSQuota", default=True)
    cpu_cfs_quota_period: Duration = msgspec.field(name="cpuCFSQuotaPeriod", default=_DEFAULT_CFS_PERIOD)
    memory_throttling_factor: float | None = 0.9
    memory_reservation_policy: str = "None"
    memory_swap: MemorySwapConfiguration = msgspec.field(default_factory=MemorySwapConfiguration)
    fail_swap_on: bool = True
    fail_cgroup_v1: bool = msgspec.field(name="failCgroupV1", default=False)
    single_process_oom_kill: bool | None = msgspec.field(name="singleProcessOOMKill", default=None)
    qos_reserved: dict[str, str] = msgspec.field(name="qosReserved", default_factory=dict)
    oom_score_adj: int = msgspec.field(name="oomScoreAdj", default=-999)
    protect_kernel_defaults: bool = False
    # pods
    max_pods: int = 110
    pods_per_core: int = 0
    pod_pids_limit: int = -1
    # image GC (disk pressure)
    image_gc_high_threshold_percent: int = msgspec.field(name="imageGCHighThresholdPercent", default=85)
    image_gc_low_threshold_percent: int = msgspec.field(name="imageGCLowThresholdPercent", default=80)
    image_minimum_gc_age: Duration = msgspec.field(name="imageMinimumGCAge", default=Duration(2 * MINUTE))
    image_maximum_gc_age: Duration = msgspec.field(name="imageMaximumGCAge", default=Duration(0))
    # feature gates as written, and their effective values at ``kubernetes_version``
    feature_gates: dict[str, bool] = msgspec.field(default_factory=dict)
    kubernetes_version: str = msgspec.field(name="x-kubetwin-kubernetesVersion", default="")
    gates: FeatureGates | None = msgspec.field(name="x-kubetwin-gates", default=None)

    # ------------------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, obj: Mapping[str, Any] | None, version: str | None = None,
                  file: str | None = None, warn_prefix: str = "") -> "KubeletConfiguration":
        """Read, default and validate a KubeletConfiguration object (``None`` = all defaults).
        ``warn_prefix`` is the path of the object inside an enclosing document, for warnings
        (errors get it from the caller's :meth:`InputError.within`)."""
        try:
            return _build(obj or {}, normalize_version(version), file, warn_prefix)
        except InputError as exc:
            raise exc.in_file(file) from None

    @property
    def feature_gate_values(self) -> FeatureGates:
        """The effective gates (never None for objects built by :meth:`from_dict`)."""
        return self.gates if self.gates is not None else gates_for(self.kubernetes_version or None,
                                                                     self.feature_gates)

    def enabled(self, gate: str) -> bool:
        return self.feature_gate_values.enabled(gate)

    # --- eviction ---------------------------------------------------------------------------
    @property
    def eviction_hard_given(self) -> bool:
        """Whether ``evictionHard`` was written (``{}`` counts): absent means the kubelet defaults."""
        return self.eviction_hard is not None

    def effective_eviction_hard(self) -> dict[str, str]:
        """``evictionHard`` as the kubelet uses it: the defaults when absent, merged when asked."""
        if self.eviction_hard is None:
            return dict(DEFAULT_EVICTION_HARD)
        if self.merge_default_eviction_settings:
            merged = dict(self.eviction_hard)
            for signal, value in DEFAULT_EVICTION_HARD.items():
                merged.setdefault(signal, value)
            return merged
        return dict(self.eviction_hard)

    def eviction_thresholds(self) -> tuple[Threshold, ...]:
        """``ParseThresholdConfig``: hard, then soft (with grace periods), then the allocatable copies."""
        return parse_threshold_config(self.enforce_node_allocatable, self.effective_eviction_hard(),
                                      self.eviction_soft, self.eviction_soft_grace_period,
                                      self.eviction_minimum_reclaim)

    def hard_eviction_thresholds(self) -> tuple[Threshold, ...]:
        """The thresholds the container manager reserves for (``evictionHard`` only, no min-reclaim)."""
        return parse_threshold_config((), self.effective_eviction_hard(), {}, {}, {})

    # --- node allocatable -------------------------------------------------------------------
    def node_allocatable_reservation(self, capacity: Mapping[str, Quantity]) -> dict[str, Quantity]:
        """``GetNodeAllocatableReservation``: systemReserved + kubeReserved + hard eviction, per capacity resource."""
        eviction = _hard_eviction_reservation(self.hard_eviction_thresholds(), capacity)
        out: dict[str, Quantity] = {}
        for name in capacity:
            value = Quantity.from_int(0, DECIMAL_SI)
            for part in (self.system_reserved.get(name), self.kube_reserved.get(name), eviction.get(name)):
                if part is not None:
                    value = value + part
            if not value.is_zero():
                out[name] = value
        return out

    def node_allocatable(self, capacity: Mapping[str, Quantity | str | int]) -> dict[str, Quantity]:
        """``Node.status.allocatable`` as the kubelet sets it (``nodestatus.MachineInfo``).

        capacity − reservation, floored at 0; then every hugepage capacity is taken out of
        allocatable memory (hugepages are pre-allocated, so the memory is not there for pods).
        """
        cap = {k: parse_quantity(v, f"capacity.{k}") for k, v in capacity.items()}
        reservation = self.node_allocatable_reservation(cap)
        alloc: dict[str, Quantity] = {}
        for name, value in cap.items():
            if name in reservation:
                value = value - reservation[name]
            if value.sign() < 0:
                value = Quantity(0, 0, value.format)
            alloc[name] = value
        for name, value in cap.items():
            if name.startswith("hugepages-") and "memory" in alloc:
                mem = alloc["memory"] - value
                if mem.sign() < 0:
                    mem = Quantity(0, 0, mem.format)
                alloc["memory"] = mem
        return alloc

    def single_process_oom_kill_for(self, cgroup_v2: bool) -> bool:
        """Unset means true on cgroup v1 (per-process OOM kills) and false on v2 (``memory.oom.group``)."""
        if self.single_process_oom_kill is not None:
            return self.single_process_oom_kill
        return not cgroup_v2


def _hard_eviction_reservation(thresholds: tuple[Threshold, ...],
                               capacity: Mapping[str, Quantity]) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    zero = Quantity.from_int(0, DECIMAL_SI)
    for t in thresholds:
        if t.operator != OP_LESS_THAN:
            continue
        if t.signal == SIGNAL_MEMORY_AVAILABLE:
            out["memory"] = t.value.amount(capacity.get("memory", zero))
        elif t.signal == SIGNAL_NODEFS_AVAILABLE:
            out["ephemeral-storage"] = t.value.amount(capacity.get("ephemeral-storage", zero))
    return out


# --- eviction threshold parsing (pkg/kubelet/eviction/helpers.go) ---------------------------------
def _go_parse_float32(text: str) -> float | None:
    """``strconv.ParseFloat(s, 32)`` closely enough: decimal/exponent forms, inf and nan; None if invalid."""
    t = text
    if not t or t != t.strip() or "_" in t:
        return None
    low = t.lower().lstrip("+-")
    if low in ("inf", "infinity", "nan"):
        return float(t)
    if any(c not in "0123456789.eE+-" for c in t):
        return None
    try:
        return _float32(float(t))
    except (ValueError, OverflowError):
        return None


def _parse_percentage(signal: str, value: str, path: str) -> float:
    number = _go_parse_float32(value.rstrip("%"))
    if number is None:
        raise InputError(f'strconv.ParseFloat: parsing "{value.rstrip("%")}": invalid syntax', path=path)
    return _float32(number / 100)


def _threshold_value(signal: str, value: str, path: str, *, min_reclaim: bool = False) -> ThresholdValue | None:
    if value.endswith("%"):
        if not min_reclaim and value in ("0%", "100%"):
            return None
        pct = _parse_percentage(signal, value, path)
        if min_reclaim:
            if not pct > 0:
                raise InputError(f"eviction percentage minimum reclaim {signal} must be positive: {value}", path=path)
        elif pct < 0:
            raise InputError(f"eviction percentage threshold {signal} must be >= 0%: {value}", path=path)
        elif pct > 1:
            raise InputError(f"eviction percentage threshold {signal} must be <= 100%: {value}", path=path)
        return ThresholdValue(percentage=pct, text=value)
    try:
        q = Quantity.parse(value)
    except QuantityError as exc:
        raise InputError(exc.message, path=path) from None
    if min_reclaim:
        if q.sign() < 0:
            raise InputError(f"negative eviction minimum reclaim specified for {signal}", path=path)
    elif q.sign() <= 0:
        raise InputError(f"eviction threshold {signal} must be positive: {q}", path=path)
    return ThresholdValue(quantity=q, text=value)


def _check_signal(signal: str, path: str) -> None:
    if signal not in SIGNALS:
        raise InputError(f"unsupported eviction signal {signal}", path=path,
                         fix=f"use one of {', '.join(SIGNALS)}")


def parse_threshold_config(enforce_node_allocatable: tuple[str, ...] | list[str], eviction_hard: Mapping[str, str],
                           eviction_soft: Mapping[str, str], eviction_soft_grace_period: Mapping[str, str],
                           eviction_minimum_reclaim: Mapping[str, str]) -> tuple[Threshold, ...]:
    """The kubelet's ``ParseThresholdConfig`` with its error messages, each naming the field."""
    hard: list[Threshold] = []
    for signal, value in eviction_hard.items():
        path = f"evictionHard[{signal}]"
        _check_signal(signal, path)
        tv = _threshold_value(signal, value, path)
        if tv is not None:
            hard.append(Threshold(signal, tv))
    soft_values: list[tuple[str, ThresholdValue]] = []
    for signal, value in eviction_soft.items():
        path = f"evictionSoft[{signal}]"
        _check_signal(signal, path)
        tv = _threshold_value(signal, value, path)
        if tv is not None:
            soft_values.append((signal, tv))
    grace: dict[str, Duration] = {}
    for signal, value in eviction_soft_grace_period.items():
        path = f"evictionSoftGracePeriod[{signal}]"
        _check_signal(signal, path)
        try:
            period = parse_go_duration(value)
        except DurationError as exc:
            raise InputError(exc.message, path=path, fix=exc.fix) from None
        if period < 0:
            raise InputError(f"invalid eviction grace period specified: {value}, must be a positive value", path=path)
        grace[signal] = Duration(period)
    reclaim: dict[str, ThresholdValue] = {}
    for signal, value in eviction_minimum_reclaim.items():
        path = f"evictionMinimumReclaim[{signal}]"
        _check_signal(signal, path)
        tv = _threshold_value(signal, value, path, min_reclaim=True)
        assert tv is not None
        reclaim[signal] = tv
    soft: list[Threshold] = []
    for signal, tv in soft_values:
        if signal not in grace:
            raise InputError(f"grace period must be specified for the soft eviction threshold {signal}",
                             path=f"evictionSoftGracePeriod[{signal}]")
        soft.append(Threshold(signal, tv, grace_period=grace[signal]))
    results = [msgspec.structs.replace(t, min_reclaim=reclaim.get(t.signal)) for t in hard + soft]
    if "pods" in enforce_node_allocatable:
        results += [Threshold(SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE, t.value, min_reclaim=t.min_reclaim)
                    for t in results if t.signal == SIGNAL_MEMORY_AVAILABLE and t.is_hard]
    return tuple(results)


# --- reading --------------------------------------------------------------------------------------
_FIELDS: Final = {f.encode_name: f for f in msgspec.structs.fields(KubeletConfiguration)}
_DERIVED: Final = ("x-kubetwin-kubernetesVersion", "x-kubetwin-gates")

# Non-pointer Go fields: their zero value means "unset" and is defaulted (defaults.go).
_ZERO_DEFAULTED: Final = {
    "cpuManagerPolicy": "", "cpuManagerReconcilePeriod": 0, "memoryManagerPolicy": "",
    "topologyManagerPolicy": "", "topologyManagerScope": "", "cgroupDriver": "",
    "evictionPressureTransitionPeriod": 0, "maxPods": 0, "imageMinimumGCAge": 0,
}


def _string_map(value: Any, path: str, *, numbers: bool = True) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"must be a mapping, not {type(value).__name__}", path=path)
    out = {}
    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, (str, int, float)) or (not numbers and not isinstance(v, str)):
            raise InputError(f"must be a string, not {type(v).__name__}", path=f"{path}[{k}]")
        out[str(k)] = v if isinstance(v, str) else str(v)
    return out


def _resource_list(value: Any, path: str, *, reservable: bool) -> dict[str, Quantity]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"must be a mapping of resource name to quantity, not {type(value).__name__}", path=path)
    out = {}
    for name, raw in value.items():
        p = join_path(path, str(name))
        if reservable and name not in RESERVABLE_RESOURCES:
            raise InputError(f'cannot reserve "{name}" resource', path=p,
                             fix=f"only {', '.join(RESERVABLE_RESOURCES)} can be reserved")
        q = parse_quantity(raw, p)
        if reservable and q.sign() < 0:
            raise InputError(f'resource quantity for "{name}" cannot be negative: {raw}', path=p)
        out[str(name)] = q
    return out


def _reserved_memory(value: Any, path: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"must be a list, not {type(value).__name__}", path=path)
    out = []
    seen: set[tuple[int, str]] = set()
    for i, entry in enumerate(value):
        p = join_path(path, i)
        if not isinstance(entry, Mapping):
            raise InputError(f"must be a mapping with numaNode and limits, not {type(entry).__name__}", path=p)
        node = entry.get("numaNode", 0)
        if isinstance(node, bool) or not isinstance(node, int):
            raise InputError(f"must be an integer, not {type(node).__name__}", path=f"{p}.numaNode")
        limits = _resource_list(entry.get("limits"), f"{p}.limits", reservable=False)
        for name, q in limits.items():
            lp = join_path(f"{p}.limits", name)
            if name != "memory" and not name.startswith("hugepages-"):
                raise InputError(f'invalid configuration: the limit type "{name}" for NUMA node {node} is not '
                                 'supported, only [memory hugepages-<HugePageSize>] is accepted', path=lp)
            if q.is_zero():
                raise InputError(f'invalid configuration: reserved memory may not be zero for NUMA node {node} '
                                 f'and resource "{name}"', path=lp)
            if (node, name) in seen:
                raise InputError(f'invalid configuration: the reserved memory has a duplicate value for NUMA node '
                                 f'{node} and resource "{name}"', path=lp)
            seen.add((node, name))
        out.append({"numaNode": node, "limits": limits})
    return out


def _gates_map(value: Any, path: str) -> dict[str, bool]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"must be a mapping of gate name to true/false, not {type(value).__name__}", path=path)
    return dict(value)


def _prepare(obj: Mapping[str, Any], version: str) -> dict[str, Any]:
    """The known fields of ``obj``, converted to typed values with field paths and defaulted."""
    data: dict[str, Any] = {}
    for key, raw in obj.items():
        if key not in _FIELDS or key in _DERIVED or raw is None:
            continue  # known fields kubetwin does not keep (checked by kubelet_fields); null means unset
        if key in _ZERO_DEFAULTED and not isinstance(raw, bool) and raw in (_ZERO_DEFAULTED[key], "0", "0s"):
            continue
        if key in ("kubeReserved", "systemReserved"):
            data[key] = _resource_list(raw, key, reservable=True)
        elif key == "reservedMemory":
            data[key] = _reserved_memory(raw, key)
        elif key == "reservedSystemCPUs":
            data[key] = _reserved_cpus(raw, obj)
        elif key in ("evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMinimumReclaim",
                     "cpuManagerPolicyOptions", "topologyManagerPolicyOptions", "qosReserved"):
            data[key] = _string_map(raw, key)
        elif key == "featureGates":
            data[key] = _gates_map(raw, key)
        elif _FIELDS[key].type is Duration:
            d = parse_duration(raw, key)
            if key in _ZERO_DEFAULTED and d == 0:
                continue
            data[key] = d
        elif key == "enforceNodeAllocatable" and isinstance(raw, list):
            data[key] = raw
        else:
            data[key] = raw
    if "memoryThrottlingFactor" not in data:
        data["memoryThrottlingFactor"] = default_for("memoryThrottlingFactor", version)
    if "failCgroupV1" not in data:
        data["failCgroupV1"] = default_for("failCgroupV1", version)
    pids = data.get("podPidsLimit")
    if isinstance(pids, int) and not isinstance(pids, bool) and pids < 0:
        data["podPidsLimit"] = -1
    return data


def _reserved_cpus(raw: Any, obj: Mapping[str, Any]) -> CPUSet:
    if not isinstance(raw, str):
        raise InputError(f"must be a string in the Linux cpuset list format, not {type(raw).__name__}",
                         path="reservedSystemCPUs", fix='e.g. "0-1,8"')
    try:
        return CPUSet.parse(raw, "reservedSystemCPUs")
    except InputError as exc:
        raise InputError(f"invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) {raw}, "
                         f"error: {exc.message}", path="reservedSystemCPUs", fix=exc.fix) from None


def _decode(data: dict[str, Any]) -> KubeletConfiguration:
    try:
        return msgspec.convert(data, KubeletConfiguration, dec_hook=_pass_through)
    except msgspec.ValidationError as exc:
        text = str(exc)
        message, _, where = text.rpartition(" - at `")
        path = where.rstrip("`").removeprefix("$").lstrip(".") if message else ""
        raise InputError(message or text, path=path) from None


def _pass_through(kind: type, value: Any) -> Any:
    if isinstance(value, kind):
        return value
    raise TypeError(f"Expected `{kind.__name__}`, got `{type(value).__name__}`")


def _check_header(obj: Mapping[str, Any]) -> None:
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if api_version is not None and api_version != API_VERSION:
        raise InputError(f'unsupported apiVersion "{api_version}" for a KubeletConfiguration', path="apiVersion",
                         fix=f"use {API_VERSION}")
    if kind is not None and kind != KIND:
        raise InputError(f'expected kind KubeletConfiguration, got "{kind}"', path="kind")


def _build(obj: Mapping[str, Any], version: str, file: str | None = None, warn_prefix: str = "") -> KubeletConfiguration:
    if not isinstance(obj, Mapping):
        raise InputError(f"a KubeletConfiguration must be a mapping, not {type(obj).__name__}")
    _check_header(obj)
    check_fields(obj, version, file, warn_prefix)
    data = _prepare(obj, version)
    cfg = _decode(data)
    gates = gates_for(version, cfg.feature_gates, path="featureGates")
    cfg = msgspec.structs.replace(cfg, kubernetes_version=version, gates=gates)
    validate(cfg)
    return cfg


# --- validation -----------------------------------------------------------------------------------
def _one_of(values: tuple[str, ...]) -> str:
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def validate(cfg: KubeletConfiguration) -> None:
    """The kubelet's start-up validation of the resource-management fields; first error wins."""
    gates = cfg.feature_gate_values
    if cfg.cpu_manager_policy not in CPU_MANAGER_POLICIES:
        raise InputError(f'unknown policy: "{cfg.cpu_manager_policy}"', path="cpuManagerPolicy",
                         fix=f"use one of {', '.join(CPU_MANAGER_POLICIES)}")
    if cfg.memory_manager_policy not in MEMORY_MANAGER_POLICIES:
        raise InputError(f'unknown policy: "{cfg.memory_manager_policy}"', path="memoryManagerPolicy",
                         fix=f"use one of {', '.join(MEMORY_MANAGER_POLICIES)} (case matters)")
    if cfg.topology_manager_policy not in TOPOLOGY_MANAGER_POLICIES:
        raise InputError(f'invalid configuration: topologyManagerPolicy (--topology-manager-policy) '
                         f'"{cfg.topology_manager_policy}" must be one of: {_one_of(TOPOLOGY_MANAGER_POLICIES)}',
                         path="topologyManagerPolicy")
    if cfg.topology_manager_scope not in TOPOLOGY_MANAGER_SCOPES:
        raise InputError(f'invalid configuration: topologyManagerScope (--topology-manager-scope) '
                         f'"{cfg.topology_manager_scope}" must be one of: "container", or "pod"',
                         path="topologyManagerScope")
    if cfg.cgroup_driver not in CGROUP_DRIVERS:
        raise InputError(f'invalid configuration: cgroupDriver "{cfg.cgroup_driver}" must be one of: '
                         f'{_one_of(CGROUP_DRIVERS)}', path="cgroupDriver")
    if not cfg.cgroups_per_qos and cfg.enforce_node_allocatable:
        raise InputError("invalid configuration: enforceNodeAllocatable (--enforce-node-allocatable) is not supported "
                         "unless cgroupsPerQOS (--cgroups-per-qos) is set to true", path="enforceNodeAllocatable")
    if cfg.system_cgroups and not cfg.cgroup_root:
        raise InputError("invalid configuration: systemCgroups (--system-cgroups) was specified and cgroupRoot "
                         "(--cgroup-root) was not specified", path="systemCgroups")
    custom_period = gates.values.get("CustomCPUCFSQuotaPeriod", False)
    if not custom_period and cfg.cpu_cfs_quota_period != _DEFAULT_CFS_PERIOD:
        raise InputError(f"invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) "
                         f"{cfg.cpu_cfs_quota_period} requires feature gate CustomCPUCFSQuotaPeriod",
                         path="cpuCFSQuotaPeriod")
    if custom_period and not (MILLISECOND <= cfg.cpu_cfs_quota_period <= SECOND):
        raise InputError(f"invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) "
                         f"{cfg.cpu_cfs_quota_period} must be between 1ms and 1sec, inclusive",
                         path="cpuCFSQuotaPeriod")
    for name, value in (("imageGCHighThresholdPercent", cfg.image_gc_high_threshold_percent),
                        ("imageGCLowThresholdPercent", cfg.image_gc_low_threshold_percent)):
        flag = "--image-gc-high-threshold" if "High" in name else "--image-gc-low-threshold"
        if not 0 <= value <= 100:
            raise InputError(f"invalid configuration: {name} ({flag}) {value} must be between 0 and 100, inclusive",
                             path=name)
    if cfg.image_gc_low_threshold_percent >= cfg.image_gc_high_threshold_percent:
        raise InputError(f"invalid configuration: imageGCLowThresholdPercent (--image-gc-low-threshold) "
                         f"{cfg.image_gc_low_threshold_percent} must be less than imageGCHighThresholdPercent "
                         f"(--image-gc-high-threshold) {cfg.image_gc_high_threshold_percent}",
                         path="imageGCLowThresholdPercent")
    if cfg.image_maximum_gc_age < 0:
        raise InputError(f"invalid configuration: imageMaximumGCAge {cfg.image_maximum_gc_age} must not be negative",
                         path="imageMaximumGCAge")
    if 0 < cfg.image_maximum_gc_age <= cfg.image_minimum_gc_age:
        raise InputError(f"invalid configuration: imageMaximumGCAge {cfg.image_maximum_gc_age} must be greater than "
                         f"imageMinimumGCAge {cfg.image_minimum_gc_age}", path="imageMaximumGCAge")
    if cfg.max_pods < 0:
        raise InputError(f"invalid configuration: maxPods (--max-pods) {cfg.max_pods} must not be a negative number",
                         path="maxPods")
    if cfg.pods_per_core < 0:
        raise InputError(f"invalid configuration: podsPerCore (--pods-per-core) {cfg.pods_per_core} must not be a "
                         "negative number", path="podsPerCore")
    if not -1000 <= cfg.oom_score_adj <= 1000:
        raise InputError(f"invalid configuration: oomScoreAdj (--oom-score-adj) {cfg.oom_score_adj} must be between "
                         "-1000 and 1000, inclusive", path="oomScoreAdj")
    swap = cfg.memory_swap.swap_behavior
    if gates.values.get("NodeSwap", False):
        if swap not in ("",) + SWAP_BEHAVIORS:
            raise InputError(f'invalid configuration: memorySwap.swapBehavior "{swap}" must be one of: "", '
                             f'"LimitedSwap" or "NoSwap"', path="memorySwap.swapBehavior")
    elif swap:
        raise InputError("invalid configuration: memorySwap.swapBehavior cannot be set when NodeSwap feature flag "
                         "is disabled", path="memorySwap.swapBehavior")
    for i, key in enumerate(cfg.enforce_node_allocatable):
        path = f"enforceNodeAllocatable[{i}]"
        if key == "system-reserved" and not cfg.system_reserved_cgroup:
            raise InputError('invalid configuration: systemReservedCgroup (--system-reserved-cgroup) must be specified '
                             'when "system-reserved" contained in enforceNodeAllocatable (--enforce-node-allocatable)',
                             path=path)
        if key == "kube-reserved" and not cfg.kube_reserved_cgroup:
            raise InputError('invalid configuration: kubeReservedCgroup (--kube-reserved-cgroup) must be specified '
                             'when "kube-reserved" contained in enforceNodeAllocatable (--enforce-node-allocatable)',
                             path=path)
        if key == "none" and len(cfg.enforce_node_allocatable) > 1:
            raise InputError('invalid configuration: enforceNodeAllocatable (--enforce-node-allocatable) may not '
                             'contain additional enforcements when "none" is specified', path=path)
        if key not in ENFORCE_NODE_ALLOCATABLE_KEYS:
            raise InputError(f'invalid configuration: option "{key}" specified for enforceNodeAllocatable '
                             '(--enforce-node-allocatable). Valid options are "pods", "system-reserved", '
                             '"kube-reserved", or "none"', path=path)
    if cfg.reserved_system_cpus and (cfg.system_reserved_cgroup or cfg.kube_reserved_cgroup):
        raise InputError("invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
                         "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup "
                         "(--kube-reserved-cgroup)", path="reservedSystemCPUs")
    factor = cfg.memory_throttling_factor
    if factor is not None and not (0 < factor <= 1.0):
        raise InputError(f"invalid configuration: memoryThrottlingFactor {factor:g} must be greater than 0 and less "
                         "than or equal to 1.0", path="memoryThrottlingFactor")
    if cfg.memory_reservation_policy not in MEMORY_RESERVATION_POLICIES:
        raise InputError(f'invalid configuration: memoryReservationPolicy "{cfg.memory_reservation_policy}" must be '
                         f'one of: {_one_of(MEMORY_RESERVATION_POLICIES)}', path="memoryReservationPolicy")
    if cfg.eviction_max_pod_grace_period < 0:
        pass  # accepted by the kubelet (int32, no validation); a negative value only shortens soft evictions
    cfg.eviction_thresholds()  # ParseThresholdConfig runs at start-up: its errors stop the kubelet


# --- loading --------------------------------------------------------------------------------------
def load_kubelet_config(path: str | Path | None, version: str | None = None) -> KubeletConfiguration:
    """A KubeletConfiguration from a YAML/JSON file (``-`` = stdin); ``None`` = every default."""
    if path is None:
        return KubeletConfiguration.from_dict(None, version)
    from .loader import load_one

    doc = load_one(path, "KubeletConfiguration")
    return KubeletConfiguration.from_dict(doc.obj, version, file=doc.file)


DEFAULTS_NOTE: Final = "kubelet v1beta1 defaults (pkg/kubelet/apis/config/v1beta1/defaults.go)"
