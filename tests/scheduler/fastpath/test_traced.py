"""The traced vectorised cycle (``kubetwin.scheduler.fastpath.traced``) reports what the plain
cycle reports: random clusters and pods scheduled by two schedulers with the same seed, one
vectorised and one plugin by plugin, each with a cycle recorder; every cycle's per-plugin Filter
counts (nodes passed, nodes rejected, rejections by reason) and PreFilter statuses must agree,
and the vectorised Score reports each plugin's normalized scores of the nodes scored."""

from __future__ import annotations

import pytest

from kubetwin.tracing.scheduler import CycleTrace

from ..randomcluster import random_pod, scheduler_pair


class _Clock:
    start = 0

    def __call__(self) -> int:
        return 0


class _Tracing:
    """Only the clock a recorder reads (no spans are made in these tests)."""

    def decision_clock(self) -> _Clock:
        return _Clock()


def _filter_counts(rec: CycleTrace) -> dict[str, tuple[int, int, dict[str, int]]]:
    return {p: (c.passed, c.rejected, dict(c.reasons)) for p, c in rec.filter_calls.items()}


def _cycles(seed: int, n_nodes: int, n_pods: int):
    rng, fast, slow = scheduler_pair(seed, n_nodes)
    fast.reuse_verdicts = slow.reuse_verdicts = False   # every cycle runs its plugins
    for k in range(n_pods):
        pod = random_pod(rng, f"p{k}")
        recs = CycleTrace(_Tracing(), pod), CycleTrace(_Tracing(), pod)  # type: ignore[arg-type]
        fast._recorder, slow._recorder = recs
        a, b = fast.schedule(pod), slow.schedule(pod)
        assert a.node == b.node
        yield pod, a, recs
        if a.node is not None:
            fast.bind(pod, a.node)
            slow.bind(pod, b.node)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_filter_counts_per_plugin_are_the_plain_cycles(seed):
    for pod, _, (vec, plain) in _cycles(seed, n_nodes=12, n_pods=25):
        assert _filter_counts(vec) == _filter_counts(plain), pod.name


@pytest.mark.parametrize("seed", [6, 7])
def test_filter_counts_agree_with_node_sampling_and_rotation(seed):
    for pod, _, (vec, plain) in _cycles(seed, n_nodes=150, n_pods=10):
        assert _filter_counts(vec) == _filter_counts(plain), pod.name


@pytest.mark.parametrize("seed", [1, 2])
def test_prefilter_statuses_are_the_plain_cycles(seed):
    for pod, _, (vec, plain) in _cycles(seed, n_nodes=12, n_pods=25):
        got = {p: c.status.code for p, c in vec.pre_filter_calls.items()}
        want = {p: c.status.code for p, c in plain.pre_filter_calls.items()}
        assert {p: c for p, c in got.items() if p in want} == want, pod.name


@pytest.mark.parametrize("seed", [1, 2])
def test_vector_scores_are_each_plugins_normalized_scores(seed):
    for pod, _r, (vec, plain) in _cycles(seed, n_nodes=12, n_pods=25):
        if plain.score_list is None:
            continue
        assert vec.vector_scores is not None
        names, first, _, parts = vec.vector_scores
        nodes = [names[i] for i in first]
        by_plugin = {ps.plugin: ps for ps in plain.score_list}
        for plugin, _weight, how, value in parts:
            if how == "vector":
                want = [by_plugin[plugin].normalized[n] for n in nodes]
                assert [int(x) for x in value.normalized[:len(nodes)]] == want, (pod.name, plugin)
