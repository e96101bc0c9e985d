"""The fields of the DRA CEL ``device`` variable, checked at compile time as cel-go checks them.

Why: upstream declares ``device`` as the object type ``kubernetes.DRADevice`` with the fields
``driver``, ``attributes``, ``capacity`` and, with DRAConsumableCapacity,
``allowMultipleAllocations`` (``staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go``,
``newCompiler``), so cel-go's type checker refuses any other field — ``device.driverr`` — with
``undefined field 'driverr'`` (``checker/errors.go``, ``undefinedField``): the API server refuses
the DeviceClass or claim at creation. kubetwin's engine (cel-cpp) holds ``device`` as a map and
would only fail at evaluation ("no such key"), naming neither the object nor the field; this
module finds such a selection in the checked expression and words it as cel-go does, with the
position of the ``.`` and the source line under it.
"""

from __future__ import annotations

from typing import Final, Iterator

from .celcost import Node, checked_ast, first_field, wire_fields

#: ``kubernetes.DRADevice``'s fields (``driverVar``, ``attributesVar``, ``capacityVar``)
DEVICE_FIELDS: Final = frozenset({"driver", "attributes", "capacity"})
#: declared only while DRAConsumableCapacity is on
CONSUMABLE_CAPACITY_FIELD: Final = "allowMultipleAllocations"


def device_fields(consumable_capacity: bool) -> frozenset[str]:
    return DEVICE_FIELDS | {CONSUMABLE_CAPACITY_FIELD} if consumable_capacity else DEVICE_FIELDS


def _device_selects(node: Node | None, shadowed: frozenset[str] = frozenset()) -> Iterator[Node]:
    """Select nodes whose operand is the ``device`` variable (not a comprehension's or
    ``cel.bind``'s variable of that name), in source order of the walk."""
    if node is None:
        return
    if node.kind == "select":
        operand = node.children[0]
        if operand is not None and operand.kind == "ident" and operand.value == "device" \
                and "device" not in shadowed:
            yield node
    if node.kind == "comp":
        iter_range, accu_init, *scoped = node.children
        yield from _device_selects(iter_range, shadowed)
        yield from _device_selects(accu_init, shadowed)
        inner = shadowed | {v for v in (node.iter_var, node.iter_var2, node.accu_var) if v}
        for child in scoped:
            yield from _device_selects(child, inner)
        return
    for child in node.children:
        yield from _device_selects(child, shadowed)


def _positions(serialized: bytes) -> dict[int, int]:
    """Expression id -> code point offset (the CheckedExpr's ``source_info.positions``)."""
    inner = first_field(wire_fields(serialized), 2, serialized)
    source_info = first_field(wire_fields(inner), 5, b"")
    out = {}
    for num, entry in wire_fields(source_info):
        if num == 4:
            e = wire_fields(entry)
            out[first_field(e, 1, 0)] = first_field(e, 2, 0)
    return out


def _located(expression: str, offset: int, message: str) -> str:
    """cel-go's error text: ``ERROR: <input>:LINE:COLUMN: message`` and the line with a caret."""
    line_start = expression.rfind("\n", 0, offset) + 1
    line_end = expression.find("\n", offset)
    line_no = expression.count("\n", 0, offset) + 1
    column = offset - line_start
    text = expression[line_start:line_end if line_end >= 0 else len(expression)]
    return f"ERROR: <input>:{line_no}:{column + 1}: {message}\n | {text}\n | {'.' * column}^"


def undefined_device_field(serialized: bytes, expression: str, fields: frozenset[str]) -> str | None:
    """cel-go's ``undefined field`` error for the first ``device.X`` whose X is not a field of
    ``kubernetes.DRADevice``; None when every selection of ``device`` names one.
    ``serialized``: the checked expression of ``expression`` as cel-cpp serializes it."""
    for select in _device_selects(checked_ast(serialized)):
        if select.value not in fields:
            offset = _positions(serialized).get(select.id, 0)
            return _located(expression, offset, f"undefined field '{select.value}'")
    return None


def fix_for(message: str, fields: frozenset[str]) -> str:
    """The fix an error about a selector suggests: the nearest field of ``device`` for an
    undefined one, else what a selector is written over."""
    from ..model.strict import suggest

    marker = "undefined field '"
    if marker in message:
        name = message.split(marker, 1)[1].split("'", 1)[0]
        known = ", ".join(f for f in ("driver", "attributes", "capacity", CONSUMABLE_CAPACITY_FIELD) if f in fields)
        near = suggest(name, fields)
        return f"device has the fields {known}" + (f'; did you mean "{near}"?' if near else "")
    return ('write a CEL expression over device.driver, device.attributes["DOMAIN"].NAME and '
            'device.capacity["DOMAIN"].NAME that evaluates to a bool')
