"""Repeated spread constraints are held once: Filter's verdicts, reasons and codes, Score's raw
and normalised scores, and whole cycles are the same as with every copy walked (as upstream
walks them) — node by node and vectorised — and a pod with 100,000 copies of a constraint
schedules."""

from __future__ import annotations

import contextlib
import random
from typing import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetwin.model.meta import convert
from kubetwin.model.pod import Pod, TopologySpreadConstraint
from kubetwin.scheduler.fastpath.vector import SKIPPED
from kubetwin.scheduler.framework.interface import CycleState
from kubetwin.scheduler.plugins.podtopologyspread import repeats
from kubetwin.scheduler.plugins.podtopologyspread.repeats import held_once, sequential_sum, sequential_sums
from kubetwin.scheduler.plugins.podtopologyspread.vector import (
    filter_pod_topology_spread,
    pre_filter_spread,
    score_pod_topology_spread,
)
from kubetwin.scheduler.scheduler import Scheduler

from ...randomcluster import scheduler_pair

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


@contextlib.contextmanager
def every_copy() -> Iterator[None]:
    """The plain form: every constraint as written, repeats included."""
    was = repeats.ENABLED
    repeats.ENABLED = False
    try:
        yield
    finally:
        repeats.ENABLED = was


def _tsc(key: str, when: str = "DoNotSchedule", skew: int = 1, app: str = "x") -> TopologySpreadConstraint:
    return convert({"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when,
                    "labelSelector": {"matchLabels": {"app": app}}}, TopologySpreadConstraint)


# --- held_once ------------------------------------------------------------------------------------

def test_held_once_keeps_first_occurrences_in_order_and_each_copys_index():
    a, b, c = _tsc(ZONE), _tsc(HOST), _tsc("disk")
    distinct, order = held_once([a, b, a, c, b, a], "DoNotSchedule")
    assert distinct == [a, b, c]
    assert order == (0, 1, 0, 2, 1, 0)


def test_held_once_without_repeats_has_no_order():
    a, b = _tsc(ZONE), _tsc(HOST)
    assert held_once([a, b], "DoNotSchedule") == ([a, b], None)


def test_held_once_takes_only_the_constraints_of_the_action():
    hard, soft = _tsc(ZONE), _tsc(ZONE, "ScheduleAnyway")
    assert held_once([soft, hard, soft, hard], "ScheduleAnyway") == ([soft], (0, 0))
    assert held_once([soft, hard, soft, hard], "DoNotSchedule") == ([hard], (0, 0))


def test_constraints_differing_in_one_field_are_both_held():
    assert len(held_once([_tsc(ZONE, skew=1), _tsc(ZONE, skew=2)], "DoNotSchedule")[0]) == 2


def test_held_once_answers_a_long_list_again_from_its_identity():
    written = [_tsc(ZONE)] * 100 + [_tsc(HOST)]
    first = held_once(written, "DoNotSchedule")
    again = held_once(written, "DoNotSchedule")
    assert first == again == ([_tsc(ZONE), _tsc(HOST)], (0,) * 100 + (1,))
    again[0].append(_tsc("disk"))   # a caller's copy: the kept answer is not changed
    assert held_once(written, "DoNotSchedule")[0] == [_tsc(ZONE), _tsc(HOST)]


def test_disabled_walks_every_copy():
    a = _tsc(ZONE)
    with every_copy():
        assert held_once([a, a], "DoNotSchedule") == ([a, a], None)


# --- the sums -------------------------------------------------------------------------------------

@given(st.lists(st.one_of(st.none(), st.floats(0, 1e6)), min_size=1, max_size=6), st.data())
def test_sequential_sum_is_the_left_to_right_float_sum(terms, data):
    order = data.draw(st.lists(st.integers(0, len(terms) - 1), max_size=300))
    want = 0.0
    for j in order:
        t = terms[j]
        if t is not None:
            want += t
    assert sequential_sum(terms, order) == want


def test_sequential_sum_is_not_the_product_of_count_and_term():
    # 0.1 added ten times is not 10 * 0.1 in floats: the copies are added one at a time
    assert sequential_sum([0.1], [0] * 10) == 0.9999999999999999 != 10 * 0.1


@pytest.mark.parametrize("cells", [1, 7, 1 << 20])
def test_sequential_sums_add_each_nodes_terms_left_to_right(monkeypatch, cells):
    monkeypatch.setattr(repeats, "_CHUNK_CELLS", cells)   # the sums carried across chunks
    rng = np.random.default_rng(5)
    terms = [rng.random(4) * 10 ** rng.integers(0, 8) for _ in range(3)]
    terms[1][2] = 0.0
    order = rng.integers(0, 3, size=50).tolist()
    want = np.zeros(4)
    for j in order:
        want = want + terms[j]
    assert sequential_sums(terms, order).tolist() == want.tolist()


# --- the plugin, node by node and vectorised ------------------------------------------------------

SHAPES = [
    {"maxSkew": 1, "topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "x"}}},
    {"maxSkew": 2, "topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "y"}}},
    {"maxSkew": 1, "topologyKey": HOST, "labelSelector": {"matchLabels": {"app": "x"}}},
    {"maxSkew": 3, "topologyKey": "disk", "labelSelector": {"matchLabels": {"app": "x"}}, "minDomains": 3},
    {"maxSkew": 1, "topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "x"}}, "nodeTaintsPolicy": "Honor"},
    {"maxSkew": 1, "topologyKey": HOST, "labelSelector": {}, "matchLabelKeys": ["app"]},
]


def _repeating_spec(rng: random.Random) -> dict:
    """Constraints drawn with replacement from a few shapes, hard and soft interleaved."""
    pool = [dict(s, whenUnsatisfiable=w) for s in rng.sample(SHAPES, rng.randint(1, 3))
            for w in ("DoNotSchedule", "ScheduleAnyway")]
    cons = [dict(rng.choice(pool)) for _ in range(rng.randint(2, 12))]
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
                  "topologySpreadConstraints": cons}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"operator": "Exists"}]
    return spec


def _pod(rng: random.Random, name: str, spec: dict) -> Pod:
    return convert({"metadata": {"name": name, "labels": {"app": rng.choice(["x", "x", "y"])}}, "spec": spec}, Pod)


def _plugin(s: Scheduler):
    return next(p for p, _ in s.plugins if p.name == "PodTopologySpread")


def _plain_filter(s: Scheduler, pod: Pod) -> list[tuple]:
    plugin = _plugin(s)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, list(s.cluster.infos))
    if status.is_skip:
        return []
    out = []
    for ni in s.cluster.infos:
        st_ = plugin.filter(state, pod, ni)
        out.append((st_.code, tuple(st_.reasons)))
    return out


def _plain_scores(s: Scheduler, pod: Pod, idx: np.ndarray) -> tuple[list[int], list[int]] | None:
    plugin = _plugin(s)
    infos = s.cluster.infos_array[idx].tolist()
    state = CycleState()
    if plugin.pre_score(state, pod, infos).is_skip:
        return None
    raw = {ni.name: plugin.score(state, pod, ni)[0] for ni in infos}
    norm = dict(raw)
    plugin.normalize_score(state, pod, norm)
    return [raw[ni.name] for ni in infos], [norm[ni.name] for ni in infos]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9))
def test_repeats_held_once_give_the_plugins_filter_and_scores_of_every_copy(seed):
    rng, fast, _ = scheduler_pair(seed, 16)
    for k in range(6):
        pod = _pod(rng, f"p{k}", _repeating_spec(rng))
        idx = np.array(sorted(rng.sample(range(fast.cluster.n), rng.randint(1, fast.cluster.n))), dtype=np.int64)
        with every_copy():
            want_filter = _plain_filter(fast, pod)
            want_scores = _plain_scores(fast, pod, idx)
        assert _plain_filter(fast, pod) == want_filter
        assert _plain_scores(fast, pod, idx) == want_scores
        # vectorised, repeats held once
        plugin = _plugin(fast)
        state = CycleState()
        if pre_filter_spread(fast.cluster, pod, plugin, state).is_skip:
            assert want_filter == []
        else:
            verdict = filter_pod_topology_spread(fast.cluster, pod, plugin, state)
            assert verdict is not None
            got = [(verdict.status(i).code, verdict.status(i).reasons) if verdict.fail[i] else (0, ())
                   for i in range(fast.cluster.n)]
            assert got == want_filter
        sv = score_pod_topology_spread(fast.cluster, pod, plugin, idx)
        if sv is SKIPPED:
            assert want_scores is None
        else:
            assert want_scores is not None
            assert (sv.raw.tolist(), sv.normalized.tolist()) == want_scores
        r = fast.schedule(pod)
        if r.node is not None:
            fast.bind(pod, r.node)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9))
def test_cycles_with_repeats_held_once_match_every_copy_walked_node_by_node(seed):
    rng, fast, slow = scheduler_pair(seed, 16)
    for k in range(12):
        pod = _pod(rng, f"p{k}", _repeating_spec(rng))
        a = fast.schedule(pod)
        with every_copy():
            b = slow.schedule(pod)
        assert (a.node, a.code, a.message, a.feasible, a.evaluated, a.unschedulable_plugins) == (
            b.node, b.code, b.message, b.feasible, b.evaluated, b.unschedulable_plugins), f"seed {seed}, pod {k}"
        if a.node is not None:
            fast.bind(pod, a.node)
            slow.bind(pod, b.node)


def test_a_pod_with_100000_copies_of_its_constraints_schedules_as_with_one():
    rng, fast, slow = scheduler_pair(3, 12)
    hard = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "x"}}}
    soft = dict(hard, whenUnsatisfiable="ScheduleAnyway", topologyKey=HOST)
    spec = {"containers": [{"name": "c"}], "topologySpreadConstraints": [hard, soft] * 100_000}
    one = {"containers": [{"name": "c"}], "topologySpreadConstraints": [hard, soft]}
    for k in range(3):
        many = convert({"metadata": {"name": f"m{k}", "labels": {"app": "x"}}, "spec": spec}, Pod)
        a, b = fast.schedule(many), slow.schedule(many)
        assert (a.node, a.message) == (b.node, b.message)
        assert a.node is not None
        fast.bind(many, a.node)
        slow.bind(many, b.node)
    # hard copies alone decide as one constraint does
    probe = {"containers": [{"name": "c"}], "topologySpreadConstraints": [hard] * 100_000}
    a = fast.schedule(convert({"metadata": {"name": "h", "labels": {"app": "x"}}, "spec": probe}, Pod))
    b = fast.schedule(convert({"metadata": {"name": "h1", "labels": {"app": "x"}},
                               "spec": dict(one, topologySpreadConstraints=[hard])}, Pod))
    assert (a.node, a.code, a.message, a.feasible) == (b.node, b.code, b.message, b.feasible)
