"""The C kernel's slots at their offsets (``kubetwin.sim.runtime_copy.DIRECT_SLOTS``): a slotted
object's slots copied where its member descriptors keep them give the graph the copy by name gives
— unset slots left unset, a subclass's slots and its bases', cycles through slots — and runtime
nodes (libmem's requests and zones, topology-aware's supplies) copied alike."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubetwin.sim import runtime_copy
from kubetwin.sim.runtime_policies import _template

from .test_runtime_copy import _events, _run, _started
from .test_runtime_copy_native import _random_value, _same_graph

pytestmark = pytest.mark.skipif(runtime_copy._NATIVE_COPY is None, reason="the C kernel is not built here")


class _Base:
    __slots__ = ("a", "b")


class _Sub(_Base):
    __slots__ = ("c",)


def _copy(x: Any, direct: bool) -> Any:
    native = runtime_copy.NATIVE
    runtime_copy.use_native(True)
    runtime_copy.use_direct_slots(direct)
    try:
        return runtime_copy.copy_state(x, {})
    finally:
        runtime_copy.use_direct_slots(True)
        runtime_copy.use_native(native)


def _sub(a: Any = None, c: Any = None) -> _Sub:
    out = _Sub()
    out.a = a
    if c is not None:
        out.c = c
    return out


def test_slots_copied_at_their_offsets_keep_unset_ones_unset_and_a_subclass_has_its_bases_slots() -> None:
    orig = _sub([1], [2])   # b never set
    for direct in (True, False):
        twin = _copy(orig, direct)
        assert type(twin) is _Sub and twin.a == [1] and twin.c == [2] and twin.a is not orig.a
        assert not hasattr(twin, "b")


def test_a_cycle_through_slots_is_copied_as_a_cycle() -> None:
    orig = _sub()
    orig.a = [orig]
    orig.b = orig
    twin = _copy(orig, True)
    assert twin.b is twin and twin.a[0] is twin and twin.a is not orig.a


@pytest.mark.parametrize("seed", range(20))
def test_slots_at_their_offsets_and_by_name_give_the_same_graph_for_random_values(seed: int) -> None:
    rng = random.Random(seed)
    pool: list[Any] = []
    value = []
    for _ in range(6):
        s = _sub(_random_value(rng, pool, 3), _random_value(rng, pool, 3) if rng.random() < 0.7 else None)
        if rng.random() < 0.5:
            s.b = rng.choice(pool) if pool else s
        pool.append(s)
        value.append(s)
    _same_graph(value, _copy(value, True), _copy(value, False))


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
@pytest.mark.parametrize("seed", range(2))
def test_a_runtime_node_copied_with_slots_at_their_offsets_is_the_graph_copied_by_name(policy: str, seed: int) -> None:
    rng = random.Random(seed)
    rn, rp, config = _started(policy, 0)
    _run(rn, _events(rng, 0, rng.randrange(3, 10), []))

    def made(direct: bool) -> Any:
        memo = dict(_template(rn.machine, rp, config, rn.kubelet)[1])
        memo[id(rn.kubelet)] = rn.kubelet
        runtime_copy.use_direct_slots(direct)
        try:
            return runtime_copy.copy_state(rn, memo)
        finally:
            runtime_copy.use_direct_slots(True)

    native = runtime_copy.NATIVE
    runtime_copy.use_native(True)
    try:
        _same_graph(rn, made(True), made(False))
    finally:
        runtime_copy.use_native(native)
