"""goresctrl's building blocks: bit lists, cache-id lists, cache proportions and their overlay on a mask.

Facts from intel/goresctrl v0.12.0 (as containerd v2.3 vendors it) ``pkg/rdt/rdt_test.go``:
``TestBitMap``, ``TestListStrToArray``,
``TestCacheAllocation``, ``TestCacheProportion``, ``TestIsQualifiedClassName``.
"""

from __future__ import annotations

import pytest

from kubetwin.runtime.rdt import ROOT_CLASS_NAME, is_qualified_class_name
from kubetwin.runtime.rdt_alloc import (
    Absolute,
    Pct,
    PctRange,
    bitmask_list_str,
    list_str_to_array,
    list_str_to_bitmask,
    parse_cache_proportion,
)

BITMAPS = {0x0: "", 0x1: "0", 0x2: "1", 0xF: "0-3", 0x555: "0,2,4,6,8,10", 0xAAA: "1,3,5,7,9,11",
           0x1D1A: "1,3-4,8,10-12", 0xFFFFFFFFFFFFFFFF: "0-63"}


@pytest.mark.parametrize("mask,text", BITMAPS.items())
def test_bitmask_prints_as_a_bit_list(mask: int, text: str) -> None:
    assert bitmask_list_str(mask) == text


@pytest.mark.parametrize("mask,text", BITMAPS.items())
def test_bit_list_parses_to_the_bitmask(mask: int, text: str) -> None:
    assert list_str_to_bitmask(text) == mask


@pytest.mark.parametrize("text", [",", "-", "1,", ",12", "-4", "0-", "13-13", "14-13", "a-2", "b", "3-c", "64",
                                  "1,2,,3", "1,2,3-"])
def test_bad_bit_list_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        list_str_to_bitmask(text)


@pytest.mark.parametrize("text,ids", [("", []), ("0", [0]), ("1", [1]), ("0-3", [0, 1, 2, 3]),
                                      ("4,2,0,6,10,8", [0, 2, 4, 6, 8, 10]), ("1,3,5,7,9,11", [1, 3, 5, 7, 9, 11]),
                                      ("1,3-4,10-12,8", [1, 3, 4, 8, 10, 11, 12])])
def test_cache_id_list_parses_sorted(text: str, ids: list[int]) -> None:
    assert list_str_to_array(text) == ids


@pytest.mark.parametrize("text", [",", "-", "1,", "256", "256-257", "0-256", ",12", "-4", "0-", "13-13", "14-13",
                                  "a-2", "b", "3-c", "1,2,,3", "1,2,3-"])
def test_bad_cache_id_list_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        list_str_to_array(text)


def test_absolute_allocation_is_shifted_into_the_base_mask() -> None:
    assert Absolute(0x7).overlay(0xF00, 1) == 0x700


@pytest.mark.parametrize("base,min_bits", [(0, 1), (0x30, 1), (0xF0F, 1)])
def test_absolute_allocation_needs_a_contiguous_wide_enough_base(base: int, min_bits: int) -> None:
    with pytest.raises(ValueError):
        Absolute(0x7).overlay(base, min_bits)


def test_absolute_allocation_refuses_a_base_below_min_bits() -> None:
    with pytest.raises(ValueError):
        Absolute(0x1).overlay(0x10, 2)


@pytest.mark.parametrize("low,high,base,want", [(0, 100, 0xFF00, 0xFF00), (99, 100, 0xFF00, 0xF000),
                                                (0, 1, 0xFF00, 0xF00), (20, 30, 0x3FF00, 0xF00),
                                                (30, 60, 0xF00, 0xF00)])
def test_percentage_range_is_widened_to_min_bits(low: int, high: int, base: int, want: int) -> None:
    assert PctRange(low, high).overlay(base, 4) == want


@pytest.mark.parametrize("low,high,base", [(20, 10, 0xFF00), (0, 100, 0)])
def test_bad_percentage_range_or_empty_base_is_refused(low: int, high: int, base: int) -> None:
    with pytest.raises(ValueError):
        PctRange(low, high).overlay(base, 4)


def test_percentage_is_a_range_from_zero() -> None:
    assert Pct(50).overlay(0xFF, 1) == PctRange(0, 50).overlay(0xFF, 1) == 0xF


@pytest.mark.parametrize("text,want", [("10%", Pct(10)), ("10-20%", PctRange(10, 20)), ("0xf0", Absolute(0xF0)),
                                       ("3,4,5-7,8", Absolute(0x1F8))])
def test_cache_proportion_forms(text: str, want: object) -> None:
    assert parse_cache_proportion(text, 2) == want


@pytest.mark.parametrize("text", ["1a%", "101%", "a-100%", "0-1f%", "20-10%", "20-101%", "0x40", "0x11", "0xg",
                                  "3,5", "1", "3-x"])
def test_bad_cache_proportion_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_cache_proportion(text, 2)


def test_empty_cache_proportion_is_unset() -> None:
    assert parse_cache_proportion("", 2) is None


@pytest.mark.parametrize("name,ok", [("foo", True), (ROOT_CLASS_NAME, True), ("", True), (".", False), ("..", False),
                                     ("foo/bar", False), ("foo\n", False)])
def test_class_names_must_be_usable_as_directory_names(name: str, ok: bool) -> None:
    assert is_qualified_class_name(name) is ok
