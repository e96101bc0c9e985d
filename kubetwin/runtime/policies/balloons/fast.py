"""Fast paths of the balloons policy, kept apart from the plain code in :mod:`.policy` and
:mod:`.cputree` (which read against nri-plugins' ``cmd/plugins/balloons``).

``simulate`` runs the balloons policy on thousands of nodes; per container creation the plain
policy spends most of its time in the tree allocator (``resizeCpusMaxLocalSet``: one attributed
node per tree node, every one a pair of CPU sets, then a sort by a comparison function) and in
linear walks over balloons and their containers. What is here gives the same answers:

* :class:`FlatTree`: the CPU tree once as flat tuples, level by level: each node's CPU mask,
  parent, children and name's rank. The best branch of ``resizeCpusMaxLocalSet`` is then the
  first minimum over the nodes with room at the deepest level that has any, by the key the
  plain comparison spells (the plain sort is stable and its first element is the minimum, the
  first in pre-order among equals): its count vectors (root first) compared top down, keeping
  at each level only the candidates' ancestors with the best count — a few nodes per level,
  not every node of the tree. Answers are remembered per (balancing, delta, current CPUs, free
  CPUs): a pure function of the tree, shared by every node built from it.
* :class:`FastCpuTreeAllocator`: the plain allocator with that search; it never changes after
  it is made, so copies of a runtime node share it.
* :class:`RememberingCPUAllocator`: the CPU allocator's answers remembered per (CPUs to pick
  from, count, priority) — a pure function of the machine — and shared by copies of a node.
* :class:`MachineTexts`: cpuset texts, local memory nodes, one hyperthread per core and
  memset texts by mask, for pinning containers (every container of a balloon is pinned again
  whenever the balloon or the idle CPUs it shares change) and for reports.
* :class:`FastBalloonsPolicy`: the plain policy with those allocators and texts, the idle CPUs
  of a level read off the flat tree, and a namespace's match against a type's patterns
  remembered.
* Pinning through :mod:`.fastpin` (texts once per balloon); the fill-method chain on each
  balloon's requests summed once per placement (:data:`REMEMBER_REQUESTS`); the tree search on
  CPU masks where the tree nests and its levels are disjoint (:data:`SEARCH_MASKS`), cut at
  its NUMA nodes with each one's best branch remembered per its own CPUs (:mod:`.treesplit`).

``ENABLED`` (False: the plain policy) is for equivalence tests and A/B runs;
``tests/runtime/policies/balloons/test_fast.py`` holds the fast answers against the plain ones.

Upstream: containers/nri-plugins v0.14.0 ``cmd/plugins/balloons/policy/cputree.go``
(``resizeCpusMaxLocalSet``, ``sorterAllocate``, ``sorterRelease``) and
``balloons-policy.go``, modelled plainly in :mod:`.cputree` and :mod:`.policy`.
"""

from __future__ import annotations

import functools
from typing import Any

from ....model.cpuset import CPUSet
from ...config import BalloonsConfig
from ...cpuallocator import PRIORITY_NONE, CPUAllocator
from ...libmem import memset_string
from ...resmgr.cache import Cache, CachedContainer
from ...resmgr.expression import KEY_NAMESPACE, KEY_QOS_CLASS
from ...sysfs import System
from . import fastalloc, fastpin, treekernel, treesplit
from .cputree import CpuTreeAllocator, CpuTreeNode, TreeError
from .policy import (
    BALLOON_KEY,
    NO_LIMIT,
    Balloon,
    BalloonDef,
    BalloonsPolicy,
    _namespace_matches,
)

#: the fast policy (False: :func:`new_policy` gives the plain one, for equivalence tests and A/B runs)
ENABLED = True

#: the fill-method chain with each balloon's requested mCPU summed once (False: every time, as
#: the plain policy; for equivalence tests and A/B runs)
REMEMBER_REQUESTS = True

#: the tree search on CPU masks (False: on node positions; for equivalence tests and A/B runs)
SEARCH_MASKS = True

#: a container's placement asked before the map of every container's is made: found alone (False:
#: the map made at the first ask; for equivalence tests and A/B runs)
LONE_PLACEMENT = True

#: remembered answers per tree before the table starts afresh
MAX_ANSWERS = 1 << 16


class FlatTree:
    """A CPU tree as flat tuples, level by level (nodes of one depth in the plain walk's
    pre-order), and the answers of ``resizeCpusMaxLocalSet`` found on it."""

    __slots__ = ("root", "masks", "sizes", "children", "lows", "widths", "ranks", "answers", "branches", "unions",
                 "nested", "only_child", "split", "kernel")

    def __init__(self, root: CpuTreeNode):
        masks: list[list[int]] = []
        parents: list[list[int]] = []
        names: list[list[str]] = []

        def visit(t: CpuTreeNode, depth: int, parent: int) -> None:
            if len(masks) == depth:
                masks.append([])
                parents.append([])
                names.append([])
            k = len(masks[depth])
            masks[depth].append(t.cpus.mask)
            parents[depth].append(parent)
            names[depth].append(t.name)
            for child in t.children:
                visit(child, depth + 1, k)

        visit(root, 0, -1)
        self.root = root
        #: per depth: each node's CPU mask, the position of its parent one level up, its name's
        #: rank among all names (equal names share a rank: the plain comparison finds them equal)
        self.masks = tuple(tuple(level) for level in masks)
        #: per depth: the CPU count of its largest node
        self.sizes = tuple(max(m.bit_count() for m in level) for level in masks)
        #: per depth: each node's children's positions one level down
        kids: list[list[list[int]]] = [[[] for _ in level] for level in masks]
        for depth in range(1, len(masks)):
            for k, p in enumerate(parents[depth]):
                kids[depth - 1][p].append(k)
        self.children = tuple(tuple(tuple(c) for c in level) for level in kids)
        # per depth D, per depth d <= D, per node of d: the positions of its descendants at D,
        # consecutive in pre-order — the first, and a mask of as many bits as there are
        lows: list[tuple[tuple[int, ...], ...]] = []
        widths: list[tuple[tuple[int, ...], ...]] = []
        for deep in range(len(masks)):
            lo, hi = list(range(len(masks[deep]))), list(range(1, len(masks[deep]) + 1))
            los, his = [lo], [hi]
            for d in range(deep - 1, -1, -1):
                below = kids[d]
                lo = [min((lo[c] for c in below[k]), default=0) for k in range(len(masks[d]))]
                hi = [max((hi[c] for c in below[k]), default=0) for k in range(len(masks[d]))]
                los.append(lo)
                his.append(hi)
            los.reverse()
            his.reverse()
            lows.append(tuple(tuple(level) for level in los))
            widths.append(tuple(tuple((1 << max(0, h - b)) - 1 for b, h in zip(lv, hv)) for lv, hv in zip(los, his)))
        self.lows, self.widths = tuple(lows), tuple(widths)
        ordered = sorted({n for level in names for n in level})
        rank = {n: r for r, n in enumerate(ordered)}
        self.ranks = tuple(tuple(rank[n] for n in level) for level in names)
        self.answers: dict[tuple[bool, int, int, int], int] = {}
        self.branches: dict[str, tuple[int, ...]] = {}
        #: per depth: the CPUs of its nodes
        self.unions = tuple(_union(level) for level in self.masks)
        #: the tree nests (each node's CPUs within its parent's) and the nodes of a depth are
        #: disjoint: a node then holds a node of a deeper level iff their CPUs meet, and the
        #: search reads candidates as CPU masks (:meth:`_search_masks`)
        self.nested = all(sum(m.bit_count() for m in level) == u.bit_count() for level, u in zip(self.masks, self.unions)) \
            and all(level[k] & ~self.masks[d - 1][p] == 0 for d, level in enumerate(self.masks) if d
                    for k, p in enumerate(parents[d]))
        #: per depth: every node of it is the only child of its parent, with the parent's CPUs
        #: (an L2 cache of one core): its counts are its parent's, so a search keeps them all
        self.only_child = tuple(d > 0 and all(len(kids[d - 1][p]) == 1 and level[k] == masks[d - 1][p]
                                              for k, p in enumerate(parents[d]))
                                for d, level in enumerate(masks))
        #: the tree cut at its NUMA nodes, their answers remembered (:mod:`.treesplit`; None: not split)
        self.split = treesplit.split_tree(self)
        #: the tree for the C search (:mod:`.treekernel`; None: not built here, or a tree that does not nest)
        self.kernel = treekernel.build(self)

    def level_branches(self, level: str) -> tuple[int, ...]:
        """The CPU masks of the ``level`` nodes the plain walk of ``cpus_in_level`` stops at."""
        got = self.branches.get(level)
        if got is None:
            found: list[int] = []

            def visit(t: CpuTreeNode) -> bool:
                if t.level != level:
                    return True
                found.append(t.cpus.mask)
                return False

            self.root.walk(visit)
            got = self.branches[level] = tuple(found)
        return got

    def cpus_in_level(self, level: str, balloon_cpus: CPUSet, candidates: CPUSet) -> CPUSet:
        """``cpus_in_level`` of :mod:`.cputree` on the masks of the level's branches."""
        return CPUSet.from_mask(self.idle_in_level(level, balloon_cpus.mask, candidates.mask))

    def idle_in_level(self, level: str, have: int, candidates: int) -> int:
        """:meth:`cpus_in_level` on masks."""
        out = 0
        for m in self.level_branches(level):
            if m & have:
                out |= m & candidates
        return out

    def best(self, balancing: bool, current: int, free: int, delta: int) -> int:
        """The mask of the branch ``resizeCpusMaxLocalSet`` picks (``delta`` > 0: to add CPUs
        from, else to remove CPUs from); TreeError when no branch has room. With the C search
        (:mod:`.treekernel`) asked at once: nothing remembered."""
        kernel = self.kernel
        if kernel is not None and treekernel.ENABLED and SEARCH_MASKS:
            branch = treekernel.search(kernel, balancing, current, free, delta)
            if branch < 0:
                raise TreeError("not enough free CPUs")
            return branch
        key = (balancing, delta, current, free)
        got = self.answers.get(key)
        if got is None:
            got = self._search(balancing, current, free, delta)
            if len(self.answers) >= MAX_ANSWERS:
                self.answers.clear()
            self.answers[key] = got
        if got < 0:
            raise TreeError("not enough free CPUs")
        return got

    def _search(self, balancing: bool, current: int, free: int, delta: int) -> int:
        if SEARCH_MASKS and self.nested:
            if treesplit.ENABLED and self.split is not None:
                return self.split.search(balancing, current, free, delta)
            return self._search_masks(balancing, current, free, delta)
        return self._search_positions(balancing, current, free, delta)

    def _search_masks(self, balancing: bool, current: int, free: int, delta: int) -> int:
        """:meth:`_search_positions` with the candidates as CPU masks: the deepest level with
        room, and a node with a candidate below it is one that meets their CPUs (the tree
        nests, each level's nodes are disjoint); with one CPU to find, a node of the level
        has room iff it holds one of the CPUs, so their CPUs stand for the candidates."""
        masks = self.masks
        need, within = (delta, free) if delta > 0 else (-delta, current)
        depth = len(masks) - 1
        sizes, unions = self.sizes, self.unions
        while depth >= 0:
            if sizes[depth] >= need:
                if need == 1:
                    cand = within & unions[depth]
                else:
                    cand = 0
                    for m in masks[depth]:
                        if (m & within).bit_count() >= need:
                            cand |= m
                if cand:
                    break
            depth -= 1
        else:
            return -1
        if delta > 0:
            cand = self._best_masks(cand, depth, current, True)
            keep = self._best_nodes(cand, depth, free, balancing)
            ranks = self.ranks[depth]
            return masks[depth][min(keep, key=ranks.__getitem__)]
        cand = self._best_masks(cand, depth, current, False)
        keep = self._best_nodes(cand, depth, free, False)
        ranks = self.ranks[depth]
        return masks[depth][max(keep, key=ranks.__getitem__)]

    def _best_masks(self, cand: int, depth: int, cpus: int, most: bool) -> int:
        """:meth:`_best_nodes` as the CPUs of the nodes kept (all of ``cand`` when every count is zero)."""
        if cpus == 0:
            return cand
        level = self.masks[depth]
        out = 0
        for k in self._best_nodes(cand, depth, cpus, most):
            out |= level[k]
        return out

    def _best_nodes(self, cand: int, depth: int, cpus: int, most: bool) -> list[int]:
        """The nodes at ``depth`` meeting ``cand`` whose vector of counts of ``cpus`` (root
        first) is the largest (``most``) or the smallest: :meth:`_best_vectors` on masks."""
        masks, children, only_child = self.masks, self.children, self.only_child
        keep = [0]
        for d in range(1, depth + 1):
            below = children[d - 1]
            if only_child[d]:   # each kept node's one child, equal to it: meets ``cand``, same counts
                keep = [below[p][0] for p in keep]
                continue
            level = masks[d]
            kids = [k for p in keep for k in below[p] if level[k] & cand]
            if len(kids) > 1 and cpus:
                counts = [(level[k] & cpus).bit_count() for k in kids]
                best = max(counts) if most else min(counts)
                keep = [k for k, n in zip(kids, counts) if n == best]
            else:
                keep = kids
        return keep

    def _search_positions(self, balancing: bool, current: int, free: int, delta: int) -> int:
        masks = self.masks
        # a node has room when it has ``delta`` free CPUs (or ``-delta`` current ones); its
        # ancestors then have too, so the plain walk (which skips the subtree of a node without
        # room) attributes exactly the nodes with room, and its sort puts the deepest first
        need, within = (delta, free) if delta > 0 else (-delta, current)
        depth = len(masks) - 1
        sizes = self.sizes
        while depth >= 0:
            if sizes[depth] >= need:   # else no node of the level is large enough
                if need == 1:
                    room = [k for k, m in enumerate(masks[depth]) if m & within]
                else:
                    room = [k for k, m in enumerate(masks[depth]) if (m & within).bit_count() >= need]
                if room:
                    break
            depth -= 1
        else:
            return -1
        if len(room) > 1:
            # the plain comparison's count vectors (an ancestor's count before its child's)
            # compared level by level from the root: the current CPUs' vector first, then the
            # free CPUs'; then the name
            if delta > 0:
                # sorterAllocate: more of the balloon's CPUs first, then (with balancing) more free
                # CPUs first or (without) fewer, then by name
                room = self._best_vectors(room, depth, current, True)
                room = self._best_vectors(room, depth, free, balancing)
                ranks = self.ranks[depth]
                return masks[depth][min(room, key=ranks.__getitem__)]
            # sorterRelease: fewer of the balloon's CPUs first, then fewer free, then by name descending
            room = self._best_vectors(room, depth, current, False)
            room = self._best_vectors(room, depth, free, False)
            ranks = self.ranks[depth]
            return masks[depth][max(room, key=ranks.__getitem__)]
        return masks[depth][room[0]]

    def _best_vectors(self, nodes: list[int], depth: int, cpus: int, most: bool) -> list[int]:
        """Of ``nodes`` (positions at ``depth``, in pre-order), those whose vector of counts of
        ``cpus`` in their ancestors and themselves (root first) is the largest (``most``) or the
        smallest, compared element by element: top down, keeping at each level only the nodes
        with candidates below them and, of those, the ones with the best count, in pre-order."""
        if len(nodes) < 2 or cpus == 0:
            return nodes   # every vector is zeros: all tie
        wanted = 0   # the candidates, a bit per position
        for k in nodes:
            wanted |= 1 << k
        masks, children, lows, widths = self.masks, self.children, self.lows[depth], self.widths[depth]
        keep = [0]
        for d in range(1, depth + 1):
            level, below, low, width = masks[d], children[d - 1], lows[d], widths[d]
            kids = [k for p in keep for k in below[p] if (wanted >> low[k]) & width[k]]
            if len(kids) == 1:
                keep = kids
                continue
            counts = [(level[k] & cpus).bit_count() for k in kids]
            best = max(counts) if most else min(counts)
            keep = [k for k, n in zip(kids, counts) if n == best]
        return keep


def _union(masks: tuple[int, ...]) -> int:
    out = 0
    for m in masks:
        out |= m
    return out


_FLAT: dict[int, FlatTree] = {}


def flat_tree(root: CpuTreeNode) -> FlatTree:
    """The flat form of ``root`` (made once per tree: a tree never changes once built)."""
    got = _FLAT.get(id(root))
    if got is None or got.root is not root:
        if len(_FLAT) > 64:
            _FLAT.clear()
        got = _FLAT[id(root)] = FlatTree(root)
    return got


class FastCpuTreeAllocator(CpuTreeAllocator):
    """The tree allocator of :mod:`.cputree` with ``resizeCpusMaxLocalSet`` on a :class:`FlatTree`.
    Nothing of it changes once made: copies of a runtime node share it."""

    def __init__(self, root: CpuTreeNode, topology_balancing: bool,
                 close: list[list[CPUSet]] | None = None, far: list[list[CPUSet]] | None = None):
        super().__init__(root, topology_balancing, close, far)
        self.flat = flat_tree(root)
        #: :mod:`.fastalloc`'s resizes by (current CPUs, free CPUs, change): a pure function of
        #: this allocator, which never changes
        self.resizes: dict[tuple[int, int, int], tuple[CPUSet, CPUSet]] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> "FastCpuTreeAllocator":
        return self

    def _max_local_set(self, current: CPUSet, free: CPUSet, delta: int) -> tuple[CPUSet, CPUSet]:
        cur, fr = current.mask, free.mask
        mask = self.flat.best(self.topology_balancing, cur, fr, delta)
        return CPUSet.from_mask(mask & fr), CPUSet.from_mask(mask & cur)


class RememberingCPUAllocator(CPUAllocator):
    """The policy's CPU allocator (:class:`...cpuallocator.CPUAllocator`, or whatever the policy
    was given) with its answers remembered: ``AllocateCpus`` and ``ReleaseCpus`` read nothing
    but their arguments and the machine's topology, fixed when the allocator was made, and
    return immutable CPU sets. Refusals are not remembered (the allocator raises them again).
    Copies of a runtime node share it, and so its answers."""

    def __init__(self, inner: CPUAllocator):
        self.inner = inner
        self.sys, self.topology = inner.sys, inner.topology
        self.answers: dict[tuple[int, int, int, int], tuple[CPUSet, CPUSet]] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> "RememberingCPUAllocator":
        return self

    def allocate_cpus(self, frm: CPUSet, cnt: int, prefer: int = PRIORITY_NONE) -> tuple[CPUSet, CPUSet]:
        key = (0, frm.mask, cnt, prefer)
        got = self.answers.get(key)
        if got is None:
            got = self._remember(key, self.inner.allocate_cpus(frm, cnt, prefer))
        return got

    def release_cpus(self, frm: CPUSet, cnt: int, prefer: int = PRIORITY_NONE) -> tuple[CPUSet, CPUSet]:
        key = (1, frm.mask, cnt, prefer)
        got = self.answers.get(key)
        if got is None:
            got = self._remember(key, self.inner.release_cpus(frm, cnt, prefer))
        return got

    def _remember(self, key: tuple[int, int, int, int], answer: tuple[CPUSet, CPUSet]) -> tuple[CPUSet, CPUSet]:
        if len(self.answers) >= MAX_ANSWERS:
            self.answers.clear()
        self.answers[key] = answer
        return answer


class MachineTexts:
    """What the policy derives from CPU sets and memory-node masks of its machine alone — a
    cpuset's text, the memory nodes local to CPUs, one hyperthread per core —, remembered by
    mask. Copies of a runtime node share it."""

    __slots__ = ("sys", "texts", "mems", "memsets", "singles")

    def __init__(self, sys: System):
        self.sys = sys
        self.texts: dict[int, str] = {}
        self.mems: dict[int, int] = {}
        self.memsets: dict[int, str] = {}
        self.singles: dict[int, CPUSet] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> "MachineTexts":
        return self

    def text(self, cpus: CPUSet) -> str:
        got = self.texts.get(cpus.mask)
        if got is None:
            if len(self.texts) >= MAX_ANSWERS:
                self.texts.clear()
            got = self.texts[cpus.mask] = str(cpus)
        return got

    def memset(self, mask: int) -> str:
        got = self.memsets.get(mask)
        if got is None:
            if len(self.memsets) >= MAX_ANSWERS:
                self.memsets.clear()
            got = self.memsets[mask] = memset_string(mask)
        return got

    def single_threads(self, cpus: CPUSet) -> CPUSet:
        got = self.singles.get(cpus.mask)
        if got is None:
            if len(self.singles) >= MAX_ANSWERS:
                self.singles.clear()
            got = self.singles[cpus.mask] = self.sys.single_thread_for_cpus(cpus)
        return got


class SharedSpec(dict[str, Any]):
    """The policy's configuration (``spec``), read-only once the policy is set up: copies of a
    runtime node share it."""

    def __deepcopy__(self, memo: dict[int, Any]) -> "SharedSpec":
        return self


class TreeAllocators:
    """Each balloon type's tree allocator (by name), made once: a
    :class:`FastCpuTreeAllocator` never changes, so balloons of a type — and copies of a
    runtime node — share it."""

    __slots__ = ("by_type",)

    def __init__(self) -> None:
        self.by_type: dict[str, CpuTreeAllocator] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> "TreeAllocators":
        return self


class DefChoices:
    """The balloon type (its position in the policy's types) chosen for a container without the
    balloon annotation, per (namespace, QoS class) — when every type's ``matchExpressions`` read
    nothing but the ``namespace`` and ``qosclass`` keys (``by`` is None otherwise): a pure
    function of the types, fixed at start-up, so copies of a runtime node share it."""

    __slots__ = ("by",)

    def __init__(self, defs: list[BalloonDef]):
        simple = all(e.key in (KEY_NAMESPACE, KEY_QOS_CLASS) for d in defs for e in d.match_expressions)
        self.by: dict[tuple[str, str], int] | None = {} if simple else None

    def __deepcopy__(self, memo: dict[int, Any]) -> "DefChoices":
        return self


class FastBalloonsPolicy(BalloonsPolicy):
    """The balloons policy with the fast paths above (same answers as :class:`.policy.BalloonsPolicy`):
    its allocators, and the texts and masks of :class:`MachineTexts` in pinning and reports."""

    tree_allocator = FastCpuTreeAllocator

    def setup(self, system: System, cache: Cache, config: BalloonsConfig) -> None:
        self.machine_texts = MachineTexts(system)
        self.tree_allocators = TreeAllocators()
        #: every container's balloon and exclusive CPUs (None: to be found again)
        self.placements: dict[str, tuple[str, CPUSet]] | None = None
        #: the container :meth:`allocate_resources` places
        self.joining: CachedContainer | None = None
        #: each balloon's requested mCPU while :meth:`_allocate_balloon` runs (None: not remembered)
        self.requested: dict[Balloon, int] | None = None
        super().setup(system, cache, config)
        self.cpu_allocator = RememberingCPUAllocator(self.cpu_allocator)
        self.def_choices = DefChoices(self.defs)
        self.spec = SharedSpec(self.spec)

    def _share_idle_cpus(self, add: CPUSet, remove: CPUSet) -> list[Balloon]:
        """``shareIdleCpus`` as the plain policy, on masks, the level's branches read off the flat tree."""
        changed: set[int] = set()
        balloons = self.balloons
        rm = remove.mask
        if rm:
            for i, b in enumerate(balloons):
                shared = b.shared_idle_cpus.mask
                if shared & rm:
                    b.shared_idle_cpus = CPUSet.from_mask(shared & ~rm)
                    changed.add(i)
        adding = add.mask & ~self.sys.isolated.mask
        if adding:
            flat = flat_tree(self.tree)
            for i, b in enumerate(balloons):
                level = b.defn.share_idle_cpus_in_same
                if not level:
                    continue
                idle = flat.idle_in_level(level, b.cpus.mask, adding)
                if not idle:
                    continue
                shared = b.shared_idle_cpus.mask
                if shared | idle != shared:
                    b.shared_idle_cpus = CPUSet.from_mask(shared | idle)
                    changed.add(i)
        return [balloons[i] for i in sorted(changed)]

    def _choose_def(self, c: CachedContainer) -> BalloonDef:
        """As the plain policy; the choice for a container without the balloon annotation is
        remembered per (namespace, QoS class) when the types' expressions read nothing else."""
        if c.pod.annotations:
            _, annotated = c.effective_annotation(BALLOON_KEY)
            if annotated:
                return super()._choose_def(c)
        choices = self.def_choices
        if choices.by is None:
            return self._choose_unannotated(c)
        key = (c.namespace, c.qos_class)
        got = choices.by.get(key)
        if got is None:
            got = choices.by[key] = self.defs.index(self._choose_unannotated(c))
        return self.defs[got]

    def _choose_unannotated(self, c: CachedContainer) -> BalloonDef:
        for d in self.defs:
            for e in d.match_expressions:
                if e.evaluate(c):
                    return d
            if d.namespaces and _namespace_matches_remembered(c.namespace, tuple(d.namespaces)):
                return d
        return self.default_def

    def _pin_options(self, c: CachedContainer, bln: Balloon) -> tuple[bool, bool, int]:
        """As the plain policy; a pod without annotations: the balloon type's hyperthreads, memory
        not preserved, the balloon's memory types."""
        if c.pod.annotations:
            return super()._pin_options(c, bln)
        return bool(bln.defn.hide_hyperthreads), False, 0

    def container_placement(self, c: CachedContainer) -> tuple[str, CPUSet] | None:
        """As the plain policy, from :meth:`_placements` when the map of this state is made; else
        (:data:`LONE_PLACEMENT`) the container's balloon alone — ``simulate`` asks for the new
        pod's containers once per state, and the whole map walks every container."""
        got = self.placements
        if got is None and LONE_PLACEMENT:
            pod_id, cid = c.pod_id, c.id
            for b in self.balloons:
                ids = b.pod_ids.get(pod_id)
                if ids is not None and cid in ids:
                    pool = b.pretty_name()
                    alone = len(b.pod_ids) == 1 and not b.cpus.is_empty() and not pool.startswith("reserved[")
                    return pool, b.cpus if alone else CPUSet()
            return None
        return self._placements().get(c.id)

    def _placements(self) -> dict[str, tuple[str, CPUSet]]:
        """Every container's :meth:`container_placement`, found once per state of the balloons
        (:meth:`allocate_resources` and :meth:`release_resources` start a new one)."""
        got = self.placements
        if got is None:
            got = self.placements = {}
            for b in self.balloons:
                pool = b.pretty_name()
                alone = len(b.pod_ids) == 1 and not b.cpus.is_empty() and not pool.startswith("reserved[")
                placement = (pool, b.cpus if alone else CPUSet())
                for ids in b.pod_ids.values():
                    for cid in ids:
                        got.setdefault(cid, placement)
        return got

    def allocate_resources(self, c: CachedContainer) -> None:
        self.placements = None
        self.joining = c
        try:
            if fastalloc.ENABLED and fastalloc.handles(self, c):
                fastalloc.allocate_resources(self, c)
            else:
                super().allocate_resources(c)
        finally:
            self.joining = None

    def _pin_resized(self, bln: Balloon) -> None:
        """As the plain policy, but the pinning is left out when it changes nothing: inflated
        for a container of a pod new to the balloon (:meth:`allocate_resources` pins the balloon
        again right after, that container last), and every memory allocation of its containers
        already covers the balloon's memory nodes — pinning twice then writes what pinning once
        does: the same requests, marked pending in the same order, no memory zone moved."""
        c = self.joining
        if c is None or c.pod_id in bln.pod_ids or not self._pins_without_moves(bln):
            super()._pin_resized(bln)

    def _pins_without_moves(self, bln: Balloon) -> bool:
        """Pinning ``bln`` now moves no memory: memory not pinned, or each container's
        ``Realloc`` returns at once (its zone holds the balloon's memory nodes and its types)."""
        pin = self.pin_memory if bln.defn.pin_memory is None else bln.defn.pin_memory
        if not pin:
            return True
        mems = self._closest_mems(bln.cpus | bln.shared_idle_cpus)
        alloc = self.mem_allocator
        for cid in bln.container_ids():
            c = self.cache.lookup_container(cid)
            if c is None:
                continue
            req = alloc.requests.get(cid)
            if req is None or alloc.assigned_zone(cid) is None or req.zone & mems != mems:
                return False
            _, preserve, types = self._pin_options(c, bln)
            if preserve or alloc.zone_type(req.zone) & types != types:
                return False
        return True

    def release_resources(self, c: CachedContainer) -> None:
        self.placements = None
        try:
            super().release_resources(c)
        finally:
            self.placements = None

    def _new_tree_allocator(self, d: BalloonDef) -> CpuTreeAllocator:
        """As the plain policy, made once per balloon type: it never changes once made."""
        made = self.tree_allocators.by_type
        got = made.get(d.name)
        if got is None:
            got = made[d.name] = super()._new_tree_allocator(d)
        return got

    def reserved_cpus(self) -> CPUSet:
        """As the plain policy, on masks."""
        if self.reserved:
            return self.reserved
        mask, reserved = 0, self.reserved_def
        for b in self.balloons:
            if b.defn is reserved:
                mask |= b.cpus.mask
        return CPUSet.from_mask(mask)

    def _closest_mems(self, cpus: CPUSet) -> int:
        mems = self.machine_texts.mems
        got = mems.get(cpus.mask)
        if got is None:
            if len(mems) >= MAX_ANSWERS:
                mems.clear()
            got = mems[cpus.mask] = super()._closest_mems(cpus)
        return got

    def _allocate_balloon(self, c: CachedContainer, d: BalloonDef) -> Balloon:
        """As the plain policy; with :data:`REMEMBER_REQUESTS` each balloon's requested mCPU summed
        once for the fill-method chain (no container joins or leaves a balloon while it runs)."""
        if not REMEMBER_REQUESTS:
            return super()._allocate_balloon(c, d)
        self.requested = {}
        try:
            return super()._allocate_balloon(c, d)
        finally:
            self.requested = None

    def _fillable(self, d: BalloonDef, method: str, c: CachedContainer) -> list[Balloon]:
        """As the plain policy; with :data:`REMEMBER_REQUESTS` the same-pod and balanced methods on
        the remembered sums, and a new balloon of a type at ``maxBalloons`` refused before it is
        tried (the plain ``newBalloon`` refuses it before changing anything)."""
        if self.requested is None:
            return super()._fillable(d, method, c)
        if method == "new":
            if d.max_balloons > NO_LIMIT:
                count = 0
                for b in self.balloons:
                    if b.defn is d:
                        if not b.pod_ids:
                            return [b]
                        count += 1
                if d.max_balloons <= count:
                    return []
            return super()._fillable(d, method, c)
        if method not in ("same-pod", "balanced", "balanced-inflate"):
            return super()._fillable(d, method, c)
        req = self._requested(c.id)
        requested_in = self._requested_in
        if method == "balanced":
            return [b for b in self.balloons if b.defn is d and b.cpus.mask.bit_count() * 1000 - requested_in(b) >= req]
        n = self.free_cpus.mask.bit_count()
        limit = d.max_cpus * 1000 if d.max_cpus != NO_LIMIT and d.max_cpus <= n else None
        if method == "same-pod":
            pod_id = c.pod_id
            return [b for b in self.balloons if b.defn is d and pod_id in b.pod_ids
                    and (limit if limit is not None else (b.cpus.mask.bit_count() + n) * 1000) - requested_in(b) >= req]
        return [b for b in self.balloons if b.defn is d
                and (limit if limit is not None else (b.cpus.mask.bit_count() + n) * 1000) - requested_in(b) >= req]

    def _requested_in(self, bln: Balloon) -> int:
        memo = self.requested
        if memo is None:
            return super()._requested_in(bln)
        got = memo.get(bln)
        if got is None:
            got = memo[bln] = super()._requested_in(bln)
        return got

    def _update_pinning(self, blns: list[Balloon]) -> None:
        """As the plain policy; with :mod:`.fastpin` the texts made once per balloon."""
        if fastpin.ENABLED:
            fastpin.update_pinning(self, blns)
        else:
            super()._update_pinning(blns)

    def _cpus_text(self, cpus: CPUSet) -> str:
        return self.machine_texts.text(cpus)

    def _mems_text(self, mask: int) -> str:
        return self.machine_texts.memset(mask)

    def _single_threads(self, cpus: CPUSet) -> CPUSet:
        return self.machine_texts.single_threads(cpus)


@functools.lru_cache(maxsize=4096)
def _namespace_matches_remembered(namespace: str, patterns: tuple[str, ...]) -> bool:
    return _namespace_matches(namespace, list(patterns))


def new_policy() -> BalloonsPolicy:
    """The policy the registry starts for ``balloons``: the fast one unless :data:`ENABLED` is off."""
    return FastBalloonsPolicy() if ENABLED else BalloonsPolicy()
