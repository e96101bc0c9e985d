"""Fast paths of the balloons policy, kept apart from the plain code in :mod:`.policy` and
:mod:`.cputree` (which read against nri-plugins' ``cmd/plugins/balloons``).

``simulate`` runs the balloons policy on thousands of nodes; per container creation the plain
policy spends most of its time in the tree allocator (``resizeCpusMaxLocalSet``: one attributed
node per tree node, every one a pair of CPU sets, then a sort by a comparison function) and in
linear walks over balloons and their containers. What is here gives the same answers:

* :class:`FlatTree`: the CPU tree once as flat tuples (pre-order): each node's CPU mask, depth,
  parent, its name's rank. The best branch of ``resizeCpusMaxLocalSet``
  is then a minimum over the deepest nodes that qualify, by the key the plain comparison
  spells (the plain sort is stable and its first element is the minimum, the first in
  pre-order among equals). Answers are remembered per (balancing, delta, current CPUs, free
  CPUs): a pure function of the tree, shared by every node built from it.
* :class:`FastCpuTreeAllocator`: the plain allocator with that search; it never changes after
  it is made, so copies of a runtime node share it.
* :class:`FastBalloonsPolicy`: the plain policy with those allocators.

``ENABLED`` (False: the plain policy) is for equivalence tests and A/B runs;
``tests/runtime/policies/balloons/test_fast.py`` holds the fast answers against the plain ones.

Upstream: containers/nri-plugins v0.14.0 ``cmd/plugins/balloons/policy/cputree.go``
(``resizeCpusMaxLocalSet``, ``sorterAllocate``, ``sorterRelease``) and
``balloons-policy.go``, modelled plainly in :mod:`.cputree` and :mod:`.policy`.
"""

from __future__ import annotations

from typing import Any

from ....model.cpuset import CPUSet
from .cputree import CpuTreeAllocator, CpuTreeNode, TreeError
from .policy import BalloonsPolicy

#: the fast policy (False: :func:`new_policy` gives the plain one, for equivalence tests and A/B runs)
ENABLED = True

#: remembered answers per tree before the table starts afresh
MAX_ANSWERS = 1 << 16


class FlatTree:
    """A CPU tree as flat tuples in pre-order (the plain walk's order), and the answers of
    ``resizeCpusMaxLocalSet`` found on it."""

    __slots__ = ("root", "masks", "depths", "parents", "base", "ranks", "answers")

    def __init__(self, root: CpuTreeNode):
        masks: list[int] = []
        depths: list[int] = []
        parents: list[int] = []
        names: list[str] = []

        def visit(t: CpuTreeNode, depth: int, parent: int) -> None:
            i = len(masks)
            masks.append(t.cpus.mask)
            depths.append(depth)
            parents.append(parent)
            names.append(t.name)
            for child in t.children:
                visit(child, depth + 1, i)

        visit(root, 0, -1)
        self.root = root
        self.masks = tuple(masks)
        self.depths = tuple(depths)
        self.parents = tuple(parents)
        #: larger than any count of CPUs in a node: the digit of one level in the packed counts
        self.base = root.cpus.size() + 1
        order = sorted(range(len(names)), key=names.__getitem__)
        ranks = [0] * len(names)
        for r, i in enumerate(order):
            ranks[i] = r
        # equal names share a rank: the plain comparison finds them equal too
        for a, b in zip(order, order[1:]):
            if names[a] == names[b]:
                ranks[b] = ranks[a]
        self.ranks = tuple(ranks)
        self.answers: dict[tuple[bool, int, int, int], int] = {}

    def best(self, balancing: bool, current: int, free: int, delta: int) -> int:
        """The mask of the branch ``resizeCpusMaxLocalSet`` picks (``delta`` > 0: to add CPUs
        from, else to remove CPUs from); TreeError when no branch has room."""
        key = (balancing, delta, current, free)
        got = self.answers.get(key)
        if got is None:
            got = self._search(balancing, current, free, delta)
            if len(self.answers) >= MAX_ANSWERS:
                self.answers.clear()
            self.answers[key] = got
        if got < 0:
            raise TreeError("not enough free CPUs")
        return self.masks[got]

    def _search(self, balancing: bool, current: int, free: int, delta: int) -> int:
        masks, depths, parents = self.masks, self.depths, self.parents
        base = self.base
        # per node, its and its ancestors' counts of current and free CPUs packed into one int
        # (root first): between nodes of one depth, the order of the ints is the order of the
        # plain comparison's count vectors
        n = len(masks)
        cur = [0] * n
        fr = [0] * n
        packed_cur = [0] * n
        packed_fr = [0] * n
        for i in range(n):
            m = masks[i]
            c = cur[i] = (m & current).bit_count()
            f = fr[i] = (m & free).bit_count()
            p = parents[i]
            if p >= 0:
                packed_cur[i] = packed_cur[p] * base + c
                packed_fr[i] = packed_fr[p] * base + f
            else:
                packed_cur[i], packed_fr[i] = c, f
        # a node qualifies when it has room; its ancestors then have too, so the plain walk's
        # pruning of subtrees below a node without room leaves exactly the qualifying nodes
        if delta > 0:
            qualified = [i for i in range(n) if fr[i] >= delta]
        else:
            qualified = [i for i in range(n) if cur[i] + delta >= 0]
        if not qualified:
            return -1
        deepest = max(depths[i] for i in qualified)
        candidates = [i for i in qualified if depths[i] == deepest]
        if len(candidates) == 1:
            return candidates[0]
        ranks = self.ranks
        if delta > 0:
            # sorterAllocate: more of the balloon's CPUs first, then (with balancing) more free
            # CPUs first or (without) fewer, then by name
            sign = -1 if balancing else 1
            return min(candidates, key=lambda i: (-packed_cur[i], sign * packed_fr[i], ranks[i]))
        # sorterRelease: fewer of the balloon's CPUs first, then fewer free, then by name descending
        return min(candidates, key=lambda i: (packed_cur[i], packed_fr[i], -ranks[i]))


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

    def __deepcopy__(self, memo: dict[int, Any]) -> "FastCpuTreeAllocator":
        return self

    def _max_local_set(self, current: CPUSet, free: CPUSet, delta: int) -> tuple[CPUSet, CPUSet]:
        cur, fr = current.mask, free.mask
        mask = self.flat.best(self.topology_balancing, cur, fr, delta)
        return CPUSet.from_mask(mask & fr), CPUSet.from_mask(mask & cur)


class FastBalloonsPolicy(BalloonsPolicy):
    """The balloons policy with the fast paths above (same answers as :class:`.policy.BalloonsPolicy`)."""

    tree_allocator = FastCpuTreeAllocator


def new_policy() -> BalloonsPolicy:
    """The policy the registry starts for ``balloons``: the fast one unless :data:`ENABLED` is off."""
    return FastBalloonsPolicy() if ENABLED else BalloonsPolicy()
