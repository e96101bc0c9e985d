"""The DRA CEL environment: Kubernetes' libraries, lookup rules, and bad expressions as clear errors."""

from __future__ import annotations

import pytest

from kubetwin.dra.api import parse_resource_slice
from kubetwin.dra.cel import CELError, CELOptions, compile_selector, estimate_cost

DEVICE = parse_resource_slice({"metadata": {"name": "s"}, "spec": {
    "driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
    "nodeName": "n", "devices": [{"name": "gpu-0", "attributes": {
        "model": {"string": "A100"}, "driverVersion": {"version": "1.2.3"}, "index": {"int": 3},
        "pci.example.org/numa": {"int": 1}}, "capacity": {"memory": {"value": "40Gi"}}}]}}).devices[0]


def ok(expr: str, options: CELOptions = CELOptions()) -> bool:
    return compile_selector(expr, options).matches(DEVICE, "gpu.example.com")


@pytest.mark.parametrize("expr", [
    'device.driver == "gpu.example.com"',
    'device.attributes["gpu.example.com"].model == "A100"',
    'device.attributes["pci.example.org"].numa == 1',
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) == 0',
    'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("39Gi"))',
    'quantity("1Gi") == quantity("1024Mi")',
    'device.capacity["gpu.example.com"].memory.asInteger() == 42949672960',
    'quantity("1.5").isInteger() == false',
    'quantity("1").add(2).compareTo(quantity("3")) == 0',
    'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))',
    'device.attributes["gpu.example.com"].driverVersion.major() == 1',
    'semver("v1.2", true) == semver("1.2.0")',
    'isSemver("1.2.3") && !isSemver("01.2.3") && isQuantity("5m")',
    'cel.bind(g, device.attributes["gpu.example.com"], g.model == "A100" && g.index == 3)',
    'device.attributes["gpu.example.com"].?missing.orValue("none") == "none"',
    'device.attributes["gpu.example.com"].model.lowerAscii().startsWith("a1")',
    'device.attributes["gpu.example.com"].model.matches("^A[0-9]+$")',
    'device.attributes["unknown.example.com"].size() == 0',
    'device.allowMultipleAllocations == false',
])
def test_selector_matches(expr):
    assert ok(expr) is True


def test_unknown_key_in_known_domain_is_a_runtime_error():
    with pytest.raises(CELError, match="no such key: nosuch"):
        ok('device.attributes["gpu.example.com"].nosuch == 1')


def test_undeclared_reference_is_a_compile_error():
    with pytest.raises(CELError, match="undeclared reference to 'noSuchVar'"):
        compile_selector("noSuchVar")


@pytest.mark.parametrize("expr", ["device.driver ==", "(((", '"unterminated', "device.driver == 'a' &&& true"])
def test_syntax_errors_are_compile_errors(expr):
    with pytest.raises(CELError, match="compilation failed"):
        compile_selector(expr)


def test_non_bool_expression_is_refused():
    with pytest.raises(CELError, match="must evaluate to bool"):
        compile_selector("1 + 2")


def test_type_error_is_a_compile_error():
    with pytest.raises(CELError, match="no matching overload"):
        compile_selector('quantity("1Gi") > 5')


def test_runtime_non_bool_result_is_an_error():
    with pytest.raises(CELError, match="could not be converted to bool"):
        ok('device.attributes["gpu.example.com"].model')


def test_bad_quantity_literal_is_a_runtime_error():
    with pytest.raises(CELError):
        ok('quantity("1x") == quantity("1")')


def test_nested_comprehension_cost_bomb_is_refused_before_running():
    big = "[" + ",".join(str(i) for i in range(500)) + "]"
    expr = f"{big}.all(a, {big}.all(b, {big}.exists(c, a + b + c < 0)))"
    assert estimate_cost(expr) > 1_000_000
    with pytest.raises(CELError, match="^operation cancelled: actual cost limit exceeded$"):
        compile_selector(expr).matches(DEVICE, "gpu.example.com")


def test_modest_comprehension_is_within_budget():
    assert ok('device.attributes["gpu.example.com"].exists(k, k == "model")')


def test_over_long_expression_is_refused():
    with pytest.raises(CELError, match="more than the 10240 allowed"):
        compile_selector("true && " * 2000 + "true")


def test_list_attribute_breaks_every_selector_without_the_gate():
    dev = parse_resource_slice({"metadata": {"name": "s"}, "spec": {
        "driver": "d.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "n", "devices": [{"name": "x", "attributes": {"l": {"strings": ["a", "b"]}}}]}}).devices[0]
    with pytest.raises(CELError, match="attribute l: unsupported attribute value"):
        compile_selector('device.driver == "d.example.com"').matches(dev, "d.example.com")
    opts = CELOptions(list_type_attributes=True)
    assert compile_selector('device.attributes["d.example.com"].l.includes("a")', opts).matches(dev, "d.example.com")
