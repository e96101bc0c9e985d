"""The DRA CEL environment for device selectors, on cel-expr-python (the CEL project's cel-cpp).

Why this engine: it type-checks at compile time with cel-go's wording (``undeclared reference
to 'x'``), supports ``cel.bind``, optional types and the strings extension, and evaluates a
selector in a few microseconds. What it lacks we add here:

* Kubernetes' quantity and semver libraries. Values of both travel through CEL as one protobuf
  message type ``k8s.cel.Opaque{kind, value}`` (cel-cpp cannot carry arbitrary Python objects,
  and one member name such as ``compareTo`` may only be registered once per receiver type);
  ``value`` holds a normal form, so CEL's field-wise message equality is value equality.
* The ``device`` variable: ``driver``, ``attributes`` and ``capacity`` (domain -> id -> value,
  names without a domain under the driver's name) and, with DRAConsumableCapacity,
  ``allowMultipleAllocations``. Upstream returns an empty map for an unknown domain; we add an
  empty map for every domain the expression indexes with a literal (exact for the way selectors
  are written; a computed domain that is absent remains a "no such key" error).
* The cost limit: cel-cpp's Python binding exposes no runtime cost tracking, so cel-go's
  actual cost is computed from the checked AST and this device's value sizes before the
  evaluation (see :mod:`.celcost`); past 1,000,000 units the evaluation fails as upstream,
  "operation cancelled: actual cost limit exceeded".

Compiled programs are cached by expression for the life of the process; failed compilations
are not cached (as upstream).

Upstream: ``staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go`` (the environment, the
``device`` variable, the cost limit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from ..errors import KubetwinError
from ..model.quantity import Quantity, QuantityError
from .api import Device
from .celcost import COST_LIMIT, LIMIT_EXCEEDED, checked_ast, evaluation_cost, of, worst_case_device
from .semver import Semver, SemverError, parse_semver

EXPRESSION_MAX_LENGTH: Final = 10 * 1024


class CELError(KubetwinError):
    """A selector that does not compile, or fails at runtime. Fatal for an allocation attempt."""


@dataclass(frozen=True, slots=True)
class CELOptions:
    """The DRA CEL environment's switches (from the allocator features)."""

    consumable_capacity: bool = True
    list_type_attributes: bool = False


# --------------------------------------------------------------------------------------------
# opaque values (Quantity, Semver)
# --------------------------------------------------------------------------------------------
_OPAQUE_CLASS: Any = None
_POOL: Any = None


def _opaque_class() -> Any:
    global _OPAQUE_CLASS, _POOL
    if _OPAQUE_CLASS is None:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        fdp = descriptor_pb2.FileDescriptorProto(name="kubetwin/k8s_cel.proto", package="k8s.cel", syntax="proto3")
        msg = fdp.message_type.add(name="Opaque")
        msg.field.add(name="value", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING, label=1)
        msg.field.add(name="kind", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING, label=1)
        pool = descriptor_pool.DescriptorPool()
        pool.Add(fdp)
        _POOL = pool
        _OPAQUE_CLASS = message_factory.GetMessageClass(pool.FindMessageTypeByName("k8s.cel.Opaque"))
    return _OPAQUE_CLASS


_Q_CACHE: dict[str, Quantity] = {}
_V_CACHE: dict[str, Semver] = {}


def quantity_value(q: Quantity) -> Any:
    """A Quantity as a CEL value; the normal form makes ``==`` compare amounts."""
    u, s = q.exact() if hasattr(q, "exact") else (q.unscaled, q.scale)
    if u == 0:
        s = 0
    while u != 0 and u % 10 == 0:
        u //= 10
        s += 1
    key = f"{u}e{s}"
    if key not in _Q_CACHE:
        if len(_Q_CACHE) > 100_000:
            _Q_CACHE.clear()
        _Q_CACHE[key] = q
    return _opaque_class()(value=key, kind="quantity")


def semver_value(v: Semver) -> Any:
    # Build metadata does not take part in equality or precedence: leave it out of the key.
    key = str(Semver(v.major, v.minor, v.patch, v.pre))
    _V_CACHE.setdefault(key, v)
    return _opaque_class()(value=key, kind="semver")


def _as_quantity(o: Any) -> Quantity:
    if getattr(o, "kind", None) != "quantity":
        raise ValueError("no such overload: expected a Quantity")
    q = _Q_CACHE.get(o.value)
    if q is None:
        u, _, s = o.value.partition("e")
        q = Quantity(int(u), int(s))
    return q


def _as_semver(o: Any) -> Semver:
    if getattr(o, "kind", None) != "semver":
        raise ValueError("no such overload: expected a Semver")
    v = _V_CACHE.get(o.value)
    return v if v is not None else parse_semver(o.value)


def _f_quantity(text: str) -> Any:
    try:
        return quantity_value(Quantity.parse(text))
    except QuantityError as exc:
        raise ValueError(exc.message) from None


def _f_is_quantity(text: str) -> bool:
    try:
        Quantity.parse(text)
        return True
    except QuantityError:
        return False


def _f_semver(text: str, normalize: bool = False) -> Any:
    try:
        return semver_value(parse_semver(text, normalize))
    except SemverError as exc:
        raise ValueError(str(exc)) from None


def _f_is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
        return True
    except SemverError:
        return False


def _compare(a: Any, b: Any) -> int:
    if a.kind != b.kind:
        raise ValueError(f"no such overload: compareTo({a.kind}, {b.kind})")
    if a.kind == "quantity":
        return _as_quantity(a).cmp(_as_quantity(b))
    return _as_semver(a).compare(_as_semver(b))


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _q_add(a: Any, b: Any) -> Any:
    other = Quantity.from_int(b) if isinstance(b, int) else _as_quantity(b)
    return quantity_value(_as_quantity(a) + other)


def _q_sub(a: Any, b: Any) -> Any:
    other = Quantity.from_int(b) if isinstance(b, int) else _as_quantity(b)
    return quantity_value(_as_quantity(a) - other)


def _q_is_integer(a: Any) -> bool:
    q = _as_quantity(a)
    u, s = q.unscaled, q.scale
    if s < 0 and u % (10 ** -s):
        return False
    value = u * 10 ** s if s >= 0 else u // 10 ** -s
    return _INT64_MIN <= value <= _INT64_MAX


def _q_as_integer(a: Any) -> int:
    if not _q_is_integer(a):
        raise ValueError("cannot convert value to integer")
    q = _as_quantity(a)
    return q.unscaled * 10 ** q.scale if q.scale >= 0 else q.unscaled // 10 ** -q.scale


def _q_as_float(a: Any) -> float:
    return _as_quantity(a).as_float()


def _q_sign(a: Any) -> int:
    return _as_quantity(a).sign()


def _v_part(index: int):
    def part(a: Any) -> int:
        v = _as_semver(a)
        return (v.major, v.minor, v.patch)[index]
    return part


def _includes(container: Any, item: Any) -> bool:
    if isinstance(container, (list, tuple)):
        return item in container
    return container == item


# --------------------------------------------------------------------------------------------
# environment
# --------------------------------------------------------------------------------------------
_T_BOOL: Any = None
_T_ERROR: Any = None


@lru_cache(maxsize=4)
def _env(options: CELOptions) -> Any:
    global _T_BOOL, _T_ERROR
    from cel_expr_python import cel
    from cel_expr_python.ext.ext_bindings import ExtBindings
    from cel_expr_python.ext.ext_math import ExtMath
    from cel_expr_python.ext.ext_optional import ExtOptional
    from cel_expr_python.ext.ext_strings import ExtStrings

    _opaque_class()
    T = cel.Type
    _T_BOOL, _T_ERROR = T.BOOL, T.ERROR
    O = T("k8s.cel.Opaque")  # noqa: E741
    S, B, I, D = T.STRING, T.BOOL, T.INT, T.DOUBLE  # noqa: E741

    def member(name: str, ret: Any, params: list, impl: Any, oid: str | None = None) -> Any:
        return cel.Overload(oid or f"k8s_{name}_{len(params)}", ret, params, is_member=True, impl=impl)

    def glob(name: str, ret: Any, params: list, impl: Any, oid: str) -> Any:
        return cel.Overload(oid, ret, params, is_member=False, impl=impl)

    functions = [
        cel.FunctionDecl("quantity", [glob("quantity", O, [S], _f_quantity, "k8s_quantity_string")]),
        cel.FunctionDecl("isQuantity", [glob("isQuantity", B, [S], _f_is_quantity, "k8s_is_quantity_string")]),
        cel.FunctionDecl("semver", [glob("semver", O, [S], _f_semver, "k8s_semver_string"),
                                    glob("semver", O, [S, B], _f_semver, "k8s_semver_string_bool")]),
        cel.FunctionDecl("isSemver", [glob("isSemver", B, [S], _f_is_semver, "k8s_is_semver_string"),
                                      glob("isSemver", B, [S, B], _f_is_semver, "k8s_is_semver_string_bool")]),
        cel.FunctionDecl("compareTo", [member("compareTo", I, [O, O], _compare)]),
        cel.FunctionDecl("isGreaterThan", [member("isGreaterThan", B, [O, O], lambda a, b: _compare(a, b) > 0)]),
        cel.FunctionDecl("isLessThan", [member("isLessThan", B, [O, O], lambda a, b: _compare(a, b) < 0)]),
        cel.FunctionDecl("add", [member("add", O, [O, O], _q_add, "k8s_add_quantity"),
                                 member("add", O, [O, I], _q_add, "k8s_add_int")]),
        cel.FunctionDecl("sub", [member("sub", O, [O, O], _q_sub, "k8s_sub_quantity"),
                                 member("sub", O, [O, I], _q_sub, "k8s_sub_int")]),
        cel.FunctionDecl("sign", [member("sign", I, [O], _q_sign)]),
        cel.FunctionDecl("isInteger", [member("isInteger", B, [O], _q_is_integer)]),
        cel.FunctionDecl("asInteger", [member("asInteger", I, [O], _q_as_integer)]),
        cel.FunctionDecl("asApproximateFloat", [member("asApproximateFloat", D, [O], _q_as_float)]),
        cel.FunctionDecl("major", [member("major", I, [O], _v_part(0))]),
        cel.FunctionDecl("minor", [member("minor", I, [O], _v_part(1))]),
        cel.FunctionDecl("patch", [member("patch", I, [O], _v_part(2))]),
    ]
    if options.list_type_attributes:
        functions.append(cel.FunctionDecl("includes", [
            # cel-cpp dispatches Python overloads on concrete list element types only.
            member("includes", B, [T.List(T.STRING), T.STRING], _includes, "k8s_includes_strings"),
            member("includes", B, [T.List(T.INT), T.INT], _includes, "k8s_includes_ints"),
            member("includes", B, [T.List(T.BOOL), T.BOOL], _includes, "k8s_includes_bools"),
            member("includes", B, [T.List(O), O], _includes, "k8s_includes_versions"),
            member("includes", B, [T.STRING, T.STRING], _includes, "k8s_includes_string"),
            member("includes", B, [T.INT, T.INT], _includes, "k8s_includes_int"),
            member("includes", B, [T.BOOL, T.BOOL], _includes, "k8s_includes_bool"),
            member("includes", B, [O, O], _includes, "k8s_includes_opaque")]))
    return cel.NewEnv(_POOL, variables={"device": T.Map(S, T.DYN), CONSTS_VAR: T.Map(S, O),
                                                PRE_VAR: T.Map(S, T.DYN)},
                      extensions=[ExtStrings(), ExtBindings(), ExtOptional(), ExtMath()], functions=functions)


# --------------------------------------------------------------------------------------------
# cost
# --------------------------------------------------------------------------------------------
def estimate_cost(expression: str, options: CELOptions = CELOptions()) -> int:
    """The cost of evaluating ``expression`` on the largest device the API allows (see
    :mod:`.celcost`); a selector above :data:`COST_LIMIT` here is costed per device."""
    return compile_selector(expression, options).cost


# --------------------------------------------------------------------------------------------
# constant folding of quantity("…") / semver("…")
# --------------------------------------------------------------------------------------------
#: A map variable holding the values of literal ``quantity(...)``/``semver(...)`` calls. Making a
#: Quantity or Semver crosses from Python into cel-cpp as a protobuf message, which costs
#: ~15 µs per call; folded, a literal costs a map lookup. Only literals that parse are folded,
#: so a bad literal still fails at evaluation time with the library's error, as upstream.
CONSTS_VAR: Final = "__kubetwin_consts"
_STRING_RE: Final = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_CONSTS: dict[str, Any] = {}
_consts_generation = 0
_CALL_RE: Final = re.compile(
    r"""(?<![\w.])(quantity|semver|isQuantity|isSemver)\s*\(\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"""\s*(?:,\s*(true|false)\s*)?\)""")


def _literal(token: str) -> str | None:
    body = token[1:-1]
    if "\\" in body:
        return None  # escapes: leave it to CEL
    return body


def fold_constants(expression: str) -> str:
    """``expression`` with literal quantity/semver calls replaced by constant lookups."""
    strings = [(m.start(), m.end()) for m in _STRING_RE.finditer(expression)]

    def inside_string(pos: int) -> bool:
        return any(a < pos < b for a, b in strings)

    def replace(m: re.Match) -> str:
        global _consts_generation
        if inside_string(m.start()):
            return m.group(0)
        fn, token, flag = m.group(1), m.group(2), m.group(3)
        text = _literal(token)
        if text is None or (flag is not None and fn in ("quantity", "isQuantity")):
            return m.group(0)
        normalize = flag == "true"
        if fn == "isQuantity":
            return "true" if _f_is_quantity(text) else "false"
        if fn == "isSemver":
            return "true" if _f_is_semver(text, normalize) else "false"
        try:
            value = _f_quantity(text) if fn == "quantity" else _f_semver(text, normalize)
        except ValueError:
            return m.group(0)
        key = f"{fn}|{int(normalize)}|{text}"
        if key not in _CONSTS:
            _CONSTS[key] = value
            _consts_generation += 1
        return f'{CONSTS_VAR}["{key}"]'

    return _CALL_RE.sub(replace, expression)


# --------------------------------------------------------------------------------------------
# pre-compared quantities and versions
# --------------------------------------------------------------------------------------------
#: A map variable holding, per device, the results of comparisons between one of the device's
#: quantities/versions and a folded constant. ``compareTo``/``isGreaterThan``/``isLessThan``
#: call back into Python (~10 µs each); their result for a given device and constant never
#: changes, so it is computed once per device and the program reads it like any value.
PRE_VAR: Final = "__kubetwin_pre"
_Q = r"""(?:"[^"\\\n]*"|'[^'\\\n]*')"""
_PRE_RE: Final = re.compile(
    rf"""(?<![\w.])device\s*\.\s*(capacity|attributes)\s*\[\s*({_Q})\s*\]\s*"""
    rf"""(?:\.\s*([A-Za-z_]\w*)|\[\s*({_Q})\s*\])\s*\.\s*(compareTo|isGreaterThan|isLessThan)\s*\(\s*"""
    rf"""{CONSTS_VAR}\["([^"\\]*)"\]\s*\)""")
#: ``device`` rebound by a macro or cel.bind: paths no longer mean the device's values.
_SHADOW_RE: Final = re.compile(r"[(,]\s*device\s*,")


@dataclass(frozen=True, slots=True)
class PreCompare:
    """``device.<field>[domain].<name>.<method>(<constant>)``, answered per device."""

    key: str
    field: str  # "attributes" or "capacity"
    domain: str
    name: str
    method: str
    const: Any

    def answer(self, data: dict[str, Any]) -> Any:
        """The call's result for a device, or ``None`` where evaluating it would fail (missing
        value, not a quantity/version, kinds that differ): then the device takes the original
        program, which fails exactly as upstream does."""
        value = data[self.field].get(self.domain, {}).get(self.name)
        if value is None or getattr(value, "kind", None) != self.const.kind:
            return None
        c = _compare(value, self.const)
        if self.method == "compareTo":
            return c
        return c > 0 if self.method == "isGreaterThan" else c < 0


def precompare(folded: str) -> tuple[str, tuple[PreCompare, ...]]:
    """``folded`` with device-vs-constant comparisons replaced by lookups in :data:`PRE_VAR`."""
    if _SHADOW_RE.search(folded):
        return folded, ()
    strings = [(m.start(), m.end()) for m in _STRING_RE.finditer(folded)]
    found: list[PreCompare] = []

    def replace(m: re.Match) -> str:
        if any(a < m.start() < b for a, b in strings):
            return m.group(0)
        const = _CONSTS.get(m.group(6))
        if const is None:
            return m.group(0)
        name = m.group(3) or m.group(4)[1:-1]
        pc = PreCompare(str(len(found)), m.group(1), m.group(2)[1:-1], name, m.group(5), const)
        found.append(pc)
        return f'{PRE_VAR}["{pc.key}"]'

    out = _PRE_RE.sub(replace, folded)
    return out, tuple(found)


# --------------------------------------------------------------------------------------------
# compiled selectors
# --------------------------------------------------------------------------------------------
_DOMAIN_RE: Final = re.compile(r"""\b(attributes|capacity)\s*\[\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\s*\]""")


class CompiledSelector:
    """One compiled selector expression: evaluate it against devices."""

    __slots__ = ("expression", "program", "options", "attr_domains", "cap_domains", "cost", "cost_ast",
                 "fast_program", "pre", "_prepared")

    def __init__(self, expression: str, program: Any, options: CELOptions, cost: int,
                 fast_program: Any = None, pre: tuple[PreCompare, ...] = (), cost_ast: Any = None):
        self.expression = expression
        self.program = program
        self.options = options
        #: the cost on the largest device the API allows; above the limit, ``cost_ast`` is
        #: kept to cost each device before it is evaluated
        self.cost = cost
        self.cost_ast = cost_ast
        self.fast_program = fast_program
        self.pre = pre
        attr: set[str] = set()
        cap: set[str] = set()
        for m in _DOMAIN_RE.finditer(expression):
            (attr if m.group(1) == "attributes" else cap).add(m.group(2)[1:-1])
        self.attr_domains = frozenset(attr)
        self.cap_domains = frozenset(cap)
        #: (id(device), driver) -> (device, program, activation or None, error or None)
        self._prepared: dict[tuple[int, str], tuple[Device, Any, Any, str | None]] = {}

    def matches(self, device: Device, driver: str) -> bool:
        """Evaluate on one device; a runtime error raises :class:`CELError`."""
        hit = self._prepared.get((id(device), driver))
        if hit is None or hit[0] is not device:
            hit = self._prepare(device, driver)
        if hit[3] is not None:
            raise CELError(hit[3])
        result = hit[1].eval(hit[2])
        value = result.value()
        if value is True or value is False:
            return value
        kind = result.type()
        if kind == _T_BOOL:
            return bool(value)
        if kind == _T_ERROR:
            raise CELError(_clean(str(value)))
        raise CELError(f"CEL result of type {kind.name()} could not be converted to bool")

    def _prepare(self, device: Device, driver: str) -> tuple[Device, Any, Any, str | None]:
        """Which program and activation evaluate this device (built once per device)."""
        entry = _device_entry(device, driver, self.options)
        prepared: tuple[Device, Any, Any, str | None]
        if entry.error is not None:
            prepared = (device, None, None, entry.error)
        elif self.cost_ast is not None and evaluation_cost(self.cost_ast, of(entry.data)) > COST_LIMIT:
            prepared = (device, None, None, LIMIT_EXCEEDED)
        else:
            data = entry.data
            assert data is not None
            answers = [pc.answer(data) for pc in self.pre] if self.fast_program is not None else [None]
            if all(a is not None for a in answers):
                act = entry.env.Activation({"device": entry.value_for(self.attr_domains, self.cap_domains),
                                            CONSTS_VAR: _CONSTS,
                                            PRE_VAR: {pc.key: a for pc, a in zip(self.pre, answers)}})
                prepared = (device, self.fast_program, act, None)
            else:
                prepared = (device, self.program, entry.activation_for(self.attr_domains, self.cap_domains), None)
        if len(self._prepared) > 100_000:
            self._prepared.clear()
        self._prepared[(id(device), driver)] = prepared
        return prepared


def _clean(message: str) -> str:
    message = message.strip()
    for prefix in ("INVALID_ARGUMENT: ", "NOT_FOUND: ", "OUT_OF_RANGE: ", "UNKNOWN: "):
        message = message.removeprefix(prefix)
    if message.startswith("Key not found in map"):
        key = message.partition(":")[2].strip()
        message = f"no such key: {key.strip(chr(34))}"
    return message.replace(" [INVALID_ARGUMENT]", "")


_COMPILED: dict[tuple[str, CELOptions], CompiledSelector] = {}


def compile_selector(expression: str, options: CELOptions = CELOptions()) -> CompiledSelector:
    """Compile (cached); a bad expression raises :class:`CELError` with the compiler's message."""
    key = (expression, options)
    hit = _COMPILED.get(key)
    if hit is not None:
        return hit
    if len(expression) > EXPRESSION_MAX_LENGTH:
        raise CELError(f"compilation failed: expression is {len(expression)} bytes long, more than the "
                       f"{EXPRESSION_MAX_LENGTH} allowed")
    env = _env(options)
    try:
        program = env.compile(fold_constants(expression))
    except RuntimeError:
        try:
            program = env.compile(expression)  # the error message must quote what the user wrote
        except RuntimeError as exc:
            raise CELError("compilation failed: " + _clean(str(exc))) from None
    from cel_expr_python import cel

    from .celfields import device_fields, undefined_device_field

    try:
        serialized = env.compile(expression).serialize()
    except RuntimeError:  # only the folded form compiles: cost that one
        serialized = program.serialize()
    else:  # ``device`` is an object type upstream: another field is a compile error
        undefined = undefined_device_field(serialized, expression, device_fields(options.consumable_capacity))
        if undefined is not None:
            raise CELError("compilation failed: " + undefined)
    out = program.return_type()
    if out != cel.Type.BOOL and out != cel.Type.DYN:
        raise CELError(f"must evaluate to bool or the unknown type, not {out.name().lower()}")
    ast = checked_ast(serialized)
    cost = evaluation_cost(ast, worst_case_device())
    fast_program: Any = None
    pre: tuple[PreCompare, ...] = ()
    folded = fold_constants(expression)
    rewritten, found = precompare(folded)
    if found:
        try:
            fast_program, pre = env.compile(rewritten), found
        except RuntimeError:
            pass  # keep the plain program: same verdicts, only slower
    compiled = CompiledSelector(expression, program, options, cost, fast_program, pre,
                                cost_ast=ast if cost > COST_LIMIT else None)
    if len(_COMPILED) > 10_000:
        _COMPILED.clear()
    _COMPILED[key] = compiled
    return compiled


# --------------------------------------------------------------------------------------------
# device values
# --------------------------------------------------------------------------------------------
class _DeviceEntry:
    """A device's CEL value and activations, built once per device and environment."""

    __slots__ = ("device", "data", "error", "env", "_activations")

    def __init__(self, device: Device, data: dict[str, Any] | str, env: Any):
        self.device = device
        self.data = data if isinstance(data, dict) else None
        self.error = data if isinstance(data, str) else None
        self.env = env
        self._activations: dict[tuple[frozenset, frozenset, int], Any] = {}

    def value_for(self, attr_domains: frozenset, cap_domains: frozenset) -> dict[str, Any]:
        """The ``device`` value with an empty map for each named domain the device lacks."""
        data = self.data
        assert data is not None
        missing_a = attr_domains.difference(data["attributes"]) if attr_domains else frozenset()
        missing_c = cap_domains.difference(data["capacity"]) if cap_domains else frozenset()
        if not (missing_a or missing_c):
            return data
        value = dict(data)
        value["attributes"] = {**data["attributes"], **{d: {} for d in missing_a}}
        value["capacity"] = {**data["capacity"], **{d: {} for d in missing_c}}
        return value

    def activation_for(self, attr_domains: frozenset, cap_domains: frozenset) -> Any:
        data = self.data
        assert data is not None
        # Only the domains the expression names and the device lacks change the value.
        missing_a = attr_domains.difference(data["attributes"]) if attr_domains else frozenset()
        missing_c = cap_domains.difference(data["capacity"]) if cap_domains else frozenset()
        key = (missing_a, missing_c, _consts_generation)
        act = self._activations.get(key)
        if act is None:
            if len(self._activations) >= 64:
                self._activations.clear()
            value = data
            if missing_a or missing_c:
                value = dict(data)
                value["attributes"] = {**data["attributes"], **{d: {} for d in missing_a}}
                value["capacity"] = {**data["capacity"], **{d: {} for d in missing_c}}
            act = self.env.Activation({"device": value, CONSTS_VAR: _CONSTS})
            self._activations[key] = act
        return act


_DEVICE_DATA: dict[tuple[int, str, CELOptions], _DeviceEntry] = {}


def _device_entry(device: Device, driver: str, options: CELOptions) -> _DeviceEntry:
    key = (id(device), driver, options)
    hit = _DEVICE_DATA.get(key)
    if hit is not None and hit.device is device:
        return hit
    entry = _DeviceEntry(device, _build_device_data(device, driver, options), _env(options))
    if len(_DEVICE_DATA) > 200_000:
        _DEVICE_DATA.clear()
    _DEVICE_DATA[key] = entry
    return entry


def device_data(device: Device, driver: str, options: CELOptions) -> dict[str, Any] | str:
    """The ``device`` variable for one device (cached), or the error every evaluation gives."""
    entry = _device_entry(device, driver, options)
    if entry.error is not None:
        return entry.error
    assert entry.data is not None  # an entry holds its data or its error
    return entry.data


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _build_device_data(device: Device, driver: str, options: CELOptions) -> dict[str, Any] | str:
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in device.attributes.items():
        try:
            value = _attribute_value(attr, options)
        except ValueError as exc:
            return f"attribute {name}: {exc}"
        domain, ident = _split(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in device.capacity.items():
        domain, ident = _split(name, driver)
        capacity.setdefault(domain, {})[ident] = quantity_value(cap.value)
    data: dict[str, Any] = {"driver": driver, "attributes": attributes, "capacity": capacity}
    if options.consumable_capacity:
        data["allowMultipleAllocations"] = bool(device.allow_multiple_allocations)
    return data


def _attribute_value(attr: Any, options: CELOptions) -> Any:
    kind = attr.kind
    if kind in ("int", "bool", "string"):
        return attr.value
    if kind == "version":
        try:
            return semver_value(parse_semver(attr.value))
        except SemverError as exc:
            raise ValueError(f"parse semantic version: {exc}") from None
    if kind in ("ints", "bools", "strings") and options.list_type_attributes:
        return list(attr.value)
    if kind == "versions" and options.list_type_attributes:
        try:
            return [semver_value(parse_semver(v)) for v in attr.value]
        except SemverError as exc:
            raise ValueError(f"parse semantic version: {exc}") from None
    raise ValueError("unsupported attribute value")
