"""Go's unstable sorts (``sort.Slice``, ``slices.SortFunc``), step for step.

nri-plugins sorts pools, CPU clusters, cache groups, idle cores and memory zones with
``sort.Slice`` / ``slices.SortFunc`` and comparators that are not always a strict weak order
(a pool comparison can end in ``return id1 < id2`` on one branch and on a capacity on
another). With such a comparator the result depends on the algorithm, so a Python
``sorted`` would pick other CPUs than the plugin does. Both Go functions run the same
pattern-defeating quicksort (``pdqsort_func`` / ``pdqsortCmpFunc``, Go 1.21+: insertion sort
up to 12 elements, xorshift 13/7/17 pattern breaking seeded with the length); this module
runs it on a Python list, so the order is Go's even for inconsistent comparators.

Upstream: ``src/sort/zsortfunc.go``, ``src/slices/zsortanyfunc.go``, ``src/sort/sort.go``
(``xorshift``, ``nextPowerOfTwo``) of Go 1.24, which nri-plugins v0.14.0 is built with.
"""

from __future__ import annotations

from typing import Callable, MutableSequence, TypeVar

T = TypeVar("T")

_MASK64 = (1 << 64) - 1
_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2


def sort_slice(data: MutableSequence[T], less: Callable[[T, T], bool]) -> None:
    """``sort.Slice(data, func(i, j int) bool { return less(data[i], data[j]) })`` in place."""
    n = len(data)
    if n > 1:
        _Sorter(data, less)._pdqsort(0, n, n.bit_length())


def sort_func(data: MutableSequence[T], cmp: Callable[[T, T], int]) -> None:
    """``slices.SortFunc(data, cmp)`` in place: the same pdqsort with ``cmp(a, b) < 0`` as less."""
    sort_slice(data, lambda a, b: cmp(a, b) < 0)


class _Sorter:
    __slots__ = ("d", "lt")

    def __init__(self, data: MutableSequence, less: Callable) -> None:
        self.d = data
        self.lt = less

    def less(self, i: int, j: int) -> bool:
        return bool(self.lt(self.d[i], self.d[j]))

    def swap(self, i: int, j: int) -> None:
        d = self.d
        d[i], d[j] = d[j], d[i]

    def _insertion(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def _sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def _heapsort(self, a: int, b: int) -> None:
        first, lo, hi = a, 0, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self._sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self._sift_down(lo, i, first)

    def _pdqsort(self, a: int, b: int, limit: int) -> None:
        max_insertion = 12
        was_balanced = True
        was_partitioned = True
        while True:
            length = b - a
            if length <= max_insertion:
                self._insertion(a, b)
                return
            if limit == 0:
                self._heapsort(a, b)
                return
            if not was_balanced:
                self._break_patterns(a, b)
                limit -= 1
            pivot, hint = self._choose_pivot(a, b)
            if hint == _DECREASING:
                self._reverse(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if was_balanced and was_partitioned and hint == _INCREASING:
                if self._partial_insertion(a, b):
                    return
            if a > 0 and not self.less(a - 1, pivot):
                a = self._partition_equal(a, b, pivot)
                continue
            mid, already = self._partition(a, b, pivot)
            was_partitioned = already
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                was_balanced = left >= threshold
                self._pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= threshold
                self._pdqsort(mid + 1, b, limit)
                b = mid

    def _partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i += 1
        j -= 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, False

    def _partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        return i

    def _partial_insertion(self, a: int, b: int) -> bool:
        max_steps, shortest_shifting = 5, 50
        i = a + 1
        for _ in range(max_steps):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < shortest_shifting:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                j = i - 1
                while j >= 1:
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
                    j -= 1
            if b - i >= 2:
                j = i + 1
                while j < b:
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
                    j += 1
        return False

    def _break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length >= 8:
            random = length  # xorshift seeded with the length
            modulus = 1 << length.bit_length()
            idx = a + (length // 4) * 2 - 1
            while idx <= a + (length // 4) * 2 + 1:
                random ^= (random << 13) & _MASK64
                random ^= random >> 7
                random ^= (random << 17) & _MASK64
                other = random & (modulus - 1)
                if other >= length:
                    other -= length
                self.swap(idx, a + other)
                idx += 1

    def _choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        shortest_ninther, max_swaps = 50, 4 * 3
        n = b - a
        swaps = [0]
        i, j, k = a + n // 4 * 1, a + n // 4 * 2, a + n // 4 * 3
        if n >= 8:
            if n >= shortest_ninther:
                i = self._median(i - 1, i, i + 1, swaps)
                j = self._median(j - 1, j, j + 1, swaps)
                k = self._median(k - 1, k, k + 1, swaps)
            j = self._median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == max_swaps:
            return j, _DECREASING
        return j, _UNKNOWN

    def _order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def _median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self._order2(a, b, swaps)
        b, c = self._order2(b, c, swaps)
        a, b = self._order2(a, b, swaps)
        return b

    def _reverse(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1
