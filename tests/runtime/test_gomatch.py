"""Go's ``filepath.Match``: the glob nri-plugins matches namespaces and values with."""

from __future__ import annotations

import pytest

from kubetwin.runtime.gomatch import BadPattern, match


@pytest.mark.parametrize("pattern, name, want", [
    ("monitor-*", "monitor-mypods", True),
    ("*-log*", "system-logs", True),
    ("reserved-*", "reserved-test", True),
    ("kube-?ystem", "kube-system", True),
    ("*", "a/b", False),  # a star never crosses a slash
    ("a/*", "a/b", True),
    ("[a-c]x", "bx", True),
    ("[^a-c]x", "dx", True),
    ("[^a-c]x", "ax", False),
    ("\\*", "*", True),
    ("ab", "abc", False),
    ("", "", True),
])
def test_matches_as_go_does(pattern: str, name: str, want: bool) -> None:
    assert match(pattern, name) is want


@pytest.mark.parametrize("pattern", ["[", "[a-", "a\\", "[]", "x[b-]"])
def test_a_malformed_pattern_is_an_error(pattern: str) -> None:
    with pytest.raises(BadPattern):
        match(pattern, "x")


def test_a_malformed_rest_is_reported_even_after_a_mismatch() -> None:
    with pytest.raises(BadPattern):
        match("a[", "b")
