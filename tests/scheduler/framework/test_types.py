"""PodInfo's parsed affinity terms: repeated required anti-affinity terms are held once (they
change no answer), so a pod with 100,000 copies of one term schedules as a pod with one."""

from __future__ import annotations

from typing import Any

import pytest

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod, PodAffinityTerm
from kubetwin.scheduler.framework.types import PodInfo, distinct_terms
from kubetwin.scheduler.scheduler import Scheduler

N = 100_000
HOST = "kubernetes.io/hostname"


def _term(app: str, key: str = HOST) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


def _pod(name: str, *, anti: int = 0, affinity: int = 0, node: str | None = None) -> Pod:
    aff: dict[str, Any] = {}
    if anti:
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term("web")] * anti}
    if affinity:
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term("web")] * affinity}
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}
    if aff:
        spec["affinity"] = aff
    if node:
        spec["nodeName"] = node
    return convert({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
                    "spec": spec}, Pod)


def _node(name: str) -> Node:
    cap = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return convert({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {HOST: name}},
                    "status": {"capacity": cap, "allocatable": cap}}, Node)


def test_distinct_terms_drops_repeats_keeping_first_occurrences_in_order() -> None:
    a, b = convert(_term("a"), PodAffinityTerm), convert(_term("b"), PodAffinityTerm)
    assert distinct_terms([a, b, a, b, a]) == [a, b]


def test_distinct_terms_of_a_long_list_asked_again_is_the_same_answer() -> None:
    a, b = convert(_term("a"), PodAffinityTerm), convert(_term("b"), PodAffinityTerm)
    terms = [a] * 500 + [b]
    assert distinct_terms(terms) == [a, b]
    assert distinct_terms(terms) == [a, b]


def test_pod_info_holds_a_repeated_required_anti_affinity_term_once() -> None:
    assert len(PodInfo(_pod("p", anti=N)).required_anti_affinity_terms) == 1


def test_pod_info_keeps_repeated_required_affinity_terms_which_score_each() -> None:
    assert len(PodInfo(_pod("p", affinity=3)).required_affinity_terms) == 3


@pytest.mark.parametrize("vectorised", [True, False], ids=["fast", "plain"])
def test_a_pod_with_100000_anti_affinity_copies_schedules_as_one_with_one_term(vectorised: bool) -> None:
    nodes = [_node("n0"), _node("n1")]

    def place(copies: int) -> tuple[str | None, str]:
        bound = [_pod("web-0", anti=copies, node="n0")]
        s = Scheduler(None, nodes, gates_for(), 1, pods=bound, vectorised=vectorised)
        r = s.schedule(_pod("web-1", anti=copies))
        return r.node, r.message

    assert place(N) == place(1) == ("n1", "")
