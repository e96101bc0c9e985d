"""Pods are decoded as the API server stores them: requests default to limits (containers and
init containers), pod-level requests default as SetDefaults_Pod says; ``--no-api-defaulting``
takes them as written (the conformance cases from upstream unit tests)."""

from __future__ import annotations

import json

import pytest

from kubetwin.kubelet.qos import get_pod_qos
from kubetwin.model import objects
from kubetwin.model.defaulting import set_api_defaulting
from kubetwin.model.pod import pod_from_dict


@pytest.fixture(autouse=True)
def _defaulting_on():
    set_api_defaulting(True)
    yield
    set_api_defaulting(True)


def pod(containers, init=(), **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": list(containers), "initContainers": list(init), **spec}}


def limits_only(name="c", **limits):
    return {"name": name, "resources": {"limits": limits or {"cpu": "2", "memory": "1Gi"}}}


def test_a_container_with_limits_only_gets_them_as_requests():
    p = pod_from_dict(pod([limits_only()]))
    assert {k: str(v) for k, v in p.spec.containers[0].requests.items()} == {"cpu": "2", "memory": "1Gi"}


def test_a_pod_whose_containers_state_limits_only_is_guaranteed():
    assert get_pod_qos(pod_from_dict(pod([limits_only()]))) == "Guaranteed"


def test_a_stated_request_is_kept():
    c = {"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "1Gi"}}}
    p = pod_from_dict(pod([c]))
    assert str(p.spec.containers[0].requests["cpu"]) == "1" and str(p.spec.containers[0].requests["memory"]) == "1Gi"


def test_init_containers_are_defaulted_too():
    p = pod_from_dict(pod([limits_only()], init=[limits_only("init", cpu="3")]))
    assert str(p.spec.init_containers[0].requests["cpu"]) == "3"


def test_extended_resources_are_defaulted_too():
    p = pod_from_dict(pod([limits_only(**{"example.com/gpu": "1"})]))
    assert str(p.spec.containers[0].requests["example.com/gpu"]) == "1"


def test_pod_level_requests_default_to_the_pod_level_limits():
    p = pod_from_dict(pod([{"name": "c"}], resources={"limits": {"cpu": "4", "memory": "2Gi"}}))
    assert p.spec.resources is not None
    assert {k: str(v) for k, v in p.spec.resources.requests.items()} == {"cpu": "4", "memory": "2Gi"}


def test_pod_level_requests_default_to_the_containers_requests_when_they_state_some():
    c = {"name": "c", "resources": {"requests": {"cpu": "1"}}}
    p = pod_from_dict(pod([c], resources={"limits": {"cpu": "4", "memory": "2Gi"}}))
    assert p.spec.resources is not None
    assert {k: str(v) for k, v in p.spec.resources.requests.items()} == {"cpu": "1", "memory": "2Gi"}


def test_pod_level_defaulting_follows_the_releases_gate(monkeypatch):
    from kubetwin.model import defaulting

    monkeypatch.setattr("kubetwin.model.features.gates_for", lambda *a, **k: _Off())
    defaulting._pod_level_resources.cache_clear()   # the gate is read once per release
    try:
        p = defaulting.api_defaults(_raw(resources={"limits": {"cpu": "4"}}))
    finally:
        defaulting._pod_level_resources.cache_clear()
    assert p.spec.resources is not None and not p.spec.resources.requests


def test_no_api_defaulting_takes_pods_as_written():
    set_api_defaulting(False)
    p = pod_from_dict(pod([limits_only()]))
    assert not p.spec.containers[0].requests
    assert get_pod_qos(p) == "Burstable"


def test_pods_read_by_the_json_fast_path_are_defaulted(tmp_path, monkeypatch):
    monkeypatch.setattr(objects, "FAST_PATH_MIN_BYTES", 1)
    path = tmp_path / "pods.json"
    path.write_text(json.dumps([pod([limits_only()])]))
    (p,) = objects.load_pods(path)
    assert str(p.spec.containers[0].requests["cpu"]) == "2"


class _Off:
    def enabled(self, name: str) -> bool:
        return False


def _raw(**spec):
    from kubetwin.model.meta import convert
    from kubetwin.model.pod import Pod

    return convert(pod([{"name": "c"}], **spec), Pod)
