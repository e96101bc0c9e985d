"""The runtime cost of a selector evaluation, as cel-go's cost tracker charges it.

Kubernetes runs every DRA selector with a cost limit of 1,000,000 units
(``resourceapi.CELSelectorExpressionMaxCost``); cel-go's ``interpreter/runtimecost.go`` adds
up, while evaluating: 1 per identifier, field selection, index and ``has()``; 1 per function
call, except the calls whose work grows with their operands (string comparison and equality
``ceil(min(|a|,|b|) × 0.1)``, ``in`` the list's size, string concatenation
``ceil((|a|+|b|) × 0.1)``, ``startsWith``/``endsWith`` ``ceil(|s| × 0.1)``, ``contains``
``ceil(|s| × 0.1) × ceil(|t| × 0.1)``, ``matches`` ``ceil((1+|s|) × 0.1) × ceil(|re| × 0.25)``);
10 per list literal, 30 per map literal; nothing for constants, ``&&``, ``||`` and ``?:``.
Past the limit it stops with "operation cancelled: actual cost limit exceeded".

cel-cpp's Python binding has no such tracker, so this module computes the cost from the
checked AST (decoded from the serialized ``cel.expr.CheckedExpr``) and the sizes of the
values the expression touches on *this* device: its strings, lists and maps, and the literal
lists of the expression. Where the value depends on evaluation (a comprehension's variable,
an index computed at run time) the largest candidate counts; every branch of ``&&``/``||``
counts and a comprehension runs over its whole range. The result is therefore the cost of
the evaluation if nothing short-circuits: equal to cel-go's actual cost for straight-line
selectors, an upper bound otherwise (a bomb behind ``false &&`` is refused here, where
cel-go would never reach it).

The device-independent worst case (device values as large as the API allows) is computed
once per expression; only an expression whose worst case exceeds the limit is costed again
per device, so ordinary selectors pay nothing at evaluation time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Final

COST_LIMIT: Final = 1_000_000
LIMIT_EXCEEDED: Final = "operation cancelled: actual cost limit exceeded"
_STRING_FACTOR: Final = 0.1
_REGEX_FACTOR: Final = 0.25
_LIST_CREATE, _MAP_CREATE, _STRUCT_CREATE = 10, 30, 40
#: API limits of a device (resource.k8s.io/v1): 32 attributes and capacities, domains and
#: driver names of 63 characters, string attributes of 64, list attributes of 64 values.
_MAX_ENTRIES, _MAX_NAME, _MAX_VALUE = 32, 63, 64


# --------------------------------------------------------------------------------------------
# protobuf wire format (just enough for cel.expr.CheckedExpr)
# --------------------------------------------------------------------------------------------
def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def wire_fields(buf: bytes) -> list[tuple[int, Any]]:
    """(field number, value) pairs: ints for varints/fixed, bytes for length-delimited."""
    out: list[tuple[int, Any]] = []
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        num, wt = key >> 3, key & 7
        val: int | bytes
        if wt == 0:
            val, pos = _varint(buf, pos)
        elif wt == 1:
            val, pos = int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
        elif wt == 2:
            n, pos = _varint(buf, pos)
            val, pos = buf[pos:pos + n], pos + n
        elif wt == 5:
            val, pos = int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
        else:
            raise ValueError(f"unsupported wire type {wt}")
        out.append((num, val))
    return out


def first_field(fields: list[tuple[int, Any]], num: int, default: Any = None) -> Any:
    """The value of the first field numbered ``num`` in :func:`wire_fields`' pairs (``default`` if none)."""
    for n, v in fields:
        if n == num:
            return v
    return default


@dataclass(frozen=True, slots=True)
class Node:
    """One node of the checked AST: ``kind`` is const/ident/select/call/list/map/struct/comp."""

    kind: str
    id: int
    value: Any = None  # const value, ident name, select field, call function
    children: tuple["Node | None", ...] = ()
    test_only: bool = False
    iter_var: str = ""
    iter_var2: str = ""
    accu_var: str = ""


def _constant(buf: bytes) -> Any:
    for num, val in wire_fields(buf):
        if num == 2:
            return bool(val)
        if num in (3, 4):
            return val
        if num in (6, 7):
            return val.decode("utf-8", "replace") if num == 6 else val
        if num == 5:
            return 0.0
    return None


def _expr(buf: bytes) -> Node:
    f = wire_fields(buf)
    eid = first_field(f, 2, 0)
    for num, val in f:
        if num == 3:
            return Node("const", eid, _constant(val))
        if num == 4:
            return Node("ident", eid, first_field(wire_fields(val), 1, b"").decode())
        if num == 5:
            s = wire_fields(val)
            operand = first_field(s, 1)
            return Node("select", eid, first_field(s, 2, b"").decode(),
                        (_expr(operand) if operand is not None else None,), test_only=bool(first_field(s, 3, 0)))
        if num == 6:
            c = wire_fields(val)
            target = first_field(c, 1)
            args = tuple(_expr(v) for n, v in c if n == 3)
            return Node("call", eid, first_field(c, 2, b"").decode(),
                        ((_expr(target) if target is not None else None),) + args)
        if num == 7:
            return Node("list", eid, None, tuple(_expr(v) for n, v in wire_fields(val) if n == 1))
        if num == 8:
            s = wire_fields(val)
            kids: list[Node | None] = []
            for n, entry in s:
                if n == 2:
                    e = wire_fields(entry)
                    key = first_field(e, 3)
                    kids.append(_expr(key) if key is not None else None)
                    v = first_field(e, 4)
                    kids.append(_expr(v) if v is not None else None)
            return Node("map" if not first_field(s, 1) else "struct", eid, None, tuple(kids))
        if num == 9:
            c = wire_fields(val)
            sub = {n: _expr(v) for n, v in c if n in (2, 4, 5, 6, 7)}
            return Node("comp", eid, None, tuple(sub.get(n) for n in (2, 4, 5, 6, 7)),
                        iter_var=first_field(c, 1, b"").decode(), accu_var=first_field(c, 3, b"").decode(),
                        iter_var2=first_field(c, 8, b"").decode())
    return Node("const", eid, None)


def checked_ast(serialized: bytes) -> Node:
    """The expression tree of a serialized ``google.protobuf.Any`` holding a CheckedExpr."""
    inner = first_field(wire_fields(serialized), 2, serialized)
    return _expr(first_field(wire_fields(inner), 4, b""))


# --------------------------------------------------------------------------------------------
# abstract values: what the cost of an operation depends on
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Size:
    """A value's size as cel-go counts it (string code points, list/map entries, 1 otherwise),
    the largest element of a list or map (keys for maps), the largest map value, and the
    value itself where it is known exactly."""

    n: int = 1
    elem: "Size | None" = None
    item: "Size | None" = None
    exact: Any = None
    fields: dict[str, "Size"] | None = field(default=None, compare=False)


_ONE: Final = Size()


def of(value: Any) -> Size:
    if isinstance(value, str):
        return Size(len(value), exact=value)
    if isinstance(value, (list, tuple, dict)):
        return Size(len(value), exact=value)
    return Size(1, exact=value)


def _container(v: Size) -> bool:
    return v.elem is not None or v.item is not None or bool(v.fields) or isinstance(v.exact, (list, tuple, dict))


def _merge(a: Size | None, b: Size | None) -> Size | None:
    """A size at least as large as both (for a value that may be either)."""
    if a is None or b is None:
        return a or b
    if a is b or (a.exact is not None and type(a.exact) is type(b.exact) and a.exact == b.exact):
        return a
    if not (_container(a) or _container(b)):
        return Size(max(a.n, b.n))
    return Size(max(a.n, b.n), _merge(_elem(a), _elem(b)), _merge(_item(a), _item(b)))


def _elem(v: Size) -> Size:
    """The largest element of a list, or key of a map (what iteration binds)."""
    if v.elem is not None:
        return v.elem
    x = v.exact
    out: Size | None = None
    if isinstance(x, (list, tuple, dict)):
        for e in x:
            out = _merge(out, of(e))
    return out or _ONE


def _item(v: Size) -> Size:
    """The largest value of a map (what an index computed at run time can give)."""
    if v.item is not None:
        return v.item
    x = v.exact
    out: Size | None = None
    if isinstance(x, dict):
        for e in x.values():
            out = _merge(out, of(e))
    elif isinstance(x, (list, tuple)):
        return _elem(v)
    if v.fields:
        for e in v.fields.values():
            out = _merge(out, e)
    return out or _ONE


def _lookup(v: Size, key: Any) -> Size:
    x = v.exact
    if v.fields is not None and key in v.fields:
        return v.fields[key]
    if isinstance(x, dict):
        if key in x:
            return of(x[key])
        return of({})  # unknown domains read as empty maps; other misses stop the evaluation
    if isinstance(x, (list, tuple)) and isinstance(key, int) and 0 <= key < len(x):
        return of(x[key])
    return _item(v)


def worst_case_device() -> Size:
    """The ``device`` variable as large as a v1 device may be."""
    value = Size(_MAX_VALUE, elem=Size(_MAX_VALUE))
    inner = Size(_MAX_ENTRIES, elem=Size(_MAX_VALUE), item=value)
    outer = Size(_MAX_ENTRIES, elem=Size(_MAX_NAME), item=inner)
    return Size(4, fields={"driver": Size(_MAX_NAME), "attributes": outer,
                           "capacity": Size(_MAX_ENTRIES, elem=Size(_MAX_NAME),
                                            item=Size(_MAX_ENTRIES, elem=Size(_MAX_VALUE), item=_ONE)),
                           "allowMultipleAllocations": _ONE})


# --------------------------------------------------------------------------------------------
# the cost walk
# --------------------------------------------------------------------------------------------
def _traverse(n: int) -> int:
    return math.ceil(n * _STRING_FACTOR)


_COMPARISONS: Final = frozenset({"_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"})
#: Kubernetes' string library functions that walk their receiver (apiserver cel/library/cost.go).
_STRING_WALKS: Final = frozenset({"lowerAscii", "upperAscii", "trim", "substring", "charAt", "indexOf",
                                  "lastIndexOf", "replace", "split", "join", "reverse", "format", "quote"})


class _Walker:
    def __init__(self, variables: dict[str, Size]):
        self.vars = dict(variables)

    def walk(self, node: Node | None) -> tuple[int, Size]:
        if node is None:
            return 0, _ONE
        k = node.kind
        if k == "const":
            return 0, of(node.value)
        if k == "ident":
            return 1, self.vars.get(node.value, _ONE)
        if k == "select":
            c, v = self.walk(node.children[0])
            return c + 1, (_ONE if node.test_only else _lookup(v, node.value))
        if k == "call":
            return self.call(node)
        if k == "list":
            cost, elem, exact = _LIST_CREATE, None, []
            for child in node.children:
                c, v = self.walk(child)
                cost += c
                elem = _merge(elem, v)
                exact.append(v.exact)
            n = len(node.children)
            if all(e is not None for e in exact):
                return cost, Size(n, exact=exact)
            return cost, Size(n, elem=elem or _ONE)
        if k in ("map", "struct"):
            cost = _MAP_CREATE if k == "map" else _STRUCT_CREATE
            keys = values = None
            for i, child in enumerate(node.children):
                c, v = self.walk(child)
                cost += c
                if i % 2:
                    values = _merge(values, v)
                else:
                    keys = _merge(keys, v)
            return cost, Size(len(node.children) // 2, elem=keys or _ONE, item=values or _ONE)
        if k == "comp":
            return self.comprehension(node)
        return 1, _ONE

    def call(self, node: Node) -> tuple[int, Size]:
        fn = node.value
        target, args = node.children[0], node.children[1:]
        if fn in ("_&&_", "_||_"):
            return sum(self.walk(a)[0] for a in args), _ONE
        if fn == "_?_:_":
            c0, _ = self.walk(args[0])
            c1, v1 = self.walk(args[1])
            c2, v2 = self.walk(args[2])
            return c0 + max(c1, c2), _merge(v1, v2) or _ONE
        cost = 0
        vals: list[Size] = []
        for a in ((target,) if target is not None else ()) + args:
            c, v = self.walk(a)
            cost += c
            vals.append(v)
        if fn == "_[_]":
            return cost + 1, _lookup(vals[0], vals[1].exact) if vals[1].exact is not None else _item(vals[0])
        strings = all(isinstance(v.exact, str) or v.exact is None for v in vals)
        if fn in _COMPARISONS and len(vals) == 2:
            return cost + _traverse(min(vals[0].n, vals[1].n)), _ONE
        if fn == "@in" and len(vals) == 2:
            return cost + vals[1].n, _ONE
        if fn == "_+_" and len(vals) == 2:
            lhs, rhs = vals
            if isinstance(lhs.exact, (list, tuple)) or isinstance(rhs.exact, (list, tuple)) or lhs.elem or rhs.elem:
                return cost + 1, Size(lhs.n + rhs.n, elem=_merge(_elem(lhs), _elem(rhs)))
            if strings and (isinstance(lhs.exact, str) or isinstance(rhs.exact, str) or lhs.n > 1 or rhs.n > 1):
                return cost + _traverse(lhs.n + rhs.n), Size(lhs.n + rhs.n)
            return cost + 1, _ONE
        if fn in ("startsWith", "endsWith") and vals:
            return cost + _traverse(vals[0].n), _ONE
        if fn == "contains" and len(vals) == 2:
            return cost + _traverse(vals[0].n) * _traverse(vals[1].n), _ONE
        if fn == "matches" and len(vals) == 2:
            return cost + _traverse(1 + vals[0].n) * math.ceil(vals[1].n * _REGEX_FACTOR), _ONE
        if fn in _STRING_WALKS and vals:
            receiver = vals[0]
            walk = max(1, _traverse(receiver.n))
            if fn == "split":
                return cost + walk, Size(receiver.n + 1, elem=Size(receiver.n))
            if fn == "replace" and len(vals) >= 3:
                return cost + walk, Size(receiver.n * max(1, vals[2].n))
            if fn == "join":
                return cost + walk, Size(receiver.n * _elem(receiver).n + max(0, receiver.n - 1) * (
                    vals[1].n if len(vals) > 1 else 0))
            return cost + walk, Size(receiver.n)
        return cost + 1, _ONE

    def comprehension(self, node: Node) -> tuple[int, Size]:
        rng, init, cond, step, result = node.children
        c_range, v_range = self.walk(rng)
        c_init, v_init = self.walk(init)
        n = v_range.n
        saved = {name: self.vars.get(name) for name in (node.iter_var, node.iter_var2, node.accu_var)}
        if node.iter_var2:  # two-variable forms: index/key and value
            self.vars[node.iter_var] = _elem(v_range) if isinstance(v_range.exact, dict) or v_range.item else _ONE
            self.vars[node.iter_var2] = _item(v_range)
        else:
            self.vars[node.iter_var] = _elem(v_range)
        self.vars[node.accu_var] = v_init
        _, v_step = self.walk(step)
        accu = v_init
        if v_step.n > v_init.n:  # an accumulator that grows each round (map, filter)
            accu = Size(v_init.n + n * (v_step.n - v_init.n), elem=_merge(_elem(v_init), _elem(v_step)))
        self.vars[node.accu_var] = accu
        per_round = self.walk(cond)[0] + self.walk(step)[0]
        c_result, v_result = self.walk(result)
        for name, old in saved.items():
            if name:
                if old is None:
                    self.vars.pop(name, None)
                else:
                    self.vars[name] = old
        return c_range + c_init + n * per_round + c_result, v_result


def evaluation_cost(ast: Node, device: Size) -> int:
    """cel-go's actual cost of evaluating ``ast`` on ``device`` when nothing short-circuits."""
    return _Walker({"device": device}).walk(ast)[0]
