"""A copy of a runtime node's state, several times cheaper than ``copy.deepcopy``.

``simulate`` copies runtime nodes all the time: every node of a runtime-policy group starts as a
copy of the group's started node (:func:`.runtime_policies.fork_runtime_node`), and the table
of node histories (:mod:`.runtime_memo`) parks copies of real nodes in the states they pass
through. ``copy.deepcopy`` spends most of that time on what never changes once built — the
pods (frozen ``msgspec`` structs), cpusets (immutable), strings — and on its generic dispatch
(``__reduce_ex__`` for every object). :func:`copy_state` gives the same graph — every mutable
object copied once, shared references and cycles kept, ``memo`` objects taken as given — but
shares the immutable values and copies plain objects (``__dict__`` and ``__slots__``), dicts,
lists, sets and tuples directly; anything else (objects with their own ``__deepcopy__``,
``__reduce_ex__``, ``__setstate__``, ...) goes to ``copy.deepcopy`` with the same memo.

Not an upstream module: a kubetwin fast path for the simulation of nri-plugins' policies.
"""

from __future__ import annotations

import copy
import types
from typing import Any, Callable

import msgspec

from ..model.cpuset import CPUSet

_ATOM, _DICT, _LIST, _TUPLE, _SET, _FROZENSET, _OBJECT, _DEEPCOPY = range(8)

#: per type: how it is copied; types first met are classified by :func:`_classify`
_KIND: dict[type, int] = {t: _ATOM for t in (str, int, float, bool, complex, bytes, type(None), type,
                                             range, types.FunctionType, types.BuiltinFunctionType,
                                             types.ModuleType, CPUSet, type(Ellipsis), type(NotImplemented))}
_KIND.update({dict: _DICT, list: _LIST, tuple: _TUPLE, set: _SET, frozenset: _FROZENSET})
#: the slots of a type (its own and its bases'), for objects with ``__slots__``
_SLOTS: dict[type, tuple[str, ...]] = {}

_PLAIN_REDUCE = object.__reduce_ex__


def _classify(t: type) -> int:
    if issubclass(t, msgspec.Struct) and t.__struct_config__.frozen:
        return _ATOM   # the model's objects (pods, ...): frozen, built once from the input
    if t.__module__ == "builtins" or any(b.__module__ == "builtins" and b is not object for b in t.__mro__):
        return _DEEPCOPY   # builtin types and their subclasses (enums of int, ...): deepcopy knows them
    if (getattr(t, "__deepcopy__", None) is not None or getattr(t, "__setstate__", None) is not None
            or getattr(t, "__reduce_ex__", None) is not _PLAIN_REDUCE
            or getattr(t, "__reduce__", None) is not object.__reduce__
            or getattr(t, "__getstate__", None) is not object.__getstate__):
        return _DEEPCOPY
    slots: list[str] = []
    for base in t.__mro__:
        own = base.__dict__.get("__slots__", ())
        for s in (own,) if isinstance(own, str) else own:
            if s not in ("__dict__", "__weakref__"):
                slots.append(s)
    _SLOTS[t] = tuple(slots)
    return _OBJECT


def copy_state(obj: Any, memo: dict[int, Any]) -> Any:
    """A deep copy of ``obj`` (``memo``: ``id(original) -> copy``, as ``copy.deepcopy`` takes it;
    objects already in it are used as they are)."""
    return _copy(obj, memo)


def _copy(x: Any, memo: dict[int, Any]) -> Any:
    t = type(x)
    kind = _KIND.get(t)
    if kind is None:
        kind = _KIND[t] = _classify(t)
    if kind == _ATOM:
        return x
    i = id(x)
    got = memo.get(i, memo)
    if got is not memo:
        return got
    c: Callable[[Any, dict[int, Any]], Any] = _copy
    kinds = _KIND
    if kind == _DICT:
        d: dict[Any, Any] = {}
        memo[i] = d
        for k, v in x.items():
            d[k if kinds.get(type(k)) == _ATOM else c(k, memo)] = v if kinds.get(type(v)) == _ATOM else c(v, memo)
        return d
    if kind == _LIST:
        lst: list[Any] = []
        memo[i] = lst
        lst.extend([v if kinds.get(type(v)) == _ATOM else c(v, memo) for v in x])
        return lst
    if kind == _OBJECT:
        new = object.__new__(t)
        memo[i] = new
        state = getattr(x, "__dict__", None)
        if state is not None:
            nd = new.__dict__
            for k, v in state.items():
                nd[k] = v if kinds.get(type(v)) == _ATOM else c(v, memo)
        for s in _SLOTS[t]:
            try:
                v = object.__getattribute__(x, s)
            except AttributeError:
                continue
            object.__setattr__(new, s, v if kinds.get(type(v)) == _ATOM else c(v, memo))
        return new
    if kind == _TUPLE:
        items = [c(v, memo) for v in x]
        got = memo.get(i, memo)   # a cycle through the tuple was copied meanwhile
        if got is not memo:
            return got
        out = x if all(a is b for a, b in zip(items, x)) else tuple(items)
        memo[i] = out
        return out
    if kind == _SET:
        st: set[Any] = set()
        memo[i] = st
        st.update(c(v, memo) for v in x)
        return st
    if kind == _FROZENSET:
        fitems = [c(v, memo) for v in x]
        fout = x if all(a is b for a, b in zip(fitems, x)) else frozenset(fitems)
        memo[i] = fout
        return fout
    return copy.deepcopy(x, memo)
