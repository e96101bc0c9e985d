"""Quantity behaves as apimachinery's resource.Quantity."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetwin.model.quantity import Quantity, QuantityError, parse_quantity


@pytest.mark.parametrize("text,canonical", [
    ("0", "0"), ("1", "1"), ("1000m", "1"), ("1.5", "1500m"), ("100m", "100m"), ("2000", "2k"),
    ("5k", "5k"), ("12E", "12E"), ("1.01", "1010m"), ("0.01", "10m"), ("1Ki", "1Ki"), ("1024", "1024"),
    ("1Gi", "1Gi"), ("1024Mi", "1Gi"), ("1.5Gi", "1536Mi"), ("0.5Gi", "512Mi"), ("0.5Ki", "512"),
    ("0.1m", "100u"), ("1e3", "1e3"), ("1E3", "1e3"), ("-1.5", "-1500m"), ("0.1Mi", "104857600m"),
    ("1.0000000001", "1000000001n"), ("10Ei", "9223372036854775807"), ("000", "0"), (".5", "500m"),
])
def test_canonical_form_matches_the_api_server(text, canonical):
    assert Quantity.parse(text).canonical() == canonical


@pytest.mark.parametrize("text", ["+1", "0100m", "1."])
def test_a_string_already_in_fast_path_form_prints_back_verbatim(text):
    assert str(Quantity.parse(text)) == text


@pytest.mark.parametrize("text,value,milli", [
    ("1500m", 2, 1500), ("1n", 1, 1), ("0.1n", 1, 1), ("1Gi", 2**30, 2**30 * 1000), ("-1.5", -2, -1500),
    ("100m", 1, 100), ("1e3", 1000, 1_000_000),
])
def test_value_and_milli_value_round_up_away_from_zero(text, value, milli):
    q = Quantity.parse(text)
    assert (q.value(), q.milli_value()) == (value, milli)


def test_sub_nano_precision_rounds_up_to_one_nano():
    assert Quantity.parse("0.1n") == Quantity.parse("1n")


@pytest.mark.parametrize("text,message", [
    ("", "regular expression"), ("abc", "regular expression"), ("1K", "suffix"), ("1i", "suffix"),
    ("1.2.3", "regular expression"), ("1e", "suffix"), ("--1", "suffix"), ("1 ", "regular expression"),
])
def test_invalid_strings_are_refused_with_apimachinerys_message(text, message):
    with pytest.raises(QuantityError, match=message):
        Quantity.parse(text)


def test_parse_error_names_the_string_and_the_field():
    with pytest.raises(QuantityError) as err:
        parse_quantity("12x", path="spec.containers[0].resources.limits.cpu")
    assert '"12x"' in str(err.value)
    assert "spec.containers[0].resources.limits.cpu" in str(err.value)


def test_yaml_numbers_are_quantities():
    assert parse_quantity(2) == Quantity.parse("2")
    assert parse_quantity(0.5) == Quantity.parse("500m")


def test_booleans_and_null_are_not_quantities():
    for bad in (True, None, [1]):
        with pytest.raises(QuantityError):
            parse_quantity(bad)


def test_comparison_is_exact_across_formats():
    assert Quantity.parse("1Gi") > Quantity.parse("1G")
    assert Quantity.parse("1000m") == Quantity.parse("1")
    assert Quantity.parse("1536Mi") == Quantity.parse("1.5Gi")
    assert hash(Quantity.parse("1000m")) == hash(Quantity.parse("1"))


def test_addition_and_subtraction_are_exact():
    assert (Quantity.parse("100m") + Quantity.parse("1.9")).canonical() == "2"
    assert (Quantity.parse("1Gi") - Quantity.parse("512Mi")).canonical() == "512Mi"


decimal_suffix = st.sampled_from(["", "m", "k", "M", "G", "T", "n", "u"])
binary_suffix = st.sampled_from(["Ki", "Mi", "Gi", "Ti"])


@given(st.integers(min_value=0, max_value=10**6), decimal_suffix)
def test_decimal_canonical_form_round_trips(n, suffix):
    q = Quantity.parse(f"{n}{suffix}")
    again = Quantity.parse(q.canonical())
    assert again == q
    assert again.canonical() == q.canonical()


@given(st.integers(min_value=0, max_value=2**30), binary_suffix)
def test_binary_canonical_form_round_trips(n, suffix):
    q = Quantity.parse(f"{n}{suffix}")
    assert Quantity.parse(q.canonical()) == q


@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=0, max_value=999))
def test_milli_value_of_a_decimal_is_exact_or_rounded_up(whole, frac):
    q = Quantity.parse(f"{whole}.{frac:03d}")
    assert q.milli_value() == whole * 1000 + frac
    assert q.value() == whole + (1 if frac else 0)


@pytest.mark.parametrize("text", ["1e999999999", "1e-999999999", "1e40", "0." + "0" * 45 + "1", "1" + "0" * 41])
def test_absurd_magnitudes_are_refused_instead_of_hanging(text):
    with pytest.raises(QuantityError, match="out of range"):
        Quantity.parse(text)


def test_zero_with_a_huge_exponent_is_just_zero():
    q = Quantity.parse("0e999999999")
    assert (q.canonical(), q.value(), q.milli_value()) == ("0", 0, 0)


# --- edge cases of apimachinery's scanner ------------------------------------------------------------
@pytest.mark.parametrize("text", ["E", "e3", "E-3", "+", "-", ".", "+.", "-.", "Ki", "m", "k", ".e3"])
def test_a_string_without_digits_is_refused_not_read_as_zero(text):
    with pytest.raises(QuantityError) as info:
        parse_quantity(text, "spec.containers[0].resources.requests.cpu")
    assert f'quantity "{text}" is invalid: a quantity needs digits' in str(info.value)
    assert "kubernetes/apimachinery#165" in str(info.value)


@pytest.mark.parametrize("text", ["1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-",
                                  " 1", "1 ", "1e", "1e+", "1Ki3", "1KKi", "\uff11", "1\u0663", "0x10", ""])
def test_strings_apimachinery_refuses_are_refused(text):
    with pytest.raises(QuantityError):
        Quantity.parse(text)


@pytest.mark.parametrize("text, milli", [("1.", 1000), ("1.G", 10**12), (".001", 1), ("0.", 0), ("+1", 1000),
                                         ("-0", 0), ("00", 0), ("1E", 10**21), ("1e+3", 10**6), ("0.5e-1", 50)])
def test_strings_apimachinery_accepts_with_digits_are_read_as_it_reads_them(text, milli):
    assert Quantity.parse(text).milli_value() == milli
