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
        if a is b and a is not o:   # the same object in both: one the memo gave for o
            continue
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
            assert new.unified is not res.unified and new.hugepage_limits is res.hugepage_limits
            assert new.devices is res.devices
    assert rn.resmgr is not None and twin.resmgr is not None
    for cid, c in rn.resmgr.cache.containers.items():
        t = twin.resmgr.cache.containers[cid]
        assert t.cache is twin.resmgr.cache and t.ctr is not c.ctr and t.ctr.annotations is c.ctr.annotations
        assert t.tags is c.tags and t.topology_hints is c.topology_hints and t.pod.sandbox is c.pod.sandbox


def _detached(x: Any, memo: dict[int, Any], base: dict[int, Any] | None, native: bool) -> Any:
    before = runtime_copy.NATIVE
    runtime_copy.use_native(native)
    try:
        return runtime_copy.copy_detached(x, memo, base)
    finally:
        runtime_copy.use_native(before)


@pytest.mark.parametrize("seed", range(30))
def test_a_detached_copy_with_a_base_gives_the_graph_of_the_merged_memo(seed: int) -> None:
    # the kernel's own tables of the memo and of the base (kept from one call to the next) against
    # the Python copier given one dict of both
    rng = random.Random(100 + seed)
    pool: list[Any] = []
    value = [_random_value(rng, pool, 5) for _ in range(4)]
    base: dict[int, Any] = {}
    for kept in rng.sample(pool, min(len(pool), 3)):
        base[id(kept)] = kept if rng.random() < 0.7 else _Plain(name="other")
    memo: dict[int, Any] = {}
    if pool and rng.random() < 0.5:
        kept = rng.choice(pool)
        memo[id(kept)] = _Plain(name="given")   # the memo wins over the base, as in dict(base) | memo
    for _ in range(2):   # the base's table made, then read again
        out = _detached(value, dict(memo), base, True)
        _same_graph(value, out, _detached(value, dict(memo), base, False))


def test_a_detached_copy_the_kernel_makes_alone_leaves_the_memo_as_given() -> None:
    keep = _Plain(name="keep")
    memo = {id(keep): keep}
    out = _detached(_Plain([keep, [1], {"a": [2]}]), memo, None, True)
    assert memo == {id(keep): keep} and out.items[0] is keep


def test_a_base_changed_between_two_copies_is_read_again() -> None:
    keep, other = _Plain(name="keep"), _Plain(name="other")
    box = _Plain([keep])
    base: dict[int, Any] = {}
    assert _detached(box, {}, base, True).items[0] is not keep
    base[id(keep)] = other
    assert _detached(box, {}, base, True).items[0] is other


def test_a_python_copier_within_a_detached_copy_sees_the_base_and_what_the_kernel_copied() -> None:
    # a dict with an object key goes to the Python copier: it must find the base's objects and the
    # kernel's copies made before it (the kernel's table written to the memo first), and the kernel
    # must find the copies the Python copier made (read back after)
    kept, met = _Plain(name="kept"), _Plain(name="met")
    key = _Plain(name="key")
    value = [met, {key: [kept, met]}, key, kept]
    out = _detached(value, {}, {id(kept): kept}, True)
    inner = out[1]
    (k, v), = inner.items()
    assert out[0] is not met and v[1] is out[0] and v[0] is kept and out[3] is kept
    assert k is out[2] and k is not key


def test_the_c_kernel_copies_a_tuple_with_mutable_items_as_a_new_tuple_and_shares_one_of_atoms() -> None:
    item = [1]
    mixed, plain = (item, "a"), (3, "b")
    out = _copy([mixed, mixed, plain, item], {}, True)
    assert out[0] is not mixed and out[0] is out[1] and out[0][0] is out[3] and out[3] is not item
    assert out[2] is plain and id(plain) in runtime_copy._IMMUTABLE
    _same_graph([mixed, plain], _copy([mixed, plain], {}, True), _copy([mixed, plain], {}, False))


def test_a_cycle_through_a_tuple_is_copied_as_the_python_copier_copies_it() -> None:
    holder = _Plain(name="holder")
    pair = (holder, 1)
    holder.peer = pair
    _same_graph(holder, _copy(holder, {}, True), _copy(holder, {}, False))
    out = _copy(holder, {}, True)
    assert out.peer[0] is out and out.peer is not pair


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
@pytest.mark.parametrize("seed", range(2))
def test_a_detached_copy_of_a_runtime_node_with_the_started_nodes_base_is_the_python_copiers_graph(
        policy: str, seed: int) -> None:
    rng = random.Random(seed)
    rn, rp, config = _started(policy, 2)
    for k in range(2, 2 + rng.randint(1, 4)):
        assert rn.start_pod(_pod(k, rng.choice(("1", "2", "500m")), rng.random() < 0.5)) is None
    base = _template(rn.machine, rp, config, rn.kubelet)[1]
    size = len(base)
    one = _detached(rn, {id(rn.kubelet): rn.kubelet}, base, True)
    _same_graph(rn, one, _detached(rn, {id(rn.kubelet): rn.kubelet}, base, False))
    assert len(base) == size and one.kubelet is rn.kubelet


def test_a_pod_sandbox_the_python_copier_met_first_is_still_shared_by_the_c_kernel() -> None:
    rn, rp, config = _started("balloons", 2)
    sandbox = next(iter(rn.pods.values())).sandbox
    _copy(_Plain([sandbox]), {}, False)   # the Python copier classifies the sandbox's type
    assert type(sandbox) not in runtime_copy._NATIVE_PLAIN
    m = dict(_template(rn.machine, rp, config, rn.kubelet)[1])
    m[id(rn.kubelet)] = rn.kubelet
    twin = _copy(rn, m, True)
    for key, rec in rn.pods.items():
        assert twin.pods[key].sandbox is rec.sandbox and twin.resmgr.cache.pods[rec.sandbox.id].sandbox is rec.sandbox
