"""The generated copiers of NRI messages (a fast path) against the generic copy: the same tree,
no mutable part shared, the generic walk for values off their declared shape."""

from __future__ import annotations

import copy
import dataclasses
import random
from typing import Any

import pytest

from kubetwin.runtime.nri import api, message_copy

_MESSAGES = [t for t in vars(api).values()
             if isinstance(t, type) and dataclasses.is_dataclass(t) and t.__module__ == api.__name__
             and dataclasses.fields(t) and all("kind" in f.metadata for f in dataclasses.fields(t))]


def _random(t: type, rng: random.Random, depth: int = 0) -> Any:
    hints = message_copy._hints(t)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(t):
        kind = f.metadata["kind"]
        sub = message_copy._message_type(hints.get(f.name))
        if kind in ("string", "opt_string") or kind.startswith("enum:"):
            v: Any = rng.choice(["", "a", "0-3", None if kind == "opt_string" else "x"])
        elif kind in ("bool", "opt_bool"):
            v = rng.choice([True, False] + ([None] if kind == "opt_bool" else []))
        elif kind.startswith("opt_") and kind != "opt_repeated_string":
            v = rng.choice([None, 0, 7, 1 << 40])
        elif kind in ("int32", "uint32", "int64", "uint64"):
            v = rng.choice([0, 3, 1 << 33])
        elif kind in ("list_str", "list_enum", "list_uint32", "opt_repeated_string"):
            v = [rng.choice(["a", "b", 1]) for _ in range(rng.randrange(3))]
        elif kind == "map_str":
            v = {f"k{i}": rng.choice(["v", ""]) for i in range(rng.randrange(3))}
        elif kind == "msg":
            v = None if sub is None or depth > 3 or rng.random() < 0.3 else _random(sub, rng, depth + 1)
        elif kind == "list_msg":
            v = [] if sub is None or depth > 3 else [_random(sub, rng, depth + 1) for _ in range(rng.randrange(3))]
        elif kind == "map_msg":
            v = {} if sub is None or depth > 3 else {
                f"m{i}": None if rng.random() < 0.2 else _random(sub, rng, depth + 1) for i in range(rng.randrange(3))}
        else:
            raise AssertionError(f"a field kind the test does not know: {kind}")
        values[f.name] = v
    return t(**values)


def _mutable_parts(v: Any, out: list[Any]) -> list[Any]:
    if isinstance(v, (list, dict)) or dataclasses.is_dataclass(v):
        out.append(v)
    items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else (
        vars(v).values() if dataclasses.is_dataclass(v) else ())
    for x in items:
        _mutable_parts(x, out)
    return out


def _generic(msg: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(message_copy, "ENABLED", False)
        return api.clone(msg)


@pytest.mark.parametrize("seed", range(40))
def test_a_generated_copy_equals_the_generic_copy_of_every_message_type(seed: int,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    for t in _MESSAGES:
        msg = _random(t, rng)
        fast = api.clone(msg)
        assert type(fast) is t
        assert fast == _generic(msg, monkeypatch) == copy.deepcopy(msg) == msg
        assert list(vars(fast)) == list(vars(msg))


@pytest.mark.parametrize("seed", range(10))
def test_a_generated_copy_shares_no_mutable_part_with_the_original(seed: int) -> None:
    rng = random.Random(seed)
    for t in _MESSAGES:
        msg = _random(t, rng)
        original = {id(x) for x in _mutable_parts(msg, [])}
        assert not any(id(x) in original for x in _mutable_parts(api.clone(msg), []))


def test_every_message_type_has_a_generated_copier() -> None:
    assert {t.__name__ for t in _MESSAGES} >= {"Container", "PodSandbox", "LinuxResources", "ContainerUpdate",
                                               "ContainerAdjustment"}
    assert all(message_copy.copier(t, api._clone) is not None for t in _MESSAGES)


def test_a_value_off_its_declared_shape_is_copied_by_the_generic_walk() -> None:
    c = api.Container(id="c", labels={"a": "b"})
    c.args = ("x", ["y"])           # a tuple where a list is declared
    c.mounts = [["nested"]]         # declared a list of messages: not one
    d = api.clone(c)
    assert d == c and d.args == ("x", ["y"]) and d.args[1] is not c.args[1] and d.mounts[0] is not c.mounts[0]


def test_a_message_with_an_attribute_no_field_declares_is_copied_by_the_generic_walk() -> None:
    c = api.Container(id="c")
    c.extra = {"kept": ["too"]}     # type: ignore[attr-defined]
    d = api.clone(c)
    assert d.extra == c.extra and d.extra is not c.extra   # type: ignore[attr-defined]


def test_a_type_without_field_kinds_has_no_generated_copier() -> None:
    @dataclasses.dataclass
    class Plain:
        x: list[int] = dataclasses.field(default_factory=list)

    assert message_copy.copier(Plain, api._clone) is None
    p = Plain([1])
    assert api.clone(p) == p and api.clone(p).x is not p.x


def test_a_message_whose_init_cannot_take_every_field_in_order_is_filled_field_by_field() -> None:
    @dataclasses.dataclass
    class Counted:
        items: list[str] = api._f("items", "list_str", factory=list)
        name: str = dataclasses.field(default="", kw_only=True, metadata={"json": "name", "kind": "string"})
        seen: int = dataclasses.field(default=0, init=False, metadata={"json": "seen", "kind": "int32"})

        def __post_init__(self) -> None:
            self.seen += 1

    c = Counted(["a"], name="n")
    d = api.clone(c)
    assert message_copy.copier(Counted, api._clone) is not None
    assert d == c and d.seen == 1 and d.name == "n" and d.items is not c.items
