"""A miss's key made from its parent state's key (``kubetwin.sim.runtime_inckey``): at every
topology-aware miss of random runs (creations, deletions, init containers, sidecars, shared and
exclusive CPUs) the incremental key and its pod order are the walk's; the runs' results are the
walk's and the plain path's."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubetwin.sim import runtime_fig, runtime_inckey, runtime_memo
from tests.runtime.fastpath_runs import BALLOONS_ANNOTATIONS, MACHINES, TOPOLOGY_AWARE_ANNOTATIONS
from tests.runtime.fastpath_runs import balloons as _balloons
from tests.runtime.fastpath_runs import topology_aware as _topology_aware
from tests.sim.test_runtime_fig import _pods, _run


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    made: list[int] = []
    key = runtime_inckey.creation_key

    def counting(*args: Any) -> Any:
        got = key(*args)
        assert got == runtime_fig.snapshot(args[0], args[1])
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


def test_balloons_tables_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _counting(monkeypatch)
    sim = _run(_balloons(), MACHINES[0], list(_pods(random.Random(6), 120, BALLOONS_ANNOTATIONS)),
               table=True, lean=True)[2]
    assert sum(t.misses for t in sim.runtime.memo.tables.values()) > 0
    assert not made


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
