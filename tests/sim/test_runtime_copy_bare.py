"""The C kernel's bare allocation (``kubetwin.sim.runtime_copy.BARE_NEW``): objects it copies are
allocated without CPython 3.11's inline attribute values (given their ``__dict__`` at once) and are
the same objects ``object.__new__`` gives — the same graph, attributes read, written, added and
deleted alike, a copy's dict its own — and a runtime node copied bare answers the next pods as one
copied through ``object.__new__``."""

from __future__ import annotations

import copy
import pickle
import random
from typing import Any

import pytest

from kubetwin.sim import runtime_copy
from kubetwin.sim.runtime_policies import _template

from .test_runtime_copy import _placements, _pod, _started
from .test_runtime_copy_native import _Plain, _random_value, _same_graph

pytestmark = pytest.mark.skipif(runtime_copy._NATIVE_COPY is None, reason="the C kernel is not built here")


class _Later:
    """Made abstract after its instance (``__abstractmethods__`` set on the class)."""


def _copy(x: Any, memo: dict[int, Any], bare: bool) -> Any:
    before = runtime_copy.BARE_NEW
    runtime_copy.use_bare_new(bare)
    try:
        return runtime_copy.copy_state(x, memo)
    finally:
        runtime_copy.use_bare_new(before)


@pytest.fixture(autouse=True)
def _native() -> Any:
    before = runtime_copy.NATIVE
    runtime_copy.use_native(True)
    yield
    runtime_copy.use_native(before)


@pytest.mark.parametrize("seed", range(30))
def test_a_bare_copy_is_the_graph_of_a_copy_through_object_new_for_random_values(seed: int) -> None:
    rng = random.Random(seed)
    pool: list[Any] = []
    value = [_random_value(rng, pool, 5) for _ in range(4)]
    _same_graph(value, _copy(value, {}, True), _copy(value, {}, False))


def test_an_object_allocated_bare_reads_writes_adds_and_deletes_attributes_as_any_other() -> None:
    orig = _Plain([1, 2], None, "a")
    twin = _copy(orig, {}, True)
    assert type(twin) is _Plain and vars(twin) == vars(orig) and twin.items is not orig.items
    twin.name = "b"
    twin.extra = 3   # an attribute the class never set
    del twin.peer
    assert (orig.name, getattr(orig, "extra", None), orig.peer) == ("a", None, None)
    assert vars(twin) == {"items": [1, 2], "name": "b", "extra": 3}
    again = _copy(twin, {}, True)   # a bare object copied bare again
    assert vars(again) == vars(twin) and again.__dict__ is not twin.__dict__
    assert vars(pickle.loads(pickle.dumps(twin))) == vars(twin)
    assert vars(copy.deepcopy(twin)) == vars(twin)


def test_a_fresh_instance_whose_dict_was_never_read_is_copied_bare_with_its_attributes() -> None:
    orig = _Plain([1], "p", "fresh")   # inline values only: the kernel reads its dict for the first time
    twin = _copy([orig, orig], {}, True)
    assert twin[0] is twin[1] and vars(twin[0]) == {"items": [1], "peer": "p", "name": "fresh"}


def test_an_instance_of_a_class_made_abstract_is_refused_as_object_new_refuses_it() -> None:
    orig = _Later()
    orig.x = [1]
    _Later.__abstractmethods__ = frozenset({"run"})   # type: ignore[attr-defined]
    try:
        for bare in (True, False):
            with pytest.raises(TypeError, match="abstract"):
                _copy(orig, {}, bare)
    finally:
        _Later.__abstractmethods__ = frozenset()   # type: ignore[attr-defined]


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
@pytest.mark.parametrize("seed", range(3))
def test_a_runtime_node_copied_bare_answers_the_next_pods_as_one_copied_through_object_new(
        policy: str, seed: int) -> None:
    rng = random.Random(seed)
    rn, rp, config = _started(policy, 3)
    for k in range(3, 3 + rng.randint(1, 3)):
        assert rn.start_pod(_pod(k, rng.choice(("1", "2", "500m")), rng.random() < 0.5)) is None

    def memo() -> dict[int, Any]:
        m = dict(_template(rn.machine, rp, config, rn.kubelet)[1])
        m[id(rn.kubelet)] = rn.kubelet
        return m

    bare, plain = _copy(rn, memo(), True), _copy(rn, memo(), False)
    _same_graph(rn, bare, plain)
    for k in range(10, 10 + rng.randint(2, 5)):
        pod = _pod(k, rng.choice(("1", "2", "500m")), rng.random() < 0.5)
        assert bare.start_pod(pod) == plain.start_pod(pod)
        if rng.random() < 0.3:
            bare.delete_pod("default/p0")
            plain.delete_pod("default/p0")
    assert _placements(bare) == _placements(plain)


def test_bare_allocation_is_switched_by_use_bare_new() -> None:
    try:
        assert runtime_copy.use_bare_new(False) is False and not runtime_copy.BARE_NEW
        assert runtime_copy.use_bare_new(True) is True and runtime_copy.BARE_NEW
    finally:
        runtime_copy.use_bare_new(True)
