"""A faster ``__init__`` for frozen slotted dataclasses, the values kubetwin makes per pod.

A frozen dataclass's generated ``__init__`` stores each field with ``object.__setattr__(self,
name, value)`` (the class's own ``__setattr__`` refuses), a generic lookup per field: a
ten-field claim costs about four times what a mutable one does. With ``slots=True`` every field
is a slot whose descriptor can store the value directly, which is what :func:`fast_init`'s
``__init__`` does. Nothing else changes: the same signature, defaults and default factories,
and the instance is as frozen afterwards (assignment still raises ``FrozenInstanceError``).

kubetwin's own (no upstream file): Python object construction on the per-pod paths.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any, TypeVar

T = TypeVar("T")

_HAS_FACTORY = object()


def fast_init(cls: type[T]) -> type[T]:
    """Give the frozen, slotted dataclass ``cls`` an ``__init__`` that fills its slots directly.

    Classes with ``__post_init__``, ``InitVar`` or keyword-only fields are refused (TypeError):
    the generated body does not model them."""
    klass: Any = cls
    if not dataclasses.is_dataclass(klass) or getattr(klass, "__post_init__", None) is not None:
        raise TypeError(f"{cls.__name__}: fast_init takes a dataclass without __post_init__")
    params = dataclasses.fields(klass)
    ns: dict[str, Any] = {"_HAS_FACTORY": _HAS_FACTORY}
    args: list[str] = []
    body: list[str] = []
    for f in params:
        desc = next((k.__dict__[f.name] for k in cls.__mro__ if f.name in k.__dict__), None)
        if not isinstance(desc, types.MemberDescriptorType):
            raise TypeError(f"{cls.__name__}.{f.name}: fast_init takes slotted dataclasses only")
        if f.kw_only:
            raise TypeError(f"{cls.__name__}.{f.name}: keyword-only fields are not supported")
        ns[f"_set_{f.name}"] = desc.__set__
        has_default = f.default is not dataclasses.MISSING
        has_factory = f.default_factory is not dataclasses.MISSING
        if has_default:
            ns[f"_default_{f.name}"] = f.default
        if has_factory:
            ns[f"_factory_{f.name}"] = f.default_factory
        if not f.init:
            value = f"_default_{f.name}" if has_default else f"_factory_{f.name}()" if has_factory else None
            if value is not None:
                body.append(f"    _set_{f.name}(self, {value})")
            continue
        if has_default:
            args.append(f"{f.name}=_default_{f.name}")
            body.append(f"    _set_{f.name}(self, {f.name})")
        elif has_factory:
            args.append(f"{f.name}=_HAS_FACTORY")
            body.append(f"    _set_{f.name}(self, _factory_{f.name}() if {f.name} is _HAS_FACTORY else {f.name})")
        else:
            args.append(f.name)
            body.append(f"    _set_{f.name}(self, {f.name})")
    src = f"def __init__(self, {', '.join(args)}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(src, ns)
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    type.__setattr__(klass, "__init__", init)
    return cls
