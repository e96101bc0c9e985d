"""Eviction-pass spans from a traced simulation (examples/simulate/node-feedback.yaml fills a disk):
the thresholds met, the signals observed, the ranking and the victim, at the pass's simulated time."""

from __future__ import annotations

from typing import Any

import pytest

from kubetwin.sim.loop import EPOCH
from kubetwin.tracing.file_exporter import read_trace_file
from tests.tracing.test_kubelet import _attrs
from tests.tracing.test_provider import EX


@pytest.fixture(scope="module")
def spans(tmp_path_factory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("trace") / "trace.json"
    from kubetwin.cli.main import main

    main(["simulate", "-f", str(EX / "simulate/node-feedback.yaml"), "--trace", f"file:{out}", "-o", "json"])
    return [s for r in read_trace_file(out) for rs in r["resourceSpans"] for ss in rs["scopeSpans"]
            for s in ss["spans"]]


def _passes(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in spans if s["name"] == "eviction pass"]


def test_only_passes_that_met_a_threshold_are_spans(spans):
    passes = _passes(spans)
    assert passes
    assert all(_attrs(p)["kubetwin.eviction.thresholds_met"] for p in passes)


def test_a_pass_names_the_node_the_signals_and_the_resource_to_reclaim(spans):
    a = _attrs(_passes(spans)[0])
    assert a["k8s.node.name"].startswith("worker-")
    assert a["kubetwin.eviction.thresholds_met"] == ["imagefs.available<15%"]
    assert a["kubetwin.eviction.resource_to_reclaim"] == "ephemeral-storage"
    assert a["kubetwin.eviction.signal.imagefs.available.capacity"] == "100Gi"


def test_the_victim_is_a_child_span_with_the_kubelets_message(spans):
    victims = [s for s in spans if s["name"] == "evict pod"]
    assert victims
    a = _attrs(victims[0])
    assert a["kubetwin.eviction.reason"] == "Evicted"
    assert a["kubetwin.eviction.message"].startswith("The node was low on resource: ephemeral-storage.")
    parent = next(s for s in spans if s["spanId"] == victims[0]["parentSpanId"])
    ranked = next(s for s in spans if s.get("parentSpanId") == parent["spanId"] and s["name"] == "rank pods")
    assert f"default/{a['k8s.pod.name']}" in _attrs(ranked)["kubetwin.eviction.ranking"]


def test_passes_happen_at_the_simulations_sample_instants(spans):
    epoch = int(EPOCH.timestamp()) * 1_000_000_000
    for p in _passes(spans):
        offset = int(p["startTimeUnixNano"]) - epoch
        assert offset >= 0 and offset % 10_000_000_000 == 0   # sampleInterval: 10s

