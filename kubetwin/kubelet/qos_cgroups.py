"""The cgroups above the pods: QoS tiers and the node-allocatable ``kubepods`` cgroup.

Two kubelet loops write them (``pkg/kubelet/cm``):

* ``node_container_manager_linux.go`` writes ``kubepods`` once at start-up: cpu shares, memory,
  pids and hugetlb from the node's *capacity*, or from capacity − kubeReserved − systemReserved
  when ``enforceNodeAllocatable`` has ``pods`` (hard-eviction thresholds are **not** taken off,
  unlike ``status.allocatable``). Without enforcement the limits still get written, at capacity.
* ``qos_container_manager_linux.go`` rewrites ``kubepods`` (the Guaranteed tier), ``burstable``
  and ``besteffort`` every minute from the active pods: burstable cpu shares follow the summed
  cpu requests of Burstable pods, besteffort keeps 2 shares, every tier's hugetlb is unbounded
  (``1 << 62``, which also overrides kubepods' start-up hugetlb limit), MemoryQoS protection and
  the alpha QOSReserved memory limits.

So the values here are the steady state after the first periodic update; the formulas say where
each value comes from. Sums use ``PodRequests`` (pod-level resources and overhead included).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from ..errors import InputError
from ..model.features import FeatureGates, default_for
from ..model.pod import Pod
from ..model.quantity import Quantity
from ..model.resources import CPU, MEMORY, PodResourcesOptions, pod_requests, quantity_milli_value, quantity_value
from .cgroup_paths import CgroupLayout, CgroupName
from .cgroups import (
    MIN_SHARES,
    CgroupValue,
    cpu_shares_to_weight,
    hugepage_limits,
    hugepage_unit_size,
    milli_cpu_to_shares,
    sysfs_order,
)
from .oom import gate
from .qos import BEST_EFFORT, BURSTABLE, GUARANTEED, get_pod_qos

#: What the QoS manager writes as "unbounded" hugetlb on every tier.
HUGETLB_UNBOUNDED = 1 << 62
PID_RESOURCE = "pid"
ENFORCE_PODS = "pods"
ACTIVE_PHASES_EXCLUDED = ("Succeeded", "Failed")


# --- inputs ----------------------------------------------------------------------------------


def parse_qos_reserved(raw: Mapping[str, str], path: str = "qosReserved") -> dict[str, int]:
    """``ParseQOSReserved``: only ``memory``, as a whole percentage 0..100 with a ``%`` sign.

    The kubelet parses it at start-up whether or not the QOSReserved gate is on, so a bad value
    stops the kubelet either way.
    """
    out: dict[str, int] = {}
    for name, value in raw.items():
        where = f"{path}.{name}"
        if name != MEMORY:
            raise InputError(f'cannot reserve "{name}" resource', path=where, fix="only memory can be reserved")
        text = str(value)
        why = ""
        if not text.endswith("%"):
            why = f"percentage expected, got '{text}'"
        else:
            number = text.rstrip("%")
            digits = number[1:] if number[:1] in "+-" else number
            if not digits.isdigit():  # strconv.ParseInt(s, 10, 0): optional sign, decimal digits only
                why = f"invalid number in percentage '{text}'"
            elif not 0 <= int(number) <= 100:
                why = "percentage must be between 0 and 100"
        if why:
            raise InputError(f'failed to parse percentage "{text}" for "{name}" resource: {why}', path=where,
                             fix='e.g. memory: "50%"')
        out[name] = int(text.rstrip("%"))
    return out


@dataclass(frozen=True, slots=True)
class QOSCgroupSettings:
    """What the QoS and node-allocatable cgroups depend on besides the pods."""

    gates: FeatureGates
    cgroup_version: int = 2
    layout: CgroupLayout = CgroupLayout()
    #: Node capacity as the kubelet sees it (cpu, memory, hugepages-*, ephemeral-storage).
    capacity: Mapping[str, Quantity] = field(default_factory=dict)
    #: ``min(kernel.pid_max, kernel.threads-max)``: the kubelet's internal ``pid`` capacity; None = unknown.
    pid_max: int | None = None
    kube_reserved: Mapping[str, Quantity] = field(default_factory=dict)
    system_reserved: Mapping[str, Quantity] = field(default_factory=dict)
    enforce_node_allocatable: tuple[str, ...] = (ENFORCE_PODS,)
    memory_reservation_policy: str = "None"
    #: Parsed ``qosReserved`` (:func:`parse_qos_reserved`): resource -> percent.
    qos_reserved: Mapping[str, int] = field(default_factory=dict)
    hugepage_sizes: tuple[int, ...] = ()

    @property
    def v2(self) -> bool:
        return self.cgroup_version == 2

    @property
    def enforce_pods(self) -> bool:
        return self.layout.cgroups_per_qos and ENFORCE_PODS in self.enforce_node_allocatable

    @property
    def memory_qos(self) -> bool:
        return self.v2 and gate(self.gates, "MemoryQoS")

    @property
    def tiered_reservation(self) -> bool:
        return self.memory_qos and self.memory_reservation_policy == "TieredReservation"


def active_pods(pods: Iterable[Pod]) -> list[Pod]:
    """Pods the kubelet still counts: not terminal, each identity once (the last copy wins)."""
    seen: dict[str, Pod] = {}
    for p in pods:
        if p.status.phase not in ACTIVE_PHASES_EXCLUDED:
            seen[p.uid] = p
    return list(seen.values())


# --- sums ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QOSSums:
    """Per-tier request sums over the active pods, and who contributed."""

    burstable_cpu_milli: int
    memory: Mapping[str, int]  # Guaranteed / Burstable -> bytes
    pods: Mapping[str, tuple[str, ...]]  # QoS class -> pod keys


def qos_sums(pods: Sequence[Pod], gates: FeatureGates) -> QOSSums:
    """``setCPUCgroupConfig`` + ``getQoSMemoryRequests``: PodRequests summed per QoS class."""
    opts = PodResourcesOptions(skip_pod_level_resources=not gate(gates, "PodLevelResources"),
                               use_dra_node_allocatable_resource_claim_status=gate(gates, "DRANodeAllocatableResources"))
    cpu = 0
    memory = {GUARANTEED: 0, BURSTABLE: 0}
    members: dict[str, list[str]] = {GUARANTEED: [], BURSTABLE: [], BEST_EFFORT: []}
    for p in pods:
        qos = get_pod_qos(p, gates)
        members.setdefault(qos, []).append(p.key)
        if qos == BEST_EFFORT:
            continue
        reqs = pod_requests(p, opts)
        memory[qos] = memory.get(qos, 0) + quantity_value(reqs, MEMORY)
        if qos == BURSTABLE:
            cpu += quantity_milli_value(reqs, CPU)
    return QOSSums(cpu, memory, {k: tuple(v) for k, v in members.items()})


def node_allocatable_absolute(capacity: Mapping[str, Quantity], kube_reserved: Mapping[str, Quantity],
                              system_reserved: Mapping[str, Quantity]) -> dict[str, Quantity]:
    """``getNodeAllocatableAbsoluteImpl``: capacity − systemReserved − kubeReserved per resource, floored at 0.

    No eviction thresholds, and hugepages stay in memory: this is the enforcement view, not
    ``status.allocatable``.
    """
    out: dict[str, Quantity] = {}
    for name, value in capacity.items():
        for reserved in (system_reserved.get(name), kube_reserved.get(name)):
            if reserved is not None:
                value = value - reserved
        if value.sign() < 0:
            value = Quantity(0, 0, value.format)
        out[name] = value
    return out


# --- results ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LevelCgroup:
    """One kubelet-managed cgroup above the pods: its name, path and files."""

    tier: str  # "kubepods", "burstable", "besteffort"
    name: CgroupName | None
    path: str | None
    files: tuple[CgroupValue, ...]


@dataclass(frozen=True, slots=True)
class QOSCgroups:
    """The node-allocatable cgroup and the two QoS tiers, as they settle."""

    node: LevelCgroup | None
    burstable: LevelCgroup | None
    besteffort: LevelCgroup | None
    sums: QOSSums
    #: The resource list ``kubepods`` is sized from, and whether that was capacity or allocatable.
    node_resources: Mapping[str, Quantity]
    enforced: bool

    def parent_of(self, qos_class: str) -> LevelCgroup | None:
        """The cgroup a pod of ``qos_class`` sits in (Guaranteed pods: kubepods itself)."""
        return {GUARANTEED: self.node, BURSTABLE: self.burstable, BEST_EFFORT: self.besteffort}.get(qos_class)


def _weight_or_shares(shares: int, why: str, v2: bool) -> CgroupValue:
    if v2:
        return CgroupValue("cpu.weight", cpu_shares_to_weight(shares),
                           f"1 + ({shares} shares - 2) * 9999 / 262142; {why}")
    return CgroupValue("cpu.shares", shares, why)


def _memory_limit(value: int, why: str, v2: bool) -> CgroupValue:
    return CgroupValue("memory.max" if v2 else "memory.limit_in_bytes", value, why)


def _hugetlb(sizes: Sequence[int], limits: Mapping[int, int], why: str, v2: bool) -> list[CgroupValue]:
    suffix = "max" if v2 else "limit_in_bytes"
    return [CgroupValue(f"hugetlb.{hugepage_unit_size(s)}.{suffix}", limits.get(s, HUGETLB_UNBOUNDED), why)
            for s in sysfs_order(list(sizes))]


def _rollback_note(s: QOSCgroupSettings) -> tuple[str, bool]:
    """MemoryQoS off on v2: newer kubelets write 0 at start-up so stale protection goes away."""
    if default_for("memoryQoSRollbackCleanup", s.gates.version):
        return "MemoryQoS off: reset to 0 at kubelet start-up", True
    return "MemoryQoS off: not written (kernel default 0)", False


def _node_files(s: QOSCgroupSettings, sums: QOSSums, resources: Mapping[str, Quantity]) -> list[CgroupValue]:
    src = ("capacity − kubeReserved − systemReserved (enforceNodeAllocatable has pods)" if s.enforce_pods
           else "node capacity (pods not enforced)")
    out: list[CgroupValue] = []
    cpu = resources.get(CPU)
    if cpu is not None:
        milli = cpu.milli_value()
        out.append(_weight_or_shares(milli_cpu_to_shares(milli), f"shares({milli}m {src})", s.v2))
    mem = resources.get(MEMORY)
    if mem is not None:
        out.append(_memory_limit(mem.value(), f"memory of {src}", s.v2))
    if PID_RESOURCE in resources:
        out.append(CgroupValue("pids.max", resources[PID_RESOURCE].value(), f"pid of {src}"))
    elif s.pid_max is None:
        out.append(CgroupValue("pids.max", None, "min(kernel.pid_max, kernel.threads-max) of the machine "
                               "(unknown: pass --pid-max)" + (" − reserved pid" if s.enforce_pods else ""), True))
    at_start = hugepage_limits(resources)
    if not s.layout.cgroups_per_qos:  # no QoS manager to rewrite them: the start-up values stay
        return out + _hugetlb(list(at_start), at_start, f"hugepages of {src}", s.v2)
    why = "unbounded: the QoS manager's periodic update overrides"
    for size in sysfs_order(list(s.hugepage_sizes)):
        note = (f"{why} the start-up {at_start[size]} from {src}" if size in at_start
                else f"{why} (QoS tiers never bound hugepages)")
        out += _hugetlb((size,), {}, note, s.v2)
    if s.v2:
        out += _protection(s, "kubepods", sums)
    return out


def _protection(s: QOSCgroupSettings, tier: str, sums: QOSSums) -> list[CgroupValue]:
    g, b = sums.memory.get(GUARANTEED, 0), sums.memory.get(BURSTABLE, 0)
    if s.tiered_reservation:
        if tier == "kubepods":
            return [CgroupValue("memory.min", g + b, f"MemoryQoS TieredReservation: Guaranteed {g} + Burstable {b} "
                                "memory requests (the parent covers its children's protection)")]
        return [CgroupValue("memory.low", b, "MemoryQoS TieredReservation: summed Burstable memory requests")]
    if s.memory_qos:
        why, written = "memoryReservationPolicy None: 0 (no protection)", True
    else:
        why, written = _rollback_note(s)
    if tier == "kubepods":
        files = [CgroupValue("memory.min", 0, why, written)]
        if not s.memory_qos:
            files.append(CgroupValue("memory.low", 0, why, written))
        return files
    return [CgroupValue("memory.low", 0, why, written)]


def qos_cgroups(pods: Sequence[Pod], s: QOSCgroupSettings) -> QOSCgroups:
    """``kubepods``, ``burstable`` and ``besteffort`` for ``pods`` (the active pods, the explained one included)."""
    pods = active_pods(pods)
    sums = qos_sums(pods, s.gates)
    layout = s.layout
    internal = dict(s.capacity)
    if s.pid_max is not None:
        internal[PID_RESOURCE] = Quantity.from_int(s.pid_max)
    resources = (node_allocatable_absolute(internal, s.kube_reserved, s.system_reserved) if s.enforce_pods
                 else internal)
    if not layout.cgroups_per_qos:
        node = None
        root = layout.root
        if root:  # no kubepods; a non-root cgroupRoot still gets the capacity-sized values at start-up
            node = LevelCgroup("cgroupRoot", root, layout.path(root), tuple(_node_files(s, sums, resources)))
        return QOSCgroups(node, None, None, sums, resources, False)

    node_name = layout.node_allocatable()
    node = LevelCgroup("kubepods", node_name, layout.path(node_name), tuple(_node_files(s, sums, resources)))

    burst: list[CgroupValue] = [_weight_or_shares(milli_cpu_to_shares(sums.burstable_cpu_milli),
                                                  f"shares({sums.burstable_cpu_milli}m summed cpu requests of "
                                                  f"{len(sums.pods.get(BURSTABLE, ()))} Burstable pods)", s.v2)]
    best: list[CgroupValue] = [_weight_or_shares(MIN_SHARES, "BestEffort tier: always the minimum 2 shares", s.v2)]
    reserve = s.qos_reserved.get(MEMORY) if gate(s.gates, "QOSReserved") else None
    if reserve is not None:
        alloc = node_allocatable_absolute(s.capacity, s.kube_reserved, s.system_reserved).get(MEMORY)
        allocatable = alloc.value() if alloc is not None else 0
        if allocatable > 0:
            g, b = sums.memory.get(GUARANTEED, 0), sums.memory.get(BURSTABLE, 0)
            burst_limit = allocatable - (g * reserve // 100)
            best_limit = burst_limit - (b * reserve // 100)
            burst.append(_memory_limit(burst_limit, f"QOSReserved memory={reserve}%: allocatable {allocatable} − "
                                       f"{reserve}% of Guaranteed requests {g}", s.v2))
            best.append(_memory_limit(best_limit, f"QOSReserved memory={reserve}%: burstable limit {burst_limit} − "
                                      f"{reserve}% of Burstable requests {b}", s.v2))
    for files in (burst, best):
        files += _hugetlb(s.hugepage_sizes, {}, "unbounded: QoS tiers never bound hugepages", s.v2)
    if s.v2:
        burst += _protection(s, "burstable", sums)
    b_name, be_name = layout.qos(BURSTABLE), layout.qos(BEST_EFFORT)
    return QOSCgroups(node, LevelCgroup("burstable", b_name, layout.path(b_name), tuple(burst)),
                      LevelCgroup("besteffort", be_name, layout.path(be_name), tuple(best)),
                      sums, resources, s.enforce_pods)


__all__ = ["HUGETLB_UNBOUNDED", "QOSCgroupSettings", "QOSSums", "LevelCgroup", "QOSCgroups", "parse_qos_reserved",
           "active_pods", "qos_sums", "node_allocatable_absolute", "qos_cgroups"]
