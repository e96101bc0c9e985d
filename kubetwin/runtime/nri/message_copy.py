"""A fast path for copying NRI messages: one copier per message type, built from its field kinds.

The runtime adaptation copies each request for every plugin (a plugin gets its own protobuf
message over ttrpc upstream) and the merge of the plugins' replies copies resources; the
generic copy (:func:`.api.clone`) walks every value and asks its type. Each message field
declares its protobuf kind (:func:`.api._f`), so a copier generated per message type copies
scalars by reference, ``map<string,string>`` and repeated scalars with one C-level copy, and
nested messages with their own copier — the same tree the generic walk builds, about twice as
fast. The values of a scalar field (and the items of a repeated scalar or a string map) are
taken to be the scalars the field declares, and shared; a container that is not of its
field's declared shape (a tuple where a list is declared, something else than a message in a
message field), a type without kinds and a message with attributes no field declares go
through the generic walk.

:data:`ENABLED` off: every copy is the generic walk (equivalence tests, A/B runs).

Not an upstream module: a kubetwin fast path for containerd/nri v0.12.2 ``pkg/api``'s
``proto.Clone`` as ``pkg/adaptation`` uses it.
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from collections.abc import Callable
from typing import Any

#: copy with the generated per-type copiers (False: :func:`.api.clone`'s generic walk only)
ENABLED = True

#: field kinds whose values are immutable scalars (strings, numbers, booleans, None)
_SCALAR_KINDS = frozenset({"string", "bool", "int32", "uint32", "int64", "uint64", "opt_int64", "opt_uint64",
                           "opt_int", "opt_uint32", "opt_filemode", "opt_int32", "opt_string", "opt_bool"})
_SCALAR_LISTS = frozenset({"list_str", "list_enum", "list_uint32", "opt_repeated_string"})

Copier = Callable[[Any], Any]
_COPIERS: dict[type, Copier | None] = {}


def copier(t: type, generic: Copier) -> Copier | None:
    """The copier of message type ``t`` (None when ``t`` is not a message with field kinds)."""
    try:
        return _COPIERS[t]
    except KeyError:
        pass
    _COPIERS[t] = None   # while building: a recursive message type goes through the generic walk
    made = _build(t, generic)
    _COPIERS[t] = made
    return made


def _build(t: type, generic: Copier) -> Copier | None:
    if not dataclasses.is_dataclass(t) or "__slots__" in t.__dict__:
        return None
    fields = dataclasses.fields(t)
    if not fields or any("kind" not in f.metadata for f in fields):
        return None
    hints = _hints(t)
    env: dict[str, Any] = {"g": generic, "new_": object.__new__, "T": t}
    parts = []
    for i, f in enumerate(fields):
        kind = f.metadata["kind"]
        x = f"d[{f.name!r}]"
        if kind in _SCALAR_KINDS or kind.startswith("enum:"):
            expr = x   # immutable: shared, as a copy would be
        elif kind in _SCALAR_LISTS:
            expr = f"(([*x{i}] if x{i} else []) if type(x{i} := {x}) is list else g(x{i}))"
        elif kind == "map_str":
            expr = f"({{**x{i}}} if type(x{i} := {x}) is dict else g(x{i}))"
        elif kind in ("msg", "list_msg", "map_msg"):
            sub = _message_type(hints.get(f.name))
            env[f"T{i}"], env[f"C{i}"] = sub, _nested(sub, generic)
            one = f"(C{i}(e) if type(e) is T{i} else m(e))"
            if kind == "msg":
                expr = f"(None if (e := {x}) is None else {one})"
            elif kind == "list_msg":
                expr = f"(([{one} for e in x{i}] if x{i} else []) if type(x{i} := {x}) is list else g(x{i}))"
            else:
                expr = (f"(({{k: (None if e is None else {one}) for k, e in x{i}.items()}} if x{i} else {{}}) "
                        f"if type(x{i} := {x}) is dict else g(x{i}))")
        else:
            expr = f"g({x})"
        parts.append((f.name, expr))
    n = len(fields)
    if hasattr(t, "__post_init__") or not all(f.init and not f.kw_only for f in fields):
        make = f"    new = new_(T)\n    new.__dict__ = {{{', '.join(f'{k!r}: {e}' for k, e in parts)}}}\n    return new\n"
    else:   # the dataclass's own __init__ with every field given: the quickest way to fill one
        make = f"    return T({', '.join(e for _, e in parts)})\n"
    src = (f"def copy(v):\n"
           f"    d = v.__dict__\n"
           f"    if len(d) != {n}:\n"
           f"        return g(v)\n"
           + make)

    env["m"] = lambda v: _any(v, generic)
    exec(compile(src, f"<message_copy {t.__qualname__}>", "exec"), env)  # noqa: S102 - generated from field kinds
    made: Copier = env["copy"]
    return made


_MISSING: Any = object()


def _any(v: Any, generic: Copier) -> Any:
    """A nested value of another type than its field declares: its own copier, or the generic walk."""
    c = _COPIERS.get(type(v), _MISSING)
    if c is _MISSING:
        c = copier(type(v), generic)
    return c(v) if c is not None else generic(v)


def _nested(t: type | None, generic: Copier) -> Copier:
    """The copier of a nested message type (a type being built — a recursive one — is looked up
    when used)."""
    made = copier(t, generic) if t is not None else None
    return made if made is not None else (lambda v: _any(v, generic))


def _hints(t: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(t, vars(sys.modules[t.__module__]))
    except (NameError, TypeError, KeyError):
        return {}


def _message_type(hint: Any) -> type | None:
    """The one message (dataclass) type a field's annotation names: ``X | None``, ``list[X]``,
    ``dict[str, X]``."""
    found = [a for a in _walk(hint) if isinstance(a, type) and dataclasses.is_dataclass(a)]
    return found[0] if len(set(found)) == 1 else None


def _walk(hint: Any) -> list[Any]:
    args = typing.get_args(hint)
    if not args:
        return [hint]
    return [x for a in args for x in _walk(a)]


# --- a container message for a plugin that keeps it and writes only its resources ----------------
#: hand plugins that declare it (``_nri_resources_only``) a container sharing what neither side
#: writes (False: a full copy, :func:`.api.clone`)
SHARED_CONTAINER = True


def resources_only_copy(ctr: Any, clone: Copier) -> Any:
    """A copy of container message ``ctr`` for a plugin that writes nothing in it but its
    ``linux.resources`` (and keeps it: nri-plugins' cache): a new message and ``linux`` around a
    copy of the resources, and copies of what the runtime itself may still write in place while
    it merges the plugins' replies (annotations, hooks, rlimits, sysctls, network devices); the
    rest — labels, arguments, environment, mounts, devices, namespaces, scalars — is shared: the
    runtime only ever replaces those lists, never changes them. ``clone``: the full copy, for a
    message not of its declared shape."""
    d = ctr.__dict__
    linux = d.get("linux")
    container_t, n_container, linux_t, n_linux = _SHAPE or _shape()
    if not SHARED_CONTAINER or type(ctr) is not container_t or len(d) != n_container or type(linux) is not linux_t:
        return clone(ctr)
    ls: dict[str, Any] = linux.__dict__
    if (len(ls) != n_linux or type(d["annotations"]) is not dict or type(d["rlimits"]) is not list
            or type(ls["sysctl"]) is not dict or type(ls["net_devices"]) is not dict):
        return clone(ctr)
    new = object.__new__(container_t)
    nd = new.__dict__
    nd.update(d)
    nd["annotations"] = {**d["annotations"]}
    nd["rlimits"] = [*d["rlimits"]]
    hooks = d["hooks"]
    if hooks is not None:
        nd["hooks"] = clone(hooks)
    lx = object.__new__(linux_t)
    ld = lx.__dict__
    ld.update(ls)
    ld["sysctl"] = {**ls["sysctl"]}
    ld["net_devices"] = {**ls["net_devices"]}
    res = ls["resources"]
    if res is not None:
        ld["resources"] = clone(res)
    nd["linux"] = lx
    return new


_SHAPE: tuple[type, int, type, int] | None = None


def _shape() -> tuple[type, int, type, int]:
    """The container message types and their field counts (read once: :mod:`.api` imports this module)."""
    global _SHAPE
    from .api import Container, LinuxContainer

    _SHAPE = (Container, len(dataclasses.fields(Container)), LinuxContainer, len(dataclasses.fields(LinuxContainer)))
    return _SHAPE
