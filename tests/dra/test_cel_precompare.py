"""Comparisons of a device's quantity or version with a constant are answered once per device
(no Python callback per evaluation): same verdicts and same errors as calling compareTo."""

from __future__ import annotations

import pytest

from kubetwin.dra.api import parse_resource_slice
from kubetwin.dra.cel import CELError, compile_selector, fold_constants, precompare

from .test_cel import DEVICE, ok

OTHER = parse_resource_slice({"metadata": {"name": "s"}, "spec": {
    "driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
    "nodeName": "n", "devices": [{"name": "odd", "attributes": {"driverVersion": {"string": "1.2.3"}},
                                  "capacity": {"cores": {"value": "8"}}}]}}).devices[0]


@pytest.mark.parametrize("pre,computed", [
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) == 0',
     'device.capacity["gpu.example.com"].memory.compareTo(quantity("40" + "Gi")) == 0'),
    ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("41Gi"))',
     'device.capacity["gpu.example.com"].memory.isLessThan(quantity("41" + "Gi"))'),
    ('device.attributes["gpu.example.com"]["driverVersion"].isGreaterThan(semver("1.2.2"))',
     'device.attributes["gpu.example.com"]["driverVersion"].isGreaterThan(semver("1.2" + ".2"))'),
    ("device.attributes['gpu.example.com'].driverVersion.compareTo(semver('1.2.3')) == 0",
     "device.attributes['gpu.example.com'].driverVersion.compareTo(semver('1.2' + '.3')) == 0"),
])
def test_precompared_calls_give_the_verdict_of_the_call(pre, computed):
    assert precompare(fold_constants(pre))[1]
    assert compile_selector(pre).fast_program is not None
    assert ok(pre) is ok(computed) is True


def test_a_device_without_the_value_fails_as_the_call_would():
    expr = 'device.capacity["gpu.example.com"].memory.compareTo(quantity("1Gi")) > 0'
    with pytest.raises(CELError, match="no such key: memory"):
        compile_selector(expr).matches(OTHER, "gpu.example.com")
    assert compile_selector(expr).matches(DEVICE, "gpu.example.com")


def test_a_value_of_another_kind_fails_as_the_call_would():
    expr = 'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.0.0"))'
    computed = 'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.0" + ".0"))'
    with pytest.raises(CELError) as pre_err:
        compile_selector(expr).matches(OTHER, "gpu.example.com")
    with pytest.raises(CELError) as call_err:
        compile_selector(computed).matches(OTHER, "gpu.example.com")
    assert str(pre_err.value) == str(call_err.value)


def test_comparing_a_quantity_with_a_version_is_not_precompared_into_an_answer():
    expr = 'device.capacity["gpu.example.com"].memory.compareTo(semver("1.0.0")) == 0'
    with pytest.raises(CELError, match="no such overload"):
        ok(expr)


def test_device_rebound_by_a_macro_is_left_alone():
    expr = ('[1].all(device, true) && '
            'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) == 0')
    assert precompare(fold_constants(expr))[1] == ()
    assert ok(expr)


def test_text_inside_strings_is_not_rewritten():
    expr = ('device.attributes["gpu.example.com"].model != '
            '\'device.capacity["x"].m.compareTo(quantity("1"))\'')
    assert precompare(fold_constants(expr))[1] == ()
    assert ok(expr)
