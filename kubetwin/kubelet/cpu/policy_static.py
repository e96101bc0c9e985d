"""CPU Manager ``static`` policy (``cpumanager/policy_static.go``).

Guaranteed containers with an integer CPU request get exclusive CPUs taken out of the shared
pool (``defaultCpuSet``); everything else runs in the shared pool. Reserved CPUs are never
handed out exclusively; they stay in the shared pool unless ``strict-cpu-reservation``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable

from ...errors import InputError
from ...machine.cputopology import CPUTopology
from ...model.cpuset import EMPTY, CPUSet
from ...model.features import FeatureGates, default_for
from ...model.pod import Container, Pod, is_sidecar
from ..admission_errors import AdmissionError, SMTAlignmentError
from ..memo import SharedMemo
from ..podlevel import (guaranteed_cpus, pod_guaranteed_cpus, pod_level_managers_enabled, is_pod_level_pod,
                        skipped_for_pod_level, validate_pod_scope_resources)
from ..topology.bitmask import bits_of, iterate_bitmasks
from ..topology.hint import TopologyHint
from .assignment import AllocationError, TakeByTopologyHang, TakeStrategy
from .options import StaticPolicyOptions
from .state import CPUState
from .topo_masks import TopoMasks, masks_of

POLICY_NAME = "static"

#: ``GetAffinity(podUID, containerName)`` of the Topology Manager.
AffinityFn = Callable[[str, str], TopologyHint]


def _no_affinity(pod_uid: str, container: str) -> TopologyHint:
    return TopologyHint(None, True)


@dataclass
class Counters:
    """What the CPU manager counts for its metrics."""

    pinning_requests: int = 0
    pinning_errors: int = 0
    allocations: dict[tuple[str, str], int] = field(default_factory=dict)  # (resource, source)
    allocation_errors: dict[tuple[str, str], int] = field(default_factory=dict)
    assignments: dict[tuple[str, str], int] = field(default_factory=dict)  # (resource, assignment_type)
    #: gauges kept as the kubelet keeps them: set at start, then moved by each allocation/release
    exclusive_cpus: int = 0
    shared_pool_millicores: int = 0
    #: NUMA node -> CPUs; a node is only ever overwritten when it still holds CPUs (upstream quirk)
    allocation_per_numa: dict[int, int] = field(default_factory=dict)
    #: (scope, boundary) -> count, for container_aligned_compute_resources_(failure_)count
    aligned: dict[tuple[str, str], int] = field(default_factory=dict)
    aligned_failures: dict[tuple[str, str], int] = field(default_factory=dict)

    def bump(self, table: dict, key: tuple[str, str], n: int = 1) -> None:
        table[key] = table.get(key, 0) + n

    def copy(self) -> "Counters":
        return Counters(self.pinning_requests, self.pinning_errors, dict(self.allocations),
                        dict(self.allocation_errors), dict(self.assignments), self.exclusive_cpus,
                        self.shared_pool_millicores, dict(self.allocation_per_numa), dict(self.aligned),
                        dict(self.aligned_failures))


def choose_reserved_cpus(topo: CPUTopology, strategy: TakeStrategy, reserved_system_cpus: CPUSet,
                         num_reserved: int) -> CPUSet:
    """The reserved CPUs: ``reservedSystemCPUs`` as given, else picked by the policy's own takeByTopology."""
    all_cpus = topo.all_cpus()
    if not reserved_system_cpus.is_empty():
        reserved = reserved_system_cpus
    else:
        try:
            reserved = strategy.take(topo, all_cpus, num_reserved)
        except AllocationError:
            reserved = EMPTY
        except TakeByTopologyHang as exc:
            raise InputError(f"the kubelet would hang at start-up choosing its reserved CPUs: {exc}",
                             path="kubeReserved.cpu",
                             fix="set reservedSystemCPUs, or a reservation the distributed take can place") from None
    if reserved.size() != num_reserved:
        raise InputError(f"[cpumanager] unable to reserve the required amount of CPUs (size of {reserved} did not "
                         f"equal {num_reserved})", path="reservedSystemCPUs" if reserved_system_cpus else "kubeReserved.cpu")
    return reserved


class StaticPolicy:
    name = POLICY_NAME

    def __init__(self, topo: CPUTopology, options: StaticPolicyOptions, reserved: CPUSet, gates: FeatureGates,
                 affinity: AffinityFn = _no_affinity):
        self.topo = topo
        self.tm: TopoMasks = masks_of(topo)
        self.options = options
        self.gates = gates
        self.affinity = affinity
        self.strategy = TakeStrategy(
            distribute_across_numa=options.distribute_cpus_across_numa,
            group_size=topo.cpus_per_core() if options.full_physical_cpus_only else 1,
            spread=options.distribute_cpus_across_cores,
            prefer_uncore=options.prefer_align_by_uncore_cache,
            own_size_check=default_for("cpuManagerFreeUnitCheck", gates.version) == "ownSize",
        )
        self.reserved = reserved
        phys = 0
        for cpu in reserved:
            core = self.tm.cpu_core.get(cpu)
            if core is not None:
                phys |= self.tm.core[core]
        self.reserved_physical = CPUSet.from_mask(phys | reserved.mask)
        self.cpus_to_reuse: dict[str, CPUSet] = {}
        self.counters = Counters()
        #: known upstream bugs that decided an allocation, read (and cleared) by the admission
        self.bug_notes: list[str] = []
        #: the pool the last ``allocate_cpus`` took from (what was free), to flag CPUs outside it
        self.last_allocatable: CPUSet = EMPTY
        self._numa_masks: tuple[tuple[int, int, int, int], ...] | None = None
        #: picks and hints shared by every kubelet copied from this one (see ``kubelet.memo``)
        self.memo = SharedMemo()

    def fork(self, affinity: AffinityFn) -> "StaticPolicy":
        """A copy with its own counters and reuse pool, asking ``affinity``; set-up and memo shared."""
        new = copy.copy(self)
        new.affinity = affinity
        new.cpus_to_reuse = dict(self.cpus_to_reuse)
        new.counters = self.counters.copy()
        new.bug_notes = []
        return new

    # --- start-up ---------------------------------------------------------------------------
    def all_cpus(self) -> CPUSet:
        cpus = self.topo.all_cpus()
        if self.options.strict_cpu_reservation:
            cpus = cpus - self.reserved
        return cpus

    def validate_state(self, s: CPUState) -> None:
        """``validateState``: initialise a fresh state or refuse an inconsistent one."""
        all_cpus = self.all_cpus()
        tmp_default = s.default_cpuset
        if tmp_default.is_empty():
            if s.entries or s.pod_entries:
                raise InputError("default cpuset cannot be empty", path="cpu_manager_state.defaultCpuSet")
            s.default_cpuset = all_cpus
            return
        if self.options.strict_cpu_reservation:
            if not (self.reserved & tmp_default).is_empty():
                raise InputError(f'some of strictly reserved cpus: "{self.reserved & tmp_default}" are present in '
                                 f'defaultCpuSet: "{tmp_default}"', path="cpu_manager_state.defaultCpuSet")
        elif not self.reserved.is_subset_of(tmp_default):
            raise InputError(f'not all reserved cpus: "{self.reserved}" are present in defaultCpuSet: "{tmp_default}"',
                             path="cpu_manager_state.defaultCpuSet")
        for pod_uid, conts in s.entries.items():
            for name, cset in conts.items():
                if not (cset & tmp_default).is_empty():
                    raise InputError(f'pod: {pod_uid}, container: {name} cpuset: "{cset}" overlaps with default '
                                     f'cpuset "{tmp_default}"', path=f"cpu_manager_state.entries.{pod_uid}.{name}")
        total = tmp_default | s.assigned_cpus()
        if total != all_cpus:
            # the kubelet's message; the path names the first entry holding CPUs the machine lacks
            held = [("defaultCpuSet", tmp_default)] + [(f"entries.{u}.{n}", c) for u, cs in s.entries.items()
                                                       for n, c in cs.items()]
            held += [(f"podEntries.{u}.cpuSet", c) for u, c in s.pod_entries.items()]
            where = next((p for p, c in held if not c.is_subset_of(all_cpus)), "")
            raise InputError(f'current set of available CPUs "{all_cpus}" doesn\'t match with CPUs in state "{total}"',
                             path="cpu_manager_state" + (f".{where}" if where else ""),
                             fix=f"CPUs {total - all_cpus} are not on this machine" if where else
                             f"CPUs {all_cpus - total} are neither in defaultCpuSet nor assigned")

    # --- metrics (initializeMetrics, updateMetricsOnAllocate/Release) -------------------------
    def initialize_metrics(self, s: CPUState) -> None:
        m = self.counters
        m.shared_pool_millicores = self.available(s).size() * 1000
        m.aligned_failures.setdefault(("container", "physical_cpu"), 0)
        m.aligned.setdefault(("container", "physical_cpu"), 0)
        m.aligned.setdefault(("container", "uncore_cache"), 0)
        assigned = self._assigned_exclusive(s)
        m.exclusive_cpus = assigned.bit_count()
        self._update_per_numa(assigned)

    @staticmethod
    def _assigned_exclusive(s: CPUState) -> int:
        """``getTotalAssignedExclusiveCPUs``: container assignments only (pod bubbles are not read)."""
        mask = 0
        for conts in s.entries.values():
            for cpus in conts.values():
                mask |= cpus.mask
        return mask

    def _update_per_numa(self, mask: int) -> None:
        per = self.counters.allocation_per_numa
        for node, cpus in self.tm.numa.items():
            n = (mask & cpus).bit_count()
            if n:
                per[node] = n

    def _aligned_at_uncore(self, cpus: CPUSet) -> bool:
        mask = cpus.mask
        if mask.bit_count() <= 1:
            return True
        return any(mask & ~u == 0 for u in self.tm.uncore.values())

    def update_metrics_on_allocate(self, s: CPUState, cpus: CPUSet) -> None:
        m = self.counters
        n = cpus.size()
        m.exclusive_cpus += n
        m.shared_pool_millicores -= n * 1000
        if self._aligned_at_uncore(cpus):
            m.bump(m.aligned, ("container", "uncore_cache"))
        self._update_per_numa(self._assigned_exclusive(s))

    def update_metrics_on_release(self, s: CPUState, cpus: CPUSet) -> None:
        m = self.counters
        n = cpus.size()
        m.exclusive_cpus -= n
        m.shared_pool_millicores += n * 1000
        self._update_per_numa(self._assigned_exclusive(s) & ~cpus.mask)

    # --- pools ------------------------------------------------------------------------------
    def available(self, s: CPUState) -> CPUSet:
        return s.default_cpuset - self.reserved

    def available_physical(self, s: CPUState) -> CPUSet:
        return s.default_cpuset - self.reserved_physical

    # --- container allocation -----------------------------------------------------------------
    def _smt_check(self, s: CPUState, n: int) -> None:
        if not self.options.full_physical_cpus_only:
            return
        per_core = self.topo.cpus_per_core()
        if per_core and n % per_core != 0:
            raise SMTAlignmentError(f"SMT Alignment Error: requested {n} cpus not multiple cpus per core = {per_core}")
        avail = self.available_physical(s).size()
        if n > avail:
            raise SMTAlignmentError(f"SMT Alignment Error: not enough free physical CPUs: available physical CPUs = "
                                    f"{avail}, requested CPUs = {n}, CPUs per core = {per_core}")

    def allocate(self, s: CPUState, pod: Pod, c: Container) -> None:
        n = guaranteed_cpus(pod, c, self.gates)
        if n == 0 or skipped_for_pod_level(pod, self.gates):
            return
        m = self.counters
        m.pinning_requests += 1
        try:
            self._smt_check(s, n)
            existing = s.get(pod.uid, c.name)
            if existing is not None:
                self._update_reuse(pod, c, existing)
                self._count_physical_alignment()
                return
            hint = self.affinity(pod.uid, c.name)
            cpus = self.allocate_cpus(s, n, hint.affinity, self.cpus_to_reuse.get(pod.uid, EMPTY))
        except (AdmissionError, AllocationError) as exc:
            m.pinning_errors += 1
            m.bump(m.allocation_errors, ("cpu", "node"))
            if self.options.full_physical_cpus_only:
                m.bump(m.aligned_failures, ("container", "physical_cpu"))
            if isinstance(exc, AllocationError):
                raise AdmissionError(str(exc)) from None
            raise
        self._note_double_assignment(pod, c, cpus)
        s.set(pod.uid, c.name, cpus)
        self._update_reuse(pod, c, cpus)
        self.update_metrics_on_allocate(s, cpus)
        m.bump(m.allocations, ("cpu", "node"))
        m.bump(m.assignments, ("cpu", "node_exclusive"))
        self._count_physical_alignment()

    def _note_double_assignment(self, pod: Pod, c: Container, cpus: CPUSet) -> None:
        """Flag CPUs handed out that were not free (hybrid cores, kubernetes#140495)."""
        self.note_cpus_not_in(f"container {c.name}", cpus, self.last_allocatable,
                              "not free (in use by another container or reserved)")

    def note_cpus_not_in(self, who: str, cpus: CPUSet, pool: CPUSet, what: str) -> None:
        """Flag ``cpus`` outside the ``pool`` they were taken from (kubernetes#140495): never hidden."""
        outside = cpus - pool
        if outside.is_empty():
            return
        self.bug_notes.append(
            f"known upstream bug kubernetes/kubernetes#140495: {who} was given CPUs {outside} that were {what}: "
            f"takeByTopology took a whole core that counted as free because its free CPUs equal "
            f"CPUsPerCore()={self.topo.cpus_per_core()} (an integer division on a machine with uneven cores), or a "
            f"whole socket likewise; fixed by kubernetes#140498 in v1.37")

    def _count_physical_alignment(self) -> None:
        """A successful ``Allocate`` (the already-allocated shortcut included) under full-pcpus-only."""
        if self.options.full_physical_cpus_only:
            self.counters.bump(self.counters.aligned, ("container", "physical_cpu"))

    def _aligned_pool(self, numa_affinity: int) -> int:
        tm = self.tm
        m = 0
        for node in bits_of(numa_affinity):
            m |= tm.numa.get(node, 0)
        if self.options.align_by_socket:
            sockets = set()
            for node in bits_of(numa_affinity):
                sockets.update(tm.numa_sockets.get(node, ()))
            for sk in sockets:
                m |= tm.socket[sk]
        return m

    def allocate_cpus(self, s: CPUState, n: int, numa_affinity: int | None, reusable: CPUSet) -> CPUSet:
        """``allocateCPUs``: inside the affinity first, the rest from anywhere; taken out of the pool."""
        allocatable = self.available(s) | reusable
        self.last_allocatable = allocatable
        key = ("pick", allocatable.mask, numa_affinity, n)
        result = self.memo.get(key)
        if result is None:
            result = EMPTY
            if numa_affinity is not None:
                aligned = CPUSet.from_mask(allocatable.mask & self._aligned_pool(numa_affinity))
                k = min(n, aligned.size())
                result = self.strategy.take(self.tm, aligned, k)
            rest = self.strategy.take(self.tm, allocatable - result, n - result.size())
            result = self.memo.put(key, result | rest)
        s.default_cpuset = s.default_cpuset - result
        return result

    def _update_reuse(self, pod: Pod, c: Container, cpus: CPUSet) -> None:
        for uid in list(self.cpus_to_reuse):
            if uid != pod.uid:
                del self.cpus_to_reuse[uid]
        cur = self.cpus_to_reuse.get(pod.uid, EMPTY)
        for ic in pod.spec.init_containers:
            if ic.name == c.name:
                if is_sidecar(ic):
                    break
                self.cpus_to_reuse[pod.uid] = cur | cpus
                return
        self.cpus_to_reuse[pod.uid] = cur - cpus

    def remove_container(self, s: CPUState, pod_uid: str, name: str) -> None:
        cpus = s.get(pod_uid, name)
        if cpus is None:
            return
        s.delete(pod_uid, name)
        if pod_uid in s.pod_entries:
            if pod_uid not in s.entries:
                self.release_pod_bubble(s, pod_uid)
            return
        still = 0
        for other in s.entries.get(pod_uid, {}).values():
            still |= other.mask
        released = CPUSet.from_mask(cpus.mask & ~still)
        s.default_cpuset = s.default_cpuset | released
        self.update_metrics_on_release(s, released)

    def release_pod_bubble(self, s: CPUState, pod_uid: str) -> None:
        """The last container of a pod-level pod is gone: the whole bubble goes back to the pool."""
        bubble = s.pod_entries.pop(pod_uid)
        s.default_cpuset = s.default_cpuset | bubble
        self.update_metrics_on_release(s, bubble)

    # --- hints ---------------------------------------------------------------------------------
    def generate_hints(self, available: CPUSet, reusable: CPUSet, request: int) -> list[TopologyHint]:
        """``generateCPUTopologyHints``, remembered per (available CPUs, reusable CPUs, request)."""
        key = ("hints", available.mask, reusable.mask, request)
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo.put(key, tuple(self._generate_hints(available, reusable, request)))
        return list(hit)

    def _generate_hints(self, available: CPUSet, reusable: CPUSet, request: int) -> list[TopologyHint]:
        tm = self.tm
        numas = sorted(tm.numa)
        min_size = len(numas)
        reuse_nodes = 0
        for cpu in reusable:
            node = tm.cpu_numa.get(cpu)
            if node is not None:
                reuse_nodes |= 1 << node
        nreuse = reusable.size()
        out: list[tuple[int, int]] = []
        masks = self._numa_masks
        if masks is None:
            built = []
            for mask in iterate_bitmasks(numas):
                cpus_in_mask = 0
                for node in bits_of(mask):
                    cpus_in_mask |= tm.numa[node]
                built.append((mask, mask.bit_count(), cpus_in_mask, cpus_in_mask.bit_count()))
            masks = self._numa_masks = tuple(built)
        avail = available.mask
        for mask, k, cpus_in_mask, total in masks:
            if total >= request and k < min_size:
                min_size = k
            if reuse_nodes & ~mask:
                continue
            if nreuse + (avail & cpus_in_mask).bit_count() < request:
                continue
            out.append((mask, k))
        hints = []
        per_socket = (self.topo.num_numa_nodes // self.topo.num_sockets) if self.topo.num_sockets else 0
        for mask, k in out:
            preferred = k == min_size
            if self.options.align_by_socket and per_socket:
                min_sockets = (min_size + per_socket - 1) // per_socket
                sockets = set()
                for node in bits_of(mask):
                    sockets.update(tm.numa_sockets.get(node, ()))
                if len(sockets) == min_sockets:
                    preferred = True
            hints.append(TopologyHint(mask, preferred))
        return hints

    def get_topology_hints(self, s: CPUState, pod: Pod, c: Container) -> dict[str, list[TopologyHint] | None] | None:
        if skipped_for_pod_level(pod, self.gates):
            return None
        request = guaranteed_cpus(pod, c, self.gates)
        if request == 0:
            return None
        allocated = s.get(pod.uid, c.name)
        if allocated is not None:
            if allocated.size() != request:
                return {"cpu": []}
            return {"cpu": self.generate_hints(allocated, EMPTY, request)}
        return {"cpu": self.generate_hints(self.available(s), self.cpus_to_reuse.get(pod.uid, EMPTY), request)}

    def get_pod_topology_hints(self, s: CPUState, pod: Pod) -> dict[str, list[TopologyHint] | None] | None:
        if skipped_for_pod_level(pod, self.gates):
            return None
        pod_level = pod_level_managers_enabled(self.gates) and is_pod_level_pod(pod)
        request = pod_guaranteed_cpus(pod, self.gates)
        if request == 0:
            return None
        if pod_level:
            try:
                validate_pod_scope_resources(pod, request, self.gates)
            except AdmissionError:
                return {"cpu": []}
            bubble = s.pod_entries.get(pod.uid)
            if bubble is not None:
                if bubble.size() != request:
                    return {"cpu": []}
                return {"cpu": self.generate_hints(bubble, EMPTY, request)}
        assigned = EMPTY
        for c, _ in pod.all_containers():
            got = s.get(pod.uid, c.name)
            if got is None:
                continue
            if not pod_level and got.size() != guaranteed_cpus(pod, c, self.gates):
                return {"cpu": []}
            assigned = assigned | got
        if not pod_level and assigned.size() == request:
            return {"cpu": self.generate_hints(assigned, EMPTY, request)}
        reusable = self.cpus_to_reuse.get(pod.uid, EMPTY) | assigned
        return {"cpu": self.generate_hints(self.available(s), reusable, request)}

    # --- pod-level (AllocatePod) ----------------------------------------------------------------
    def allocate_pod(self, s: CPUState, pod: Pod) -> None:
        from .podlevel_cpu import allocate_pod_bubble

        allocate_pod_bubble(self, s, pod)
