"""Specifications of ``kubetwin serve --kubeconfig --resync-interval``: the served model re-read from
a live cluster (the local fake API server of ``tests/live``) and swapped in atomically."""

from __future__ import annotations

import threading
import time

import pytest
from fastapi.testclient import TestClient

from kubetwin.errors import InputError
from kubetwin.live.config import load
from kubetwin.serve import extender
from kubetwin.serve.app import create_app
from kubetwin.serve.resync import LiveSource, Resync, attach, live_loader, parse_interval

from ..live.fakeapi import cluster, kubeconfig, pod_item

KUBELETS = """\
apiVersion: kubetwin.io/v1alpha1
kind: NodeKubelets
spec:
  nodes:
  - selector: {}
    machine: 1s2n4c1t:mem=32Gi
    kubeletConfig: {cpuManagerPolicy: static, topologyManagerPolicy: single-numa-node, reservedSystemCPUs: "0"}
"""
REJECTED = "kubelet admission: TopologyAffinityError: Resources cannot be allocated with Topology locality"


def guaranteed(name: str, node: str, cpu: str) -> dict:
    item = pod_item(name, node, cpu)
    res = item["spec"]["containers"][0]["resources"]
    res["limits"] = dict(res["requests"])
    item["status"]["qosClass"] = "Guaranteed"
    return item


def asked(cpu: str) -> dict:
    res = {"requests": {"cpu": cpu, "memory": "1Gi"}, "limits": {"cpu": cpu, "memory": "1Gi"}}
    return {"Pod": {"metadata": {"name": "new", "namespace": "default", "uid": "new-uid"},
                    "spec": {"containers": [{"name": "c", "image": "x", "resources": res}]}},
            "NodeNames": ["worker-0"]}


@pytest.fixture
def live(tmp_path):
    """A one-node fake cluster (8 CPUs on two NUMA nodes, CPU 0 reserved), served with a resync."""
    api = cluster(nodes=1, pods=1)
    server, url = api.serve()
    (tmp_path / "kubelets.yaml").write_text(KUBELETS)
    source = LiveSource(load(kubeconfig(tmp_path, url)), str(tmp_path / "kubelets.yaml"))
    app = create_app(source.read())
    resync = attach(app, source.read, 3600)
    yield api, app, resync
    server.shutdown()
    source.close()


def bind_in_the_cluster(api, item: dict) -> None:
    kind, items = api.lists["/api/v1/pods"]
    api.lists["/api/v1/pods"] = (kind, [*items, item])


def test_a_pod_bound_in_the_cluster_after_start_is_seen_after_one_resync(live):
    api, app, resync = live
    http = TestClient(app)
    assert http.post("/extender/filter", json=asked("4")).json()["NodeNames"] == ["worker-0"]
    bind_in_the_cluster(api, guaranteed("db", "worker-0", "4"))   # NUMA node 1 taken, 3 CPUs left on 0
    assert resync.once()
    answer = http.post("/extender/filter", json=asked("4")).json()
    assert answer["NodeNames"] == [] and answer["FailedNodes"] == {"worker-0": REJECTED}


def test_a_failing_api_keeps_the_old_model(live, capsys):
    api, app, resync = live
    old = app.state.cluster
    api.forbid.add("/api/v1/pods")
    assert not resync.once()
    assert app.state.cluster is old
    assert resync.failures == 1 and 'cannot list resource "pods"' in (resync.last_error or "")
    assert "resync failed, keeping the model" in capsys.readouterr().err


def test_a_failed_resync_is_counted_in_metrics_and_healthz(live):
    api, app, resync = live
    api.forbid.add("/api/v1/nodes")
    resync.once()
    http = TestClient(app)
    assert "kubetwin_serve_resync_failures_total 1.0" in http.get("/metrics").text
    assert http.get("/healthz").json()["resyncFailures"] == 1


def test_a_refused_connection_keeps_the_old_model(tmp_path):
    api = cluster(nodes=1, pods=1)
    server, url = api.serve()
    source = LiveSource(load(kubeconfig(tmp_path, url)))
    app = create_app(source.read())
    resync = attach(app, source.read, 3600)
    server.shutdown()
    server.server_close()
    assert not resync.once() and resync.failures == 1
    assert TestClient(app).get("/healthz").json()["ok"] is True
    source.close()


def test_healthz_and_metrics_report_the_models_age_and_resync_count(live):
    _, app, resync = live
    resync.once()
    http = TestClient(app)
    health = http.get("/healthz").json()
    assert health["resyncs"] == 1 and health["resyncIntervalSeconds"] == 3600
    assert 0 <= health["modelAgeSeconds"] < 60
    text = http.get("/metrics").text
    assert "kubetwin_serve_resyncs_total 1.0" in text and "kubetwin_serve_model_age_seconds " in text


def test_the_age_is_counted_from_when_the_model_was_read():
    now = [100.0]
    resync = Resync(lambda: object(), lambda _: None, 30, clock=lambda: now[0])
    now[0] = 130.0
    assert resync.age() == 30.0
    resync.once()
    now[0] = 135.0
    assert resync.age() == 5.0


def test_a_request_in_flight_finishes_on_the_model_it_started_with(live, monkeypatch):
    api, app, resync = live
    started, release, seen = threading.Event(), threading.Event(), []
    real = extender.filter_nodes

    def slow(served, data):
        seen.append(served)
        started.set()
        release.wait(10)
        return real(served, data)

    monkeypatch.setattr(extender, "filter_nodes", slow)
    http = TestClient(app)
    answers: list[dict] = []
    t = threading.Thread(target=lambda: answers.append(http.post("/extender/filter", json=asked("4")).json()))
    t.start()
    assert started.wait(10)
    old = app.state.cluster
    bind_in_the_cluster(api, guaranteed("db", "worker-0", "4"))
    assert resync.once()                       # swapped while the request works on the old model
    release.set()
    t.join(10)
    assert seen[0] is old and answers[0]["NodeNames"] == ["worker-0"]
    assert http.post("/extender/filter", json=asked("4")).json()["FailedNodes"] == {"worker-0": REJECTED}
    assert seen[1] is app.state.cluster is not old


def test_the_resync_thread_runs_with_the_app_and_stops_with_it(live):
    _, app, resync = live
    resync.interval = 0.05
    with TestClient(app):
        deadline = time.time() + 20
        while resync.resyncs < 1 and time.time() < deadline:
            time.sleep(0.02)
    assert resync.resyncs >= 1 and resync._thread is None


@pytest.mark.parametrize(("text", "seconds"), [("30s", 30.0), ("5m", 300.0), ("1m30s", 90.0), ("1.5s", 1.5)])
def test_the_interval_is_a_go_duration(text, seconds):
    assert parse_interval(text) == seconds


@pytest.mark.parametrize("text", ["30", "ten seconds", "5x", ""])
def test_a_malformed_interval_is_an_error_naming_the_flag(text):
    with pytest.raises(InputError) as err:
        parse_interval(text)
    assert err.value.path == "--resync-interval"


def test_an_interval_below_a_second_is_refused():
    with pytest.raises(InputError, match="below the minimum") as err:
        parse_interval("100ms")
    assert err.value.path == "--resync-interval"


def test_a_resync_interval_needs_a_live_cluster(tmp_path):
    with pytest.raises(InputError, match="only a live cluster is re-read") as err:
        live_loader(("snap",), None, None, False, "30s", None, None)
    assert err.value.path == "--resync-interval"


def test_a_snapshot_and_a_live_cluster_cannot_be_served_together():
    with pytest.raises(InputError, match="cannot be served together"):
        live_loader(("snap",), "kubeconfig", None, False, None, None, None)


def test_no_cluster_at_all_is_an_error():
    with pytest.raises(InputError, match="no cluster given"):
        live_loader((), None, None, False, None, None, None)
