"""Go's pdqsort (``sort.Slice``, ``slices.SortFunc``) as :mod:`kubetwin.runtime.gosort` runs it."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from kubetwin.runtime.gosort import sort_func, sort_slice


@given(st.lists(st.integers(-50, 50), max_size=200))
def test_a_strict_order_sorts_as_python_does(xs: list[int]) -> None:
    got = list(xs)
    sort_slice(got, lambda a, b: a < b)
    assert got == sorted(xs)


@given(st.lists(st.tuples(st.integers(0, 5), st.integers()), max_size=12))
def test_up_to_twelve_elements_is_an_insertion_sort_so_ties_keep_their_order(xs: list[tuple[int, int]]) -> None:
    got = list(xs)
    sort_slice(got, lambda a, b: a[0] < b[0])
    assert got == sorted(xs, key=lambda t: t[0])


def test_more_than_twelve_elements_with_ties_are_not_kept_in_order() -> None:
    xs = [(i % 3, i) for i in range(40)]
    got = list(xs)
    sort_slice(got, lambda a, b: a[0] < b[0])
    assert [k for k, _ in got] == sorted(k for k, _ in xs)
    assert got != sorted(xs, key=lambda t: t[0])  # unstable, as Go's


def test_an_inconsistent_comparator_gives_the_same_order_every_time() -> None:
    rng = random.Random(7)
    xs = [rng.randrange(100) for _ in range(60)]
    less = lambda a, b: (a % 7) < (b % 5)  # noqa: E731 - not a strict weak order
    first, second = list(xs), list(xs)
    sort_slice(first, less)
    sort_slice(second, less)
    assert first == second and sorted(first) == sorted(xs)


def test_sort_func_uses_a_three_way_comparison() -> None:
    xs = [5, 3, 9, 1]
    sort_func(xs, lambda a, b: b - a)
    assert xs == [9, 5, 3, 1]
