"""Literal quantity()/semver() calls are folded into constants at compile time: same verdicts,
same errors, only faster."""

from __future__ import annotations

import pytest

from kubetwin.dra.cel import CELError, compile_selector, fold_constants

from .test_cel import ok


@pytest.mark.parametrize("folded,computed", [
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) == 0',
     'device.capacity["gpu.example.com"].memory.compareTo(quantity("40" + "Gi")) == 0'),
    ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))',
     'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2" + ".0"))'),
    ('semver("v1.2", true).minor() == 2', 'semver("v1." + "2", true).minor() == 2'),
    ('isQuantity("1Gi") && !isSemver("1.2")', 'isQuantity("1" + "Gi") && !isSemver("1." + "2")'),
])
def test_folded_literals_give_the_same_verdict_as_computed_arguments(folded, computed):
    assert "__kubetwin_consts" in fold_constants(folded) or "true" in fold_constants(folded)
    assert ok(folded) is ok(computed) is True


def test_a_literal_that_does_not_parse_still_fails_at_evaluation():
    assert fold_constants('quantity("1x") == quantity("1")').startswith('quantity("1x")')
    with pytest.raises(CELError):
        ok('quantity("1x") == quantity("1")')


def test_text_inside_string_literals_is_not_touched():
    expr = 'device.attributes["gpu.example.com"].model != \'quantity("1")\''
    assert fold_constants(expr) == expr
    assert ok(expr)


def test_member_calls_named_like_the_library_are_not_folded():
    assert fold_constants('x.quantity("1")') == 'x.quantity("1")'


def test_compile_errors_quote_the_expression_as_written():
    with pytest.raises(CELError) as err:
        compile_selector('quantity("1Gi") + 1 == 2')
    assert "__kubetwin_consts" not in str(err.value)
