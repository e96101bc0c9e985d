"""CPUSet speaks the Linux list format and does set algebra."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetwin.errors import InputError
from kubetwin.model.cpuset import CPUSet


def test_parse_and_format_the_linux_list_format():
    s = CPUSet.parse("0-3,8,10-11")
    assert list(s) == [0, 1, 2, 3, 8, 10, 11]
    assert str(s) == "0-3,8,10-11"


def test_empty_string_is_the_empty_set():
    assert CPUSet.parse("").is_empty()
    assert str(CPUSet()) == ""


def test_set_algebra():
    a, b = CPUSet.parse("0-7"), CPUSet.parse("4-11")
    assert str(a | b) == "0-11"
    assert str(a & b) == "4-7"
    assert str(a - b) == "0-3"
    assert (a & b).is_subset_of(a)


@pytest.mark.parametrize("bad", ["a", "3-1", "1-", "-1", "1,,x"])
def test_invalid_lists_are_refused_naming_the_element(bad):
    with pytest.raises(InputError, match="invalid cpuset"):
        CPUSet.parse(bad, path="reservedSystemCPUs")


@given(st.frozensets(st.integers(min_value=0, max_value=1023)))
def test_format_then_parse_is_the_identity(cpus):
    s = CPUSet(cpus)
    assert CPUSet.parse(str(s)) == s
    assert set(s) == set(cpus)
    assert s.size() == len(cpus)


def test_thousand_cpu_sets_are_cheap():
    big = CPUSet.range(0, 1023)
    assert big.size() == 1024
    assert str(big - CPUSet.range(512, 1023)) == "0-511"
