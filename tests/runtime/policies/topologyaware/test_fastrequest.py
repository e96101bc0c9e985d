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


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_grant_said_to_have_no_strict_preferences_passes_their_check(machine: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Wherever ``no_strict_preferences`` says so (an annotation-free pod), the plain check of
    every grant of random workloads passes; pods with annotations are checked the plain way."""
    from kubetwin.runtime.policies.topologyaware import resources

    real = fastrequest.no_strict_preferences
    seen = {"skipped": 0, "checked": 0}

    def both(r: Any) -> bool:
        got = real(r)
        seen["skipped" if got else "checked"] += 1
        return got

    verify = resources.Request.verify_strict_preferences

    def checked(r: Any, g: Any) -> None:
        if real(r):
            verify(r, g)   # raises if the skip were wrong
        verify(r, g)

    monkeypatch.setattr(fastrequest, "no_strict_preferences", both)
    monkeypatch.setattr(resources.Request, "verify_strict_preferences", checked)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()),
                      runs.arrivals(45, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert runs.placed(result) > 0 and seen["skipped"] > 20 and seen["checked"] > 20, seen


def test_strict_isolated_cpus_asked_by_annotation_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pod requiring isolated CPUs on a machine without any: the plain check refuses it,
    with the fast path on as off."""
    from kubetwin.machine import load_machine
    from kubetwin.model.kubelet_config import KubeletConfiguration
    from kubetwin.model.pod import pod_from_dict
    from kubetwin.runtime.node import RuntimeNode

    res = {"cpu": "1", "memory": "64Mi"}
    doc = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "namespace": "default", "uid": "uid-p",
                        "annotations": {"require-isolated-cpus.resource-policy.nri.io/pod": "true"}},
           "spec": {"containers": [{"name": "c", "resources": {"requests": res, "limits": res}}]}}

    def refused() -> bool:
        rn = RuntimeNode(load_machine(str(runs.SHARED / "machines" / runs.MACHINES[0])), runs.topology_aware().resource,
                         KubeletConfiguration.from_dict(runs.NONE), traced=False)
        return rn.create_pod(pod_from_dict(doc)) is not None

    assert refused()
    monkeypatch.setattr(fastrequest, "ENABLED", False)
    assert refused()
