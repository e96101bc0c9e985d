"""``iterateCombinations`` as upstream's Go builds its combinations (``cpu_assignment.go``).

Upstream walks the n-choose-k subsets recursively and passes each one to a callback as
``append(accum, n[i])``. In Go, ``append`` writes in place when the slice still has spare
capacity, so subsets that share a prefix can share one backing array. A callback that *keeps*
a subset (``bestCombo = combo``) keeps a view of that array, and later subsets overwrite its tail:
the remembered "best" combination is whatever was written there last. The kubelet then
allocates from that set — a real, released behaviour (see docs/upstream-bugs.md), so the twin
reproduces it by modelling the backing arrays and Go's capacity growth.

:func:`iterate_combinations` yields :class:`SliceView` objects. ``view.values()`` read at once
gives the subset being visited; a view kept and read later gives what Go's slice would hold then.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Iterator, Sequence

# runtime/sizeclasses.go: the allocation size classes (bytes) growslice rounds up to.
_SIZE_CLASSES = (8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
                 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280,
                 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528,
                 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432,
                 19072, 20480, 21760, 24576, 27264, 28672, 32768)
_PAGE = 8192
_INT_SIZE = 8  # a Go int on the 64-bit platforms the kubelet ships for


def grown_capacity(old_cap: int, new_len: int) -> int:
    """The capacity ``append`` gives a ``[]int`` of capacity ``old_cap`` growing to ``new_len``."""
    new_cap = old_cap
    double = new_cap + new_cap
    if new_len > double:
        new_cap = new_len
    elif old_cap < 256:
        new_cap = double
    else:
        while 0 < new_cap < new_len:
            new_cap += (new_cap + 3 * 256) >> 2
        if new_cap <= 0:
            new_cap = new_len
    size = new_cap * _INT_SIZE
    if size <= _SIZE_CLASSES[-1]:
        size = _SIZE_CLASSES[bisect_left(_SIZE_CLASSES, size)]
    else:
        size = -(-size // _PAGE) * _PAGE
    return size // _INT_SIZE


class _Slice:
    """A Go slice header: a shared backing array, a length and a capacity."""

    __slots__ = ("array", "length", "cap")

    def __init__(self, array: list[int], length: int, cap: int):
        self.array, self.length, self.cap = array, length, cap

    def append(self, x: int) -> "_Slice":
        if self.length < self.cap:
            self.array[self.length] = x
            return _Slice(self.array, self.length + 1, self.cap)
        cap = grown_capacity(self.cap, self.length + 1)
        array = self.array[:self.length] + [x] + [0] * (cap - self.length - 1)
        return _Slice(array, self.length + 1, cap)


class SliceView:
    """A kept subset: its contents are read from the (possibly shared) backing array."""

    __slots__ = ("_slice",)

    def __init__(self, s: _Slice):
        self._slice = s

    def values(self) -> tuple[int, ...]:
        s = self._slice
        return tuple(s.array[:s.length])

    def __len__(self) -> int:
        return self._slice.length


def iterate_combinations(n: Sequence[int], k: int) -> Iterator[SliceView]:
    """Every k-subset of ``n`` in upstream's order, sharing backing arrays as Go's ``append`` does.

    The consumer stops early with ``break``; as upstream checks its ``Break`` condition inside the
    callback, the subset being visited has already been written when it stops.
    """
    if k < 1:
        return

    def helper(k: int, start: int, accum: _Slice) -> Iterator[SliceView]:
        if k == 0:
            yield SliceView(accum)
            return
        for i in range(start, len(n) - k + 1):
            yield from helper(k - 1, i + 1, accum.append(n[i]))

    yield from helper(k, 0, _Slice([], 0, 0))
