"""A miss's key made from its parent state's key (``kubetwin.sim.runtime_inckey``): at every
creation miss of random runs (creations, deletions, init containers, sidecars, shared and
exclusive CPUs; balloons' configurations with light and heavy memory, within and past the memory
bound) the incremental key and its pod order are the walk's; the runs' results are the walk's
and the plain path's."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from kubetwin.sim import (
    runtime_canon,
    runtime_canon_balloons,
    runtime_fig,
    runtime_fig_balloons,
    runtime_inckey,
    runtime_memo,
)
from tests.runtime.fastpath_runs import MACHINES, TOPOLOGY_AWARE_ANNOTATIONS
from tests.runtime.fastpath_runs import topology_aware as _topology_aware
from tests.sim.test_runtime_canon_balloons import CONFIGS, DUAL, _arrivals, _policy
from tests.sim.test_runtime_canon_balloons import _run as _run_balloons
from tests.sim.test_runtime_fig import _pods, _run
from tests.sim.test_runtime_fig_balloons import MEMORIES, _annotations, _policies, _rp


def _same_positions(got: Any, args: Any) -> None:
    """The edge's positions given with the key (when given) are :func:`runtime_canon.permutation`'s."""
    _key, order, perm, born = got
    if perm is not None:
        assert (perm, born) == runtime_canon.permutation(args[3], order, args[4])


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    made: list[int] = []
    key = runtime_inckey.creation_key

    def counting(*args: Any) -> Any:
        got = key(*args)
        assert got[:2] == runtime_fig.snapshot(args[0], args[1])
        assert got[:2] == runtime_canon.snapshot(args[0], args[1])
        _same_positions(got, args)
        made.append(len(got[1]))
        return got

    monkeypatch.setattr(runtime_inckey, "creation_key", counting)
    return made


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("seed", (1, 2, 3))
def test_a_creations_key_from_its_parents_is_the_walks(monkeypatch: pytest.MonkeyPatch, machine: str,
                                                        seed: int) -> None:
    made = _counting(monkeypatch)
    _run(_topology_aware(), machine, list(_pods(random.Random(seed), 200, TOPOLOGY_AWARE_ANNOTATIONS)),
         table=True, lean=True)
    assert made and max(made) > 2


@pytest.mark.parametrize("seed", (4, 5))
def test_runs_with_incremental_keys_are_the_walks_and_the_plain_paths(monkeypatch: pytest.MonkeyPatch,
                                                                      seed: int) -> None:
    arrivals = list(_pods(random.Random(seed), 200, TOPOLOGY_AWARE_ANNOTATIONS))
    plain = _run(_topology_aware(), MACHINES[0], arrivals, table=False, lean=False)[:2]
    monkeypatch.setattr(runtime_inckey, "INCREMENTAL", False)
    walked = _run(_topology_aware(), MACHINES[0], arrivals, table=True, lean=True)[:2]
    monkeypatch.setattr(runtime_inckey, "INCREMENTAL", True)
    made = _counting(monkeypatch)
    inc = _run(_topology_aware(), MACHINES[0], arrivals, table=True, lean=True)[:2]
    assert made
    assert inc == walked == plain


def _counting_balloons(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    made: list[int | None] = []
    key = runtime_inckey.balloons_creation_key

    def counting(*args: Any) -> Any:
        got = key(*args)
        if got is not None:
            assert got[:2] == runtime_fig_balloons.snapshot(args[0], args[1])
            assert got[:2] == runtime_canon_balloons.snapshot(args[0], args[1])
            _same_positions(got, args)
        made.append(None if got is None else len(got[1]))
        return got

    monkeypatch.setattr(runtime_inckey, "balloons_creation_key", counting)
    return made


@pytest.mark.parametrize("config", _policies())
@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("memories", ("light", "heavy"))
def test_a_balloons_creations_key_from_its_parents_is_the_walks(monkeypatch: pytest.MonkeyPatch, config: str,
                                                                machine: str, memories: str) -> None:
    made = _counting_balloons(monkeypatch)
    arrivals = _arrivals(random.Random(91), 200, _annotations(config), MEMORIES[memories])
    _, memo = _run_balloons(_rp(config), machine, 4, arrivals, table=True)
    assert sum(t.misses for t in memo.tables.values()) > 0
    assert made and max(m for m in made if m is not None) > 1


@pytest.mark.parametrize("config", _policies())
@pytest.mark.parametrize("seed", (92, 93))
def test_balloons_runs_with_incremental_keys_are_the_walks_and_the_plain_paths(
        monkeypatch: pytest.MonkeyPatch, config: str, seed: int) -> None:
    arrivals = _arrivals(random.Random(seed), 200, _annotations(config), MEMORIES["heavy" if seed % 2 else "light"])
    plain, _ = _run_balloons(_rp(config), DUAL, 6, arrivals, table=False)
    monkeypatch.setattr(runtime_inckey, "INCREMENTAL", False)
    walked, _ = _run_balloons(_rp(config), DUAL, 6, arrivals, table=True)
    monkeypatch.setattr(runtime_inckey, "INCREMENTAL", True)
    made = _counting_balloons(monkeypatch)
    inc, memo = _run_balloons(_rp(config), DUAL, 6, arrivals, table=True)
    assert made
    assert inc == walked == plain


def test_ordered_balloons_states_take_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the memory bound (``Table.ordered``) a state keeps no key: its misses walk."""
    made = _counting_balloons(monkeypatch)
    arrivals = _arrivals(random.Random(84), 160, [{}], MEMORIES["heavy"])
    _, memo = _run_balloons(_policy(CONFIGS["chart"]), DUAL, 4, arrivals, table=True)
    tables = list(memo.tables.values())
    assert any(t.ordered for t in tables) and made
    assert all(t.states[s].key is None for t in tables for s in t.ordered)


def test_the_parent_key_is_kept_on_every_canonical_state() -> None:
    sim = _run(_topology_aware(), MACHINES[0], list(_pods(random.Random(7), 120, TOPOLOGY_AWARE_ANNOTATIONS)),
               table=True, lean=True)[2]
    for t in sim.runtime.memo.tables.values():
        assert all(st.key is not None for st in t.states[1:])


def test_the_watch_leaves_no_trace_on_the_node(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    arrive = runtime_memo.MemoNodes._arrive

    def checking(table: Any, edge: Any, real: Any, created: Any) -> None:
        seen.append("_apply_updates" not in vars(real.rn))
        arrive(table, edge, real, created)
        assert real.since is None

    monkeypatch.setattr(runtime_memo.MemoNodes, "_arrive", staticmethod(checking))
    _run(_topology_aware(), MACHINES[0], list(_pods(random.Random(8), 120, TOPOLOGY_AWARE_ANNOTATIONS)),
         table=True, lean=True)
    assert seen and all(seen)



# --- the edge's positions read off the sort (runtime_inckey.POSITIONS), on made-up nodes ----------
def _made_up(rng: random.Random) -> tuple[Any, ...]:
    """A node of equal and unequal pods: its pods (in the node's order), a parent order of them
    (the walk's, or with equal pods swapped as a replayed node may hold them), descriptors, the
    new pod, the pods whose descriptors changed."""
    n = rng.randint(0, 9)
    shapes = [(rng.randint(0, 2), ((rng.choice("ab"), rng.randint(0, 2)),)) for _ in range(3)]
    names = [f"p{i}" for i in range(n)]
    rng.shuffle(names)
    desc = {k: rng.choice(shapes) for k in names}
    node = list(names)
    parent_order = sorted(node, key=lambda k: (desc[k], node.index(k)))
    if rng.random() < 0.3:   # a replayed node: equal pods in another node's order
        for j in range(len(parent_order) - 1):
            if desc[parent_order[j]] == desc[parent_order[j + 1]] and rng.random() < 0.5:
                parent_order[j], parent_order[j + 1] = parent_order[j + 1], parent_order[j]
    changed = {k: rng.choice(shapes) for k in node if rng.random() < 0.25}
    created = "new"
    pods: dict[str, Any] = {k: SimpleNamespace(key=k) for k in node}
    if rng.random() < 0.1 and node:   # the new pod not the node's last
        pods = {created: None, **pods}
    else:
        pods[created] = None
    parent = tuple(desc[k] for k in parent_order)
    mine = rng.choice(shapes + [(3, ())])
    return pods, parent, parent_order, created, mine, changed


@pytest.mark.parametrize("seed", range(4))
def test_the_positions_read_off_the_sort_are_permutations(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(400):
        pods, parent, parent_order, created, mine, changed = _made_up(rng)
        touched = {k + "/c" for k in changed}
        owners = {k + "/c": k for k in pods if k != created}

        def updated(rec: Any, old: Any, changed: dict[str, Any] = changed) -> Any:
            return changed.get(rec.key, old)

        got = {}
        for on in (False, True):
            monkeypatch.setattr(runtime_inckey, "POSITIONS", on)
            got[on] = runtime_inckey._pods_part(pods, parent, parent_order, created, mine, touched, owners, updated)
        assert got[True][:2] == got[False][:2]
        assert got[False][2:] == (None, -1)
        assert got[True][2:] == runtime_canon.permutation(parent_order, got[True][1], created)
