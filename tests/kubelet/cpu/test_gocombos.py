"""``iterate_combinations`` shares backing arrays as upstream's Go ``append`` does."""

from __future__ import annotations

from kubetwin.kubelet.cpu.gocombos import grown_capacity, iterate_combinations


def test_int_slices_grow_by_doubling_while_small() -> None:
    assert [grown_capacity(c, c + 1) for c in (0, 1, 2, 4, 8, 16, 32, 64, 128)] == [1, 2, 4, 8, 16, 32, 64, 128, 256]


def test_slices_of_256_or_more_grow_by_a_quarter_rounded_to_a_size_class() -> None:
    assert grown_capacity(512, 513) == 848


def test_combinations_are_visited_in_upstream_order() -> None:
    seen = [v.values() for v in iterate_combinations([0, 1, 2, 3], 2)]
    assert seen == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]


def test_a_kept_combination_of_four_is_overwritten_by_its_siblings() -> None:
    views = list(iterate_combinations([0, 1, 2, 3, 4], 4))
    assert views[0].values() == (0, 1, 2, 4)  # {0,1,2,3} shares its array with {0,1,2,4}


def test_a_kept_combination_of_three_keeps_its_values() -> None:
    views = list(iterate_combinations([0, 1, 2, 3, 4], 3))
    assert views[0].values() == (0, 1, 2)


def test_stopping_early_still_writes_the_combination_being_visited() -> None:
    kept = None
    for i, view in enumerate(iterate_combinations([0, 1, 2, 3, 4], 4)):
        if i == 1:
            break
        kept = view
    assert kept is not None and kept.values() == (0, 1, 2, 4)
