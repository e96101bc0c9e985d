"""The C kernel of ``kubetwin.sim.runtime_copy`` (``kubetwin._kernel._graphcopy``) against its twin,
the Python copier: the same graph for random values (dicts, lists, plain and slotted objects,
tuples, sets, shared references, cycles, objects given in the memo) and for runtime nodes of both
policies — the same objects copied, the same ones shared with the original, the same values."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubetwin.model.cpuset import CPUSet
from kubetwin.sim import runtime_copy
from kubetwin.sim.runtime_policies import _template

from .test_runtime_copy import _pod, _started

pytestmark = pytest.mark.skipif(runtime_copy._NATIVE_COPY is None, reason="the C kernel is not built here")


@dataclass(eq=False)
class _Plain:
    items: list[Any] = field(default_factory=list)
    peer: Any = None
    name: str = ""


class _Slots:
    __slots__ = ("a", "b", "c")


def _copy(x: Any, memo: dict[int, Any], native: bool) -> Any:
    before = runtime_copy.NATIVE
    runtime_copy.use_native(native)
    try:
        return runtime_copy.copy_state(x, memo)
    finally:
        runtime_copy.use_native(before)


def _children(x: Any) -> list[Any] | None:
    """What the walk compares under ``x`` (None: an atom, compared by identity)."""
    t = type(x)
    if t in runtime_copy._ATOMS:
        return None
    if t is dict:
        return [v for kv in x.items() for v in kv]
    if t in (list, tuple):
        return list(x)
    if t in (set, frozenset):
        return sorted(x, key=repr)
    out = list(getattr(x, "__dict__", {}).items())
    for s in runtime_copy._SLOTS.get(t, ()):
        out.append((s, getattr(x, s, "<unset>")))
    return [v for kv in out for v in kv]


def _same_graph(orig: Any, one: Any, two: Any) -> None:
    """``one`` and ``two`` (copies of ``orig``) are the same graph: the same types and atoms, the
    same sharing among their objects, the same objects of ``orig`` shared."""
    pairs: dict[int, int] = {}
    stack = [(orig, one, two)]
    while stack:
        o, a, b = stack.pop()
        assert type(a) is type(b), (type(a), type(b))
        assert (a is o) == (b is o), type(o)
        kids = _children(a)
        if kids is None:
            assert a is b
            continue
        if id(a) in pairs:
            assert pairs[id(a)] == id(b)
            continue
        pairs[id(a)] = id(b)
        ko, kb = _children(o), _children(b)
        assert ko is not None and kb is not None and len(ko) == len(kids) == len(kb)
        stack.extend(zip(ko, kids, kb))


def _random_value(rng: random.Random, pool: list[Any], depth: int) -> Any:
    """A random value, reusing made ones from ``pool`` (shared references and cycles)."""
    r = rng.random()
    if pool and r < 0.2:
        return rng.choice(pool)
    if depth <= 0 or r < 0.35:
        return rng.choice([rng.randint(0, 9), f"s{rng.randint(0, 9)}", None, CPUSet([rng.randint(0, 7)]), 1.5])
    kind = rng.randrange(8)
    if kind == 0:
        d: dict[Any, Any] = {}
        pool.append(d)
        for _ in range(rng.randint(0, 4)):
            d[f"k{rng.randint(0, 20)}"] = _random_value(rng, pool, depth - 1)
        if rng.random() < 0.15:
            d[_Plain()] = _random_value(rng, pool, depth - 1)   # a key that is not an atom
        if rng.random() < 0.2:
            d[(rng.randint(0, 3), "t")] = _random_value(rng, pool, depth - 1)   # a tuple key of atoms
        return d
    if kind == 1:
        lst: list[Any] = []
        pool.append(lst)
        lst.extend(_random_value(rng, pool, depth - 1) for _ in range(rng.randint(0, 4)))
        return lst
    if kind == 2:
        return tuple(_random_value(rng, pool, depth - 1) for _ in range(rng.randint(0, 3)))
    if kind == 3:
        return frozenset(rng.randint(0, 30) for _ in range(rng.randint(0, 3)))
    if kind == 4:
        return {rng.randint(0, 30) for _ in range(rng.randint(0, 3))}
    if kind == 5:
        s = _Slots()
        pool.append(s)
        for name in ("a", "b", "c"):
            if rng.random() < 0.7:
                setattr(s, name, _random_value(rng, pool, depth - 1))
        return s
    p = _Plain(name=f"n{rng.randint(0, 9)}")
    pool.append(p)
    p.items = [_random_value(rng, pool, depth - 1) for _ in range(rng.randint(0, 3))]
    p.peer = _random_value(rng, pool, depth - 1)
    return p


@pytest.mark.parametrize("seed", range(40))
def test_the_c_kernel_and_the_python_copier_give_the_same_graph_for_random_values(seed: int) -> None:
    rng = random.Random(seed)
    pool: list[Any] = []
    value = [_random_value(rng, pool, 5) for _ in range(4)]
    kept = rng.choice(pool) if pool else None
    memo = {} if kept is None else {id(kept): kept}
    _same_graph(value, _copy(value, dict(memo), True), _copy(value, dict(memo), False))


def test_an_object_given_in_the_memo_is_used_by_the_c_kernel() -> None:
    keep = _Plain(name="kept")
    box = _Plain([keep, [keep]])
    out = _copy(box, {id(keep): keep}, True)
    assert out is not box and out.items[0] is keep and out.items[1][0] is keep


def test_the_c_kernel_copies_cycles_as_cycles_and_slots_as_set() -> None:
    a, b = _Plain(), _Plain()
    a.peer, b.peer = b, a
    s = _Slots()
    s.a = a
    out = _copy(s, {}, True)
    assert out is not s and out.a.peer.peer is out.a and out.a is not a
    assert not hasattr(out, "b") and not hasattr(out, "c")


def test_a_dict_with_object_keys_is_copied_by_the_python_copier_under_the_c_kernel() -> None:
    key = _Plain()
    d = {"a": [1], key: [2]}
    out = _copy([d, key], {}, True)
    copied = out[0]
    assert list(copied)[1] is out[1] and out[1] is not key and copied[out[1]] == [2]


def test_a_dict_keyed_by_a_tuple_remembered_as_immutable_is_copied_by_the_c_kernel_with_the_same_keys() -> None:
    plan = (7, "seven")
    d = {plan: [1], "x": plan}
    first = _copy(d, {}, True)   # the tuple is met and remembered (through the Python copier)
    assert id(plan) in runtime_copy._IMMUTABLE and list(first)[0] is plan
    again = _copy(d, {}, True)
    assert list(again) == [plan, "x"] and list(again)[0] is plan and again["x"] is plan
    assert again[plan] == [1] and again[plan] is not d[plan]
    _same_graph(d, again, _copy(d, {}, False))


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
@pytest.mark.parametrize("seed", range(3))
def test_the_c_kernel_copies_a_runtime_node_as_the_python_copier_does(policy: str, seed: int) -> None:
    rng = random.Random(seed)
    rn, rp, config = _started(policy, 3)
    for k in range(3, 3 + rng.randint(1, 4)):
        assert rn.start_pod(_pod(k, rng.choice(("1", "2", "500m")), rng.random() < 0.5)) is None
    if rng.random() < 0.5:
        rn.delete_pod("default/p1")

    def memo() -> dict[int, Any]:
        m = dict(_template(rn.machine, rp, config, rn.kubelet)[1])
        m[id(rn.kubelet)] = rn.kubelet
        return m

    _same_graph(rn, _copy(rn, memo(), True), _copy(rn, memo(), False))


def test_the_c_kernel_shares_what_the_records_and_messages_never_write() -> None:
    rn, rp, config = _started("topology-aware", 3)
    m = dict(_template(rn.machine, rp, config, rn.kubelet)[1])
    m[id(rn.kubelet)] = rn.kubelet
    twin = _copy(rn, m, True)
    for key, rec in rn.pods.items():
        copied = twin.pods[key]
        assert copied is not rec and copied.sandbox is rec.sandbox and copied.pod is rec.pod
        for a, b in zip(rec.containers, copied.containers):
            assert b is not a and b.cri is a.cri and b.ctr is not a.ctr and b.ctr.labels is a.ctr.labels
            assert b.ctr.linux is not a.ctr.linux and b.ctr.linux.devices is a.ctr.linux.devices
            res, new = a.ctr.linux.resources, b.ctr.linux.resources
            assert new is not res and new == res and new.cpu is not res.cpu and new.memory is not res.memory
            assert new.unified is not res.unified and new.hugepage_limits is not res.hugepage_limits
    assert rn.resmgr is not None and twin.resmgr is not None
    for cid, c in rn.resmgr.cache.containers.items():
        t = twin.resmgr.cache.containers[cid]
        assert t.cache is twin.resmgr.cache and t.ctr is not c.ctr and t.ctr.annotations is c.ctr.annotations
        assert t.tags is not c.tags and t.pod.sandbox is c.pod.sandbox
