"""NodeResourcesFit's whole-cluster verdict kept per pod shape is the plain comparison's, after
any sequence of binds, removals and node changes."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.backend.cache import ClusterState
from kubetwin.scheduler.plugins.noderesources import fit_kept
from kubetwin.scheduler.plugins.noderesources.vector import _fit_fail


def _cluster(rng: random.Random, n: int) -> ClusterState:
    nodes = [convert({"metadata": {"name": f"n{i}"},
                      "status": {"allocatable": {"cpu": str(rng.choice([2, 4, 8])), "memory": f"{rng.choice([4, 8])}Gi",
                                                 "pods": str(rng.choice([3, 5, 110]))}}}, Node)
             for i in range(n)]
    return ClusterState(nodes, gates_for())


def _pod(k: int, cpu: str, memory: str) -> Pod:
    return convert({"metadata": {"name": f"p{k}", "uid": f"u{k}"},
                    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}},
                   Pod)


def _plan(cs: ClusterState, cpu_milli: int, memory: int) -> tuple[tuple[str, int, bool, int | None], ...]:
    return (("cpu", cpu_milli, True, cs.rindex["cpu"]), ("memory", memory, True, cs.rindex["memory"]))


SHAPES = [("500m", "1Gi"), ("1", "2Gi"), ("2", "512Mi")]


@pytest.mark.parametrize("seed", range(6))
def test_the_kept_verdict_is_the_plain_one_after_random_binds_and_removals(seed):
    rng = random.Random(seed)
    cs = _cluster(rng, rng.randint(3, 12))
    plans = [_plan(cs, c, m) for c, m in ((500, 2**30), (1000, 2**31), (2000, 2**29), (3000, 2**32))]
    bound: list[Pod] = []
    handed: list[tuple[np.ndarray, np.ndarray]] = []
    for k in range(150):
        r = rng.random()
        if r < 0.55 or not bound:
            pod = _pod(k, *rng.choice(SHAPES))
            cs.bind(pod, cs.names[rng.randrange(cs.n)])
            bound.append(pod)
        elif r < 0.95:
            cs.remove(bound.pop(rng.randrange(len(bound))))
        else:
            cs.touch(-1)
        for plan in rng.sample(plans, rng.randint(1, len(plans))):
            kept = fit_kept.fit_fail(cs, plan, _fit_fail)
            assert kept is not None
            plain = _fit_fail(cs, plan, {}, 0, cs.n)
            assert kept.tolist() == plain.tolist()
            handed.append((kept, plain.copy()))
    for kept, then in handed:   # an array handed out is never changed afterwards
        assert kept.tolist() == then.tolist()


def test_a_plan_with_a_scalar_or_unindexed_resource_is_not_kept():
    cs = _cluster(random.Random(1), 3)
    assert fit_kept.fit_fail(cs, (("cpu", 1000, True, 0), ("example.com/foo", 1, False, None)), _fit_fail) is None
    assert fit_kept.fit_fail(cs, (("cpu", 1 << 63, True, cs.rindex["cpu"]),), _fit_fail) is None


def test_the_filter_gives_the_same_verdicts_with_the_kept_answers_off(monkeypatch):
    from kubetwin.scheduler.fastpath.vector import FilterVerdict
    from kubetwin.scheduler.framework.interface import CycleState
    from kubetwin.scheduler.plugins.noderesources.vector import filter_node_resources_fit

    class Plugin:
        name = "NodeResourcesFit"
        args = None

    rng = random.Random(3)
    cs = _cluster(rng, 8)
    seen: list[list[bool]] = []
    for enabled in (True, False):
        monkeypatch.setattr(fit_kept, "ENABLED", enabled)
        rng = random.Random(4)
        cs = _cluster(random.Random(3), 8)
        out: list[bool] = []
        pods: list[Pod] = []
        for k in range(40):
            pod = _pod(k, *rng.choice(SHAPES))
            v = filter_node_resources_fit(cs, pod, Plugin(), CycleState())
            assert isinstance(v, FilterVerdict)
            out.extend(v.fail.tolist())
            free = np.flatnonzero(~v.fail)
            if len(free):
                cs.bind(pod, cs.names[int(free[rng.randrange(len(free))])])
                pods.append(pod)
            if pods and rng.random() < 0.3:
                cs.remove(pods.pop(0))
        seen.append(out)
    assert seen[0] == seen[1]
