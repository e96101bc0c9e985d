"""nri-plugins' topology-aware CPU allocator (``pkg/cpuallocator``), shared by every policy.

``allocate_cpus(from, cnt, prefer)`` picks ``cnt`` CPUs out of ``from`` the way the plugin's
allocator does: whole idle packages first, then idle or partially used last-level cache
groups (when some cache level splits a package), then whole idle cores, then single
threads ordered by package fill and core fill. ``release_cpus`` is the inverse the balloons
policy uses to shrink a balloon (it allocates the CPUs to *keep*).

Every sort runs Go's algorithm (:mod:`.gosort`), so ties fall as the plugin's do.
The machine model has no hybrid cores, no cpufreq base frequencies, no SST: every CPU is a
performance core of normal priority, so the cluster step (hybrid only) never runs and CPU
priority preferences order nothing, exactly as on such hardware.

Upstream: containers/nri-plugins v0.14.0 ``pkg/cpuallocator/allocator.go``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..model.cpuset import CPUSet
from . import cpuallocator_keys, cpuallocator_memo
from .gosort import sort_func, sort_slice
from .sysfs import EFFICIENT_CORE, PERFORMANCE_CORE, System

# CPUPriority
PRIORITY_HIGH, PRIORITY_NORMAL, PRIORITY_LOW = 0, 1, 2
NUM_CPU_PRIORITIES = 3
PRIORITY_NONE = NUM_CPU_PRIORITIES
PRIORITY_NAMES = {PRIORITY_HIGH: "high", PRIORITY_NORMAL: "normal", PRIORITY_LOW: "low", PRIORITY_NONE: "none"}

# AllocFlag
ALLOC_IDLE_PACKAGES = 1 << 0
ALLOC_IDLE_CLUSTERS = 1 << 1
ALLOC_CACHE_GROUPS = 1 << 2
ALLOC_IDLE_CORES = 1 << 3
ALLOC_DEFAULT = ALLOC_IDLE_PACKAGES | ALLOC_IDLE_CLUSTERS | ALLOC_CACHE_GROUPS | ALLOC_IDLE_CORES

_PREFER, _USABLE, _IGNORE = 0, 1, 2


class AllocationError(Exception):
    """``cpuset X does not have N CPUs``: the caller turns it into its own error."""


@dataclass(slots=True, eq=False)
class CacheGroup:
    id: int
    pkg: int
    die: int
    node: int
    cpus: CPUSet
    kind: str


class CPUPriorities:
    """The CPUs of each priority (high, normal, low)."""

    __slots__ = ("sets",)

    def __init__(self, sets: list[CPUSet]):
        self.sets = sets

    def __getitem__(self, prio: int) -> CPUSet:
        return self.sets[prio]

    def cmp(self, a: CPUSet, b: CPUSet, prefer: int, cnt: int) -> int:
        """``cmpCPUSet``: > 0 if ``a`` is preferred, < 0 if ``b``, 0 if equal."""
        c = self.sets
        if prefer == PRIORITY_NONE:
            return 0
        if cnt > 0 and prefer == PRIORITY_LOW:
            pa, pb = (a & c[prefer]).size(), (b & c[prefer]).size()
            if pa >= cnt and pb >= cnt:
                return pb - pa
            if pa >= cnt or pb >= cnt:
                return pa - pb
        if cnt > 0 and prefer == PRIORITY_HIGH:
            pa, pb = (a & c[prefer]).size(), (b & c[prefer]).size()
            if pa == 0 and pb == 0:
                pa, pb = (a & c[PRIORITY_NORMAL]).size(), (b & c[PRIORITY_NORMAL]).size()
            if pa >= cnt and pb >= cnt:
                return pb - pa
            if pa >= cnt or pb >= cnt:
                return pa - pb
        for prio in range(prefer, NUM_CPU_PRIORITIES):
            pa, pb = (a & c[prio]).size(), (b & c[prio]).size()
            if cnt > 0 and prio == prefer and pa >= cnt and pb >= cnt:
                return pb - pa
            if pa != pb:
                return pa - pb
        for prio in range(PRIORITY_HIGH, prefer):
            na, nb = (a & c[prio]).size(), (b & c[prio]).size()
            if na != nb:
                return nb - na
        return 0


class TopologyCache:
    """``topologyCache``: per-package/node/core CPU sets, priorities, cache groups."""

    def __init__(self, sys: System):
        self.pkg = {pid: sys.package(pid).cpus for pid in sys.package_ids()}
        self.node = {nid: sys.node(nid).cpus for nid in sys.node_ids()}
        self.core = {cid: sys.cpu(cid).threads for cid in sys.cpu_ids()}
        self.kind = {k: sys.core_kind_cpus(k) for k in sys.core_kinds()}
        # no cpufreq base frequencies, EPP or SST in the model: every CPU is of normal priority
        ecores = self.kind.get(EFFICIENT_CORE, CPUSet())
        normal = sys.online_cpus - ecores if (sys.online_cpus - ecores) else sys.online_cpus
        self.priorities = CPUPriorities([CPUSet(), normal, ecores])
        self.cache_groups: list[CacheGroup] = []
        self._discover_cache_groups(sys)

    @staticmethod
    def _pick_cache_level(sys: System) -> int:
        online = sys.online_cpus
        for cid in online:
            cpu = sys.cpu(cid)
            pkg = sys.package(cpu.package)
            for n in range(len(cpu.caches) - 1, 0, -1):
                cpus = cpu.nth_level_cache_cpus(n)
                if cpus.size() in (0, 1):
                    continue
                if cpus == cpu.threads & online:
                    continue
                if cpus == pkg.die_cpuset(cpu.die) & online:
                    continue
                if cpus == pkg.cpus & online:
                    continue
                return n
        return -1

    def _discover_cache_groups(self, sys: System) -> None:
        n = self._pick_cache_level(sys)
        if n < 0:
            return
        online = sys.online_cpus
        for pid in sys.package_ids():
            pkg = sys.package(pid)
            groups: list[CacheGroup] = []
            assigned: set[int] = set()
            for cid in pkg.cpus & online:
                if cid in assigned:
                    continue
                cpu = sys.cpu(cid)
                cpus = cpu.nth_level_cache_cpus(n) & online
                if (cpus.size() in (0, 1) or cpus == cpu.threads & online
                        or cpus == pkg.die_cpuset(cpu.die) & online or cpus == pkg.cpus & online):
                    continue
                groups.append(CacheGroup(0, cpu.package, cpu.die, cpu.node, cpus, cpu.core_kind))
                assigned.update(cpus)
            if len(groups) > 1:
                self.cache_groups.extend(groups)

        state = {"by_die": True}

        def compare(a: CacheGroup, b: CacheGroup) -> int:
            if a.pkg != b.pkg:
                return a.pkg - b.pkg
            if state["by_die"] and a.die != b.die:
                return a.die - b.die
            if a.node != b.node:
                return a.node - b.node
            return a.cpus.first() - b.cpus.first()

        sort_func(self.cache_groups, compare)
        for idx, g in enumerate(self.cache_groups):
            g.id = idx
            for cid in g.cpus:
                cpu = sys.cpu(cid)
                if cpu.package != g.pkg or cpu.node != g.node:
                    self.cache_groups = []
                    return
                if cpu.die != g.die:
                    state["by_die"] = False
                    break
        if not state["by_die"]:
            sort_func(self.cache_groups, compare)
            for idx, g in enumerate(self.cache_groups):
                g.id = idx


class _Helper:
    """``allocatorHelper``: the state of one allocation."""

    def __init__(self, sys: System, topo: TopologyCache, frm: CPUSet, cnt: int, prefer: int,
                 flags: int = ALLOC_DEFAULT):
        self.sys = sys
        self.topo = topo
        self.flags = flags
        self.frm = frm
        self.prefer = prefer
        self.cnt = cnt
        self.result = CPUSet()

    def allocate(self) -> CPUSet:
        if self.flags & ALLOC_IDLE_PACKAGES:
            self._take_idle_packages()
        # hybrid core kinds (idle E-/P-clusters) are not in the machine model
        if self.cnt > 0 and self.flags & ALLOC_CACHE_GROUPS:
            self._take_cache_groups()
        if self.cnt > 0 and self.flags & ALLOC_IDLE_CORES:
            self._take_idle_cores()
        if self.cnt > 0:
            self._take_idle_threads()
        return self.result if self.cnt == 0 else CPUSet()

    def _take(self, cset: CPUSet) -> None:
        self.result = self.result | cset
        self.frm = self.frm - cset
        self.cnt -= cset.size()

    def _take_idle_packages(self) -> None:
        prio = self.topo.priorities

        def usable(pid: int) -> CPUSet:
            cset = self.topo.pkg[pid] - self.sys.offline_cpus
            if self.prefer < NUM_CPU_PRIORITIES:
                cset = cset & prio[self.prefer]
            return cset

        pkgs = [pid for pid in self.sys.package_ids() if (usable(pid) & self.frm) == usable(pid)]

        def less(i: int, j: int) -> bool:
            res = prio.cmp(self.topo.pkg[i], self.topo.pkg[j], self.prefer, -1)
            if res != 0:
                return res > 0
            return i < j

        sort_slice(pkgs, less)
        for pid in pkgs:
            cset = usable(pid)
            if self.cnt >= cset.size():
                self._take(cset)
                if self.cnt == 0:
                    break

    def _take_idle_cores(self) -> None:
        offline = self.sys.offline_cpus
        cores = []
        for cid in self.sys.cpu_ids():
            cset = self.topo.core[cid] - offline
            if cset.is_empty():
                continue
            if (cset & self.frm) == cset and cset.first() == cid:
                cores.append(cid)
        prio = self.topo.priorities

        def less(i: int, j: int) -> bool:
            res = prio.cmp(self.topo.core[i], self.topo.core[j], self.prefer, -1)
            if res != 0:
                return res > 0
            return i < j

        if not cpuallocator_keys.sort_idle_cores(self, cores, PRIORITY_NONE):
            sort_slice(cores, less)
        for cid in cores:
            cset = self.topo.core[cid] - offline
            if self.cnt >= cset.size():
                self._take(cset)
                if self.cnt == 0:
                    break

    def _take_idle_threads(self) -> None:
        usable = self.frm - self.sys.offline_cpus
        cores = [cid for cid in self.sys.cpu_ids() if cid in usable]
        prio = self.topo.priorities
        sys, topo = self.sys, self.topo

        def less(i: int, j: int) -> bool:
            ipkg, jpkg = sys.cpu(i).package, sys.cpu(j).package
            icore, jcore = topo.core[i], topo.core[j]
            ipset, jpset = topo.pkg[ipkg], topo.pkg[jpkg]
            icolo, jcolo = (ipset & self.result).size(), (jpset & self.result).size()
            if icolo != jcolo:
                return icolo > jcolo
            res = prio.cmp(ipset & self.frm, jpset & self.frm, self.prefer, self.cnt)
            if res != 0:
                return res > 0
            if ipkg != jpkg:
                return ipkg < jpkg
            res = prio.cmp(CPUSet((i,)), CPUSet((j,)), self.prefer, 0)
            if res != 0:
                return res > 0
            ifree, jfree = (ipset & self.frm).size(), (jpset & self.frm).size()
            if ifree != jfree:
                return ifree < jfree
            icfree, jcfree = (icore & self.frm).size(), (jcore & self.frm).size()
            if icfree != jcfree:
                return icfree < jcfree
            return i < j

        if not cpuallocator_keys.sort_idle_threads(self, cores, PRIORITY_NONE):
            sort_slice(cores, less)
        for cid in cores:
            self._take(CPUSet((cid,)))
            if self.cnt == 0:
                break

    # --- cache groups --------------------------------------------------------------------------
    def _take_cache_groups(self) -> None:
        topo = self.topo
        if len(topo.cache_groups) <= 1 or self.cnt < 2:
            return
        offline = self.sys.offline_cpus
        hybrid = len(topo.kind) > 1

        def pick(g: CacheGroup) -> tuple[int, CPUSet]:
            if hybrid:
                if self.prefer != PRIORITY_LOW and g.kind == EFFICIENT_CORE:
                    return _IGNORE, CPUSet()
                if self.prefer == PRIORITY_LOW and g.kind == PERFORMANCE_CORE:
                    return _IGNORE, CPUSet()
            cset = g.cpus - offline
            free = cset & self.frm
            if free.is_empty():
                return _IGNORE, CPUSet()
            if free == cset:
                return _PREFER, free
            return _USABLE, free

        s = _CacheGroupSorter()
        s.part = self.cnt % topo.cache_groups[0].cpus.size()
        s.full = self.cnt - s.part
        for g in topo.cache_groups:
            verdict, cset = pick(g)
            if verdict == _PREFER:
                s.prefer.append(g)
                s.cpus[id(g)] = cset
                s.prefer_die.setdefault(g.pkg, {})
                s.prefer_die[g.pkg][g.die] = s.prefer_die[g.pkg].get(g.die, 0) + cset.size()
                s.prefer_pkg[g.pkg] = s.prefer_pkg.get(g.pkg, 0) + cset.size()
            elif verdict == _USABLE:
                s.usable.append(g)
                s.cpus[id(g)] = cset
                s.usable_die.setdefault(g.pkg, {})
                s.usable_die[g.pkg][g.die] = s.usable_die[g.pkg].get(g.die, 0) + cset.size()
                s.usable_pkg[g.pkg] = s.usable_pkg.get(g.pkg, 0) + cset.size()
        if s.prefer:
            sort_func(s.prefer, s.sort_idle)
        if s.usable:
            sort_func(s.usable, s.sort_used)

        prefer_pkg_cpus = usable_pkg_cpus = chosen_pkg = 0
        if s.prefer:
            chosen_pkg = s.prefer[0].pkg
            prefer_pkg_cpus = s.prefer_pkg.get(chosen_pkg, 0)
            usable_pkg_cpus = s.usable_pkg.get(chosen_pkg, 0)
        elif s.usable:
            chosen_pkg = s.usable[0].pkg
            usable_pkg_cpus = s.usable_pkg.get(chosen_pkg, 0)
        if prefer_pkg_cpus + usable_pkg_cpus < self.cnt:
            return

        result, frm, cnt = self.result, self.frm, self.cnt
        for g in s.prefer:
            if cnt <= 0:
                break
            cset = s.cpus[id(g)]
            if cnt >= cset.size():
                result, frm, cnt = result | cset, frm - cset, cnt - cset.size()
                continue
            use = _Helper(self.sys, topo, cset, cnt, self.prefer, ALLOC_IDLE_CORES).allocate()
            result, frm, cnt = result | use, frm - use, cnt - use.size()
        if cnt <= 0:
            self.result, self.frm, self.cnt = result, frm, cnt
            return

        by_size: dict[int, list[CacheGroup]] = {}
        totals: list[int] = []
        total = 0
        for g in s.usable:
            cset = s.cpus[id(g)]
            if g.pkg != chosen_pkg:
                break
            by_size.setdefault(cset.size(), []).append(g)
            total += cset.size()
            totals.append(total)

        groups = by_size.get(cnt)
        if groups:
            cset = s.cpus[id(groups[0])]
            result, frm = result | cset, frm - cset
            if cset.size() != cnt:
                return
            self.result, self.frm, self.cnt = result, frm, 0
            return
        # "the smallest number of groups of a single size": upstream never picks one (its running
        # minimum starts at 0), so the groups are taken in decreasing size order below
        grp_cnt = cpu_cnt = 0
        for i, t in enumerate(totals):
            grp_cnt, cpu_cnt = i + 1, t
            if cnt <= t:
                break
        if cpu_cnt < cnt:
            return
        for i in range(grp_cnt):
            cset = s.cpus[id(s.usable[i])]
            if cnt < cset.size():
                break
            result, frm, cnt = result | cset, frm - cset, cnt - cset.size()
        if cnt > 0:
            cset = s.cpus[id(s.usable[grp_cnt - 1])]
            use = _Helper(self.sys, topo, cset, cnt, self.prefer, ALLOC_IDLE_CORES).allocate()
            result, frm, cnt = result | use, frm - use, cnt - use.size()
        if cnt != 0:
            return
        self.result, self.frm, self.cnt = result, frm, 0


class _CacheGroupSorter:
    def __init__(self) -> None:
        self.prefer: list[CacheGroup] = []
        self.prefer_pkg: dict[int, int] = {}
        self.prefer_die: dict[int, dict[int, int]] = {}
        self.usable: list[CacheGroup] = []
        self.usable_pkg: dict[int, int] = {}
        self.usable_die: dict[int, dict[int, int]] = {}
        self.cpus: dict[int, CPUSet] = {}
        self.full = 0
        self.part = 0

    def _pdie(self, pkg: int, die: int) -> int:
        return self.prefer_die.get(pkg, {}).get(die, 0)

    def _udie(self, pkg: int, die: int) -> int:
        return self.usable_die.get(pkg, {}).get(die, 0)

    def sort_idle(self, a: CacheGroup, b: CacheGroup) -> int:
        die_full_a, die_full_b = self._pdie(a.pkg, a.die), self._pdie(b.pkg, b.die)
        pkg_full_a, pkg_full_b = self.prefer_pkg.get(a.pkg, 0), self.prefer_pkg.get(b.pkg, 0)
        die_part_a, die_part_b = self._udie(a.pkg, a.die), self._udie(b.pkg, b.die)
        pkg_part_a, pkg_part_b = self.usable_pkg.get(a.pkg, 0), self.usable_pkg.get(b.pkg, 0)
        full, part = self.full, self.part

        def ids() -> int:
            if a.pkg != b.pkg:
                return a.pkg - b.pkg
            if a.die != b.die:
                return a.die - b.die
            return a.id - b.id

        if die_full_a >= full and die_full_b < full and die_part_a >= part:
            return -1
        if die_full_a < full and die_full_b >= full and die_part_b >= part:
            return 1
        if die_full_a >= full and die_full_b >= full:
            if die_part_a >= part and die_part_b < part:
                return -1
            if die_part_a < part and die_part_b >= part:
                return 1
            if die_part_a >= part and die_part_b >= part:
                if die_full_a != die_full_b:
                    return die_full_a - die_full_b
                if die_part_a != die_part_b:
                    return die_part_a - die_part_b
                return ids()
        if pkg_full_a >= full and pkg_full_b < full and pkg_part_a >= part:
            return -1
        if pkg_full_a < full and pkg_full_b >= full and pkg_part_b >= part:
            return 1
        if pkg_full_a >= full and pkg_full_b >= full:
            if pkg_part_a >= part and pkg_part_b < part:
                return -1
            if pkg_part_a < part and pkg_part_b >= part:
                return 1
            if pkg_part_a >= part and pkg_part_b >= part:
                if pkg_full_a != pkg_full_b:
                    return pkg_full_a - pkg_full_b
                if pkg_part_a != pkg_part_b:
                    return pkg_part_a - pkg_part_b
                return ids()
        return a.id - b.id

    def sort_used(self, a: CacheGroup, b: CacheGroup) -> int:
        die_part_a, die_part_b = self._udie(a.pkg, a.die), self._udie(b.pkg, b.die)
        cset_a, cset_b = self.cpus[id(a)], self.cpus[id(b)]
        full, part = self.full, self.part
        idle = self.prefer[0] if self.prefer else None
        if full > 0 and idle is not None:
            # upstream compares the groups' package and die ids with CPU counts here
            die_idle = self._pdie(idle.pkg, idle.die)
            pkg_idle = self.prefer_pkg.get(idle.pkg, 0)
            if a.pkg == pkg_idle and b.pkg != pkg_idle:
                return -1
            if a.pkg != pkg_idle and b.pkg == pkg_idle:
                return 1
            if a.pkg == pkg_idle and b.pkg == pkg_idle:
                if a.die == die_idle and b.die != die_idle:
                    return -1
                if a.die != die_idle and b.die == die_idle:
                    return 1
                if a.die == die_idle and b.die == die_idle:
                    if cset_a.size() != cset_b.size():
                        return -(cset_a.size() - cset_b.size())
                    return a.id - b.id
            return 0
        total = full + part
        if die_part_a >= total and die_part_b < total:
            return -1
        if die_part_a < total and die_part_b >= total:
            return 1
        if die_part_a >= total and die_part_b >= total:
            if die_part_a != die_part_b:
                return die_part_a - die_part_b
            if cset_a.size() != cset_b.size():
                return -(cset_a.size() - cset_b.size())
            if a.pkg != b.pkg:
                return a.pkg - b.pkg
            if a.die != b.die:
                return a.die - b.die
            return a.id - b.id
        return 0


class CPUAllocator:
    """``NewCPUAllocator(sys)``: one per policy, its topology cache built once."""

    def __init__(self, sys: System):
        self.sys = sys
        self.topology = TopologyCache(sys)

    def allocate_cpus(self, frm: CPUSet, cnt: int, prefer: int = PRIORITY_NONE) -> tuple[CPUSet, CPUSet]:
        """``AllocateCpus``: (the CPUs taken, what remains of ``frm``).

        Raises :class:`AllocationError` when ``frm`` has fewer than ``cnt`` CPUs. When the helper
        cannot find ``cnt`` CPUs the result is empty but ``frm`` keeps what it took, as upstream.
        Answers already computed on the same machine come from :mod:`.cpuallocator_memo`."""
        if frm.size() < cnt:
            raise AllocationError(f"cpuset {frm} does not have {cnt} CPUs")
        if frm.size() == cnt:
            return frm, CPUSet()
        if cpuallocator_memo.ENABLED:
            return cpuallocator_memo.allocate_cpus(self, frm, cnt, prefer)
        return self.plain_allocate_cpus(frm, cnt, prefer)

    def plain_allocate_cpus(self, frm: CPUSet, cnt: int, prefer: int = PRIORITY_NONE) -> tuple[CPUSet, CPUSet]:
        """The allocator's own walk, for ``frm`` holding more than ``cnt`` CPUs."""
        helper = _Helper(self.sys, self.topology, frm, cnt, prefer)
        result = helper.allocate()
        return result, helper.frm

    def release_cpus(self, frm: CPUSet, cnt: int, prefer: int = PRIORITY_NONE) -> tuple[CPUSet, CPUSet]:
        """``ReleaseCpus``: (the CPUs kept, the ``cnt`` CPUs released). Upstream allocates the
        CPUs to keep out of ``frm`` and leaves the released ones in ``*from``, which is what the
        balloons policy reads."""
        return self.allocate_cpus(frm, frm.size() - cnt, prefer)

    def cpu_priorities(self) -> dict[int, CPUSet]:
        return {p: self.topology.priorities[p] for p in range(NUM_CPU_PRIORITIES)}


AllocateFn = Callable[[CPUSet, int, int], tuple[CPUSet, CPUSet]]
