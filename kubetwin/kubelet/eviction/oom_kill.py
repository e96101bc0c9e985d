"""What the kernel does when memory runs out before the kubelet acts — the OOM killer — and how
MemoryQoS and swap change who is reclaimed or throttled first.

The eviction manager polls every 10 s, so fast growth meets the kernel first:

* a container whose working set reaches its cgroup's ``memory.max`` (its limit) — plus, with
  LimitedSwap, a full ``memory.swap.max`` — is OOM-killed inside its own cgroup (on cgroup v2 with
  ``memory.oom.group`` the whole container, on v1 or ``singleProcessOOMKill`` its largest process).
  That is not an eviction: the container restarts as its restart policy says;
* a node (or the kubepods cgroup) out of memory makes the kernel pick the task with the highest
  badness: ``rss+swap pages + oom_score_adj * total_pages / 1000`` — in other words memory share
  (per mille) plus ``oom_score_adj``, BestEffort (1000) first, Guaranteed (−997) last;
* with MemoryQoS (cgroup v2), a container above ``memory.high`` is throttled and reclaimed before
  it can reach ``memory.max``; with ``memoryReservationPolicy: TieredReservation`` a Guaranteed
  container's request is ``memory.min`` (never reclaimed), a Burstable one's ``memory.low``;
* with LimitedSwap, a Burstable container may swap up to its ``memory.swap.max`` before its
  cgroup OOM-kills it; BestEffort, Guaranteed and critical pods get no swap.

Figures come from the Summary: container ``memory.workingSetBytes`` and ``swap.swapUsageBytes``;
node capacity is ``availableBytes + workingSetBytes``, swap capacity ``swapAvailableBytes + swapUsageBytes``.

Not an upstream module of Kubernetes: it models the Linux kernel (``mm/oom_kill.c``, cgroup v2
``memory.max``/``memory.high``) with the ``oom_score_adj`` of ``pkg/kubelet/qos/policy.go``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ...model.kubelet_config import KubeletConfiguration
from ...model.pod import Container, Pod, is_sidecar
from ...model.summary import ContainerStats, Summary
from ..cgroups import CgroupSettings, container_resources
from ..qos import get_pod_qos
from .ranking import stats_func

OOM_KILLED = "OOMKilled"


@dataclass(frozen=True, slots=True)
class ContainerMemory:
    """One container's memory as the kernel sees it, with the cgroup values the kubelet wrote."""

    pod: Pod
    container: str
    qos: str
    oom_score_adj: int
    working_set: int
    swap_usage: int
    #: ``memory.max`` (0 = unlimited), MemoryQoS ``memory.min`` / ``memory.high`` (None = not set),
    #: LimitedSwap ``memory.swap.max`` (0 = no swap).
    memory_max: int
    memory_min: int | None
    memory_low: int | None
    memory_high: int | None
    swap_max: int
    #: Kernel badness, per mille of total pages plus oom_score_adj (higher = killed first).
    badness: int

    @property
    def throttled(self) -> bool:
        """Above ``memory.high``: the kernel throttles it and reclaims its pages first."""
        return self.memory_high is not None and self.working_set >= self.memory_high

    @property
    def protected(self) -> int:
        """Bytes shielded from reclaim: ``memory.min`` always, ``memory.low`` unless nothing else
        is left to reclaim (MemoryQoS with memoryReservationPolicy TieredReservation)."""
        return min(max(self.memory_min or 0, self.memory_low or 0), self.working_set)

    @property
    def over_limit(self) -> bool:
        """RAM at ``memory.max`` and no swap headroom left: the cgroup OOM-kills the container."""
        if self.memory_max <= 0 or self.working_set < self.memory_max:
            return False
        return self.swap_usage >= self.swap_max


@dataclass(frozen=True, slots=True)
class OOMKill:
    pod: Pod
    container: str
    #: ``container`` (its own limit), ``node`` (the whole node ran out).
    scope: str
    restarts: bool
    #: Whole container (cgroup v2 ``memory.oom.group``) or only its largest process.
    whole_container: bool
    reason: str = OOM_KILLED


@dataclass(frozen=True, slots=True)
class OOMReport:
    memory_capacity: int
    swap_capacity: int
    containers: tuple[ContainerMemory, ...]
    #: Containers over their own limit, killed inside their cgroup.
    container_kills: tuple[OOMKill, ...]
    #: If the node ran out, the kernel's order (highest badness first).
    node_order: tuple[ContainerMemory, ...]


def restarts_after_oom_kill(pod: Pod, container: Container, init: bool) -> bool:
    """Sidecars always restart; other containers follow the pod's restartPolicy (an OOM kill is
    exit code 137, a failure: OnFailure restarts it too)."""
    if init and is_sidecar(container):
        return True
    return pod.spec.restart_policy in ("Always", "OnFailure")


def _container_stats(stats, pod: Pod, name: str) -> ContainerStats | None:
    s = stats(pod)
    if s is None:
        return None
    return next((c for c in s.containers if c.name == name), None)


def oom_report(pods: Sequence[Pod], summary: Summary, config: KubeletConfiguration, *,
               cgroup_v2: bool = True) -> OOMReport:
    node_mem = summary.node.memory
    capacity = 0
    if node_mem is not None and node_mem.available_bytes is not None and node_mem.working_set_bytes is not None:
        capacity = node_mem.available_bytes + node_mem.working_set_bytes
    swap = summary.node.swap
    swap_capacity = 0
    if swap is not None:
        swap_capacity = (swap.swap_available_bytes or 0) + (swap.swap_usage_bytes or 0)
    gates = config.feature_gate_values
    alloc = config.node_allocatable({"memory": capacity}).get("memory") if capacity else None
    settings = CgroupSettings(
        gates=gates, cgroup_version=2 if cgroup_v2 else 1, memory_throttling_factor=config.memory_throttling_factor,
        memory_reservation_policy=config.memory_reservation_policy,
        single_process_oom_kill=config.single_process_oom_kill_for(cgroup_v2),
        swap_behavior=config.memory_swap.swap_behavior or "NoSwap", memory_capacity=capacity,
        swap_capacity=swap_capacity, node_allocatable_memory=alloc.value() if alloc is not None else capacity)
    total_pages = capacity + swap_capacity
    stats = stats_func(summary)
    rows: list[ContainerMemory] = []
    kills: list[OOMKill] = []
    for pod in pods:
        qos = get_pod_qos(pod, gates)
        for c, init in pod.all_containers():
            if init and not is_sidecar(c):
                continue  # finished before the app containers started
            cs = _container_stats(stats, pod, c.name)
            ws = cs.memory.working_set_bytes or 0 if cs is not None and cs.memory is not None else 0
            sw = cs.swap.swap_usage_bytes or 0 if cs is not None and cs.swap is not None else 0
            cr = container_resources(pod, c, settings)
            res: dict[str, Any] = dict(cr.resources)
            unified = res.get("unified") or {}
            adj = int(res.get("oomScoreAdj", cr.oom.value))
            badness = ((ws + sw) * 1000 // total_pages if total_pages else 0) + adj
            row = ContainerMemory(
                pod=pod, container=c.name, qos=qos, oom_score_adj=adj, working_set=ws, swap_usage=sw,
                memory_max=int(res.get("memoryLimitInBytes") or 0),
                memory_min=int(unified["memory.min"]) if "memory.min" in unified else None,
                memory_low=int(unified["memory.low"]) if "memory.low" in unified else None,
                memory_high=int(unified["memory.high"]) if str(unified.get("memory.high", "max")).isdigit() else None,
                swap_max=int(unified.get("memory.swap.max") or 0) if str(unified.get("memory.swap.max", "0")).isdigit()
                else 0,
                badness=badness)
            rows.append(row)
            if row.over_limit:
                kills.append(OOMKill(pod, c.name, "container", restarts_after_oom_kill(pod, c, init),
                                     whole_container=cgroup_v2 and not settings.single_process_oom_kill))
    order = sorted((r for r in rows if r.oom_score_adj > -1000), key=lambda r: -r.badness)
    return OOMReport(capacity, swap_capacity, tuple(rows), tuple(kills), tuple(order))
