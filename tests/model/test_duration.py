"""Go durations: parsed as time.ParseDuration parses them, printed as Duration.String prints them."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.model.duration import (
    HOUR,
    MICROSECOND,
    MILLISECOND,
    MINUTE,
    SECOND,
    Duration,
    DurationError,
    format_go_duration,
    parse_duration,
    parse_go_duration,
)


@pytest.mark.parametrize("text, ns", [
    ("0", 0), ("0s", 0), ("+5s", 5 * SECOND), ("1m30s", 90 * SECOND), ("100ms", 100 * MILLISECOND),
    ("1.5h", 90 * MINUTE), ("-1.5h", -90 * MINUTE), (".5s", 500 * MILLISECOND), ("5.s", 5 * SECOND),
    ("1us", MICROSECOND), ("1\u00b5s", MICROSECOND), ("1\u03bcs", MICROSECOND), ("2h45m", 2 * HOUR + 45 * MINUTE),
    ("1.000000001s", SECOND + 1), ("0.5ns", 0), ("9223372036854775807ns", 2**63 - 1),
    ("-9223372036854775808ns", -(2**63)),
])
def test_parse_matches_go(text, ns):
    assert parse_go_duration(text) == ns


@pytest.mark.parametrize("text, message", [
    ("", 'time: invalid duration ""'),
    ("1", 'time: missing unit in duration "1"'),
    ("1.", 'time: missing unit in duration "1."'),
    ("x", 'time: invalid duration "x"'),
    ("-", 'time: invalid duration "-"'),
    (".", 'time: invalid duration "."'),
    ("1x", 'time: unknown unit "x" in duration "1x"'),
    ("1 s", 'time: unknown unit " s" in duration "1 s"'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
    ("3000000h", 'time: invalid duration "3000000h"'),
])
def test_parse_errors_quote_go(text, message):
    with pytest.raises(DurationError) as info:
        parse_go_duration(text)
    assert info.value.message == message


@pytest.mark.parametrize("ns, text", [
    (0, "0s"), (1, "1ns"), (1500, "1.5\u00b5s"), (100 * MILLISECOND, "100ms"), (1500 * MILLISECOND, "1.5s"),
    (90 * SECOND, "1m30s"), (5 * MINUTE, "5m0s"), (HOUR, "1h0m0s"), (HOUR + 500 * MILLISECOND, "1h0m0.5s"),
    (-90 * SECOND, "-1m30s"), (2**63 - 1, "2562047h47m16.854775807s"), (-(2**63), "-2562047h47m16.854775808s"),
])
def test_format_matches_go(ns, text):
    assert format_go_duration(ns) == text


def test_duration_is_an_int_of_nanoseconds_that_prints_like_go():
    d = Duration.parse("1m30s")
    assert d == 90 * SECOND and str(d) == "1m30s" and d.seconds == 90.0


def test_field_value_must_be_a_string_and_errors_name_the_field():
    with pytest.raises(InputError) as info:
        parse_duration(30, "evictionSoftGracePeriod")
    assert str(info.value).startswith("evictionSoftGracePeriod: duration must be a string")


def test_bad_field_value_names_the_field():
    with pytest.raises(InputError) as info:
        parse_duration("30 s", "cpuManagerReconcilePeriod")
    assert str(info.value).startswith('cpuManagerReconcilePeriod: time: unknown unit " s"')


def test_a_duration_error_suggests_go_durations():
    with pytest.raises(DurationError) as info:
        parse_go_duration("1day")
    assert info.value.message == 'time: unknown unit "day" in duration "1day"'
    assert '"1h30m"' in (info.value.fix or "")
