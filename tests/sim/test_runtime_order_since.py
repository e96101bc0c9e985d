"""balloons' creation-order check from the node's last answer
(``kubetwin.sim.runtime_fig_balloons.created_in_order`` with ``INCREMENTAL_ORDER``): at every
call of random runs it answers as the walk of every pod (``runtime_canon_balloons``), and on
made-up nodes it proves True only when one pod came and only its requests were made since."""

from __future__ import annotations

import gc
import random
import weakref
from types import SimpleNamespace
from typing import Any

import pytest

from kubetwin.sim import runtime_canon_balloons, runtime_fig_balloons
from tests.sim.test_runtime_canon_balloons import CONFIGS, DUAL, _arrivals, _policy, _run
from tests.sim.test_runtime_fig_balloons import MEMORIES, _annotations, _policies, _rp


@pytest.mark.parametrize("config", _policies())
@pytest.mark.parametrize("memories", sorted(MEMORIES))
def test_the_order_check_from_the_last_answer_is_the_walks(monkeypatch: pytest.MonkeyPatch, config: str,
                                                           memories: str) -> None:
    proved: list[bool] = []
    since = runtime_fig_balloons._since
    check = runtime_fig_balloons.created_in_order

    def counting(*args: Any) -> bool:
        got = since(*args)
        proved.append(got)
        return got

    def checking(rn: Any, evs: dict[str, int], seen: dict[int, Any]) -> bool:
        got = check(rn, evs, seen)
        assert got == runtime_canon_balloons.created_in_order(rn, evs)
        return got

    monkeypatch.setattr(runtime_fig_balloons, "_since", counting)
    monkeypatch.setattr(runtime_fig_balloons, "created_in_order", checking)
    arrivals = _arrivals(random.Random(61), 200, _annotations(config), MEMORIES[memories])
    _run(_rp(config), DUAL, 4, arrivals, table=True)
    assert any(proved)


@pytest.mark.parametrize("seed", (62, 63))
def test_runs_with_the_order_check_from_the_last_answer_are_the_walks(monkeypatch: pytest.MonkeyPatch,
                                                                       seed: int) -> None:
    arrivals = _arrivals(random.Random(seed), 200, [{}], MEMORIES["heavy" if seed % 2 else "light"])
    rp = _policy(CONFIGS["chart"])
    monkeypatch.setattr(runtime_fig_balloons, "INCREMENTAL_ORDER", False)
    walked, walked_memo = _run(rp, DUAL, 6, arrivals, table=True)
    monkeypatch.setattr(runtime_fig_balloons, "INCREMENTAL_ORDER", True)
    got, memo = _run(rp, DUAL, 6, arrivals, table=True)
    assert got == walked
    assert [(t.misses, t.joins, len(t.ordered)) for t in memo.tables.values()] == \
        [(t.misses, t.joins, len(t.ordered)) for t in walked_memo.tables.values()]


# --- made-up nodes -------------------------------------------------------------------------------
_counter = iter(range(1, 1 << 30))


@pytest.fixture
def check() -> runtime_fig_balloons.OrderCheck:
    """A table's order check, with no answer remembered yet."""
    return runtime_fig_balloons.OrderCheck()


def _node() -> Any:
    requests: dict[str, Any] = {}
    alloc = SimpleNamespace(requests=requests)
    return SimpleNamespace(pods={}, resmgr=SimpleNamespace(policy=SimpleNamespace(mem_allocator=alloc)))


def _add(rn: Any, evs: dict[str, int], key: str, containers: int = 1, requests: bool = True) -> None:
    ctrs = [SimpleNamespace(ctr=SimpleNamespace(id=f"{key}/{i}")) for i in range(containers)]
    rn.pods[key] = SimpleNamespace(containers=ctrs)
    evs[key] = 0
    if requests:
        for c in ctrs:
            _request(rn, c.ctr.id)


def _request(rn: Any, cid: str) -> None:
    rn.resmgr.policy.mem_allocator.requests[cid] = SimpleNamespace(created=next(_counter))


def _delete(rn: Any, evs: dict[str, int], key: str) -> None:
    for c in rn.pods.pop(key).containers:
        rn.resmgr.policy.mem_allocator.requests.pop(c.ctr.id, None)
    del evs[key]


def _started(check: runtime_fig_balloons.OrderCheck, n: int = 3) -> tuple[Any, dict[str, int]]:
    rn, evs = _node(), {}
    for i in range(n):
        _add(rn, evs, f"p{i}")
    assert check(rn, evs)   # the walk, remembered
    return rn, evs


def _proved(check: runtime_fig_balloons.OrderCheck, rn: Any, evs: dict[str, int],
            monkeypatch: pytest.MonkeyPatch) -> tuple[bool, bool]:
    """(the answer, whether it came from the last answer) — and the walk agrees."""
    came: list[bool] = []
    since = runtime_fig_balloons._since

    def counting(*args: Any) -> bool:
        came.append(since(*args))
        return came[-1]

    monkeypatch.setattr(runtime_fig_balloons, "_since", counting)
    got = check(rn, evs)
    assert got == runtime_canon_balloons.created_in_order(rn, evs)
    return got, bool(came and came[-1])


def test_a_new_pods_requests_made_after_the_old_ones_are_proved_in_order(
        check: runtime_fig_balloons.OrderCheck, monkeypatch: pytest.MonkeyPatch) -> None:
    rn, evs = _started(check)
    _add(rn, evs, "new", containers=2)
    assert _proved(check, rn, evs, monkeypatch) == (True, True)
    _add(rn, evs, "newer", requests=False)   # and again from that answer, a pod without requests
    assert _proved(check, rn, evs, monkeypatch) == (True, True)


def test_a_request_made_late_for_an_old_container_takes_the_walk(
        check: runtime_fig_balloons.OrderCheck, monkeypatch: pytest.MonkeyPatch) -> None:
    rn, evs = _node(), {}
    _add(rn, evs, "a")
    _add(rn, evs, "b", requests=False)
    _add(rn, evs, "c")
    assert check(rn, evs)
    _request(rn, "b/0")   # b's offer failed before: its request comes at a later pinning
    _add(rn, evs, "new")
    assert _proved(check, rn, evs, monkeypatch) == (False, False)


def test_a_pod_deleted_since_takes_the_walk(
        check: runtime_fig_balloons.OrderCheck, monkeypatch: pytest.MonkeyPatch) -> None:
    rn, evs = _started(check)
    _delete(rn, evs, "p1")
    _add(rn, evs, "x")
    _add(rn, evs, "new")
    got, proved = _proved(check, rn, evs, monkeypatch)
    assert got and not proved


def test_an_orphan_request_takes_the_walk(
        check: runtime_fig_balloons.OrderCheck, monkeypatch: pytest.MonkeyPatch) -> None:
    rn, evs = _started(check)
    del rn.pods["p1"], evs["p1"]   # its request left behind
    _add(rn, evs, "x", requests=False)
    _add(rn, evs, "new")
    assert _proved(check, rn, evs, monkeypatch) == (False, False)


def test_the_last_pod_made_again_under_its_key_takes_the_walk(
        check: runtime_fig_balloons.OrderCheck, monkeypatch: pytest.MonkeyPatch) -> None:
    rn, evs = _node(), {}
    _add(rn, evs, "a")
    _add(rn, evs, "b", requests=False)
    assert check(rn, evs)
    del rn.pods["a"], evs["a"]   # a's request left behind, b made again
    _delete(rn, evs, "b")
    _add(rn, evs, "b", requests=False)
    _add(rn, evs, "new")
    got, proved = _proved(check, rn, evs, monkeypatch)
    assert not proved and got == runtime_canon_balloons.created_in_order(rn, evs)


def test_a_new_pods_requests_out_of_its_containers_order_are_not_in_order(
        check: runtime_fig_balloons.OrderCheck, monkeypatch: pytest.MonkeyPatch) -> None:
    rn, evs = _started(check)
    _add(rn, evs, "new", containers=2, requests=False)
    _request(rn, "new/1")
    _request(rn, "new/0")
    assert _proved(check, rn, evs, monkeypatch) == (False, False)


def test_another_node_with_the_same_history_is_not_proved_by_this_ones_answer(
        check: runtime_fig_balloons.OrderCheck, monkeypatch: pytest.MonkeyPatch) -> None:
    rn, evs = _started(check)
    other, other_evs = _node(), dict(evs)
    other.pods = dict(rn.pods)
    other.resmgr.policy.mem_allocator.requests.update(rn.resmgr.policy.mem_allocator.requests)
    _add(other, other_evs, "new")
    assert _proved(check, other, other_evs, monkeypatch) == (True, False)



def test_the_remembered_answers_go_with_their_tables_run() -> None:
    """They hold the nodes' requests and pod records: each table keeps its own, so a run's nodes do
    not outlive it (nor slow later runs in the process with their heap)."""
    arrivals = _arrivals(random.Random(62), 60, [{}], MEMORIES["light"])
    got, memo = _run(_policy(CONFIGS["chart"]), DUAL, 4, arrivals, table=True)
    checks = [t.in_order for t in memo.tables.values()]
    assert checks and all(type(c) is runtime_fig_balloons.OrderCheck for c in checks)
    held = [weakref.ref(entry[4]) for c in checks for entry in c.seen.values() if entry[4] is not None]
    assert held
    del got, memo, checks
    gc.collect()
    assert all(ref() is None for ref in held)
