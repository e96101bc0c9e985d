"""The balloons policy's CPU tree and the tree allocator that picks where a balloon grows or shrinks.

The tree is system → package → die → NUMA node → L2 cache → core → thread, built from the
machine. When a balloon inflates by ``delta`` CPUs the allocator narrows the free CPUs to one
branch: the deepest branch with room for ``delta`` CPUs, ranked by how many of the balloon's
CPUs each level above already holds (more first), then by free CPUs per level (more first with
``allocatorTopologyBalancing``, which spreads balloons, fewer first without it, which packs them),
then by name. Deflating picks the
branch with the fewest balloon CPUs and the fewest free CPUs. CPUs close to preferred
(virtual) devices are kept or taken first. The generic CPU allocator then picks the CPUs from
the returned set.

Not modelled (refused by the policy's configuration check): ``preferSpreadOnPhysicalCores``
(the tree split by hyperthread index), load classes (devices updated on every CPU) and real
device hints (``preferCloseToDevices`` other than the reserved CPUs).

Upstream: containers/nri-plugins v0.14.0 ``cmd/plugins/balloons/policy/cputree.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Callable, TypeVar

from ....model.cpuset import CPUSet
from ...sysfs import System
from . import cputree_memo

LEVEL_SYSTEM = "system"
LEVEL_PACKAGE = "package"
LEVEL_DIE = "die"
LEVEL_NUMA = "numa"
LEVEL_L2CACHE = "l2cache"
LEVEL_CORE = "core"
LEVEL_THREAD = "thread"


class TreeError(Exception):
    """A resize the tree cannot do (not enough free or current CPUs)."""


@dataclass(eq=False)
class CpuTreeNode:
    name: str
    level: str
    parent: "CpuTreeNode | None" = None
    children: list["CpuTreeNode"] = field(default_factory=list)
    cpus: CPUSet = field(default_factory=CPUSet)

    def add_child(self, child: "CpuTreeNode") -> "CpuTreeNode":
        child.parent = self
        self.children.append(child)
        return child

    def add_cpus(self, cpus: CPUSet) -> None:
        node: CpuTreeNode | None = self
        while node is not None:
            node.cpus = node.cpus | cpus
            node = node.parent

    def walk(self, handler: Callable[["CpuTreeNode"], bool]) -> None:
        """Depth first; ``handler`` returning False skips the node's children."""
        if not handler(self):
            return
        for child in self.children:
            child.walk(handler)


def cpu_tree_from_system(sys: System) -> CpuTreeNode:
    """``NewCpuTreeFromSystem``: node names as upstream (``p0d0n0``, ``p0d0n0$3``, ``p0d0n0cpu6t7``)."""
    root = CpuTreeNode("system", LEVEL_SYSTEM)
    for pid in sorted(sys.packages):
        pkg = sys.packages[pid]
        ptree = root.add_child(CpuTreeNode(f"p{pid}", LEVEL_PACKAGE))
        for die in pkg.die_ids():
            dtree = ptree.add_child(CpuTreeNode(f"{ptree.name}d{die}", LEVEL_DIE))
            for nid in pkg.die_node_ids(die):
                ntree = dtree.add_child(CpuTreeNode(f"{dtree.name}n{nid}", LEVEL_NUMA))
                l2s: dict[tuple[int, str], CPUSet] = {}
                for cpu in sys.nodes[nid].cpus:
                    for cache in sys.cpus[cpu].caches:
                        if cache.level == 2:
                            l2s[(cache.id, cache.type)] = cache.cpus
                # upstream walks a Go map here: child order is arbitrary and never decides
                # anything (ties are broken by name)
                for (cid, _), shared in sorted(l2s.items()):
                    ltree = ntree.add_child(CpuTreeNode(f"{ntree.name}${cid}", LEVEL_L2CACHE))
                    seen: set[int] = set()
                    for cpu in shared:
                        if cpu in seen or cpu not in sys.cpus:
                            continue
                        ctree = ltree.add_child(CpuTreeNode(f"{ntree.name}cpu{cpu}", LEVEL_CORE))
                        for thread in sys.cpus[cpu].threads:
                            seen.add(thread)
                            ttree = ctree.add_child(CpuTreeNode(f"{ctree.name}t{thread}", LEVEL_THREAD))
                            ttree.add_cpus(CPUSet([thread]))
    return root


@dataclass(slots=True)
class _Attrs:
    """``cpuTreeNodeAttributes``."""

    t: CpuTreeNode
    depth: int
    current: CPUSet
    free: CPUSet
    current_counts: tuple[int, ...]
    free_counts: tuple[int, ...]


def _attributed(root: CpuTreeNode, current: CPUSet, free: CPUSet,
                keep: Callable[[_Attrs], bool]) -> list[_Attrs]:
    out: list[_Attrs] = []

    def visit(t: CpuTreeNode, depth: int, cc: tuple[int, ...], fc: tuple[int, ...]) -> None:
        cur, fr = t.cpus & current, t.cpus & free
        a = _Attrs(t, depth, cur, fr, cc + (cur.size(),), fc + (fr.size(),))
        if not keep(a):
            return
        out.append(a)
        for child in t.children:
            visit(child, depth + 1, a.current_counts, a.free_counts)

    visit(root, 0, (), ())
    return out


_Ordered = TypeVar("_Ordered", int, str)


def _cmp(a: _Ordered, b: _Ordered) -> int:
    return (a > b) - (a < b)


class CpuTreeAllocator:
    """``cpuTreeAllocator`` of one balloon.

    ``close``: for each device to be close to, in priority order, its CPU sets (the reserved
    CPUs' virtual device for the reserved balloon); ``far``: the same for devices to keep away
    from (the reserved and isolated CPUs for the other balloons)."""

    def __init__(self, root: CpuTreeNode, topology_balancing: bool,
                 close: list[list[CPUSet]] | None = None, far: list[list[CPUSet]] | None = None):
        self.root = root
        self.topology_balancing = topology_balancing
        self.close = [sets for sets in (close or []) if sets]
        self.far = list(far or [])

    def resize_cpus(self, current: CPUSet, free: CPUSet, delta: int) -> tuple[CPUSet, CPUSet]:
        """``ResizeCpus``: (free CPUs to add ``delta`` from, current CPUs to remove ``-delta`` from)."""
        # resizeCpusOnlyIfNecessary
        if delta == 0:
            return CPUSet(), CPUSet()
        if delta > 0:
            if free.size() < delta:
                raise TreeError(f"not enough free CPUs ({free.size()}) to resize current CPU set from "
                                f"{current.size()} to {current.size() + delta} CPUs")
            if free.size() == delta:
                return free, CPUSet()
        else:
            if current.size() < -delta:
                raise TreeError(f"not enough current CPUs ({current.size()}) to release {-delta} CPUs")
            if current.size() == -delta:
                return CPUSet(), current
        if cputree_memo.ENABLED:   # the same resize on the same tree: answered before
            return cputree_memo.resize(self, current, free, delta)
        return self._with_devices(current, free, delta)

    def _with_devices(self, current: CPUSet, free: CPUSet, delta: int) -> tuple[CPUSet, CPUSet]:
        """``resizeCpusWithDevices``."""
        hinted = list(self.close)
        for sets in self.far:
            for far in sets:
                hinted.append([free - far])
        if not hinted:
            return self._one_at_a_time(current, free, delta)
        if delta > 0:
            remaining = free
            for sets in hinted:
                for cpus in sets:
                    narrowed = remaining & cpus
                    if narrowed.size() >= delta:
                        remaining = narrowed
            return self._one_at_a_time(current, remaining, delta)
        n = len(hinted)
        hints: dict[int, int] = {}
        for prio, sets in enumerate(hinted):
            for cpus in sets:
                for cpu in cpus & current:
                    hints[cpu] = hints.get(cpu, 0) + (1 << (n - 1 - prio))
        # Go's sort.Slice over an unsorted list is not stable; CPUs with equal hints are
        # equivalent here, since all of them with the deciding value go to the next resizer
        least = sorted(current, key=lambda c: hints.get(c, 0))
        max_hints = hints.get(least[-delta], 0)
        sure: list[int] = []
        maybe: list[int] = []
        for cpu in least:
            h = hints.get(cpu, 0)
            if h > max_hints:
                break
            (sure if h < max_hints else maybe).append(cpu)
        sure_set = CPUSet(sure)
        _, from_maybe = self._one_at_a_time(CPUSet(maybe), free, delta + len(sure))
        for cpu in from_maybe:
            if sure_set.size() >= -delta:
                break
            sure_set = sure_set | CPUSet([cpu])
        return free, sure_set

    def _one_at_a_time(self, current: CPUSet, free: CPUSet, delta: int) -> tuple[CPUSet, CPUSet]:
        """``resizeCpusOneAtATime`` (without ``preferSpreadOnPhysicalCores``)."""
        if delta > 0:
            return self._max_local_set(current, free, delta)
        remove = CPUSet()
        for _ in range(-delta):
            _, single = self._max_local_set(current, free, -1)
            if single.size() != 1:
                raise TreeError(f"internal error: failed to find single cpu to free, currentCpus={current} "
                                f"freeCpus={free} expectedSingle={single}")
            remove = remove | single
            current = current - single
            free = free | single
        return CPUSet(), remove

    def _max_local_set(self, current: CPUSet, free: CPUSet, delta: int) -> tuple[CPUSet, CPUSet]:
        """``resizeCpusMaxLocalSet``: the best branch's free / current CPUs."""
        if delta > 0:
            tnas = _attributed(self.root, current, free, lambda a: a.free.size() >= delta)
            tnas.sort(key=cmp_to_key(self._allocate_order))
        else:
            tnas = _attributed(self.root, current, free, lambda a: a.current.size() + delta >= 0)
            tnas.sort(key=cmp_to_key(self._release_order))
        if not tnas:
            raise TreeError("not enough free CPUs")
        best = tnas[0]
        # resizeCpusNow: every CPU of the branch is as good as the others
        return best.free, best.current

    def _allocate_order(self, a: _Attrs, b: _Attrs) -> int:
        """``sorterAllocate``: negative when ``a`` is the better place to add CPUs."""
        if a.depth != b.depth:
            return -_cmp(a.depth, b.depth)
        for x, y in zip(a.current_counts, b.current_counts):
            if x != y:
                return -_cmp(x, y)
        for x, y in zip(a.free_counts, b.free_counts):
            if x != y:
                return -_cmp(x, y) if self.topology_balancing else _cmp(x, y)
        return _cmp(a.t.name, b.t.name)

    def _release_order(self, a: _Attrs, b: _Attrs) -> int:
        """``sorterRelease``: negative when ``a`` is the better place to remove CPUs."""
        if a.depth != b.depth:
            return -_cmp(a.depth, b.depth)
        for x, y in zip(a.current_counts, b.current_counts):
            if x != y:
                return _cmp(x, y)
        for x, y in zip(a.free_counts, b.free_counts):
            if x != y:
                return _cmp(x, y)
        return -_cmp(a.t.name, b.t.name)


def cpus_in_level(root: CpuTreeNode, level: str, balloon_cpus: CPUSet, candidates: CPUSet) -> CPUSet:
    """The ``candidates`` in the ``level`` branches holding any of ``balloon_cpus``
    (``shareIdleCpus``' walk)."""
    out = CPUSet()

    def visit(t: CpuTreeNode) -> bool:
        nonlocal out
        if t.level != level:
            return True
        if t.cpus & balloon_cpus:
            out = out | (t.cpus & candidates)
        return False

    root.walk(visit)
    return out
