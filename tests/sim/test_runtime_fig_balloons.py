"""The balloons table's lean bookkeeping (:mod:`kubetwin.sim.runtime_fig_balloons`): its key is
:mod:`kubetwin.sim.runtime_canon_balloons`' key, its guard and creation-order check answer as
those, figures made from a state's key are the real node's figures, and whole runs with it answer
as the plain path."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubetwin.sim import runtime_canon_balloons, runtime_fig_balloons, runtime_memo, runtime_policies
from tests.runtime.fastpath_runs import BALLOONS_ANNOTATIONS, BALLOONS_CASE, MACHINES, balloons
from tests.sim.test_runtime_canon_balloons import CONFIGS, DUAL, _arrivals, _policy, _run

MEMORIES = {"light": ("256Mi", "1Gi"), "heavy": ("256Mi", "30Gi", "70Gi")}


def _policies() -> list[str]:
    return sorted(CONFIGS) + (["conformance"] if BALLOONS_CASE.is_file() else [])


def _rp(config: str) -> Any:
    return balloons() if config == "conformance" else _policy(CONFIGS[config])


def _annotations(config: str) -> list[dict[str, str]]:
    return BALLOONS_ANNOTATIONS if config == "conformance" else [{}]


def _checked_run(monkeypatch: pytest.MonkeyPatch, config: str, machine: str, seed: int, memories: str,
                 check: Any) -> list[Any]:
    """A run on the table with ``check(table, real)`` called at every miss, once the real node
    is in its new state; the values it returns."""
    checked: list[Any] = []
    arrive = runtime_memo.MemoNodes._arrive

    def checking(table: Any, edge: Any, real: Any, created: Any) -> None:
        arrive(table, edge, real, created)
        checked.append(check(table, real))

    monkeypatch.setattr(runtime_memo.MemoNodes, "_arrive", staticmethod(checking))
    arrivals = _arrivals(random.Random(seed), 160, _annotations(config), MEMORIES[memories])
    _run(_rp(config), machine, 4, arrivals, table=True)
    return checked


@pytest.mark.parametrize("config", _policies())
@pytest.mark.parametrize("machine", MACHINES)
def test_the_lean_key_is_runtime_canon_balloons_key(monkeypatch: pytest.MonkeyPatch, config: str,
                                                    machine: str) -> None:
    def check(table: Any, real: Any) -> int:
        got = runtime_fig_balloons.snapshot(real.rn, real.evs)
        assert got == runtime_canon_balloons.snapshot(real.rn, real.evs)
        return len(got[1])

    assert max(_checked_run(monkeypatch, config, machine, 81, "light", check)) > 1


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("memories", sorted(MEMORIES))
def test_the_lean_guard_and_order_check_answer_as_the_plain_ones(monkeypatch: pytest.MonkeyPatch, config: str,
                                                                 memories: str) -> None:
    guard, order = runtime_fig_balloons.Guard(), runtime_fig_balloons.OrderCheck()

    def check(table: Any, real: Any) -> tuple[bool, bool]:
        free = guard(real.rn)
        assert free == runtime_canon_balloons.order_free(real.rn)
        in_order = order(real.rn, real.evs)
        assert in_order == runtime_canon_balloons.created_in_order(real.rn, real.evs)
        return free, in_order

    got = _checked_run(monkeypatch, config, DUAL, 71, memories, check)
    if memories == "heavy":
        assert (True, True) in got and any(not free for free, _ in got)   # both sides of the bound met


@pytest.mark.parametrize("config", _policies())
@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("memories", sorted(MEMORIES))
def test_figures_from_a_balloons_states_key_are_its_real_nodes_figures(monkeypatch: pytest.MonkeyPatch, config: str,
                                                                       machine: str, memories: str) -> None:
    def check(table: Any, real: Any) -> int:
        kf = table.key_figures
        assert type(kf) is runtime_fig_balloons.KeyFigures
        runtime_fig_balloons.keep_key(kf, real.rn)
        key, _ = runtime_canon_balloons.snapshot(real.rn, real.evs)
        got = runtime_fig_balloons.key_figures(kf, key)
        assert got == runtime_policies.runtime_figures(real.rn)   # the lean walk
        runtime_policies.LEAN_FIGURES = False
        try:
            assert got == runtime_policies.runtime_figures(real.rn)   # the plain walk
        finally:
            runtime_policies.LEAN_FIGURES = True
        return got[3].size()

    exclusive = _checked_run(monkeypatch, config, machine, 83, memories, check)
    assert exclusive and (config == "groups" or any(exclusive))


def test_joined_balloons_states_keep_keys_and_ordered_ones_figures() -> None:
    arrivals = _arrivals(random.Random(84), 160, [{}], MEMORIES["heavy"])
    _, memo = _run(_policy(CONFIGS["chart"]), DUAL, 4, arrivals, table=True)
    tables = list(memo.tables.values())
    assert tables and all(type(t.key_figures) is runtime_fig_balloons.KeyFigures for t in tables)
    for t in tables:
        for s, st in enumerate(t.states[1:], 1):
            if s in t.ordered:
                assert st.key is None and st.figures is not None
            else:
                assert st.key is not None
    assert any(t.ordered for t in tables)


@pytest.mark.parametrize("config", _policies())
@pytest.mark.parametrize("seed", (85, 86))
def test_balloons_runs_with_and_without_the_lean_bookkeeping_agree(monkeypatch: pytest.MonkeyPatch, config: str,
                                                                   seed: int) -> None:
    arrivals = _arrivals(random.Random(seed), 200, _annotations(config), MEMORIES["heavy" if seed % 2 else "light"])
    plain, _ = _run(_rp(config), DUAL, 6, arrivals, table=False)
    lean, memo = _run(_rp(config), DUAL, 6, arrivals, table=True)
    monkeypatch.setattr(runtime_fig_balloons, "ENABLED", False)
    own, own_memo = _run(_rp(config), DUAL, 6, arrivals, table=True)
    assert lean == plain == own
    assert all(t.key_figures is None for t in own_memo.tables.values())
    assert all(type(t.key_figures) is runtime_fig_balloons.KeyFigures for t in memo.tables.values())
