"""The fields of every Kubernetes API kind, per Kubernetes version, for strict decoding.

The API server knows a kind's fields from its Go types; their published form is the OpenAPI
document of each release (``api/openapi-spec``). kubetwin reads it from the
``kubernetes-validate`` package, which ships the definitions of every release as JSON Schema
(``kubernetes-json-schema/v1.NN.0-local/_definitions.json``), and turns a kind's definition
into a :class:`~kubetwin.model.strict.Spec` lazily, type by type, the first time an input of
that kind is read.

So ``spec.containers[0].resorces`` is refused as the API server of that version refuses it,
and a field that only a later release has (``--kubernetes-version 1.34`` with a 1.36 field) is
unknown, as it would be on a 1.34 cluster. Status, ``managedFields`` and every other field a
``kubectl get -o yaml`` dump carries are part of the definitions, so dumps are accepted as is.

A kind whose API version the chosen release no longer serves (``resource.k8s.io/v1alpha3``
manifests, which kubetwin converts) is checked against the newest release that served it.
"""

from __future__ import annotations

import os
from functools import lru_cache
from keyword import iskeyword
from types import GenericAlias
from typing import Any

import msgspec

from .features import KNOWN_VERSIONS, normalize_version
from .strict import (
    ANY,
    BOOLEAN,
    INT_OR_STRING,
    INTEGER,
    NUMBER,
    OPEN_OBJECT,
    STRING,
    STRING_OR_NUMBER,
    ListOf,
    MapOf,
    Obj,
    Spec,
)


def _schema_root() -> str | None:
    # Located without importing the package (its import pulls in jsonschema: 0.1 s).
    import importlib.util

    found = importlib.util.find_spec("kubernetes_validate")
    if found is None or not found.submodule_search_locations:  # pragma: no cover - a declared dependency
        return None
    return os.path.join(list(found.submodule_search_locations)[0], "kubernetes-json-schema")


def _minor(directory: str) -> tuple[int, int]:
    major, minor = directory.lstrip("v").split(".")[:2]
    return int(major), int(minor)


@lru_cache(maxsize=None)
def _available_versions() -> tuple[str, ...]:
    """Minor versions with definitions, oldest first (``1.25`` … ``1.37``)."""
    root = _schema_root()
    if root is None or not os.path.isdir(root):
        return ()
    out = []
    for name in os.listdir(root):
        if name.endswith("-local") and os.path.isfile(os.path.join(root, name, "_definitions.json")):
            major, minor = _minor(name)
            out.append((major, minor, name))
    return tuple(f"{a}.{b}" for a, b, _ in sorted(out))


class _Definitions:
    """One release's definitions, converted to specs on demand."""

    def __init__(self, version: str):
        root = _schema_root()
        assert root is not None
        with open(os.path.join(root, f"v{version}.0-local", "_definitions.json"), "rb") as f:
            self.defs: dict[str, Any] = msgspec.json.decode(f.read())["$defs"]
        self.by_gvk: dict[tuple[str, str], str] = {}
        for name, d in self.defs.items():
            for gvk in d.get("x-kubernetes-group-version-kind", ()):
                group, ver = gvk.get("group", ""), gvk.get("version", "")
                api_version = f"{group}/{ver}" if group else ver
                # The first definition wins: ``DeleteOptions`` and friends list every group.
                self.by_gvk.setdefault((api_version, gvk.get("kind", "")), name)
        self.specs: dict[str, Spec] = {}

    def spec(self, name: str) -> Spec:
        found = self.specs.get(name)
        if found is None:
            found = self._convert_def(name)
            self.specs[name] = found
        return found

    def _convert_def(self, name: str) -> Spec:
        d = self.defs.get(name)
        if d is None:
            return ANY
        if "properties" in d:
            props = d["properties"]
            return Obj(lambda: {k: self._convert(v) for k, v in props.items()}, name.rsplit(".", 1)[-1])
        return self._convert(d)

    def _convert(self, s: dict[str, Any]) -> Spec:
        ref = s.get("$ref")
        if ref:
            return self.spec(ref.rsplit("/", 1)[-1])
        if "allOf" in s and len(s["allOf"]) == 1:
            return self._convert(s["allOf"][0])
        if "oneOf" in s:
            types = set()
            for alt in s["oneOf"]:
                types.update(_types(alt))
            if types <= {"string", "integer"}:
                return INT_OR_STRING
            if types <= {"string", "number", "integer"}:
                return STRING_OR_NUMBER
            return ANY
        types = _types(s)
        if "properties" in s:
            props = s["properties"]
            return Obj(lambda: {k: self._convert(v) for k, v in props.items()})
        if "array" in types:
            items = s.get("items")
            return ListOf(self._convert(items) if isinstance(items, dict) else ANY)
        if "object" in types:
            extra = s.get("additionalProperties")
            if isinstance(extra, dict):
                return MapOf(self._convert(extra))
            return OPEN_OBJECT if s.get("format") != "any" else ANY
        if types == {"string"}:
            return STRING
        if types == {"integer"}:
            return INTEGER
        if types == {"number"}:
            return NUMBER
        if types == {"boolean"}:
            return BOOLEAN
        return ANY


def _types(s: dict[str, Any]) -> set[str]:
    t = s.get("type")
    if t is None:
        return set()
    if isinstance(t, str):
        t = [t]
    return {x for x in t if x != "null"}


@lru_cache(maxsize=None)
def _definitions(version: str) -> _Definitions:
    return _Definitions(version)


def _v(version: str) -> tuple[int, int]:
    a, b = version.split(".")[:2]
    return int(a), int(b)


class _GVK(msgspec.Struct):
    group: str = ""
    version: str = ""
    kind: str = ""


class _GVKOnly(msgspec.Struct):
    gvk: list[_GVK] = msgspec.field(default_factory=list, name="x-kubernetes-group-version-kind")


class _DefsGVKOnly(msgspec.Struct):
    defs: dict[str, _GVKOnly] = msgspec.field(default_factory=dict, name="$defs")


@lru_cache(maxsize=None)
def served_kinds() -> dict[tuple[str, str], tuple[str, ...]]:
    """``(apiVersion, kind)`` of every built-in kind any release serves, with the releases that
    serve it (oldest first). Read without converting the definitions (0.3 s for all releases),
    so a kind no release knows is told apart quickly, and a misspelt kind finds its nearest."""
    root = _schema_root()
    out: dict[tuple[str, str], list[str]] = {}
    for v in _available_versions():
        assert root is not None
        with open(os.path.join(root, f"v{v}.0-local", "_definitions.json"), "rb") as f:
            defs = msgspec.json.decode(f.read(), type=_DefsGVKOnly).defs
        for d in defs.values():
            for gvk in d.gvk:
                api_version = f"{gvk.group}/{gvk.version}" if gvk.group else gvk.version
                releases = out.setdefault((api_version, gvk.kind), [])
                if not releases or releases[-1] != v:
                    releases.append(v)
    return {k: tuple(v) for k, v in out.items()}


def is_served(api_version: str, kind: str) -> bool:
    """Whether some release serves ``kind`` in ``api_version`` — the chosen release's definitions
    first (read anyway to check the object), the index of every release only when they lack it."""
    key = (api_version, kind)
    if key in _SERVED:
        return True
    version = schema_version()
    if (version in _available_versions() and key in _definitions(version).by_gvk) or key in served_kinds():
        _SERVED.add(key)
        return True
    return False


_SERVED: set[tuple[str, str]] = set()


@lru_cache(maxsize=None)
def kind_spec(api_version: str, kind: str, version: str | None = None) -> Spec | None:
    """The spec of ``kind`` in ``api_version`` as Kubernetes ``version`` serves it; for an API
    version that release no longer (or not yet) serves, the nearest release that does. None when
    no release knows the kind (a custom resource: its reader checks it with its own spec)."""
    wanted = normalize_version(version)
    available = _available_versions()
    if not available:
        return None
    if wanted in available and (api_version, kind) in _definitions(wanted).by_gvk:
        order = [wanted]
    else:
        serving = served_kinds().get((api_version, kind), ())
        # The newest older release that served it, else the oldest newer one.
        order = sorted((v for v in serving if _v(v) < _v(wanted)), key=_v, reverse=True)
        order += sorted((v for v in serving if _v(v) > _v(wanted)), key=_v)
    for v in order:
        defs = _definitions(v)
        name = defs.by_gvk.get((api_version, kind))
        if name is not None:
            return defs.spec(name)
    return None


def type_spec(definition: str, version: str | None = None) -> Spec:
    """The spec of one named definition (``io.k8s.api.core.v1.PodSpec``), e.g. for a pod
    template embedded in a kubetwin format."""
    return _definitions(normalize_version(version)).spec(definition)


__all__ = ["kind_spec", "type_spec", "KNOWN_VERSIONS"]


# --- the version in effect and the one-call check ------------------------------------------------

_active_version: str | None = None


def set_schema_version(version: str | None) -> None:
    """The Kubernetes version whose API the inputs are checked against (``--kubernetes-version``)."""
    global _active_version
    _active_version = normalize_version(version) if version is not None else None


def schema_version() -> str:
    return _active_version or normalize_version(None)


def check_api_object(obj: dict[str, Any], file: str | None = None, *, prefix: str = "") -> bool:
    """Refuse unknown and mistyped fields of a Kubernetes API object, as the API server's strict
    field validation does. False (nothing checked) for a kind no release knows.

    A field the chosen release does not know but a later one does (an upstream unit test's
    object written against the development branch, replayed at the default version) is read as
    the later release defines it, with a warning naming that release — the same rule as for
    feature gates of a later release.

    ``prefix`` is the path of an object embedded in another input (``spec.workloads[0].template``),
    so the error names the whole path."""
    from .strict import find_problems, problems_error

    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return False
    version = schema_version()
    spec = kind_spec(api_version, kind, version)
    if spec is None:
        return False
    problems = find_problems(obj, spec)
    if not problems:
        return True
    later, nested = _known_later(obj, api_version, kind, version, problems)
    remaining = [p for p in problems if p.path not in later] + nested
    if remaining:
        raise problems_error(remaining, file=file, prefix=prefix)
    from ..diagnostics import warn
    from ..errors import InputError

    for path, release in later.items():
        full = f"{prefix}.{path}" if prefix and path else (prefix or path)
        warn(InputError(f"field is not in the Kubernetes {version} API; read as Kubernetes {release} defines it",
                        path=full, file=file, fix=f"use --kubernetes-version {release} if that is the release meant"))
    return True


def _known_later(obj: dict[str, Any], api_version: str, kind: str, version: str,
                 problems: list[Any]) -> tuple[dict[str, str], list[Any]]:
    """Paths of unknown ``problems`` that a later release knows, with the first such release; and
    that release's own problems inside those fields (a typo inside a later release's field)."""
    from .strict import find_problems

    unknown = {p.path for p in problems if p.kind == "unknown"}
    found: dict[str, str] = {}
    nested: list[Any] = []
    for v in _available_versions():
        if _v(v) <= _v(version) or not unknown - set(found):
            continue
        spec = kind_spec(api_version, kind, v)
        if spec is None:
            continue
        later_problems = find_problems(obj, spec, limit=10_000)
        still = {p.path for p in later_problems}
        for path in unknown:
            if path not in still and path not in found:
                found[path] = v
                nested.extend(p for p in later_problems if p.path.startswith((path + ".", path + "[")))
    return found, nested


# --- the same check at C speed, for large JSON inputs ----------------------------------------------

_SCALAR_TYPES: dict[str, Any] = {}


def _scalar_types() -> dict[str, Any]:
    if not _SCALAR_TYPES:
        from typing import Any as _Any
        from typing import Union

        # int before float: a JSON integer stays an int, so a decoded object encodes back as written
        _SCALAR_TYPES.update({ANY: _Any, STRING: str, INTEGER: int, NUMBER: Union[int, float], BOOLEAN: bool,
                              STRING_OR_NUMBER: Union[str, int, float], INT_OR_STRING: Union[str, int],
                              OPEN_OBJECT: dict})
    return _SCALAR_TYPES


@lru_cache(maxsize=None)
def strict_struct(api_version: str, kind: str, version: str | None = None) -> Any:
    """A msgspec type that decodes exactly the objects :func:`check_api_object` accepts (unknown
    fields forbidden, JSON types checked) — used to validate whole JSON files at C speed before the
    typed decode; a failure falls back to :func:`check_api_object` for the precise message.
    None when the kind is unknown. Recursive definitions (none in core/v1 workloads) decode as Any.

    The decoded value is the object itself, typed: attributes carry the wire names (``f<i>`` for
    the few that are not Python identifiers, e.g. ``continue``) and an absent field is None and
    left out when encoded, so ``msgspec.json.encode`` gives the object back (``kubetwin snapshot``
    keeps what it decodes)."""
    spec = kind_spec(api_version, kind, version or schema_version())
    if spec is None:
        return None
    made: dict[int, Any] = {}
    in_progress: set[int] = set()
    scalars = _scalar_types()

    def to_type(s: Spec) -> Any:
        if isinstance(s, str):
            return scalars[s]
        if isinstance(s, ListOf):
            return GenericAlias(list, (to_type(s.item),))
        if isinstance(s, MapOf):
            return GenericAlias(dict, (str, to_type(s.value)))
        key = id(s)
        if key in made:
            return made[key]
        if key in in_progress:
            return scalars[ANY]
        in_progress.add(key)
        rename = {}
        fields = []
        for i, (wire, sub) in enumerate(s.fields.items()):
            py = wire if wire.isidentifier() and not iskeyword(wire) and not wire.startswith("_") else f"f{i}"
            rename[py] = wire
            fields.append((py, to_type(sub) | None, None))
        in_progress.discard(key)
        cls = msgspec.defstruct(s.name or f"Strict{len(made)}", fields, forbid_unknown_fields=True,
                                rename=rename, gc=False, omit_defaults=True)
        made[key] = cls
        return cls

    return to_type(spec)
