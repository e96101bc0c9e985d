"""The DRA CEL ``device`` variable is an object type upstream (kubetwin/dra/celfields.py): a
selection of a field it does not have is a compile error in cel-go's words, at the ``.``."""

from __future__ import annotations

import pytest

from kubetwin.dra.cel import CELError, CELOptions, compile_selector
from kubetwin.dra.celfields import device_fields, fix_for


def compile_error(expression: str, **options: bool) -> str:
    with pytest.raises(CELError) as info:
        compile_selector(expression, CELOptions(**options))
    return str(info.value)


def test_an_undefined_field_of_device_does_not_compile():
    assert compile_error('device.driverr == "gpu.example.com"') == (
        "compilation failed: ERROR: <input>:1:7: undefined field 'driverr'\n"
        ' | device.driverr == "gpu.example.com"\n'
        " | ......^")


def test_the_error_names_the_line_and_column_of_a_multi_line_expression():
    message = compile_error('device.driver == "x" &&\n  device.atributes["x"].a == 1')
    assert message.splitlines() == ["compilation failed: ERROR: <input>:2:9: undefined field 'atributes'",
                                    ' |   device.atributes["x"].a == 1', " | ........^"]


def test_a_presence_test_of_an_undefined_field_does_not_compile():
    assert "undefined field 'foo'" in compile_error("has(device.foo)")


@pytest.mark.parametrize("expression", [
    'device.driver == "x"', 'device.attributes["x"].model == "a"',
    'device.capacity["x"].memory.compareTo(quantity("1Gi")) >= 0', "has(device.attributes.x)",
    'cel.bind(device, {"a": 1}, device.a == 1)',   # a variable of that name is not the device
])
def test_the_fields_of_device_and_shadowing_variables_compile(expression):
    compile_selector(expression)


def test_allow_multiple_allocations_is_a_field_only_with_consumable_capacity():
    compile_selector("device.allowMultipleAllocations", CELOptions(consumable_capacity=True))
    assert "undefined field 'allowMultipleAllocations'" in compile_error("device.allowMultipleAllocations",
                                                                         consumable_capacity=False)


def test_the_fix_for_an_undefined_field_names_the_nearest_field():
    fix = fix_for(compile_error("device.capacty == {}"), device_fields(False))
    assert fix == 'device has the fields driver, attributes, capacity; did you mean "capacity"?'
