"""Strict decoding: unknown, duplicate and mistyped fields refused, as Kubernetes refuses them.

The API server decodes a request strictly (``kubectl``'s default ``--validate=strict`` since
v1.27: ``strict decoding error: unknown field "spec.containers[0].resorces"``), the kubelet
decodes its configuration file strictly, kube-scheduler its ``KubeSchedulerConfiguration``. A
twin that quietly dropped a misspelt field would answer a question nobody asked, so every
input kind kubetwin reads is checked against a :data:`Spec` of the fields its real reader knows:

* Kubernetes API objects: the per-version OpenAPI definitions (:mod:`kubetwin.model.apischema`);
* configuration files and kubetwin's own formats: hand-written specs built from
  :func:`obj`, :func:`list_of`, :func:`map_of` and the scalar markers below.

A spec is data, checked by one walker (:func:`check`). Errors name every offending field path
(as the API server lists all of them) and, for a misspelt name, the nearest valid one.

Upstream: ``k8s.io/apimachinery/pkg/runtime/serializer/json`` (strict decoding errors),
``sigs.k8s.io/json`` (``UnmarshalStrictErrors``), ``k8s.io/kubelet/config/v1beta1`` loading in
``pkg/kubelet/kubeletconfig/util/codec``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Union

from ..errors import InputError

# --- specs ------------------------------------------------------------------------------------

#: Scalar markers: what JSON type a leaf holds. ``ANY`` accepts anything (free-form fields such as
#: ``RawExtension``, opaque driver parameters, ``managedFields``' field sets).
ANY = "any"
STRING = "string"
INTEGER = "integer"
NUMBER = "number"
BOOLEAN = "boolean"
#: ``resource.Quantity`` and ``IntOrString``: a string or a number on the wire.
STRING_OR_NUMBER = "string-or-number"
#: A string or an integer (``IntOrString``).
INT_OR_STRING = "int-or-string"
#: Any JSON object whose keys are not checked (e.g. ``FieldsV1``).
OPEN_OBJECT = "open-object"

_SCALARS = frozenset({ANY, STRING, INTEGER, NUMBER, BOOLEAN, STRING_OR_NUMBER, INT_OR_STRING, OPEN_OBJECT})


class Obj:
    """An object with a known set of fields. ``fields`` may be given lazily (a callable), so
    recursive and very large schemas (the whole Kubernetes API) are built only where inputs go."""

    __slots__ = ("_fields", "_make", "name")

    def __init__(self, fields: Mapping[str, "Spec"] | Callable[[], Mapping[str, "Spec"]], name: str = ""):
        self.name = name
        if callable(fields):
            self._fields: Mapping[str, Spec] | None = None
            self._make: Callable[[], Mapping[str, Spec]] | None = fields
        else:
            self._fields = dict(fields)
            self._make = None

    @property
    def fields(self) -> Mapping[str, "Spec"]:
        if self._fields is None:
            assert self._make is not None
            self._fields = dict(self._make())
            self._make = None
        return self._fields

    def __repr__(self) -> str:
        return f"Obj({self.name or '...'})"


@dataclass(frozen=True, slots=True)
class ListOf:
    item: "Spec"


@dataclass(frozen=True, slots=True)
class MapOf:
    """A map with free keys (labels, resource lists, feature gates) and checked values."""

    value: "Spec"


Spec = Union[Obj, ListOf, MapOf, str]


def obj(fields: Mapping[str, Spec] | None = None, /, **kw: Spec) -> Obj:
    """A hand-written object spec: ``obj(cpu=STRING, limits=map_of(STRING_OR_NUMBER))``, or
    ``obj({"x-name": STRING})`` for names that are not identifiers."""
    merged: dict[str, Spec] = dict(fields or {})
    merged.update(kw)
    for key, value in merged.items():
        if isinstance(value, str) and value not in _SCALARS:
            raise ValueError(f"unknown scalar marker {value!r} for field {key!r}")
    return Obj(merged)


def list_of(item: Spec) -> ListOf:
    return ListOf(item)


def map_of(value: Spec) -> MapOf:
    return MapOf(value)


# --- the walker -------------------------------------------------------------------------------

#: At most this many problems are listed in one error (the API server lists all; a file with
#: thousands of typos gets the first ones and a count).
MAX_LISTED = 10


@dataclass(frozen=True, slots=True)
class FieldProblem:
    """One unknown or mistyped field: its path from the object's root and what is wrong."""

    path: str
    kind: str  # "unknown" | "type"
    detail: str = ""
    suggestion: str | None = None


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """The valid name nearest to a misspelt ``name`` (``resorces`` → ``resources``), or None."""
    names = [c for c in candidates if isinstance(c, str)]
    if not names:
        return None
    lowered = {c.lower(): c for c in names}
    if name.lower() in lowered:  # wrong case: ``CPUManagerPolicy`` for ``cpuManagerPolicy``
        return lowered[name.lower()]
    match = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    if match:
        return match[0]
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.75)
    if match:
        return lowered[match[0]]
    # Short names: one typo (a swapped, missing, extra or wrong letter) — ``Pdo`` → ``Pod``.
    near = [c for c in names if _one_edit(name.lower(), c.lower())]
    return near[0] if len(near) == 1 else None


def _one_edit(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by one substitution, insertion, deletion or swap of neighbours."""
    if a == b or abs(len(a) - len(b)) > 1 or min(len(a), len(b)) < 2:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1:]


def _join(parts: list[str | int]) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out = f"{out}.{p}" if out else p
    return out


_JSON_TYPE = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object", list: "array"}


def _type_name(value: Any) -> str:
    if (type(value) is int or type(value) is float) and not -(2 ** 63) <= value < 2 ** 63:
        return f"{_JSON_TYPE.get(type(value), 'number')} out of the int64 range"
    return _JSON_TYPE.get(type(value), type(value).__name__)


def _scalar_ok(value: Any, marker: str) -> bool:
    t = type(value)
    if marker == STRING:
        return t is str
    if marker == INTEGER:  # an int64 at most (Go's decoder refuses larger numbers)
        return (t is int or (t is float and value.is_integer())) and -(2 ** 63) <= value < 2 ** 63
    if marker == NUMBER:
        return t is int or t is float
    if marker == BOOLEAN:
        return t is bool
    if marker == STRING_OR_NUMBER:
        return t is str or t is int or t is float
    if marker == INT_OR_STRING:
        return t is str or t is int
    if marker == OPEN_OBJECT:
        return t is dict
    return True  # ANY


def find_problems(value: Any, spec: Spec, *, limit: int = MAX_LISTED + 1) -> list[FieldProblem]:
    """Every unknown or mistyped field of ``value`` under ``spec`` (up to ``limit``), in
    document order. ``null`` is accepted for every field, as JSON decoding into Go accepts it."""
    problems: list[FieldProblem] = []
    stack: list[str | int] = []

    def walk(v: Any, s: Spec) -> None:
        if v is None or len(problems) >= limit:
            return
        if isinstance(s, Obj):
            if type(v) is not dict:
                problems.append(FieldProblem(_join(stack), "type", f"expected an object, got {_type_name(v)}"))
                return
            fields = s.fields
            for key, sub in v.items():
                spec_sub = fields.get(key)
                if spec_sub is None:
                    if not isinstance(key, str):
                        problems.append(FieldProblem(_join(stack + [str(key)]), "type",
                                                     f"field names are strings, got {_type_name(key)} {key!r}"))
                    else:
                        problems.append(FieldProblem(_join(stack + [key]), "unknown", "",
                                                     suggest(key, fields)))
                    if len(problems) >= limit:
                        return
                    continue
                if sub is None:
                    continue
                if type(spec_sub) is str:
                    if spec_sub is ANY or spec_sub == ANY:
                        continue
                    if not _scalar_ok(sub, spec_sub):
                        problems.append(FieldProblem(_join(stack + [key]), "type", _mismatch(spec_sub, sub)))
                    continue
                stack.append(key)
                walk(sub, spec_sub)
                stack.pop()
        elif isinstance(s, ListOf):
            if type(v) is not list:
                problems.append(FieldProblem(_join(stack), "type", f"expected a list, got {_type_name(v)}"))
                return
            item = s.item
            if type(item) is str:
                if item != ANY:
                    for i, x in enumerate(v):
                        if x is not None and not _scalar_ok(x, item):
                            problems.append(FieldProblem(_join(stack + [i]), "type",
                                                         _mismatch(item, x)))
                            if len(problems) >= limit:
                                return
                return
            for i, x in enumerate(v):
                stack.append(i)
                walk(x, item)
                stack.pop()
        elif isinstance(s, MapOf):
            if type(v) is not dict:
                problems.append(FieldProblem(_join(stack), "type", f"expected a mapping, got {_type_name(v)}"))
                return
            val = s.value
            for key, x in v.items():
                if not isinstance(key, str):
                    problems.append(FieldProblem(_join(stack + [str(key)]), "type",
                                                 f"keys are strings, got {_type_name(key)} {key!r}"))
                    continue
                if x is None:
                    continue
                if type(val) is str:
                    if val != ANY and not _scalar_ok(x, val):
                        problems.append(FieldProblem(_join(stack + [key]), "type",
                                                     _mismatch(val, x)))
                    continue
                stack.append(key)
                walk(x, val)
                stack.pop()
        else:
            if s != ANY and not _scalar_ok(v, s):
                problems.append(FieldProblem(_join(stack), "type", _mismatch(s, v)))

    walk(value, spec)
    return problems


def _mismatch(marker: str, value: Any) -> str:
    if marker in (INTEGER, NUMBER) and type(value) is int:
        return f"the number {str(value)[:30]} is out of range: Go decodes it into an int64"
    return f"expected {_describe(marker)}, got {_type_name(value)}"


def _describe(marker: str) -> str:
    return {STRING: "a string", INTEGER: "an integer", NUMBER: "a number", BOOLEAN: "true or false",
            STRING_OR_NUMBER: "a string or a number", INT_OR_STRING: "an integer or a string",
            OPEN_OBJECT: "an object"}.get(marker, marker)


def problems_error(problems: list[FieldProblem], *, file: str | None = None, prefix: str = "",
                   what: str = "strict decoding error") -> InputError:
    """One error listing the problems in the API server's wording:
    ``strict decoding error: unknown field "spec.containers[0].resorces"``."""

    def full(path: str) -> str:
        if not prefix:
            return path
        if not path:
            return prefix
        return prefix + path if path.startswith("[") else f"{prefix}.{path}"

    shown = problems[:MAX_LISTED]
    parts = []
    fixes = []
    for p in shown:
        path = full(p.path)
        if p.kind == "unknown":
            parts.append(f'unknown field "{path}"')
            if p.suggestion is not None:
                fixes.append(f'did you mean "{_sibling(path, p.suggestion)}"?')
        else:
            parts.append(f'invalid type for field "{path}": {p.detail}')
            expected = p.detail.removeprefix("expected ").split(", got ")[0]
            if p.detail.startswith("expected "):
                quote = " (quote it)" if expected == "a string" else ""
                fixes.append(f'write "{path}" as {expected}{quote}')
            elif p.detail.startswith(("field names are strings", "keys are strings")):
                fixes.append(f'quote the keys under "{path}"')
    message = f"{what}: " + ", ".join(parts)
    if len(problems) > MAX_LISTED:
        message += f" (and more; the first {MAX_LISTED} are listed)"
    if not fixes:
        if any(p.kind == "unknown" for p in shown):
            fixes.append("remove the field or correct its name (field names are case-sensitive)")
    return InputError(message, file=file, fix="; ".join(fixes) if fixes else None)


def _sibling(path: str, name: str) -> str:
    """``spec.containers[0].resorces`` + ``resources`` → ``spec.containers[0].resources``."""
    head, dot, _ = path.rpartition(".")
    return f"{head}.{name}" if dot else name


def check(value: Any, spec: Spec, *, file: str | None = None, prefix: str = "",
          what: str = "strict decoding error", type_what: str | None = None) -> None:
    """Raise :class:`InputError` if ``value`` has unknown or mistyped fields under ``spec``.

    With ``type_what``, mistyped fields are reported first and on their own, under that word
    (``failed to decode``): for readers whose real counterpart cannot decode such a file at
    all, while an unknown field is only a strict-decoding error."""
    problems = find_problems(value, spec)
    if not problems:
        return
    if type_what is not None:
        mistyped = [p for p in problems if p.kind != "unknown"]
        if mistyped:
            raise problems_error(mistyped, file=file, prefix=prefix, what=type_what)
    raise problems_error(problems, file=file, prefix=prefix, what=what)


def fold_case(value: Any, spec: Spec, path: str = "") -> Any:
    """``value`` with field names matched as Go's ``encoding/json`` matches them: an exact match,
    else a case-insensitive one (``defaultCPUSet`` for ``defaultCpuSet``) — for files the kubelet
    reads with plain ``json.Unmarshal`` (checkpoints). Two keys folding to one field are refused;
    keys matching no field are kept, for :func:`check` to report."""
    if isinstance(spec, Obj) and type(value) is dict:
        fields = spec.fields
        lowered = {k.lower(): k for k in fields}
        out: dict[Any, Any] = {}
        for key, sub in value.items():
            name = key
            if isinstance(key, str) and key not in fields:
                name = lowered.get(key.lower(), key)
            if name in out:
                raise InputError(f'fields "{name}" and "{key}" are the same field', path=_join_path(path, name),
                                 fix="give the field once")
            out[name] = fold_case(sub, fields[name], _join_path(path, name)) if name in fields else sub
        return out
    if isinstance(spec, MapOf) and type(value) is dict:
        return {k: fold_case(v, spec.value, _join_path(path, str(k))) for k, v in value.items()}
    if isinstance(spec, ListOf) and type(value) is list:
        return [fold_case(v, spec.item, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


def _join_path(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def unknown_key_error(name: str, valid: Iterable[str], *, path: str = "", file: str | None = None,
                      what: str = "field") -> InputError:
    """An unknown key outside a spec walk (a ``--variant`` key, a feature gate, a policy name),
    with the nearest valid one."""
    valid = list(valid)
    near = suggest(name, valid)
    fix = f'did you mean "{near}"?' if near else (f"valid: {', '.join(sorted(valid))}" if len(valid) <= 40 else None)
    return InputError(f'unknown {what} "{name}"', path=path, file=file, fix=fix)
