"""Memory stalls on a simulated node: the kernel's ``memory.high`` throttling and global reclaim.

The kernel counts a task as stalled on memory while it is inside ``psi_memstall_enter`` /
``psi_memstall_leave``: direct reclaim, the ``memory.high`` penalty sleep, refaults of thrashing
pages, compaction. kubetwin's usage curves give each container's working set over time, not its
page cache or its accesses, so the model derives two of those stalls and states the rest as out of
scope:

**memory.high throttling** (``mm/memcontrol.c``: ``try_charge_memcg``,
``mem_cgroup_handle_over_high``, ``calculate_overage``, ``calculate_high_delay``). The kubelet
writes ``memory.high`` only with MemoryQoS on cgroup v2 (:func:`kubetwin.kubelet.cgroups.container_resources`).
A container whose working set is above it is charged in batches of ``MEMCG_CHARGE_BATCH`` (64)
pages; each return to user mode after a charge over ``memory.high`` (a page fault returns at once)
first reclaims, then sleeps ``penalty`` jiffies inside a memstall:

* ``overage = ((usage − high) << 20) / high`` (pages);
* ``penalty = (overage² × HZ) >> 20 >> 14``, times ``nr_pages / 64``, at most ``2 × HZ``;
* no sleep at all when the penalty is ≤ ``HZ / 100`` (10 ms: an overage up to about 1.25 %).

The model: a container whose working set grows at ``r`` bytes/s above its ``memory.high`` makes
``r / (64 × 4 KiB)`` such returns per second, each sleeping ``penalty``, so its stall share is
``min(1, returns/s × penalty)``; every task that allocates sleeps, so ``full`` = ``some``.
Assumed: 4 KiB pages, one batch per return, and reclaim finding nothing to free (the working set
is all in use and the kubelet's default ``NoSwap`` leaves anonymous memory unreclaimable) — so
the retries before the sleep take no time. A working set that stays flat above ``memory.high``
charges nothing and is not throttled (as in the kernel: the penalty is paid on charges).

**Pod-level memory.high** (``pkg/kubelet/cm/helpers_linux.go``: ``ResourceConfigForPod``, via
:func:`kubetwin.kubelet.cgroups.resource_config_for_pod`). With MemoryQoS and pod-level resources
(``PodLevelResources``) the kubelet of v1.37 on also writes ``memory.high`` on the *pod* cgroup when
the pod has a pod-level memory limit (``ApplyPodLevelMemoryHigh`` in the pod container manager's
``EnsureExists``: same formula over the pod's request and limit; v1.36 writes none there). The kernel throttles on the
whole way up: the sleep is computed from the largest overage of the charging cgroup and its
ancestors (``mem_find_max_overage``), so a container with no ``memory.high`` of its own (no
container limit: the pod-level limit applies) sleeps when the pod's summed working set is over the
pod's ``memory.high`` and the container's working set grows. The pod's usage is read as the sum
of its containers' working sets (the pod cgroup's own page cache and kernel memory are not seen).

**memory.max** (``try_charge_memcg``: reclaim up to ``MAX_RECLAIM_RETRIES`` times, then
``mem_cgroup_oom``). Above ``memory.high`` a container is throttled, never killed; a working set that
reaches its cgroup's ``memory.max`` is reclaimed first, and with an all-anonymous working set and
``NoSwap`` reclaim frees nothing, so the OOM kill follows in the same sample (:mod:`.pressure`,
:func:`kubetwin.kubelet.eviction.oom_kill.oom_report`); the retries take no modelled time. The
usage curves are fixed, so the throttling does not slow the growth it penalises: a curve that climbs
through ``memory.high`` to ``memory.max`` is stalled on the way and then killed, where a real task
slowed by the penalty might take longer to get there.

**Global reclaim** (``mm/page_alloc.c``: ``calculate_min_free_kbytes``,
``__setup_per_zone_wmarks``; ``mm/vmscan.c``). ``min_free_kbytes = int_sqrt(lowmem_kB × 16)``,
between 128 and 262144; the low watermark is ``min + max(min / 4, memory × watermark_scale_factor
(10) / 10000)``. kswapd reclaims in the background below the low watermark; below ``min`` every
allocation reclaims directly. The node's available memory (capacity − the pods' working sets)
between the two is read as a linear ramp of a node-wide stall share from 0 (at low) to 1 (at min),
which every running container and the node's ``full`` line take: memory short on the whole node
makes every task refault. Approximation: the kernel's watermarks are per zone and summed here over
one zone of the node's whole memory; the ramp stands for thrashing the model cannot see page by page.

Not modelled: swap and ``memory.swap.high`` (``swap_find_max_overage``), refaults of page cache,
compaction, the QoS-tier cgroups (the kubelet writes no ``memory.high`` there, only
``memory.min``/``memory.low`` protection).

Not an upstream module: kubetwin's own model of the stalled share, over the kernel's arithmetic
(``mm/memcontrol.c``, ``mm/page_alloc.c``) and averages (``kernel/sched/psi.c``, :mod:`.psi`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .psi import HZ
from .stall_psi import Stall
from .usage import curve_containers

if TYPE_CHECKING:
    from .loop import SimPod

PAGE_SIZE = 4096
MEMCG_CHARGE_BATCH = 64
MEMCG_DELAY_PRECISION_SHIFT = 20
MEMCG_DELAY_SCALING_SHIFT = 14
MEMCG_MAX_HIGH_DELAY_JIFFIES = 2 * HZ
WATERMARK_SCALE_FACTOR = 10


def calculate_overage(usage: int, high: int) -> int:
    """``calculate_overage`` (pages): how far past ``memory.high``, in 2^-20 units of it."""
    if usage <= high:
        return 0
    high = max(high, 1)
    return ((usage - high) << MEMCG_DELAY_PRECISION_SHIFT) // high


def calculate_high_delay(nr_pages: int, max_overage: int) -> int:
    """``calculate_high_delay``: the penalty in jiffies for ``nr_pages`` charged at this overage."""
    if not max_overage:
        return 0
    penalty = max_overage * max_overage * HZ
    penalty >>= MEMCG_DELAY_PRECISION_SHIFT
    penalty >>= MEMCG_DELAY_SCALING_SHIFT
    return penalty * nr_pages // MEMCG_CHARGE_BATCH


def max_overage(levels: Iterable[tuple[int, int]]) -> int:
    """``mem_find_max_overage``: the largest overage of a cgroup and its ancestors below the root,
    each level given as (usage, memory.high) in bytes."""
    return max((calculate_overage(usage // PAGE_SIZE, high // PAGE_SIZE) for usage, high in levels), default=0)


def hierarchy_sleep(levels: Iterable[tuple[int, int]], nr_pages: int = MEMCG_CHARGE_BATCH) -> int:
    """``mem_cgroup_handle_over_high``: the jiffies the task sleeps for the largest overage on its
    way up (clamped to 2 s; none when at most ``HZ / 100``). Bytes in, pages inside."""
    penalty = calculate_high_delay(nr_pages, max_overage(levels))
    penalty = min(penalty, MEMCG_MAX_HIGH_DELAY_JIFFIES)
    return 0 if penalty <= HZ // 100 else penalty


def over_high_sleep(usage: int, high: int, nr_pages: int = MEMCG_CHARGE_BATCH) -> int:
    """:func:`hierarchy_sleep` of one cgroup."""
    return hierarchy_sleep(((usage, high),), nr_pages)


def high_stall_share(working_set: int, high: int | None, growth: float,
                     ancestors: tuple[tuple[int, int], ...] = ()) -> float:
    """The share of time a container growing ``growth`` bytes/s sleeps, over its own
    ``memory.high`` (None: not written) or an ancestor's (the pod cgroup's: (usage, high))."""
    levels = ((working_set, high),) + ancestors if high is not None else ancestors
    if growth <= 0 or not any(usage > h for usage, h in levels):
        return 0.0
    sleep = hierarchy_sleep(levels)
    if not sleep:
        return 0.0
    returns = growth / (MEMCG_CHARGE_BATCH * PAGE_SIZE)
    return min(1.0, returns * sleep / HZ)


def min_free_kbytes(memory: int) -> int:
    """``calculate_min_free_kbytes`` for a node of ``memory`` bytes."""
    return min(max(math.isqrt((memory // 1024) * 16), 128), 262144)


@functools.lru_cache(maxsize=256)
def watermarks(memory: int) -> tuple[int, int]:
    """(min, low) watermarks in bytes (``__setup_per_zone_wmarks`` over one zone)."""
    wmin = min_free_kbytes(memory) * 1024
    pages = memory // PAGE_SIZE
    distance = max(wmin // PAGE_SIZE // 4, pages * WATERMARK_SCALE_FACTOR // 10000) * PAGE_SIZE
    return wmin, wmin + distance


def global_share(capacity: int, working_set: int) -> float:
    """The node-wide reclaim stall share: 0 while available memory is at or above the low
    watermark, 1 at or below ``min``, linear between (an approximation, see the module text)."""
    if capacity <= 0:
        return 0.0
    wmin, low = watermarks(capacity)
    available = capacity - working_set
    if available >= low:
        return 0.0
    if available <= wmin:
        return 1.0
    return (low - available) / (low - wmin)


def growth_rate(curve: Any, age: float) -> float:
    """Bytes per second the curve rises at ``age`` (its segment's slope; 0 outside it or falling)."""
    ts = curve.times
    if len(ts) < 2 or age < ts[0] or age >= ts[-1]:
        return 0.0
    import bisect

    k = bisect.bisect_right(ts, age)
    dv = curve.values[k] - curve.values[k - 1]
    return max(dv / (ts[k] - ts[k - 1]), 0.0)


class MemoryHigh:
    """Each container's ``memory.high`` on one node (None: not written), and its pod cgroup's,
    from the kubelet's cgroup values for its configuration (cached per pod object)."""

    def __init__(self, config: Any, capacity: int, gates: Any):
        from ..kubelet.cgroups import CgroupSettings

        self.on = config is not None and config.memory_throttling_factor is not None
        self.settings = None
        if self.on:
            alloc = config.node_allocatable({"memory": capacity}).get("memory") if capacity else None
            self.settings = CgroupSettings(
                gates=config.feature_gate_values, memory_throttling_factor=config.memory_throttling_factor,
                memory_reservation_policy=config.memory_reservation_policy,
                swap_behavior=config.memory_swap.swap_behavior or "NoSwap", memory_capacity=capacity,
                node_allocatable_memory=alloc.value() if alloc is not None else capacity)
            self.on = self.settings.enforce_memory_qos
        self._cache: dict[str, tuple[Any, dict[str, int | None], int | None]] = {}

    def _entry(self, pod: Any) -> tuple[Any, dict[str, int | None], int | None]:
        got = self._cache.get(pod.uid)
        if got is not None and got[0] is pod:
            return got
        from ..kubelet.cgroups import container_resources, resource_config_for_pod

        assert self.settings is not None
        out: dict[str, int | None] = {}
        for c, _ in pod.all_containers():
            high = container_resources(pod, c, self.settings).resources.get("unified", {}).get("memory.high")
            out[c.name] = int(high) if high is not None else None
        level = resource_config_for_pod(pod, self.settings).unified.get("memory.high")
        entry = self._cache[pod.uid] = (pod, out, int(level) if level is not None else None)
        return entry

    def of(self, pod: Any) -> dict[str, int | None]:
        """Each container's ``memory.high`` (container cgroups)."""
        return self._entry(pod)[1] if self.on else {}

    def pod_high(self, pod: Any) -> int | None:
        """The pod cgroup's ``memory.high`` (pod-level memory limits only: ``ResourceConfigForPod``)."""
        return self._entry(pod)[2] if self.on else None

    def forget(self, uid: str) -> None:
        self._cache.pop(uid, None)


def memory_stalls(highs: MemoryHigh, rows: list[tuple["SimPod", dict[str, int]]], t: float, capacity: int,
                  total: int) -> tuple[list[Stall], float]:
    """Every stalled container of one node at ``t`` and the node-wide share."""
    g = global_share(capacity, total)
    out: list[Stall] = []
    if g <= 0 and not highs.on:
        return out, g    # no memory.high anywhere on the node and no shortage: nobody stalls
    for sp, ws in rows:
        usage = sp.usage if sp.usage is not None and sp.usage.memory else None
        high = highs.of(sp.pod) if usage is not None else {}
        pod_high = highs.pod_high(sp.pod) if usage is not None else None
        pod_ws = sum(ws.values())
        ancestors = ((pod_ws, pod_high),) if pod_high is not None else ()
        pod_over = pod_high is not None and pod_ws > pod_high
        for c, lead in curve_containers(sp.pod):
            share, why = 0.0, ""
            h = high.get(c.name)
            own_over = h is not None and ws.get(c.name, 0) > h
            if usage is not None and (own_over or pod_over):
                curve = usage.of(c.name, lead)
                share = high_stall_share(ws.get(c.name, 0), h, growth_rate(curve, t - sp.origin),
                                         ancestors) if curve else 0.0
                if share:
                    own = calculate_overage(ws.get(c.name, 0) // PAGE_SIZE, h // PAGE_SIZE) if h is not None else 0
                    if pod_over and max_overage(ancestors) > own:
                        why = f"pod memory.high {pod_high}: pod working set {pod_ws} growing"
                    else:
                        why = f"memory.high {h}: working set {ws[c.name]} growing"
            if g > share:
                share, why = g, "node memory below the low watermark (global reclaim)"
            if share > 0:
                out.append(Stall(sp.pod.key, sp.pod.uid, c.name, share, share, why))
    return out, g
