"""The CEL cost limit as Kubernetes applies it: cel-go's runtime cost of an evaluation, from the
checked AST and this device's value sizes, refused past 1,000,000 units before evaluating."""

from __future__ import annotations

import pytest

from kubetwin.dra.allocator import AllocationError
from kubetwin.dra.api import parse_resource_claim, parse_resource_slice
from kubetwin.dra.cel import CELError, compile_selector, estimate_cost
from kubetwin.dra.celcost import COST_LIMIT, checked_ast, evaluation_cost, of

from .conftest import claim, slice_
from .test_allocator import NODE, allocator
from .test_cel import DEVICE, ok

D = "gpu.example.com"
BOMB = "[" + ",".join(str(i) for i in range(200)) + "]"


def _device(n_attributes: int):
    attrs = {f"a{i}": {"string": "x" * 60} for i in range(n_attributes)}
    return parse_resource_slice({"metadata": {"name": "s"}, "spec": {
        "driver": D, "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "n", "devices": [{"name": "d", "attributes": attrs}]}}).devices[0]


def cost(expr: str, data: dict) -> int:
    from kubetwin.dra.cel import CELOptions, _env

    return evaluation_cost(checked_ast(_env(CELOptions()).compile(expr).serialize()), of(data))


@pytest.mark.parametrize("expr,units", [
    ('device.driver == "gpu.example.com"', 4),            # ident, field, equality ceil(15 × 0.1)
    ('device.attributes["gpu.example.com"].index < 4', 5),  # ident + 3 qualifiers + comparison
    ('"abcdefghijklmnopqrstu" + "x" == "y"', 4),          # concatenation ceil(22 × 0.1) + equality
    ('[1, 2, 3].exists(x, x == 2)', 10 + 3 * 6 + 1),      # list literal, per round: condition 3, step 3; result
])
def test_runtime_charges_follow_cel_go(expr, units):
    data = {"driver": D, "attributes": {D: {"index": 3}}, "capacity": {}}
    assert cost(expr, data) == units


@pytest.mark.parametrize("expr", [
    f'device.driver == "{D}"',
    f'device.attributes["{D}"].model == "A100" && device.capacity["{D}"].memory.compareTo(quantity("40Gi")) >= 0',
    f'device.attributes["{D}"].exists(k, k.startsWith("mod"))',
    f'cel.bind(g, device.attributes["{D}"], g.model.matches("^A[0-9]+$") && g.index == 3)',
])
def test_ordinary_selectors_are_far_below_the_limit_and_never_costed_per_device(expr):
    assert estimate_cost(expr) < COST_LIMIT // 100
    assert compile_selector(expr).cost_ast is None
    assert ok(expr)


def test_a_literal_bomb_is_refused_on_every_device_with_kubernetes_text():
    expr = f"{BOMB}.all(a, {BOMB}.all(b, {BOMB}.exists(c, a + b + c < 0)))"
    with pytest.raises(CELError) as err:
        compile_selector(expr).matches(DEVICE, D)
    assert str(err.value) == "operation cancelled: actual cost limit exceeded"


def test_a_bomb_over_device_values_depends_on_the_device():
    expr = (f'device.attributes["{D}"].all(a, device.attributes["{D}"].all(b, device.attributes["{D}"].all(c, '
            f'device.attributes["{D}"].all(e, a + b + c + e != ""))))')
    sel = compile_selector(expr)
    assert sel.cost_ast is not None  # 32 attributes would exceed the limit
    assert sel.matches(_device(4), D)  # 4^4 rounds: fine
    with pytest.raises(CELError, match="actual cost limit exceeded"):
        sel.matches(_device(32), D)


def test_string_sizes_count():
    expr = f'device.attributes["{D}"].all(a, {BOMB}.all(i, {BOMB}.all(j, device.attributes["{D}"][a].contains("y"))))'
    small = {"driver": D, "attributes": {D: {"s": "x"}}, "capacity": {}}
    large = {"driver": D, "attributes": {D: {"s": "x" * 64}}, "capacity": {}}
    assert cost(expr, large) > cost(expr, small)


def test_the_allocator_reports_the_limit_as_a_cel_runtime_error():
    expr = f"{BOMB}.all(a, {BOMB}.all(b, {BOMB}.exists(c, a + b + c < 0)))"
    c = claim(selectors=[expr])
    with pytest.raises(AllocationError, match="CEL runtime error: operation cancelled: actual cost limit exceeded"):
        allocator(slice_()).allocate(NODE, [parse_resource_claim(c)])
