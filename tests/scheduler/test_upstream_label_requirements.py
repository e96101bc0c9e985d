"""Gt/Lt node-selector requirements parse integers as upstream's ``strconv.ParseInt(s, 10, 64)``.

Facts from the differential harness against apimachinery ``labels.NewRequirement`` /
``Requirement.Matches`` (v1.36): a label value that Go cannot parse as a base-10 int64 never
matches, and such a requirement value makes the requirement invalid.
"""

from __future__ import annotations

import pytest

from kubetwin.scheduler.labels import parse_int64, requirement_matcher


@pytest.mark.parametrize("text", ["1_000", "99999999999999999999", "9223372036854775808", " 4", "0x10", "1e3"])
def test_values_go_cannot_parse_are_not_integers(text: str) -> None:
    assert parse_int64(text) is None


@pytest.mark.parametrize("text, value", [("5", 5), ("-3", -3), ("+4", 4), ("007", 7),
                                         ("9223372036854775807", 9223372036854775807)])
def test_go_integers_parse(text: str, value: int) -> None:
    assert parse_int64(text) == value


def test_gt_does_not_match_a_label_value_with_an_underscore() -> None:
    assert requirement_matcher("k", "Gt", ["5"])({"k": "1_000"}) is False


def test_gt_does_not_match_a_label_value_beyond_int64() -> None:
    assert requirement_matcher("k", "Gt", ["5"])({"k": "99999999999999999999"}) is False


def test_gt_with_a_bound_beyond_int64_is_an_invalid_requirement() -> None:
    assert requirement_matcher("k", "Gt", ["9223372036854775808"]) is None
