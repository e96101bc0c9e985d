"""Copies of nodes that are never resized in place (``clone_runtime_node(..., resizable=False)``, the
table's nodes; ``kubetwin.sim.runtime_copy.SHARE_UNRESIZED``): a container's memory part and
unified entries are shared by the node and its copy, on the runtime's record and on the resource
manager's cached message, and neither one's creations and deletions ever write them. Every test runs
with the C kernel and with the Python copier alone (``_copier``)."""

from __future__ import annotations

import copy
import pickle
import random
from typing import Any

import pytest

from kubetwin.sim import runtime_copy
from kubetwin.sim.runtime_policies import _template, clone_runtime_node, shared_objects

from .test_runtime_copy import _copier, _events, _pickled, _run, _started, _state  # noqa: F401  (_copier: fixture)
from .test_runtime_copy_native import _same_graph


def _resources(rn: Any) -> list[Any]:
    """Each container's resources: the runtime's record's, then the resource manager's cached message's."""
    out = [r.ctr.linux.resources for _, r in rn.running()]
    out += [c.ctr.linux.resources for _, c in sorted(rn.resmgr.cache.containers.items())]
    return out


def _shared_parts(rn: Any) -> list[Any]:
    return [part for res in _resources(rn) for part in (res.memory, res.unified)]


def test_a_table_copy_shares_its_containers_memory_parts_and_unified_entries_on_both_sides() -> None:
    rn, rp, config = _started("balloons", 4)
    twin = clone_runtime_node(rn, rp, config, resizable=False)
    assert len(_resources(rn)) == 8
    for a, b in zip(_resources(rn), _resources(twin)):
        assert a is not b and a.cpu is not b.cpu
        assert a.memory is b.memory and a.unified is b.unified


def test_a_resizable_copy_copies_them() -> None:
    rn, rp, config = _started("topology-aware", 4)
    twin = clone_runtime_node(rn, rp, config)
    for a, b in zip(_resources(rn), _resources(twin)):
        assert a.memory is not b.memory and a.unified is not b.unified
        assert vars(a.memory) == vars(b.memory) and a.unified == b.unified


def test_with_the_switch_off_a_table_copy_copies_them() -> None:
    rn, rp, config = _started("balloons", 3)
    runtime_copy.share_unresized(False)
    try:
        twin = clone_runtime_node(rn, rp, config, resizable=False)
    finally:
        runtime_copy.share_unresized(True)
    for a, b in zip(_resources(rn), _resources(twin)):
        assert a.memory is not b.memory and a.unified is not b.unified


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
@pytest.mark.parametrize("seed", range(3))
def test_the_kernel_and_the_python_copier_give_the_same_graph_for_a_table_copy(policy: str, seed: int) -> None:
    if runtime_copy._NATIVE_COPY is None:
        pytest.skip("the C kernel is not built here")
    rng = random.Random(seed)
    rn, rp, config = _started(policy, 0)
    _run(rn, _events(rng, 0, rng.randrange(3, 10), []))
    base = _template(rn.machine, rp, config, rn.kubelet)[1]

    def made(native: bool) -> Any:
        before = runtime_copy.NATIVE
        runtime_copy.use_native(native)
        try:
            return runtime_copy.copy_detached(rn, {id(rn.kubelet): rn.kubelet}, base, resizable=False)
        finally:
            runtime_copy.use_native(before)

    _same_graph(rn, made(True), made(False))


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
@pytest.mark.parametrize("seed", range(4))
def test_creations_and_deletions_on_a_node_and_its_table_copy_answer_as_deep_copies_and_never_write_the_shared_parts(
        policy: str, seed: int) -> None:
    # random creations and deletions (memory requests beyond a NUMA node's memory too); a table copy
    # and a plain deep copy taken; then random events on the copy, and others on the node: each
    # answers as a deep copy given the same events, the node's own objects are as they were while
    # the copy runs, and the parts both share are never written
    rng = random.Random(2000 + seed)
    rn, rp, config = _started(policy, 0)
    live: list[str] = []
    _run(rn, _events(rng, 0, rng.randrange(4, 12), live))
    twin = clone_runtime_node(rn, rp, config, resizable=False)
    memo = {id(o): o for o in shared_objects(rn, rp, config)}
    plain_rn, plain_twin = copy.deepcopy(rn, dict(memo)), copy.deepcopy(rn, dict(memo))
    shared = _shared_parts(rn)
    assert all(any(p is q for q in _shared_parts(twin)) for p in shared)
    values = pickle.dumps([vars(p) if hasattr(p, "__dict__") else p for p in shared])
    before = _pickled(rn, rp, config)
    ours = _events(rng, 100, 14, [k for k in live if k in rn.pods])
    answers = _run(twin, ours)
    assert _pickled(rn, rp, config) == before
    theirs = _events(rng, 200, 14, [k for k in live if k in rn.pods])
    assert _run(rn, theirs) == _run(plain_rn, theirs)
    assert answers == _run(plain_twin, ours)
    assert pickle.dumps([vars(p) if hasattr(p, "__dict__") else p for p in shared]) == values
    assert _state(twin) == _state(plain_twin) and _state(rn) == _state(plain_rn)
