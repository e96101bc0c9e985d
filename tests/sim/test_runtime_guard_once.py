"""balloons' memory bound asked once a creation miss (``runtime_memo.GUARD_ONCE``): ``_arrive``
takes the answer ``_miss`` got after the creation instead of asking again. On random runs (light
and heavy memory: within and past the bound) every answer taken is the one the guard would give
at that point, each creation miss asks the guard once where it asked twice, and the runs' results
and table counts are those with the switch off and the plain path's."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubetwin.sim import runtime_memo
from tests.sim.test_runtime_canon_balloons import DUAL, _arrivals
from tests.sim.test_runtime_canon_balloons import _run as _run_balloons
from tests.sim.test_runtime_fig_balloons import MEMORIES, _annotations, _policies, _rp


def _counts(memo: Any) -> list[tuple[int, ...]]:
    return [(t.misses, t.hits, t.joins, len(t.states), len(t.ordered), t.replayed, t.copied_held)
            for t in memo.tables.values()]


def _asking(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the guard's calls and the answers taken from ``_miss`` (each checked against the
    guard asked anew)."""
    seen = {"asked": 0, "taken": 0, "creation_misses": 0}
    arrive = runtime_memo.MemoNodes._arrive

    def arriving(table: Any, edge: Any, real: Any, created: Any) -> None:
        if created is not None:
            seen["creation_misses"] += 1
        if table.guarded:
            seen["taken"] += 1
            asked = seen["asked"]
            assert table.guard(real.rn)
            seen["asked"] = asked
        arrive(table, edge, real, created)
        assert not table.guarded

    monkeypatch.setattr(runtime_memo.MemoNodes, "_arrive", staticmethod(arriving))
    guard = runtime_memo.runtime_fig_balloons.Guard.__call__

    def asking(self: Any, rn: Any) -> bool:
        seen["asked"] += 1
        return guard(self, rn)

    monkeypatch.setattr(runtime_memo.runtime_fig_balloons.Guard, "__call__", asking)
    return seen


@pytest.mark.parametrize("config", _policies())
@pytest.mark.parametrize("memories", ("light", "heavy"))
def test_the_guard_answer_taken_from_the_miss_is_the_guards(monkeypatch: pytest.MonkeyPatch, config: str,
                                                            memories: str) -> None:
    arrivals = _arrivals(random.Random(7), 200, _annotations(config), MEMORIES[memories])
    plain, _ = _run_balloons(_rp(config), DUAL, 6, arrivals, table=False)
    monkeypatch.setattr(runtime_memo, "GUARD_ONCE", False)
    twice, memo_twice = _run_balloons(_rp(config), DUAL, 6, arrivals, table=True)
    monkeypatch.setattr(runtime_memo, "GUARD_ONCE", True)
    seen = _asking(monkeypatch)
    once, memo_once = _run_balloons(_rp(config), DUAL, 6, arrivals, table=True)
    assert once == twice == plain
    assert _counts(memo_once) == _counts(memo_twice)
    assert seen["taken"] > 0


def test_a_creation_miss_asks_the_guard_once(monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = _arrivals(random.Random(8), 200, [{}], MEMORIES["light"])
    asked = {}
    for once in (False, True):
        monkeypatch.setattr(runtime_memo, "GUARD_ONCE", once)
        seen = _asking(monkeypatch)
        _, memo = _run_balloons(_rp(_policies()[0]), DUAL, 6, arrivals, table=True)
        asked[once] = seen["asked"]
        monkeypatch.undo()
    assert seen["taken"] > 0
    assert asked[False] - asked[True] == seen["taken"]
