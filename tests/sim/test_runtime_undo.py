"""A real node for a state of the table made from a child state's node, its last pod deleted
(``kubetwin.sim.runtime_undo``): runs with it give, byte for byte, the plain path's results on
random workloads (creations and deletions) for both nri-plugins policies, and each part of it
behaves as its docstring says."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubetwin.runtime.config import load_policy
from kubetwin.sim import runtime_memo, runtime_undo
from kubetwin.sim.runtime_policies import RuntimePolicy
from tests.runtime.fastpath_runs import BALLOONS_CASE, MACHINES
from tests.runtime.fastpath_runs import balloons as _balloons
from tests.runtime.fastpath_runs import nodes as _nodes
from tests.sim.test_runtime_memo import _pods as _arrivals
from tests.sim.test_runtime_memo import _run, _same


def _policy(name: str) -> RuntimePolicy:
    if name == "balloons" and not BALLOONS_CASE.is_file():
        pytest.skip("the shared conformance cases are not here")
    return RuntimePolicy("topology-aware", load_policy("topology-aware")) if name == "topology-aware" else _balloons()


_ANNOTATIONS: dict[str, list[dict[str, str]]] = {
    "topology-aware": [{}, {}, {"prefer-shared-cpus.resource-policy.nri.io/pod": "true"}],
    "balloons": [{}, {"balloon.balloons.resource-policy.nri.io": "two-cpu"},
                 {"balloon.balloons.resource-policy.nri.io": "four-cpu"}],
}


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
@pytest.mark.parametrize("machine", MACHINES[:2])
@pytest.mark.parametrize("seed", (11, 13, 15))
def test_nodes_made_from_a_childs_node_answer_as_the_plain_path(policy: str, machine: str, seed: int,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # tried before every replay (not only long ones), so that most misses off a real node take it
    monkeypatch.setattr(runtime_undo, "MIN_REPLAY", 1)
    monkeypatch.setattr(runtime_undo, "BALLOONS", True)
    memo = _same(machine, _policy(policy), seed, _ANNOTATIONS[policy], nodes=10, pods=240)
    assert sum(t.undone for t in memo.tables.values()) > 0


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_nodes_made_from_a_childs_node_replace_replays(policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime_undo, "MIN_REPLAY", 1)
    monkeypatch.setattr(runtime_undo, "BALLOONS", True)
    arrivals = list(_arrivals(random.Random(11), 240, _ANNOTATIONS[policy]))
    replayed = {}
    for on in (False, True):
        monkeypatch.setattr(runtime_undo, "ENABLED", on)
        _, memo = _run(_nodes(MACHINES[0], 10, _policy(policy)), arrivals, True)
        tables = memo.tables.values()
        replayed[on] = sum(t.replayed for t in tables)
        assert (sum(t.undone for t in tables) > 0) == on
    assert replayed[True] < replayed[False]


def _table(policy: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(runtime_undo, "ENABLED", False)
    arrivals = list(_arrivals(random.Random(12), 240, _ANNOTATIONS[policy]))
    _, memo = _run(_nodes(MACHINES[0], 10, _policy(policy)), arrivals, True)
    return next(iter(memo.tables.values()))


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
def test_a_node_made_from_a_childs_node_has_the_states_key(policy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(policy, monkeypatch)
    made = 0
    for state in range(1, len(table.states)):
        real = runtime_undo.from_child(table, state)
        if real is not None:
            key, order = table.keyer(real.rn, real.evs)
            assert table.canon[key] == state and list(order) == real.keys
            assert sorted(real.keys) == sorted(real.rn.pods) == sorted(real.evs)
            made += 1
    assert made > 0


def test_the_index_of_children_reads_the_edges_added_since_its_last_call(monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table("topology-aware", monkeypatch)
    edges = list(table.edges.items())
    rng = random.Random(3)
    table.edges.clear()
    table.kids, table.kids_seen = {}, 0
    for item in edges:
        table.edges[item[0]] = item[1]
        if rng.random() < 0.1:
            state = rng.choice([s for (s, _), _ in edges])
            want = [(ev, e.next) for (s, ev), e in table.edges.items() if s == state and ev[0] == "c"]
            assert sorted(runtime_undo.children(table, state), key=repr) == sorted(want, key=repr)


def test_a_child_whose_node_did_not_lead_back_is_not_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table("topology-aware", monkeypatch)
    tried: list[int] = []

    def fails(table: Any, state: int, src: Any, gone: str) -> None:
        tried.append(state)
        return None

    monkeypatch.setattr(runtime_undo, "_undone", fails)
    states = range(1, len(table.states))
    first = [runtime_undo.from_child(table, s) for s in states]
    count = len(tried)
    again = [runtime_undo.from_child(table, s) for s in states]
    assert count > 0 and first == again == [None] * len(states)
    assert len(tried) - count < count   # only children not tried before


def test_the_start_state_and_history_keyed_tables_are_never_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table("topology-aware", monkeypatch)
    assert runtime_undo.from_child(table, 0) is None
    table.canon = None
    assert all(runtime_undo.from_child(table, s) is None for s in range(len(table.states)))


def test_the_switch_off_keeps_replays(monkeypatch: pytest.MonkeyPatch) -> None:
    assert runtime_memo.runtime_undo is runtime_undo
    table = _table("topology-aware", monkeypatch)
    assert table.undone == 0 and table.undo_failed == 0


def test_a_try_comes_before_long_replays_and_on_balloons_tables_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table("topology-aware", monkeypatch)
    monkeypatch.setattr(runtime_undo, "ENABLED", True)
    assert not runtime_undo.worth(table, runtime_undo.MIN_REPLAY - 1) and runtime_undo.worth(table, runtime_undo.MIN_REPLAY)
    table.guard = object()   # a balloons table
    assert not runtime_undo.worth(table, 100)
    monkeypatch.setattr(runtime_undo, "BALLOONS", True)
    assert runtime_undo.worth(table, runtime_undo.MIN_REPLAY)
    monkeypatch.setattr(runtime_undo, "ENABLED", False)
    assert not runtime_undo.worth(table, 100)
