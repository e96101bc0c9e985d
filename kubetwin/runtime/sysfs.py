"""The hardware as nri-plugins' ``sysfs.System`` sees it, built from a kubetwin :class:`Machine`.

The resource policies read the machine through ``pkg/sysfs``: packages, dies, clusters, NUMA
nodes with their distance rows and memory types, CPUs with thread siblings and caches,
isolated and offline CPUs, core kinds. This module derives each of those from the machine
description kubetwin already reads (cAdvisor MachineInfo, sysfs, hwloc, a spec), with the
same rules the plugin applies to sysfs:

* a NUMA node with CPUs holds DRAM; a memory-only node holds HBM when it is smaller than the
  average DRAM node, PMEM (CXL) otherwise (``discoverNodes``); every node with memory is
  taken as having normal (non-movable) memory, which MachineInfo cannot say otherwise;
* caches are ordered as sysfs indexes them (L1 data, L1 instruction, L2, L3) and a cache is
  shared by every CPU listing the same (level, type, id);
* a CPU's cluster is its L2 cache (what Linux reports as ``cluster_id`` on x86), else its core;
  dies: MachineInfo has none, so each package is one die (``die_id`` 0);
* all CPUs are online, performance cores of one base frequency (so every CPU is of normal
  priority); isolated CPUs are the kernel's ``isolcpus`` given by the caller.

Upstream: containers/nri-plugins v0.14.0 ``pkg/sysfs/system.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterable

from ..errors import InputError
from ..machine.model import Machine
from ..model.cpuset import CPUSet

DRAM, PMEM, HBM = "DRAM", "PMEM", "HBM"
PERFORMANCE_CORE, EFFICIENT_CORE = "P-core", "E-core"

_CACHE_TYPE_ORDER = {"Data": 0, "Instruction": 1, "Unified": 2}


@dataclass(frozen=True, slots=True)
class SysCache:
    """One cache as ``/sys/devices/system/cpu/cpuN/cache/indexM`` describes it."""

    id: int
    level: int
    type: str
    size: int
    cpus: CPUSet


@dataclass(slots=True)
class SysCPU:
    id: int
    package: int
    die: int
    cluster: int
    node: int
    core: int
    threads: CPUSet
    caches: tuple[SysCache, ...] = ()
    isolated: bool = False
    core_kind: str = PERFORMANCE_CORE

    def nth_level_cache_cpus(self, level: int) -> CPUSet:
        """``GetNthLevelCacheCPUSet``: CPUs sharing this CPU's caches of ``level``."""
        if not self.caches:
            return self.threads
        out = CPUSet()
        for c in self.caches:
            if c.level == level:
                out = out | c.cpus
            elif c.level > level:
                break
        return out


@dataclass(slots=True)
class SysNode:
    id: int
    cpus: CPUSet
    distance: tuple[int, ...]
    memory: int
    memory_type: str = DRAM
    normal_memory: bool = True
    package: int = 0
    die: int = 0

    def distance_from(self, other: int) -> int:
        return self.distance[other] if 0 <= other < len(self.distance) else -1


@dataclass(slots=True)
class SysPackage:
    id: int
    cpus: CPUSet = field(default_factory=CPUSet)
    nodes: set[int] = field(default_factory=set)
    dies: set[int] = field(default_factory=set)
    die_cpus: dict[int, CPUSet] = field(default_factory=dict)
    die_nodes: dict[int, set[int]] = field(default_factory=dict)
    cluster_cpus: dict[int, dict[int, CPUSet]] = field(default_factory=dict)
    logical_clusters: dict[int, dict[int, CPUSet]] = field(default_factory=dict)
    l3_cache_cpus: dict[int, CPUSet] = field(default_factory=dict)

    def node_ids(self) -> list[int]:
        return sorted(self.nodes)

    def die_ids(self) -> list[int]:
        return sorted(self.dies)

    def die_node_ids(self, die: int) -> list[int]:
        return sorted(self.die_nodes.get(die, ()))

    def die_cpuset(self, die: int) -> CPUSet:
        return self.die_cpus.get(die, CPUSet())

    def die_cluster_ids(self, die: int) -> list[int]:
        return sorted(self.cluster_cpus.get(die, {}))

    def logical_die_cluster_ids(self, die: int) -> list[int]:
        return sorted(self.logical_clusters.get(die, {}))

    def logical_die_cluster_cpuset(self, die: int, cluster: int) -> CPUSet:
        return self.logical_clusters.get(die, {}).get(cluster, CPUSet())

    def l3_cache_ids(self) -> list[int]:
        return sorted(self.l3_cache_cpus)

    def l3_cache_cpuset(self, cache_id: int) -> CPUSet:
        return self.l3_cache_cpus.get(cache_id, CPUSet())


NodeFilter = Callable[[SysNode], bool]


class System:
    """What the policies ask ``sysfs.System``; immutable after construction."""

    def __init__(self, machine: Machine, isolated: CPUSet = CPUSet()):
        self.machine = machine
        self.cpus: dict[int, SysCPU] = {}
        self.nodes: dict[int, SysNode] = {}
        self.packages: dict[int, SysPackage] = {}
        self._discover_cpus(machine, isolated)
        self._discover_nodes(machine)
        self._discover_packages()
        for pkg in self.packages.values():
            for nid in pkg.node_ids():
                self.nodes[nid].package = pkg.id
            for die in pkg.die_ids():
                for nid in pkg.die_node_ids(die):
                    self.nodes[nid].die = die
        unknown = isolated - self.cpu_set
        if unknown:
            raise InputError(f"isolated CPUs {unknown} are not CPUs of the machine", path="isolcpus")
        self.isolated = isolated

    # --- discovery -----------------------------------------------------------------------------
    def _discover_cpus(self, machine: Machine, isolated: CPUSet) -> None:
        groups: dict[tuple[int, str, int], int] = {}
        sizes: dict[tuple[int, str, int], int] = {}
        listed: dict[int, list[tuple[int, str, int]]] = {}
        for node in machine.nodes:
            for core in node.cores:
                threads = CPUSet(core.threads)
                keys = []
                for c in (*core.caches, *core.uncore_caches, *node.caches):
                    key = (c.level, c.type, c.id)
                    if key in keys:
                        continue
                    keys.append(key)
                    groups[key] = groups.get(key, 0) | threads.mask
                    sizes[key] = c.size
                keys.sort(key=lambda k: (k[0], _CACHE_TYPE_ORDER.get(k[1], 3), k[2]))
                l2 = next((k[2] for k in keys if k[0] == 2), None)
                for t in core.threads:
                    listed[t] = keys
                    self.cpus[t] = SysCPU(id=t, package=core.socket_id, die=0,
                                          cluster=l2 if l2 is not None else min(core.threads),
                                          node=node.id, core=core.core_id, threads=threads,
                                          isolated=t in isolated)
        for t, keys in listed.items():
            self.cpus[t].caches = tuple(SysCache(k[2], k[0], k[1], sizes[k], CPUSet.from_mask(groups[k]))
                                        for k in keys)

    def _discover_nodes(self, machine: Machine) -> None:
        ids = [n.id for n in machine.nodes]
        if sorted(ids) != list(range(len(ids))):
            raise InputError(f"NUMA node ids {sorted(ids)} are not 0..{len(ids) - 1}", path="topology",
                             fix="the NUMA distance rows are indexed by node id, as sysfs lists them")
        for n in machine.nodes:
            dist = tuple(n.distances)
            if not dist and len(ids) == 1:
                dist = (10,)
            if len(dist) != len(ids):
                raise InputError(f"NUMA node {n.id} has {len(dist)} distances for {len(ids)} nodes",
                                 path=f"topology[{ids.index(n.id)}].distances",
                                 fix="give each node's row of the NUMA distance matrix, as sysfs nodeN/distance")
            self.nodes[n.id] = SysNode(id=n.id, cpus=n.cpus, distance=dist, memory=n.memory)
        cpu_nodes = {i for i, n in self.nodes.items() if n.cpus}
        mem_nodes = {i for i, n in self.nodes.items() if n.memory > 0}
        no_mem = set(self.nodes) - mem_nodes
        special = mem_nodes - cpu_nodes
        dram_avg = 0
        if special and cpu_nodes:
            dram_cnt = len(cpu_nodes) - len(no_mem)
            if dram_cnt <= 0:
                raise InputError("no DRAM nodes in the machine, cannot determine memory types", path="topology")
            dram_avg = sum(self.nodes[i].memory for i in cpu_nodes) // dram_cnt
            if dram_avg == 0:
                raise InputError("no DRAM in the machine, cannot determine special memory types", path="topology")
        for i, node in self.nodes.items():
            if i in special:
                node.memory_type = HBM if node.memory < dram_avg else PMEM
            elif i in cpu_nodes:
                node.memory_type = DRAM
            else:
                raise InputError(f"NUMA node {i} has neither CPUs nor memory: unknown memory type",
                                 path="topology", fix="nri-resource-policy refuses to start on such a machine")
            node.normal_memory = node.memory > 0
        for a in self.nodes.values():
            for b in self.nodes.values():
                if a.id != b.id and a.distance[b.id] != b.distance[a.id]:
                    avg = (a.distance[b.id] + b.distance[a.id]) // 2
                    a.distance = a.distance[:b.id] + (avg,) + a.distance[b.id + 1:]
                    b.distance = b.distance[:a.id] + (avg,) + b.distance[a.id + 1:]

    def _discover_packages(self) -> None:
        for cpu in self.cpus.values():
            pkg = self.packages.get(cpu.package)
            if pkg is None:
                pkg = self.packages[cpu.package] = SysPackage(cpu.package)
            pkg.cpus = pkg.cpus | CPUSet((cpu.id,))
            pkg.nodes.add(cpu.node)
            pkg.dies.add(cpu.die)
            pkg.die_cpus[cpu.die] = pkg.die_cpus.get(cpu.die, CPUSet()) | CPUSet((cpu.id,))
            pkg.die_nodes.setdefault(cpu.die, set()).add(cpu.node)
            clusters = pkg.cluster_cpus.setdefault(cpu.die, {})
            clusters[cpu.cluster] = clusters.get(cpu.cluster, CPUSet()) | CPUSet((cpu.id,))
        for pkg in self.packages.values():
            for die, clusters in pkg.cluster_cpus.items():
                logical: dict[int, CPUSet] = {}
                ht_clusters = False
                all_ht = CPUSet()
                for cluster, cpus in clusters.items():
                    first = self.cpus[cpus.first()]
                    if cpus == first.threads:
                        ht_clusters = True
                        all_ht = all_ht | first.threads
                    else:
                        logical[cluster] = cpus
                if ht_clusters:
                    logical[self.cpus[all_ht.first()].cluster] = all_ht
                pkg.logical_clusters[die] = logical
            for cid in pkg.cpus:
                for cache in self.cpus[cid].caches:
                    if cache.level != 3:
                        continue
                    pkg.l3_cache_cpus.setdefault(cache.id, cache.cpus)
                    break

    # --- queries -------------------------------------------------------------------------------
    @cached_property
    def cpu_set(self) -> CPUSet:
        return CPUSet(self.cpus)

    def package_ids(self) -> list[int]:
        return sorted(self.packages)

    def node_ids(self) -> list[int]:
        return sorted(self.nodes)

    def cpu_ids(self) -> list[int]:
        return sorted(self.cpus)

    def socket_count(self) -> int:
        return len(self.packages)

    def package(self, pid: int) -> SysPackage:
        return self.packages[pid]

    def node(self, nid: int) -> SysNode:
        return self.nodes[nid]

    def cpu(self, cid: int) -> SysCPU:
        return self.cpus[cid]

    @property
    def online_cpus(self) -> CPUSet:
        return self.cpu_set

    @property
    def offline_cpus(self) -> CPUSet:
        return CPUSet()

    def core_kinds(self) -> list[str]:
        return [PERFORMANCE_CORE]

    def core_kind_cpus(self, kind: str) -> CPUSet:
        return self.cpu_set if kind == PERFORMANCE_CORE else CPUSet()

    def node_distance(self, a: int, b: int) -> int:
        return self.nodes[a].distance_from(b)

    def filter_nodes(self, ids: Iterable[int], *filters: NodeFilter) -> set[int]:
        return {i for i in ids if i in self.nodes and all(f(self.nodes[i]) for f in filters)}

    def closest_nodes(self, nid: int, *filters: NodeFilter) -> list[set[int]]:
        """``ClosestNodes``: the other nodes passing the filters, grouped by increasing distance."""
        node = self.nodes.get(nid)
        if node is None:
            return []
        by_dist: dict[int, set[int]] = {}
        for other, dist in enumerate(node.distance):
            if other == nid or other not in self.nodes:
                continue
            if not all(f(self.nodes[other]) for f in filters):
                continue
            by_dist.setdefault(dist, set()).add(other)
        return [by_dist[d] for d in sorted(by_dist)]

    def single_thread_for_cpus(self, cpus: CPUSet) -> CPUSet:
        """``SingleThreadForCPUs``: the smallest CPU of each core the set touches."""
        out: list[int] = []
        handled: set[int] = set()
        for c in cpus:
            if c in handled:
                continue
            handled.add(c)
            out.append(c)
            handled.update(self.cpus[c].threads)
        return CPUSet(out)

    def node_hint_to_cpus(self, nodes: str) -> str:
        try:
            ids = CPUSet.parse(nodes)
        except InputError:
            return ""
        out = CPUSet()
        for i in ids:
            if i in self.nodes:
                out = out | self.nodes[i].cpus
        return str(out & self.online_cpus)

    def cpus_of_nodes(self, ids: Iterable[int]) -> CPUSet:
        out = CPUSet()
        for i in ids:
            out = out | self.nodes[i].cpus
        return out


# node filters (``system.NodeOfDRAMType`` & co.)
def node_of_type(kind: str) -> NodeFilter:
    return lambda n: n.memory_type == kind


NODE_OF_DRAM = node_of_type(DRAM)
NODE_OF_PMEM = node_of_type(PMEM)
NODE_OF_HBM = node_of_type(HBM)


def NODE_HAS_MEMORY(n: SysNode) -> bool:  # noqa: N802 - upstream's name
    return n.memory > 0


def NODE_HAS_LOCAL_CPUS(n: SysNode) -> bool:  # noqa: N802
    return not n.cpus.is_empty()


def NODE_HAS_NO_LOCAL_CPUS(n: SysNode) -> bool:  # noqa: N802
    return n.cpus.is_empty()
