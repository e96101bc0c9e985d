"""Picking CPUs: ``takeByTopology`` NUMA-packed and NUMA-distributed (``cpu_assignment.go``).

The whole tie-breaking story is the sort order: every list of units (NUMA nodes, sockets,
cores, uncore caches) is sorted by ascending number of still-available CPUs, ties by id — the
allocator fills the most-used units first — and the nesting follows the bigger unit
(``NumSockets >= NumNUMANodes`` puts NUMA nodes first). Sets are int masks (see ``topo_masks``).

Released behaviour is kept bug for bug (docs/upstream-bugs.md):

* a socket counts as free when its free CPUs equal ``CPUsPerSocket`` and a core when they equal
  ``CPUsPerCore`` (integer divisions), until v1.37, which compares both with the unit's own size
  (kubernetes/kubernetes#140498); a free unit is taken whole, so on machines with uneven cores or
  sockets (hybrid CPUs) CPUs that are not available can be handed out (kubernetes#140495);
* distributed mode remembers its best NUMA combination in a Go slice that later combinations
  overwrite (``gocombos``);
* distributed mode's remainder loops never end when no NUMA node of the chosen subset can give
  another group: :class:`TakeByTopologyHang` says so instead of returning.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import sqrt
from typing import TYPE_CHECKING

from ...model.cpuset import CPUSet
from ..admission_errors import KubeletHang
from ..topology.bitmask import bits_of
from .gocombos import SliceView, iterate_combinations
from .topo_masks import TopoMasks, masks_of

if TYPE_CHECKING:
    from ...machine.cputopology import CPUTopology

PACKED, SPREAD = "packed", "spread"


class AllocationError(Exception):
    """takeByTopology could not satisfy the request (the message is the kubelet's)."""


class TakeByTopologyHang(KubeletHang):
    """Upstream's ``takeByTopologyNUMADistributed`` would loop forever on this request.

    The kubelet's admission goroutine never returns: the pod gets no verdict and the node admits
    nothing after it. Not an admission error — callers must report it as a hang.
    """

    def __init__(self, where: str, numas: tuple[int, ...], remainder: int, group: int):
        self.where, self.numas, self.remainder, self.group = where, numas, remainder, group
        super().__init__(
            f"the kubelet would hang in takeByTopology: takeByTopologyNUMADistributed's {where} loop cannot place "
            f"the remaining {remainder} CPUs in groups of {group} on NUMA nodes {list(numas)} and never ends")


class _Accumulator:
    __slots__ = ("tm", "avail", "needed", "result", "own_size_check")

    def __init__(self, tm: TopoMasks, avail: int, needed: int, own_size_check: bool = False):
        self.tm = tm
        self.avail = avail & tm.all
        self.needed = needed
        self.result = 0
        self.own_size_check = own_size_check

    def take(self, cpus: int) -> None:
        self.result |= cpus
        self.avail &= ~cpus
        self.needed -= cpus.bit_count()

    def satisfied(self) -> bool:
        return self.needed < 1

    def failed(self) -> bool:
        return self.needed > self.avail.bit_count()

    def needs_at_least(self, n: int) -> bool:
        return self.needed >= n

    # --- sorting ------------------------------------------------------------------------
    def _sorted(self, ids, masks: dict[int, int]) -> list[int]:
        a = self.avail
        return sorted(ids, key=lambda i: ((masks[i] & a).bit_count(), i))

    def _present(self, ids, masks: dict[int, int]) -> list[int]:
        a = self.avail
        return [i for i in ids if masks[i] & a]

    def sorted_numas(self) -> list[int]:
        tm = self.tm
        if tm.numa_first:
            return self._sorted(self._present(tm.numa, tm.numa), tm.numa)
        out: list[int] = []
        for s in self.sorted_sockets():
            out += self._sorted(self._present(tm.socket_numas[s], tm.numa), tm.numa)
        return out

    def sorted_sockets(self) -> list[int]:
        tm = self.tm
        if not tm.numa_first:
            return self._sorted(self._present(tm.socket, tm.socket), tm.socket)
        out: list[int] = []
        for n in self.sorted_numas():
            out += self._sorted(self._present(tm.numa_sockets[n], tm.socket), tm.socket)
        return out

    def sorted_cores(self) -> list[int]:
        tm = self.tm
        out: list[int] = []
        if tm.numa_first:
            for s in self.sorted_sockets():
                out += self._sorted(self._present(tm.socket_cores[s], tm.core), tm.core)
        else:
            for n in self.sorted_numas():
                out += self._sorted(self._present(tm.numa_cores[n], tm.core), tm.core)
        return out

    def sorted_uncores(self) -> list[int]:
        tm = self.tm
        out: list[int] = []
        for n in self.sorted_numas():
            out += self._sorted(self._present(tm.numa_uncores[n], tm.uncore), tm.uncore)
        return out

    def sorted_cpus(self, strategy: str) -> list[int]:
        tm = self.tm
        out: list[int] = []
        if strategy == SPREAD:
            for s in self.sorted_sockets():
                out += bits_of(tm.socket[s] & self.avail)
        else:
            for c in self.sorted_cores():
                out += bits_of(tm.core[c] & self.avail)
        return out

    # --- taking whole units ---------------------------------------------------------------
    def take_full_numas(self) -> None:
        tm = self.tm
        for n in [n for n in self.sorted_numas() if tm.numa[n] & self.avail == tm.numa[n]]:
            if self.needs_at_least(tm.numa[n].bit_count()):
                self.take(tm.numa[n])

    def _socket_free(self, s: int) -> bool:
        tm = self.tm
        free = (tm.socket[s] & self.avail).bit_count()
        return free == (tm.socket[s].bit_count() if self.own_size_check else tm.cpus_per_socket)

    def take_full_sockets(self) -> None:
        # isSocketFree: free CPUs == CPUsPerSocket (NumCPUs / NumSockets), or the socket's own size
        # from v1.37; then the socket's every CPU is taken
        tm = self.tm
        for s in [s for s in self.sorted_sockets() if self._socket_free(s)]:
            whole = tm.socket[s]
            if self.needs_at_least(whole.bit_count()):
                self.take(whole)

    def _core_free(self, c: int) -> bool:
        tm = self.tm
        free = (tm.core[c] & self.avail).bit_count()
        return free == (tm.core[c].bit_count() if self.own_size_check else tm.cpus_per_core)

    def take_full_cores(self) -> None:
        # isCoreFree, then the core's every CPU is taken (free or not, as upstream does)
        tm = self.tm
        for c in [c for c in self.sorted_cores() if self._core_free(c)]:
            whole = tm.core[c]
            if self.needs_at_least(whole.bit_count()):
                self.take(whole)

    def take_full_uncores(self) -> None:
        tm = self.tm
        for u in [u for u in self.sorted_uncores() if tm.uncore[u] & self.avail == tm.uncore[u]]:
            if self.needs_at_least(tm.uncore[u].bit_count()):
                self.take(tm.uncore[u])

    def take_partial_uncore(self, uncore: int) -> None:
        tm = self.tm
        per_core = tm.cpus_per_core or 1
        cores_needed = (self.needed + per_core - 1) // per_core
        cores = [c for c in tm.uncore_cores[uncore] if tm.core[c] & self.avail]
        if len(cores) > cores_needed:
            cores = cores[:max(cores_needed, 0)]
        free = 0
        for c in cores:
            free |= tm.core[c] & self.avail
        if self.needed % 2 != 0 and tm.cpus_per_core > 1:
            lst = bits_of(free)
            if len(lst) > self.needed:
                free &= ~(1 << lst[-1])
        if free.bit_count() == self.needed:
            self.take(free)

    def take_uncore_caches(self) -> None:
        per_uncore = self.tm.cpus_per_uncore
        for u in self.sorted_uncores():
            if self.needs_at_least(per_uncore):
                self.take_full_uncores()
            if self.satisfied():
                return
            self.take_partial_uncore(u)
            if self.satisfied():
                return

    def take_remaining(self, strategy: str) -> None:
        for cpu in self.sorted_cpus(strategy):
            self.take(1 << cpu)
            if self.satisfied():
                return


def _not_enough(requested: int, available: int) -> AllocationError:
    return AllocationError(f"not enough cpus available to satisfy request: requested={requested}, "
                           f"available={available}")


def take_packed(tm: TopoMasks, available: int, n: int, strategy: str = PACKED,
                prefer_uncore: bool = False, own_size_check: bool = False) -> int:
    """``takeByTopologyNUMAPacked``: bigger units first, then uncore caches, cores, threads."""
    acc = _Accumulator(tm, available, n, own_size_check)
    if acc.satisfied():
        return 0
    if acc.failed():
        raise _not_enough(n, (available & tm.all).bit_count())
    if tm.numa_first:
        acc.take_full_numas()
        if acc.satisfied():
            return acc.result
        acc.take_full_sockets()
    else:
        acc.take_full_sockets()
        if acc.satisfied():
            return acc.result
        acc.take_full_numas()
    if acc.satisfied():
        return acc.result
    if prefer_uncore:
        acc.take_uncore_caches()
        if acc.satisfied():
            return acc.result
    if strategy == PACKED:
        acc.take_full_cores()
        if acc.satisfied():
            return acc.result
    acc.take_remaining(strategy)
    if acc.satisfied():
        return acc.result
    raise AllocationError("failed to allocate cpus")


def _round3(x: float) -> float:
    # Go's math.Round(x*1000)/1000: halves away from zero
    y = x * 1000
    r = float(int(y + 0.5)) if y >= 0 else -float(int(-y + 0.5))
    return r / 1000


def _stddev(values: list[int]) -> float:
    m = _round3(sum(values) / len(values))
    s = sqrt(sum((v - m) * (v - m) for v in values) / len(values))
    return _round3(s)


def _place_remainder(free: dict[int, int], subset: tuple[int, ...], remainder: int, group: int) -> None:
    """Hand out ``remainder`` CPUs in groups over ``subset`` round-robin, as upstream's loop does.

    Upstream's ``for remainder > 0`` pass skips NUMA nodes with fewer than ``group`` CPUs left and
    starts again; a pass that places nothing repeats forever.
    """
    while remainder > 0:
        progressed = False
        for x in subset:
            if remainder == 0:
                break
            if free[x] < group:
                continue
            free[x] -= group
            remainder -= group
            progressed = True
        if not progressed:
            raise TakeByTopologyHang("remainder balance", subset, remainder, group)


def take_distributed(tm: TopoMasks, available: int, n: int, group: int, strategy: str = PACKED,
                     own_size_check: bool = False) -> int:
    """``takeByTopologyNUMADistributed``: spread evenly (in groups) over the fewest NUMA nodes."""
    if group < 1 or n % group != 0:
        return take_packed(tm, available, n, strategy, False, own_size_check)
    acc = _Accumulator(tm, available, n, own_size_check)
    if acc.satisfied():
        return 0
    if acc.failed():
        raise _not_enough(n, (available & tm.all).bit_count())
    numas = acc.sorted_numas()
    num_numa_total = len(tm.numa)
    total_cpus = tm.all.bit_count()
    groups = (total_cpus - 1) // group + 1
    groups_per_numa = (groups - 1) // num_numa_total + 1
    groups_needed = (n - 1) // group + 1
    min_k = (groups_needed - 1) // groups_per_numa + 1
    max_k = min(groups_needed, len(numas))
    free = {x: (tm.numa[x] & acc.avail).bit_count() for x in numas}
    for k in range(min_k, max_k + 1):
        best_balance = float("inf")
        best_combo: SliceView | None = None
        best_rem: SliceView | None = None
        for view in iterate_combinations(numas, k):
            if best_balance == 0:
                break
            combo = view.values()
            if sum(free[x] for x in combo) < n:
                continue
            if sum(free[x] // group for x in combo) * group < n:
                continue
            dist = (n // k // group) * group
            if any(free[x] < dist for x in combo):
                continue
            after = dict(free)
            for x in combo:
                after[x] -= dist
            remainder = n - dist * k
            local_best = float("inf")
            local_rem: SliceView | None = None
            if remainder == 0:
                local_best = _stddev(list(after.values()))
            cand = [x for x in combo if after[x] >= group]
            for size in range(len(cand), 0, -1):
                if remainder <= 0:
                    break
                for sub_view in iterate_combinations(cand, size):
                    subset = sub_view.values()
                    if sum(after[x] for x in subset) < remainder:
                        continue
                    trial = dict(after)
                    _place_remainder(trial, subset, remainder, group)
                    bal = _stddev(list(trial.values()))
                    if bal < local_best:
                        local_best, local_rem = bal, sub_view
            if local_best < best_balance:
                best_balance, best_combo, best_rem = local_best, view, local_rem
        if best_combo is None:
            continue
        # Read the kept combinations now: Go's shared backing arrays may hold later subsets.
        chosen = best_combo.values()
        chosen_rem = best_rem.values() if best_rem is not None else ()
        dist = (n // len(chosen) // group) * group
        for x in chosen:
            try:
                acc.take(take_packed(tm, tm.numa[x] & acc.avail, dist, strategy, False, own_size_check))
            except AllocationError:
                pass  # upstream ignores the error and takes the empty set
        remainder = n - dist * len(chosen)
        while remainder > 0:
            progressed = False
            for x in chosen_rem:
                if remainder == 0:
                    break
                if (tm.numa[x] & acc.avail).bit_count() < group:
                    continue
                try:
                    acc.take(take_packed(tm, tm.numa[x] & acc.avail, group, strategy, False, own_size_check))
                except AllocationError:
                    pass
                remainder -= group
                progressed = True
            if not progressed:
                raise TakeByTopologyHang("remainder allocation", chosen_rem, remainder, group)
        if acc.needed > 0:
            raise AllocationError(f"accounting error, not enough CPUs allocated, remaining: {acc.needed}")
        if acc.needed < 0:
            raise AllocationError(f"accounting error, too many CPUs allocated, remaining: {acc.needed}")
        return acc.result
    return take_packed(tm, available, n, strategy, False, own_size_check)


@dataclass(frozen=True)
class TakeStrategy:
    """Which ``takeByTopology`` the static policy's options select."""

    distribute_across_numa: bool = False
    group_size: int = 1
    spread: bool = False
    prefer_uncore: bool = False
    #: ``isCoreFree`` / ``isSocketFree`` compare a unit's free CPUs with its own size (v1.37+,
    #: kubernetes#140498) instead of ``CPUsPerCore()`` / ``CPUsPerSocket()``
    #: (see ``features.VERSIONED_DEFAULTS["cpuManagerFreeUnitCheck"]``)
    own_size_check: bool = False

    def take(self, topo: "CPUTopology | TopoMasks", available: CPUSet, n: int) -> CPUSet:
        tm = topo if isinstance(topo, TopoMasks) else masks_of(topo)
        strategy = SPREAD if self.spread else PACKED
        if self.distribute_across_numa:
            mask = take_distributed(tm, available.mask, n, self.group_size, strategy, self.own_size_check)
        else:
            mask = take_packed(tm, available.mask, n, strategy, self.prefer_uncore, self.own_size_check)
        return CPUSet.from_mask(mask)


def take_by_topology(topo: "CPUTopology", available: CPUSet, n: int, strategy: TakeStrategy = TakeStrategy()) -> CPUSet:
    return strategy.take(topo, available, n)
