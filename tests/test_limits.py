"""Input limits: documented, overridable by environment variables, refused with the variable named."""

from pathlib import Path

import pytest

from kubetwin import limits
from kubetwin.errors import InputError
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.quantity import parse_quantity

DOC = Path(__file__).resolve().parents[1] / "docs" / "limits.md"


def test_every_limit_is_documented_with_its_default():
    text = DOC.read_text()
    for limit in limits.ALL:
        row = next((line for line in text.splitlines() if line.startswith(f"| `{limit.env}` |")), None)
        assert row is not None, f"{limit.env} is not in docs/limits.md"
        assert f"| {limit.default}" in row, f"{limit.env}: docs/limits.md does not give the default {limit.default}"


def test_a_limit_is_raised_by_its_environment_variable(monkeypatch):
    monkeypatch.setenv("KUBETWIN_MAX_CPU_ID", "200000")
    assert CPUSet.parse("0-150000").mask.bit_length() == 150001


def test_an_input_past_a_limit_names_the_variable_that_raises_it():
    with pytest.raises(InputError, match="KUBETWIN_MAX_CPU_ID") as err:
        CPUSet.parse("0-99999999999", "reservedSystemCPUs")
    assert err.value.path == "reservedSystemCPUs"


def test_a_malformed_limit_variable_is_an_input_error(monkeypatch):
    monkeypatch.setenv("KUBETWIN_MAX_CPU_ID", "many")
    with pytest.raises(InputError, match="KUBETWIN_MAX_CPU_ID"):
        CPUSet.parse("0-3")


def test_a_quantity_of_thousands_of_digits_is_refused_not_a_traceback():
    with pytest.raises(InputError, match="more than 1000 digits"):
        parse_quantity("9" * 100_000 + "Ei")


def test_a_refused_quantity_is_not_quoted_in_full():
    with pytest.raises(InputError) as err:
        parse_quantity("9" * 100_000 + "Ei")
    assert len(str(err.value)) < 500
