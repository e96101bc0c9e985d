"""``kubetwin.sim.runtime_copy.copy_state``: the graph ``copy.deepcopy`` gives (every mutable object
copied once, shared references and cycles kept, memo objects used as given), with immutable values
shared; a copied runtime node answers the next pods exactly as the node it was copied from. Every
test runs with the C kernel (``kubetwin._kernel._graphcopy``) and with the Python copier alone."""

from __future__ import annotations

import copy
import enum
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.config import load_policy
from kubetwin.sim import runtime_copy
from kubetwin.sim.runtime_copy import copy_state
from kubetwin.sim.runtime_policies import RuntimePolicy, clone_runtime_node, fork_runtime_node, shared_objects

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"


@pytest.fixture(autouse=True, params=("native", "python"))
def _copier(request: pytest.FixtureRequest) -> Any:
    """Every test with the C kernel copying (where it was built) and with the Python copier alone."""
    before = runtime_copy.NATIVE
    runtime_copy.use_native(request.param == "native")
    yield request.param
    runtime_copy.use_native(before)


@dataclass(eq=False)
class _Box:
    items: list[Any] = field(default_factory=list)
    peer: Any = None


class _Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a: Any) -> None:
        self.a = a


class _Colour(enum.IntEnum):
    RED = 1


def test_shared_references_stay_shared_in_the_copy() -> None:
    inner = [1, 2]
    box = _Box([inner, inner])
    out = copy_state(box, {})
    assert out.items[0] is out.items[1] and out.items[0] is not inner and out.items[0] == [1, 2]


def test_cycles_are_copied_as_cycles() -> None:
    a, b = _Box(), _Box()
    a.peer, b.peer = b, a
    out = copy_state(a, {})
    assert out.peer.peer is out and out is not a


def test_objects_in_the_memo_are_used_as_given() -> None:
    keep = _Box([1])
    box = _Box([keep])
    out = copy_state(box, {id(keep): keep})
    assert out.items[0] is keep


def test_cpusets_and_frozen_model_structs_are_shared_mutable_objects_copied() -> None:
    pod = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"containers": [{"name": "c"}]}})
    cpus = CPUSet([1, 2])
    box = _Box([pod, cpus, {"k": [3]}])
    out = copy_state(box, {})
    assert out.items[0] is pod and out.items[1] is cpus
    assert out.items[2] == {"k": [3]} and out.items[2] is not box.items[2]


def test_object_keys_of_dicts_are_copied_with_their_values() -> None:
    key = _Box()
    box = _Box([{key: 1}, key])
    out = copy_state(box, {})
    (copied_key,) = out.items[0]
    assert copied_key is out.items[1] and copied_key is not key


def test_slotted_objects_copy_their_set_slots_only() -> None:
    obj = _Slotted([1])
    out = copy_state(obj, {})
    assert out.a == [1] and out.a is not obj.a and not hasattr(out, "b")


def test_tuples_sets_and_enums_copy_as_deepcopy_does() -> None:
    inner = _Box()
    value = ((1, "x"), (inner,), {2, 3}, frozenset({4}), _Colour.RED)
    out = copy_state(value, {})
    ref = copy.deepcopy(value)
    assert out[0] is value[0] and out[1][0] is not inner and out[2] == ref[2] and out[2] is not value[2]
    assert out[3] == ref[3] and out[4] is _Colour.RED


def test_a_tuple_of_atoms_is_remembered_and_shared_by_later_copies_without_a_walk() -> None:
    plan = ((1, 2, (3, 4)), frozenset({(5, "x")}))
    first = copy_state({"plan": plan}, {})
    assert first["plan"] is plan and id(plan) in runtime_copy._IMMUTABLE and id(plan[0][2]) in runtime_copy._IMMUTABLE
    assert copy_state([plan], {})[0] is plan


def test_a_tuple_shared_only_through_the_memo_is_not_remembered() -> None:
    kubelet = _Box()
    pair = (kubelet, 1)
    assert copy_state(pair, {id(kubelet): kubelet}) is pair   # the memo maps it to itself: shared here
    assert id(pair) not in runtime_copy._IMMUTABLE
    other = _Box()
    out = copy_state(pair, {id(kubelet): other})   # another memo maps it elsewhere: a new tuple
    assert out == (other, 1) and out[0] is other


def test_dicts_keep_their_order_with_values_and_object_keys_copied() -> None:
    key, value = _Box(), _Box()
    d = {"a": 1, key: value, "b": [2]}
    out = copy_state(d, {})
    ref = copy.deepcopy(d)
    assert [type(k) for k in out] == [type(k) for k in ref] and list(out)[0] == "a" and list(out)[2] == "b"
    assert list(out)[1] is not key and out[list(out)[1]] is not value and out["b"] == [2] and out["b"] is not d["b"]


def _pod(k: int, cpu: str, guaranteed: bool, memory: str = "1Gi") -> Any:
    res: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}}
    if guaranteed:
        res["limits"] = dict(res["requests"])
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{k}", "uid": f"u{k}"},
                          "spec": {"containers": [{"name": "c", "resources": res}]}})


def _placements(rn: Any) -> list[tuple[str, str, str]]:
    return [(p.key, r.ctr.linux.resources.cpu.cpus, r.ctr.linux.resources.cpu.mems) for p, r in rn.running()]


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_a_cloned_runtime_node_answers_the_next_pods_as_the_original(policy: str) -> None:
    machine = load_machine(str(SHARED / "machines" / "dual-socket-multi-numa-per-socket-ht.json"))
    config = KubeletConfiguration.from_dict({"kubeReserved": {"cpu": "1", "memory": "1Gi"}})
    rp = RuntimePolicy(policy, load_policy(policy))
    kubelet = NodeAdmission(machine, config)
    rn = fork_runtime_node(machine, rp, config, kubelet)
    for k in range(4):
        assert rn.start_pod(_pod(k, ("1", "2", "3")[k % 3], k % 2 == 0)) is None
    twin = clone_runtime_node(rn, rp, config)
    rn.delete_pod("default/p1")
    twin.delete_pod("default/p1")
    for k in range(4, 9):
        pod = _pod(k, ("2", "1", "4")[k % 3], k % 2 == 1)
        assert rn.start_pod(pod) is None and twin.start_pod(pod) is None
    assert _placements(twin) == _placements(rn)
    assert twin.resmgr is not None and rn.resmgr is not None
    assert twin.resmgr.policy is not rn.resmgr.policy


def _started(policy: str, pods: int) -> tuple[Any, RuntimePolicy, KubeletConfiguration]:
    machine = load_machine(str(SHARED / "machines" / "dual-socket-multi-numa-per-socket-ht.json"))
    config = KubeletConfiguration.from_dict({"kubeReserved": {"cpu": "1", "memory": "1Gi"}})
    rp = RuntimePolicy(policy, load_policy(policy))
    rn = fork_runtime_node(machine, rp, config, NodeAdmission(machine, config))
    for k in range(pods):
        assert rn.start_pod(_pod(k, ("1", "2", "3")[k % 3], k % 2 == 0)) is None
    return rn, rp, config


def test_pod_records_share_their_sandbox_and_container_fields_but_not_the_resources() -> None:
    rn, rp, config = _started("topology-aware", 3)
    twin = clone_runtime_node(rn, rp, config)
    for key, rec in rn.pods.items():
        copied = twin.pods[key]
        assert copied is not rec and copied.sandbox is rec.sandbox
        for a, b in zip(rec.containers, copied.containers):
            assert b is not a and b.ctr is not a.ctr and b.ctr.linux is not a.ctr.linux
            assert b.ctr.labels is a.ctr.labels and b.ctr.mounts is a.ctr.mounts
            assert b.ctr.linux.resources is not a.ctr.linux.resources
            assert b.ctr.linux.resources == a.ctr.linux.resources
    assert rn.resmgr is not None and twin.resmgr is not None
    for cid, c in rn.resmgr.cache.containers.items():
        t = twin.resmgr.cache.containers[cid]
        assert t.ctr is not c.ctr and t.ctr.annotations is c.ctr.annotations and t.cache is twin.resmgr.cache
        assert t.ctr.linux.resources is not c.ctr.linux.resources and t.tags is c.tags


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_updates_on_a_clone_leave_the_original_as_it_was(policy: str) -> None:
    # a new pod rebalances the shared pools: the runtime and the cache write the other
    # containers' resources on the clone only
    rn, rp, config = _started(policy, 4)
    before = copy.deepcopy([(p.key, r.ctr.linux.resources) for p, r in rn.running()])
    cached = copy.deepcopy({cid: c.ctr.linux.resources for cid, c in rn.resmgr.cache.containers.items()})
    twin = clone_runtime_node(rn, rp, config)
    for k in range(4, 8):
        assert twin.start_pod(_pod(k, "2", k % 2 == 1)) is None
    twin.delete_pod("default/p0")
    assert [(p.key, r.ctr.linux.resources) for p, r in rn.running()] == before
    assert {cid: c.ctr.linux.resources for cid, c in rn.resmgr.cache.containers.items()} == cached


@dataclass(frozen=True, slots=True)
class _Frozen:
    name: str = ""
    count: int | None = None


@dataclass(frozen=True)
class _FrozenWithDict:   # instances have a __dict__: room for more than their fields
    name: str = ""


@dataclass(frozen=True)
class _FrozenWithList:
    items: list[int] = field(default_factory=list)


class _Fixed:
    def __deepcopy__(self, memo: dict[int, Any]) -> "_Fixed":
        """Fixed once set up."""
        return self


class _Counted:
    copies = 0

    def __deepcopy__(self, memo: dict[int, Any]) -> "_Counted":
        _Counted.copies += 1
        return _Counted()


def test_frozen_dataclasses_of_scalars_are_shared_and_others_copied() -> None:
    scalar, listed, open_ = _Frozen("a", 1), _FrozenWithList([1]), _FrozenWithDict("b")
    out = copy_state(_Box([scalar, listed, open_]), {})
    assert out.items[0] is scalar
    assert out.items[2] is not open_ and out.items[2] == open_
    assert out.items[1] is not listed and out.items[1].items == [1] and out.items[1].items is not listed.items


def test_a_deepcopy_that_returns_self_is_shared_and_any_other_is_called() -> None:
    fixed, counted = _Fixed(), _Counted()
    before = _Counted.copies
    out = copy_state(_Box([fixed, counted, counted]), {})
    assert out.items[0] is fixed
    assert out.items[1] is not counted and out.items[1] is out.items[2] and _Counted.copies == before + 1


def test_hugepage_limits_and_devices_are_shared_and_the_resources_around_them_copied() -> None:
    rn, rp, config = _started("topology-aware", 2)
    twin = clone_runtime_node(rn, rp, config)
    for key, rec in rn.pods.items():
        for a, b in zip(rec.containers, twin.pods[key].containers):
            ra, rb = a.ctr.linux.resources, b.ctr.linux.resources
            assert rb == ra and rb.memory is not ra.memory and rb.cpu is not ra.cpu
            assert rb.hugepage_limits is ra.hugepage_limits and rb.devices is ra.devices
            assert rb.unified is not ra.unified


def test_devices_are_shared_whatever_their_rules_and_unified_entries_not_atoms_copied_as_deepcopy_does() -> None:
    rn, rp, config = _started("topology-aware", 1)
    rec = next(iter(rn.pods.values())).containers[0]
    res = rec.ctr.linux.resources
    rule, value = _Box(), _Box()
    res.devices = [rule, rule]
    res.unified = {"memory.high": "max", "x": value}
    twin = clone_runtime_node(rn, rp, config)
    got = next(iter(twin.pods.values())).containers[0].ctr.linux.resources
    assert got.devices is res.devices   # never written once the container is created
    assert got.unified["x"] is not value and got.unified["memory.high"] == "max" and list(got.unified) == list(res.unified)


def _memory_topology(rn: Any) -> Any:
    policy = rn.resmgr.policy
    mem = policy.mem_allocator
    pools = [(sorted(p.mem), sorted(p.pmem), sorted(p.hbm)) for p in getattr(policy, "pools", ())]
    return copy.deepcopy((mem.nodes, mem.by_types, pools))


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_the_memory_topology_is_shared_by_clones_and_never_written(policy: str) -> None:
    rn, rp, config = _started(policy, 3)
    twin = clone_runtime_node(rn, rp, config)
    mem, copied = rn.resmgr.policy.mem_allocator, twin.resmgr.policy.mem_allocator
    assert copied is not mem and copied.nodes is mem.nodes and copied.by_types is mem.by_types
    assert copied.zones is not mem.zones
    for a, b in zip(getattr(rn.resmgr.policy, "pools", ()), getattr(twin.resmgr.policy, "pools", ())):
        assert b is not a and b.mem is a.mem and b.freeres is not a.freeres
    before = _memory_topology(rn)
    rng = random.Random(5)
    for k in range(3, 40):   # creations (large memory requests too), deletions
        if rng.random() < 0.35 and twin.pods:
            twin.delete_pod(rng.choice(sorted(twin.pods)))
        else:
            twin.start_pod(_pod(k, rng.choice(("1", "2", "500m", "6")), rng.random() < 0.5,
                                memory=rng.choice(("1Gi", "24Gi", "100Gi"))))
    assert _memory_topology(rn) == before == _memory_topology(twin)


def test_balloons_list_of_balloon_types_is_shared_by_clones_and_never_written() -> None:
    rn, rp, config = _started("balloons", 3)
    twin = clone_runtime_node(rn, rp, config)
    defs = rn.resmgr.policy.defs
    assert twin.resmgr.policy.defs is defs and twin.resmgr.policy is not rn.resmgr.policy
    before = list(defs)
    rng = random.Random(7)
    for k in range(3, 30):
        if rng.random() < 0.35 and twin.pods:
            twin.delete_pod(rng.choice(sorted(twin.pods)))
        else:
            twin.start_pod(_pod(k, rng.choice(("1", "2", "500m", "6")), rng.random() < 0.5))
    assert defs == before and all(a is b for a, b in zip(defs, before))


def _events(rng: random.Random, start: int, count: int, live: list[str]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k in range(start, start + count):
        if live and rng.random() < 0.35:
            out.append(("d", live.pop(rng.randrange(len(live)))))
        else:
            pod = _pod(k, rng.choice(("1", "2", "3", "500m", "7")), rng.random() < 0.5,
                       memory=rng.choice(("1Gi", "4Gi", "30Gi", "120Gi")))
            out.append(("c", pod))
            live.append(pod.key)
    return out


def _run(rn: Any, events: list[tuple[str, Any]]) -> list[Any]:
    answers: list[Any] = []
    for kind, arg in events:
        if kind == "c":
            refused = rn.start_pod(arg)
            answers.append(None if refused is None else (refused.reason, refused.message))
        else:
            answers.append(rn.delete_pod(arg))
    return answers


def _state(rn: Any) -> list[Any]:
    from kubetwin.sim.runtime_policies import runtime_figures

    rows = [(p.key, r.name, r.state, repr(r.ctr.linux.resources)) for p, r in rn.running()]
    cached = sorted((cid, repr(c.ctr.linux.resources)) for cid, c in rn.resmgr.cache.containers.items())
    return [rows, cached, runtime_figures(rn)]


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
@pytest.mark.parametrize("seed", range(4))
def test_a_clone_answers_random_events_as_the_original_and_as_a_deepcopy(policy: str, seed: int) -> None:
    # random creations and deletions (memory requests beyond a NUMA node's memory too), a clone
    # taken, then the same random events on the clone (the original left as it was), the original
    # and a plain deep copy
    rng = random.Random(seed)
    rn, rp, config = _started(policy, 0)
    live: list[str] = []
    first = _events(rng, 0, rng.randrange(3, 12), live)
    _run(rn, first)
    twin = clone_runtime_node(rn, rp, config)
    memo = {id(o): o for o in shared_objects(rn, rp, config)}
    plain = copy.deepcopy(rn, memo)
    events = _events(rng, 100, 14, [k for k in live if k in rn.pods])
    before = _state(rn)
    answers = _run(twin, events)
    assert _state(rn) == before
    assert _run(rn, events) == answers == _run(plain, events)
    assert _state(twin) == _state(rn) == _state(plain)


class _Guarded:
    __slots__ = ("a",)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("read-only")


def test_slotted_objects_with_their_own_setattr_copy_their_slots_as_stored() -> None:
    guarded = object.__new__(_Guarded)
    object.__setattr__(guarded, "a", [1])
    out = copy_state(_Box([guarded]), {})
    assert type(out.items[0]) is _Guarded and out.items[0].a == [1] and out.items[0].a is not guarded.a


def _events_with_resizes(rng: random.Random, start: int, count: int, live: list[str]) -> list[tuple[str, Any]]:
    """:func:`_events` with in-place resizes (CPU and memory) of running pods between them."""
    running = list(live)
    out: list[tuple[str, Any]] = []
    for kind, arg in _events(rng, start, count, live):
        out.append((kind, arg))
        if kind == "c":
            running.append(arg.key)
        elif arg in running:
            running.remove(arg)
        if running and len(out) % 3 == 2:
            cpus = rng.choice((1, 2, 3))
            out.append(("r", (rng.choice(running), {"cpuShares": 1024 * cpus, "cpuQuota": 100000 * cpus,
                                                    "cpuPeriod": 100000, "memoryLimitInBytes": rng.choice((1, 2)) << 30})))
    return out


def _run_all(rn: Any, events: list[tuple[str, Any]]) -> list[Any]:
    answers: list[Any] = []
    for kind, arg in events:
        if kind == "r":
            key, cri = arg
            answers.append(rn.update_container_resources(key, "c", cri))
        else:
            answers += _run(rn, [(kind, arg)])
    return answers


def _pickled(rn: Any, rp: Any, config: Any) -> bytes:
    """The node's own objects pickled; what its copies share written by reference: the objects of
    the started node (machine, kubelet, policy configuration, CPU tree) and those whose copy is
    themselves (``__deepcopy__`` returns ``self``: balloons' tree allocators and machine texts,
    which keep answers for every node)."""
    import io
    import pickle

    shared = {id(o): k for k, o in enumerate(shared_objects(rn, rp, config))}

    class _Pickler(pickle.Pickler):
        def persistent_id(self, obj: Any) -> Any:
            deep = getattr(type(obj), "__deepcopy__", None)
            if deep is not None and runtime_copy._returns_self(deep):
                return ("self", id(obj))
            return shared.get(id(obj))

    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(rn)
    return out.getvalue()


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
@pytest.mark.parametrize("seed", range(3))
def test_no_object_of_the_original_changes_while_its_copy_runs_creations_deletions_and_resizes(
        policy: str, seed: int) -> None:
    rng = random.Random(1000 + seed)
    rn, rp, config = _started(policy, 0)
    live: list[str] = []
    _run_all(rn, _events_with_resizes(rng, 0, rng.randrange(4, 12), live))
    before = _pickled(rn, rp, config)
    twin = clone_runtime_node(rn, rp, config)
    plain = copy.deepcopy(rn, {id(o): o for o in shared_objects(rn, rp, config)})
    events = _events_with_resizes(rng, 100, 16, [k for k in live if k in rn.pods])
    answers = _run_all(twin, events)
    assert _pickled(rn, rp, config) == before
    assert _run_all(rn, events) == answers == _run_all(plain, events)
    assert _state(twin) == _state(rn) == _state(plain)


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_the_started_nodes_empty_plugin_lists_and_leaf_pool_children_are_shared_by_forks_and_clones(
        policy: str) -> None:
    rn, rp, config = _started(policy, 2)
    twin = clone_runtime_node(rn, rp, config)
    empty = [e for e, lst in rn.adaptation.subscribed.items() if not lst]
    assert empty and all(twin.adaptation.subscribed[e] is rn.adaptation.subscribed[e] for e in empty)
    assert all(twin.adaptation.subscribed[e] is not lst for e, lst in rn.adaptation.subscribed.items() if lst)
    pools = getattr(rn.resmgr.policy, "pools", ())
    for a, b in zip(pools, getattr(twin.resmgr.policy, "pools", ())):
        assert (b.children is a.children) == (not a.children)
    assert policy == "balloons" or any(not p.children for p in pools)


def test_a_cached_containers_tags_and_topology_hints_are_shared_by_its_copies() -> None:
    rn, rp, config = _started("balloons", 2)
    twin = clone_runtime_node(rn, rp, config)
    for cid, c in rn.resmgr.cache.containers.items():
        t = twin.resmgr.cache.containers[cid]
        assert t is not c and t.tags is c.tags and t.topology_hints is c.topology_hints


def test_with_sharing_off_what_is_never_written_is_copied() -> None:
    rn, rp, config = _started("topology-aware", 2)
    runtime_copy.share_unwritten(False)
    try:
        twin = clone_runtime_node(rn, rp, config)
    finally:
        runtime_copy.share_unwritten(True)
    for cid, c in rn.resmgr.cache.containers.items():
        t = twin.resmgr.cache.containers[cid]
        assert t.tags is not c.tags and t.ctr.linux.resources.devices is not c.ctr.linux.resources.devices
        assert t.ctr.linux.resources.hugepage_limits is not c.ctr.linux.resources.hugepage_limits
