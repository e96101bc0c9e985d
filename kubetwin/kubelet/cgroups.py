"""Cgroup values the kubelet writes for a pod, and the CRI resources it hands the runtime.

Pod cgroups follow ``ResourceConfigForPod`` (``pkg/kubelet/cm/helpers_linux.go``); container
resources follow ``generateLinuxContainerResources`` (``pkg/kubelet/kuberuntime``). The small
pure formulas (:func:`milli_cpu_to_shares`, :func:`milli_cpu_to_quota`,
:func:`cpu_shares_to_weight`, ...) are public: the CPU and memory managers use them too.

Two cgroup v2 weight curves exist: the kubelet converts shares to ``cpu.weight`` linearly
for the cgroups it writes itself (pod, QoS, node); the runtime converts a container's CRI
``cpu_shares`` — linearly in older runc/crun, with a quadratic curve since runc 1.3.2 and
crun 1.23 (which maps 1024 shares to the default weight 100).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..model.features import FeatureGates
from ..model.pod import Container, Pod
from ..model.quantity import Quantity
from ..model.resources import (
    CPU,
    MEMORY,
    PodResourcesOptions,
    container_dra_allocations,
    is_pod_level_limits_set,
    is_pod_level_resources_set,
    pod_level_limits,
    pod_limits,
    pod_requests,
    quantity_milli_value,
    quantity_value,
)
from .oom import OOMScore, container_memory_limit, container_oom_score_adjust, gate, is_critical_pod
from .qos import BEST_EFFORT, BURSTABLE, GUARANTEED, get_pod_qos

MIN_SHARES = 2
MAX_SHARES = 262144
SHARES_PER_CPU = 1024
MILLI_CPU_TO_CPU = 1000
QUOTA_PERIOD = 100000  # µs
MIN_QUOTA_PERIOD = 1000  # µs
MIN_MILLI_CPU_LIMIT = 10
MIN_WEIGHT = 1
MAX_WEIGHT = 10000
DEFAULT_PAGE_SIZE = 4096

WEIGHT_CURVES = ("linear", "quadratic")


# --- formulas --------------------------------------------------------------------------------


def milli_cpu_to_shares(milli_cpu: int) -> int:
    """``MilliCPUToShares``: 1024 per CPU, clamped to the kernel's [2, 262144]; 0 -> 2."""
    if milli_cpu <= 0:  # Go truncation makes every negative product < 2 as well
        return MIN_SHARES
    return max(MIN_SHARES, min(MAX_SHARES, milli_cpu * SHARES_PER_CPU // MILLI_CPU_TO_CPU))


def milli_cpu_to_quota(milli_cpu: int, period: int, custom_period: bool = True) -> int:
    """``MilliCPUToQuota``: CFS quota in µs for ``period``; 0 without a limit; never below 1 ms.

    Without CustomCPUCFSQuotaPeriod the kubelet computes with the standard 100 ms period
    whatever period it was given (``custom_period=False``).
    """
    if milli_cpu == 0:
        return 0
    if not custom_period:
        period = QUOTA_PERIOD
    quota = milli_cpu * period // MILLI_CPU_TO_CPU
    return max(quota, MIN_QUOTA_PERIOD)


def shares_to_milli_cpu(shares: int) -> int:
    """Inverse for status: ceil(shares*1000/1024); below 2 shares means no request (0)."""
    if shares < MIN_SHARES:
        return 0
    return -(-shares * MILLI_CPU_TO_CPU // SHARES_PER_CPU)


def quota_to_milli_cpu(quota: int, period: int) -> int:
    if quota == -1 or period == 0:
        return 0
    return quota * MILLI_CPU_TO_CPU // period


def cpu_shares_to_weight(shares: int) -> int:
    """The kubelet's linear v2 conversion: [2, 262144] shares -> [1, 10000] weight."""
    if shares == 0:
        return 0
    return 1 + ((shares - 2) * 9999) // 262142


def cpu_weight_to_shares(weight: int) -> int:
    """What the kubelet reads back from a v2 ``cpu.weight`` (lossy: 100m -> 102 -> 4 -> 80)."""
    if weight == 0:
        return 0
    return 2 + ((weight - 1) * 262142) // 9999


def cpu_shares_to_weight_quadratic(shares: int) -> int:
    """runc >= 1.3.2 / crun >= 1.23: a quadratic curve in log2(shares) through (2,1), (1024,100), (262144,10000)."""
    if shares == 0:
        return 0
    if shares <= 2:
        return 1
    if shares >= MAX_SHARES:
        return MAX_WEIGHT
    lg = math.log2(shares)
    exponent = (lg * lg + 125 * lg) / 612.0 - 7.0 / 34.0
    return int(math.ceil(math.pow(10, exponent)))


def runtime_cpu_weight(shares: int, curve: str) -> int:
    return cpu_shares_to_weight_quadratic(shares) if curve == "quadratic" else cpu_shares_to_weight(shares)


def cpu_max(quota: int | None, period: int | None) -> str:
    """v2 ``cpu.max`` content; an unset value reads as the kernel default ``max 100000``."""
    if (quota is None or quota <= 0) and not period:
        return f"max {QUOTA_PERIOD}"
    p = period or QUOTA_PERIOD
    if quota is None or quota <= 0:
        return f"max {p}"
    return f"{quota} {p}"


def memory_high(request: int, limit: int, factor: float, page_size: int = DEFAULT_PAGE_SIZE) -> int:
    """MemoryQoS throttling point: request + factor*(limit - request), rounded down to pages."""
    return int((request + factor * (limit - request)) // page_size) * page_size


_UNITS = ("B", "KB", "MB", "GB", "TB", "PB")


def hugepage_unit_size(size: int) -> str:
    """``HugePageUnitSizeFromByteSize``: 2097152 -> ``2MB``, 1073741824 -> ``1GB``."""
    idx = 0
    while size % 1024 == 0 and idx < len(_UNITS) - 1 and size:
        size //= 1024
        idx += 1
    return f"{size}{_UNITS[idx]}"


def hugepage_size_from_resource(name: str) -> int | None:
    """``hugepages-2Mi`` -> 2097152; None when the suffix is not a valid positive quantity."""
    if not name.startswith("hugepages-"):
        return None
    try:
        q = Quantity.parse(name[len("hugepages-"):])
    except Exception:
        return None
    v = q.value()
    return v if v > 0 and q.sign() > 0 else None


def hugepage_limits(resources: Mapping[str, Quantity]) -> dict[int, int]:
    """``HugePageLimits``: page size in bytes -> summed bytes (``hugepages-2Mi`` and ``hugepages-2097152`` merge)."""
    out: dict[int, int] = {}
    for name, q in resources.items():
        size = hugepage_size_from_resource(name)
        if size is not None:
            out[size] = out.get(size, 0) + q.value()
    return out


def sysfs_order(page_sizes: Sequence[int]) -> list[int]:
    """Page sizes in the order the kernel lists ``/sys/kernel/mm/hugepages`` (by directory name)."""
    return sorted(set(page_sizes), key=lambda b: f"hugepages-{b // 1024}kB")


# --- settings --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CgroupSettings:
    """What the kubelet and machine contribute besides the pod (KubeletConfiguration + MachineInfo)."""

    gates: FeatureGates
    cgroup_version: int = 2
    cpu_cfs_quota: bool = True
    cpu_cfs_quota_period_us: int = QUOTA_PERIOD
    memory_throttling_factor: float | None = None
    memory_reservation_policy: str = "None"
    single_process_oom_kill: bool = False
    swap_behavior: str = "NoSwap"
    swap_controller: bool = True
    pod_pids_limit: int = -1
    memory_capacity: int = 0
    swap_capacity: int = 0
    node_allocatable_memory: int = 0
    #: Page sizes (bytes) the machine supports, any order.
    hugepage_sizes: tuple[int, ...] = ()
    page_size: int = DEFAULT_PAGE_SIZE
    weight_curve: str = "quadratic"

    @property
    def v2(self) -> bool:
        return self.cgroup_version == 2

    @property
    def enforce_memory_qos(self) -> bool:
        return self.v2 and gate(self.gates, "MemoryQoS")

    @property
    def custom_period(self) -> bool:
        return gate(self.gates, "CustomCPUCFSQuotaPeriod")


@dataclass(frozen=True, slots=True)
class CgroupValue:
    """One cgroup file: what is written, and how it was derived."""

    file: str
    content: str | int | None  # None: not known (the formula says what it depends on)
    formula: str
    written: bool = True


@dataclass(frozen=True, slots=True)
class ResourceConfig:
    """The kubelet's ``ResourceConfig`` for a pod cgroup; None = not written."""

    cpu_shares: int | None = None
    cpu_quota: int | None = None
    cpu_period: int | None = None
    memory: int | None = None
    hugepage_limit: Mapping[int, int] = field(default_factory=dict)
    unified: Mapping[str, str] = field(default_factory=dict)
    pids_limit: int | None = None
    notes: Mapping[str, str] = field(default_factory=dict)


# --- pod cgroup ------------------------------------------------------------------------------


def _limits_declared(pod: Pod, resource: str) -> bool:
    return all(quantity_value(c.resources.limits, resource) != 0 if resource == MEMORY
               else quantity_milli_value(c.resources.limits, resource) != 0 for c, _ in pod.all_containers())


def _pod_level_memory_high(gates: Any) -> bool:
    """Does this release write the pod cgroup's ``memory.high`` (``ApplyPodLevelMemoryHigh``, v1.37)?"""
    from ..model.features import default_for

    return bool(default_for("podLevelMemoryHigh", getattr(gates, "version", None)))


def resource_config_for_pod(pod: Pod, settings: CgroupSettings) -> ResourceConfig:
    """``ResourceConfigForPod`` plus the pod PID limit and MemoryQoS ``memory.high``."""
    g = settings.gates
    plr = gate(g, "PodLevelResources")
    opts = PodResourcesOptions(skip_pod_level_resources=not plr,
                               use_dra_node_allocatable_resource_claim_status=gate(g, "DRANodeAllocatableResources"))
    reqs = pod_requests(pod, opts)
    lims = pod_limits(pod, opts)
    cpu_declared = _limits_declared(pod, CPU)
    mem_declared = _limits_declared(pod, MEMORY)
    notes: dict[str, str] = {}
    if plr and is_pod_level_resources_set(pod):
        pl = pod_level_limits(pod)
        if quantity_milli_value(pl, CPU) != 0:
            cpu_declared = True
        if quantity_value(pl, MEMORY) != 0:
            mem_declared = True
    cpu_req = quantity_milli_value(reqs, CPU)
    cpu_lim = quantity_milli_value(lims, CPU)
    mem_lim = quantity_value(lims, MEMORY)
    shares = milli_cpu_to_shares(cpu_req)
    period = settings.cpu_cfs_quota_period_us
    quota = milli_cpu_to_quota(cpu_lim, period, settings.custom_period)
    if not settings.cpu_cfs_quota:
        quota = -1
    qos = get_pod_qos(pod, g)
    hp = hugepage_limits(reqs)
    notes["cpu.shares"] = f"shares({cpu_req}m summed requests)"
    notes["cpu.quota"] = (f"quota({cpu_lim}m summed limits, period {period if settings.custom_period else QUOTA_PERIOD})"
                          if settings.cpu_cfs_quota else "cpuCFSQuota=false: -1 (unlimited)")
    if qos == GUARANTEED:
        rc = dict(cpu_shares=shares, cpu_quota=quota, cpu_period=period, memory=mem_lim)
    elif qos == BURSTABLE:
        rc = dict(cpu_shares=shares)
        if cpu_declared:
            rc.update(cpu_quota=quota, cpu_period=period)
        else:
            notes["cpu.quota"] = "not set: some container has no cpu limit and there is no pod-level cpu limit"
        if mem_declared:
            rc.update(memory=mem_lim)
        else:
            notes["memory"] = "not set: some container has no memory limit and there is no pod-level memory limit"
    else:
        rc = dict(cpu_shares=MIN_SHARES)
        notes["cpu.shares"] = "BestEffort: minimum shares 2"
    unified: dict[str, str] = {}
    if settings.enforce_memory_qos:
        mem_req = quantity_value(reqs, MEMORY)
        if settings.memory_reservation_policy == "TieredReservation" and mem_req > 0:
            if qos == GUARANTEED:
                unified["memory.min"] = str(mem_req)
            elif qos == BURSTABLE:
                unified["memory.low"] = str(mem_req)
        if settings.memory_throttling_factor is not None and plr and is_pod_level_limits_set(pod) and \
                _pod_level_memory_high(g):
            pod_mem_limit = quantity_value(pod_level_limits(pod), MEMORY)
            if pod_mem_limit > 0:
                limit = quantity_value(lims, MEMORY)
                if not (mem_req == limit and limit > 0):
                    high = memory_high(mem_req, limit, settings.memory_throttling_factor, settings.page_size)
                    if high > mem_req:
                        unified["memory.high"] = str(high)
    pids = settings.pod_pids_limit if settings.pod_pids_limit > 0 else None
    return ResourceConfig(hugepage_limit=hp, unified=unified, pids_limit=pids, notes=notes, **rc)


def pod_cgroup_files(rc: ResourceConfig, settings: CgroupSettings) -> list[CgroupValue]:
    """The pod cgroup's files. v2 also lists ``cpu.max``/``memory.max`` when unwritten (kernel defaults)."""
    out: list[CgroupValue] = []
    n = rc.notes
    hp = dict(rc.hugepage_limit)
    for size in settings.hugepage_sizes:  # supported sizes the pod does not ask for are limited to 0
        hp.setdefault(size, 0)
    hp = {size: hp[size] for size in sysfs_order(list(hp))}
    if settings.v2:
        if rc.cpu_shares is not None:
            out.append(CgroupValue("cpu.weight", cpu_shares_to_weight(rc.cpu_shares),
                                   f"1 + ({rc.cpu_shares} shares - 2) * 9999 / 262142; {n.get('cpu.shares', '')}"))
        written = rc.cpu_quota is not None or rc.cpu_period is not None
        out.append(CgroupValue("cpu.max", cpu_max(rc.cpu_quota, rc.cpu_period),
                               n.get("cpu.quota", "") if written else "kernel default", written))
        out.append(CgroupValue("memory.max", str(rc.memory) if rc.memory else "max",
                               "summed memory limits" if rc.memory else n.get("memory", "kernel default"),
                               bool(rc.memory)))
        for size, limit in hp.items():
            out.append(CgroupValue(f"hugetlb.{hugepage_unit_size(size)}.max", limit,
                                   "summed hugepage requests" if size in rc.hugepage_limit else "not requested: 0"))
        for name in ("memory.min", "memory.low", "memory.high"):
            if name in rc.unified:
                out.append(CgroupValue(name, int(rc.unified[name]), "MemoryQoS"))
            elif name == "memory.high" and settings.enforce_memory_qos:
                out.append(CgroupValue(name, "max", "not written (kernel default)", False))
        if rc.pids_limit is not None:
            out.append(CgroupValue("pids.max", rc.pids_limit, "podPidsLimit"))
    else:
        if rc.cpu_shares is not None:
            out.append(CgroupValue("cpu.shares", rc.cpu_shares, n.get("cpu.shares", "")))
        if rc.cpu_quota is not None:
            out.append(CgroupValue("cpu.cfs_quota_us", rc.cpu_quota, n.get("cpu.quota", "")))
        if rc.cpu_period is not None:
            out.append(CgroupValue("cpu.cfs_period_us", rc.cpu_period, "cpuCFSQuotaPeriod"))
        if rc.memory is not None:
            out.append(CgroupValue("memory.limit_in_bytes", rc.memory, "summed memory limits"))
        for size, limit in hp.items():
            out.append(CgroupValue(f"hugetlb.{hugepage_unit_size(size)}.limit_in_bytes", limit,
                                   "summed hugepage requests" if size in rc.hugepage_limit else "not requested: 0"))
        if rc.pids_limit is not None:
            out.append(CgroupValue("pids.max", rc.pids_limit, "podPidsLimit"))
    return out


# --- containers ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContainerResources:
    """CRI ``LinuxContainerResources`` for one container, plus how each value came about."""

    name: str
    resources: Mapping[str, Any]
    oom: OOMScore
    runtime_cpu_weight: int | None
    notes: Mapping[str, str]


def _container_cpu_limit(pod: Pod, c: Container, g: FeatureGates) -> tuple[int, str]:
    own = quantity_milli_value(c.resources.limits, CPU)
    if own > 0:
        if gate(g, "DRANodeAllocatableResources"):
            own += quantity_milli_value(container_dra_allocations(pod, c.name), CPU)
        return own, "container cpu limit"
    if gate(g, "PodLevelResources") and is_pod_level_limits_set(pod):
        pl = quantity_milli_value(pod_level_limits(pod), CPU)
        if pl > 0:
            return pl, "pod-level cpu limit (the container has none)"
    return 0, "no cpu limit"


def container_resources(pod: Pod, c: Container, settings: CgroupSettings) -> ContainerResources:
    """``generateLinuxContainerResources`` for one container (no exclusive CPUs)."""
    g = settings.gates
    notes: dict[str, str] = {}
    cpu_limit, lim_src = _container_cpu_limit(pod, c, g)
    if CPU not in c.resources.requests and cpu_limit:
        shares = milli_cpu_to_shares(cpu_limit)
        notes["cpuShares"] = f"shares({cpu_limit}m {lim_src}): no cpu request, so the limit"
    else:
        req = quantity_milli_value(c.resources.requests, CPU)
        shares = milli_cpu_to_shares(req)
        notes["cpuShares"] = f"shares({req}m cpu request)"
    res: dict[str, Any] = {"cpuShares": shares}
    if settings.cpu_cfs_quota:
        period = settings.cpu_cfs_quota_period_us if settings.custom_period else QUOTA_PERIOD
        res["cpuPeriod"] = period
        res["cpuQuota"] = milli_cpu_to_quota(cpu_limit, period)
        notes["cpuQuota"] = f"quota({cpu_limit}m {lim_src}, period {period})"
    else:
        res["cpuPeriod"] = 0
        res["cpuQuota"] = 0
        notes["cpuQuota"] = "cpuCFSQuota=false: not set"
    mem_limit = container_memory_limit(pod, c, g)
    res["memoryLimitInBytes"] = mem_limit
    oom = container_oom_score_adjust(pod, c, settings.memory_capacity, g)
    res["oomScoreAdj"] = oom.value
    res["cpusetCpus"] = ""
    res["cpusetMems"] = ""
    sizes = sysfs_order(list(settings.hugepage_sizes))
    wanted: dict[str, int] = {}
    for name, q in c.resources.limits.items():
        size = hugepage_size_from_resource(name)
        if size is not None:
            wanted[hugepage_unit_size(size)] = q.value()
    res["hugepageLimits"] = [{"pageSize": hugepage_unit_size(s), "limit": wanted.get(hugepage_unit_size(s), 0)}
                             for s in sizes]
    unified: dict[str, str] = {}
    if settings.v2 and not settings.single_process_oom_kill:
        unified["memory.oom.group"] = "1"
    qos = get_pod_qos(pod, g)
    if settings.enforce_memory_qos:
        mem_req = quantity_value(c.resources.requests, MEMORY)
        if settings.memory_reservation_policy == "TieredReservation" and mem_req > 0:
            if qos == GUARANTEED:
                unified["memory.min"] = str(mem_req)
            elif qos == BURSTABLE:
                unified["memory.low"] = str(mem_req)
        if settings.memory_throttling_factor is not None and not (mem_req == mem_limit and mem_limit > 0):
            limit = mem_limit if mem_limit > 0 else settings.node_allocatable_memory
            high = memory_high(mem_req, limit, settings.memory_throttling_factor, settings.page_size)
            if high > mem_req:
                unified["memory.high"] = str(high)
                notes["memory.high"] = (f"floor(({mem_req} + {settings.memory_throttling_factor} * ({limit} - {mem_req}))"
                                        f" / {settings.page_size}) * {settings.page_size}")
    if settings.swap_controller:
        if settings.v2:
            swap, why = _limited_swap(pod, c, qos, settings)
            unified["memory.swap.max"] = str(swap)
            notes["memory.swap.max"] = why
        else:
            res["memorySwapLimitInBytes"] = mem_limit
            notes["memorySwapLimitInBytes"] = "cgroup v1: equal to the memory limit (no swap)"
    res["unified"] = unified
    weight = runtime_cpu_weight(shares, settings.weight_curve) if settings.v2 else None
    return ContainerResources(c.name, res, oom, weight, notes)


def _limited_swap(pod: Pod, c: Container, qos: str, s: CgroupSettings) -> tuple[int, str]:
    if s.swap_behavior != "LimitedSwap":
        return 0, "NoSwap"
    if is_critical_pod(pod):
        return 0, "critical pod: no swap"
    if qos != BURSTABLE:
        return 0, f"{qos} pod: no swap"
    req = quantity_value(c.resources.requests, MEMORY)
    lim = quantity_value(c.resources.limits, MEMORY)
    if req == lim:
        return 0, "memory request equals limit: no swap"
    if s.memory_capacity <= 0:
        return 0, "no machine memory capacity"
    swap = int(float(req) / float(s.memory_capacity) * float(s.swap_capacity))
    return swap, f"LimitedSwap: {req} / {s.memory_capacity} * {s.swap_capacity} swap"


__all__ = [
    "milli_cpu_to_shares", "milli_cpu_to_quota", "shares_to_milli_cpu", "quota_to_milli_cpu", "cpu_shares_to_weight",
    "cpu_weight_to_shares", "cpu_shares_to_weight_quadratic", "runtime_cpu_weight", "cpu_max", "memory_high",
    "hugepage_unit_size", "hugepage_size_from_resource", "hugepage_limits", "sysfs_order", "CgroupSettings",
    "CgroupValue", "ResourceConfig", "resource_config_for_pod", "pod_cgroup_files", "ContainerResources",
    "container_resources", "MIN_SHARES", "MAX_SHARES", "QUOTA_PERIOD", "MIN_QUOTA_PERIOD", "BEST_EFFORT",
]
