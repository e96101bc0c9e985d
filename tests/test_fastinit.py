"""fast_init's ``__init__`` builds the same frozen values as the dataclass's own."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from kubetwin.fastinit import fast_init


@dataclass(frozen=True, slots=True)
class Plain:
    name: str
    count: int = 1
    tags: tuple[str, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)
    seen: list[int] = field(default_factory=list, init=False)


@fast_init
@dataclass(frozen=True, slots=True)
class Fast:
    name: str
    count: int = 1
    tags: tuple[str, ...] = ()
    labels: dict[str, str] = field(default_factory=dict)
    seen: list[int] = field(default_factory=list, init=False)


def _values(obj):
    return [getattr(obj, f.name) for f in dataclasses.fields(obj)]


@pytest.mark.parametrize("args, kwargs", [(("a",), {}), (("a", 2), {}), (("a",), {"tags": ("x",)}),
                                          ((), {"name": "a", "labels": {"k": "v"}, "count": 3})])
def test_fields_defaults_and_factories_are_the_dataclass_ones(args, kwargs):
    assert _values(Fast(*args, **kwargs)) == _values(Plain(*args, **kwargs))


def test_a_default_factory_gives_each_value_its_own_object():
    a, b = Fast("a"), Fast("b")
    assert a.labels == {} and a.labels is not b.labels and a.seen is not b.seen


def test_the_value_stays_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Fast("a").name = "b"   # type: ignore[misc]


def test_equality_replace_and_pickle_work_as_before():
    a = Fast("a", 2, ("t",))
    assert a == Fast("a", 2, ("t",)) and a != Fast("a", 3, ("t",))
    assert dataclasses.replace(a, count=5).count == 5
    assert pickle.loads(pickle.dumps(a)) == a


def test_a_missing_argument_is_the_usual_type_error():
    with pytest.raises(TypeError):
        Fast()   # type: ignore[call-arg]


def test_classes_it_cannot_model_are_refused():
    @dataclass(frozen=True, slots=True)
    class WithPost:
        x: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True)
    class Unslotted:
        x: int

    for cls in (WithPost, Unslotted):
        with pytest.raises(TypeError):
            fast_init(cls)
