"""The topology-aware policy's requests remembered per shape of an annotation-free container
(``fastrequest``): every request of random workloads equals the plain one; pods with
annotations and policies with CPU classes are answered by the plain code; a remembered shape
gives a new request object each time."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubetwin.runtime.policies.topologyaware import fastrequest
from kubetwin.runtime.policies.topologyaware.policy import TopologyAwarePolicy

from ... import fastpath_runs as runs


def _fields(r: Any) -> tuple[Any, ...]:
    return tuple(getattr(r, f.name) for f in dataclasses.fields(r))


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_every_request_of_random_workloads_is_the_plain_request(machine: str, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    fast_request = fastrequest.new_request
    seen = {"fast": 0, "plain": 0}

    def both(p: TopologyAwarePolicy, c: Any) -> Any:
        got = fast_request(p, c)
        want = p.plain_new_request(c)
        if got is None:
            seen["plain"] += 1
            assert c.pod.sandbox.annotations or p.cfg.cpu_classes
            return want
        seen["fast"] += 1
        assert _fields(got) == _fields(want) and got is not want
        return got

    fastrequest._FIELDS.clear()
    monkeypatch.setattr(fastrequest, "new_request", both)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()),
                      runs.arrivals(43, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert runs.placed(result) > 0 and seen["fast"] > 20 and seen["plain"] > 20


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_random_workloads_give_the_plain_results(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(44, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    fast = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    monkeypatch.setattr(fastrequest, "ENABLED", False)
    plain = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    assert fast == plain and runs.placed(plain) > 0


def test_a_remembered_shape_gives_a_new_request_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []
    real = fastrequest.new_request

    def keep(p: TopologyAwarePolicy, c: Any) -> Any:
        got = real(p, c)
        if got is not None:
            made.append(got)
        return got

    fastrequest._FIELDS.clear()
    monkeypatch.setattr(fastrequest, "new_request", keep)
    runs.run(runs.nodes(runs.MACHINES[0], 2, runs.topology_aware()), runs.arrivals(45, 60, [{}]))
    assert len(made) > 10 and len({id(r) for r in made}) == len(made)
    assert len(fastrequest._FIELDS) < len(made)   # shapes repeat


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_container_said_to_have_no_affinities_has_none(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    real = fastrequest.no_affinities
    said = {True: 0, False: 0}

    def checked(p: TopologyAwarePolicy, c: Any) -> bool:
        got = real(p, c)
        said[got] += 1
        if got:
            assert p.calculate_pool_affinities(c) == {}
        return got

    monkeypatch.setattr(fastrequest, "no_affinities", checked)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()),
                      runs.arrivals(46, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert runs.placed(result) > 0 and said[True] > 20 and said[False] > 5


def test_implicit_affinities_or_annotations_are_not_none() -> None:
    from types import SimpleNamespace

    def container(annotations: dict[str, str]) -> Any:
        return SimpleNamespace(pod=SimpleNamespace(sandbox=SimpleNamespace(annotations=annotations)))

    plain = SimpleNamespace(cache=SimpleNamespace(implicit={}))
    colocating = SimpleNamespace(cache=SimpleNamespace(implicit={"topology-aware:colocate-pods": lambda c, e: None}))
    assert fastrequest.no_affinities(plain, container({}))  # type: ignore[arg-type]
    assert not fastrequest.no_affinities(plain, container({"a": "b"}))  # type: ignore[arg-type]
    assert not fastrequest.no_affinities(colocating, container({}))  # type: ignore[arg-type]
