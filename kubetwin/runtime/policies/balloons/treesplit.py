"""A fast path for the balloons tree search: the tree split at its NUMA nodes, each branch's best
candidate remembered per its own CPUs.

``resizeCpusMaxLocalSet`` (modelled plainly in :mod:`.cputree`, on CPU masks in
:meth:`.fast.FlatTree._search_masks`) picks, among the nodes of the deepest level with room for
the change, the first by three keys compared in turn: the vector of counts of the balloon's
CPUs in the node's ancestors and itself (root first; the most when inflating, the fewest when
deflating), the vector of counts of free CPUs (inflating: the most with topology balancing,
else the fewest; deflating: the fewest), then the node's name (the smallest inflating, the
largest deflating). The top-down walk of the flat tree (keeping each level's best) is that
lexicographic choice spelled level by level. A lexicographic minimum over a union is the
minimum of each part's minimum, so with the tree cut at a level of few nodes (the *split*: the
NUMA nodes of ``simulate``'s machine, four of them over 128 threads):

* each split node's best candidate below it depends on its own CPUs only — the part of the
  free CPUs and of the balloon's CPUs it holds — and is remembered per (split node, depth,
  change, those two masks): a node's free CPUs repeat far more often than the machine's (at
  5,000 x 50,000, 191 distinct NUMA-node free masks against 2,906 machine-wide);
* the deepest level with room is the deepest of the split nodes' own (remembered per split node
  and its CPUs to pick from), unless none has room below the split;
* the machine's answer is the best of the split nodes' bests, each key prefixed with the
  counts in the split node's ancestors and itself.

When no split node has room below the split the plain mask search runs (a few nodes). Only
trees that nest with disjoint levels (:attr:`.fast.FlatTree.nested`) are split.
``ENABLED`` (False: :meth:`.fast.FlatTree._search_masks` every time) is for equivalence tests
and A/B runs; ``tests/runtime/policies/balloons/test_treesplit.py`` holds the answers equal.

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/balloons/policy/cputree.go`` (``resizeCpusMaxLocalSet``, ``sorterAllocate``,
``sorterRelease``).
"""

from __future__ import annotations

from typing import Protocol

#: search through the split tree (False: the flat tree's mask search, for A/B runs and tests)
ENABLED = True

#: the most nodes a level may have to be the split
MAX_SPLIT = 8

#: remembered answers per split tree before the tables start afresh
MAX_ANSWERS = 1 << 16

# a split node's best candidate: its counts of the balloon's CPUs and of free CPUs in the levels
# below the split (each packed in one int, see :meth:`SplitTree._pack`), its name's rank (packed
# alike) and its mask
_Best = tuple[int, int, int, int]


class _Flat(Protocol):
    masks: tuple[tuple[int, ...], ...]
    children: tuple[tuple[tuple[int, ...], ...], ...]
    ranks: tuple[tuple[int, ...], ...]
    only_child: tuple[bool, ...]
    nested: bool

    sizes: tuple[int, ...]

    def _search_masks(self, balancing: bool, current: int, free: int, delta: int) -> int: ...


class SplitTree:
    """A flat tree (:class:`.fast.FlatTree`) cut at its split level, with each split node's
    answers remembered."""

    __slots__ = ("flat", "split", "split_masks", "upper", "upper_len", "below", "lower", "lower_len", "width", "top",
                 "rank_bits", "rooms", "bests")

    def __init__(self, flat: _Flat, split: int):
        self.flat = flat
        self.split = split
        masks, children, only_child = flat.masks, flat.children, flat.only_child
        #: the split nodes' masks
        self.split_masks = masks[split]
        parents: list[list[int]] = [[-1]]
        for d in range(1, len(masks)):
            up = [0] * len(masks[d])
            for p, kids in enumerate(children[d - 1]):
                for k in kids:
                    up[k] = p
            parents.append(up)

        def ancestors(depth: int, k: int, top: int) -> list[int]:
            """The masks of ``k``'s ancestors and itself from depth ``top + 1`` to ``depth``,
            levels whose nodes are only children left out (their counts are their parents')."""
            out: list[int] = []
            while depth > top:
                if not only_child[depth]:
                    out.append(masks[depth][k])
                k = parents[depth][k]
                depth -= 1
            out.reverse()
            return out

        #: per split node: the masks of its ancestors (below the root) and itself
        self.upper = tuple(tuple(ancestors(split, k, 0)) for k in range(len(masks[split])))
        #: per split node, per depth below the split: its descendants' positions there, in pre-order
        below: list[list[tuple[int, ...]]] = []
        for k in range(len(masks[split])):
            per: list[tuple[int, ...]] = [()] * len(masks)
            level = [k]
            for d in range(split + 1, len(masks)):
                level = [c for p in level for c in children[d - 1][p]]
                per[d] = tuple(level)
            below.append(per)
        self.below = tuple(tuple(per) for per in below)
        #: per depth below the split, per node: the masks of its ancestors below the split and itself
        self.lower = tuple(tuple(tuple(ancestors(d, k, split)) for k in range(len(masks[d])))
                           if d > split else () for d in range(len(masks)))
        #: the ancestors' masks per split node (and per node below) are as many for every node of a
        #: depth: each key is then one int of fixed fields
        self.upper_len = len(self.upper[0])
        assert all(len(u) == self.upper_len for u in self.upper)
        self.lower_len = tuple(len(level[0]) if level else 0 for level in self.lower)
        assert all(len(a) == self.lower_len[d] for d, level in enumerate(self.lower) for a in level)
        #: bits a count takes (room for every count), its largest value, bits a name rank takes
        self.width = (masks[0][0] | _union(masks[-1])).bit_count().bit_length() + 1
        self.top = (1 << self.width) - 1
        self.rank_bits = max(max(r, default=0) for r in flat.ranks).bit_length() + 1
        #: per CPUs needed, per split node, per its CPUs to pick from: (the deepest depth with room
        #: below the split, -1: none; the positions there with room)
        self.rooms: dict[int, tuple[dict[int, tuple[int, tuple[int, ...]]], ...]] = {}
        #: per (depth, CPUs needed, growing, balancing, the balloon has CPUs), per split node, per (its current CPUs, its
        #: free CPUs): its best candidate
        self.bests: dict[tuple[int, int, bool, bool, bool], tuple[dict[tuple[int, int], _Best], ...]] = {}

    def search(self, balancing: bool, current: int, free: int, delta: int) -> int:
        """:meth:`.fast.FlatTree._search_masks`: the mask of the branch picked, -1 when none has room."""
        need, within = (delta, free) if delta > 0 else (-delta, current)
        split_masks = self.split_masks
        rooms = self.rooms.get(need)
        if rooms is None:
            rooms = self.rooms[need] = tuple({} for _ in split_masks)
        found: list[tuple[int, tuple[int, ...]]] = []
        deepest = -1
        for k, m in enumerate(split_masks):
            table = rooms[k]
            mine = within & m
            got = table.get(mine)
            if got is None:
                if len(table) >= MAX_ANSWERS:
                    table.clear()
                got = table[mine] = self._room(k, need, mine)
            found.append(got)
            if got[0] > deepest:
                deepest = got[0]
        if deepest < 0:
            return self.flat._search_masks(balancing, current, free, delta)
        grow = delta > 0
        most_cur, most_free = grow, grow and balancing
        if deepest == self.split:
            return self._best_split(found, current, free, most_cur, most_free, grow)
        kind = (deepest, need, grow, balancing, current != 0)
        bests = self.bests.get(kind)
        if bests is None:
            bests = self.bests[kind] = tuple({} for _ in split_masks)
        lower_bits = self.width * self.lower_len[deepest]
        upper_bits = self.width * self.upper_len
        rank_bits = self.rank_bits
        pack = self._pack
        best_key = -1
        best_mask = -1
        many = sum(1 for room in found if room[0] == deepest) > 1
        for k, m in enumerate(split_masks):
            room = found[k]
            if room[0] != deepest:
                continue   # no candidate below it (room at the deepest level means room above)
            cur_k, free_k = current & m, free & m
            kept = bests[k]
            best = kept.get((cur_k, free_k))
            if best is None:
                if len(kept) >= MAX_ANSWERS:
                    kept.clear()
                best = kept[(cur_k, free_k)] = self._best(room[1], deepest, most_cur, most_free, cur_k, free_k, grow,
                                                          current != 0)
            if not many:
                return best[3]
            up = self.upper[k]
            # no balloon CPUs (a new balloon): every count of them zero, the same for each node
            mine = pack(up, current, most_cur) if current else 0
            key = ((((mine << lower_bits | best[0]) << upper_bits
                     | pack(up, free, most_free)) << lower_bits | best[1]) << rank_bits) | best[2]
            if best_key < 0 or key < best_key:
                best_key, best_mask = key, best[3]
        return best_mask

    def _best_split(self, found: list[tuple[int, tuple[int, ...]]], current: int, free: int, most_cur: bool,
                    most_free: bool, grow: bool) -> int:
        """The best of the split nodes with room (the deepest level with room is the split's)."""
        upper_bits, rank_bits = self.width * self.upper_len, self.rank_bits
        rank_top = (1 << rank_bits) - 1
        ranks = self.flat.ranks[self.split]
        pack = self._pack
        best_key = best_mask = -1
        for k, m in enumerate(self.split_masks):
            if found[k][0] != self.split:
                continue
            up = self.upper[k]
            key = (((pack(up, current, most_cur) << upper_bits) | pack(up, free, most_free)) << rank_bits) \
                | (ranks[k] if grow else rank_top - ranks[k])
            if best_key < 0 or key < best_key:
                best_key, best_mask = key, m
        return best_mask

    def _pack(self, masks: tuple[int, ...], cpus: int, most: bool) -> int:
        """The counts of ``cpus`` in ``masks`` as one int of :attr:`width` bits a count, the first
        highest — compared as ints as the vectors compare element by element; ``most``: each
        count taken from the field's largest value (the most first)."""
        width, top = self.width, self.top
        out = 0
        if most:
            for a in masks:
                out = out << width | (top - (a & cpus).bit_count())
        else:
            for a in masks:
                out = out << width | (a & cpus).bit_count()
        return out

    def _room(self, k: int, need: int, within: int) -> tuple[int, tuple[int, ...]]:
        """The deepest depth from the split down where a node of split node ``k`` (itself
        included) holds ``need`` of ``within`` (-1: none), and those nodes' positions."""
        masks, sizes = self.flat.masks, self.flat.sizes
        per = self.below[k]
        for d in range(len(masks) - 1, self.split, -1):
            if sizes[d] < need:
                continue   # no node of the level is large enough
            level = masks[d]
            room = tuple(x for x in per[d] if (level[x] & within).bit_count() >= need)
            if room:
                return d, room
        if within.bit_count() >= need:
            return self.split, (k,)
        return -1, ()

    def _best(self, room: tuple[int, ...], depth: int, most_cur: bool, most_free: bool, current: int, free: int,
              grow: bool, any_current: bool) -> _Best:
        """The best of a split node's candidates ``room`` at ``depth`` (its own CPUs: ``current``, ``free``;
        ``any_current``: the balloon has CPUs anywhere — without, every count of them is zero and
        left out of the keys, in every split node alike)."""
        masks, lower, ranks = self.flat.masks[depth], self.lower[depth], self.flat.ranks[depth]
        lower_bits, rank_bits, rank_top = self.width * self.lower_len[depth], self.rank_bits, (1 << self.rank_bits) - 1
        pack = self._pack
        best: _Best | None = None
        best_key = -1
        for x in room:
            anc = lower[x]
            lc, lf = pack(anc, current, most_cur) if any_current else 0, pack(anc, free, most_free)
            rank = ranks[x] if grow else rank_top - ranks[x]
            key = ((lc << lower_bits | lf) << rank_bits) | rank
            if best is None or key < best_key:
                best, best_key = (lc, lf, rank, masks[x]), key
        assert best is not None
        return best


def split_tree(flat: _Flat) -> SplitTree | None:
    """The split form of ``flat``: cut at its deepest level of at most :data:`MAX_SPLIT` nodes
    that has levels below it and more than one node (None: a tree that does not nest, or no such level)."""
    if not flat.nested:
        return None
    masks = flat.masks
    split = 0
    for d in range(1, len(masks) - 1):
        if len(masks[d]) <= MAX_SPLIT:
            split = d
    if split == 0 or len(masks[split]) < 2:
        return None
    return SplitTree(flat, split)


def _union(masks: tuple[int, ...]) -> int:
    out = 0
    for m in masks:
        out |= m
    return out
