"""Kubelet admission spans (``kubetwin admit --trace``): the admission with its verdict, the Topology
Manager's merged hint per container, a span per hint provider with its hints, the predicate handler."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubetwin.tracing.file_exporter import read_trace_file
from tests.tracing.test_provider import ADMIT, run


def _value(any_value: dict[str, Any]) -> Any:
    """An OTLP JSON ``AnyValue`` (int64 values are decimal strings there)."""
    (kind, v), = any_value.items()
    if kind == "arrayValue":
        return [_value(x) for x in v.get("values", [])]
    return int(v) if kind == "intValue" else v


def _attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {kv["key"]: _value(kv["value"]) for kv in span.get("attributes", [])}


@pytest.fixture
def spans(tmp_path: Path, capsys) -> list[dict[str, Any]]:
    out = tmp_path / "trace.json"
    status, _, err = run(capsys, *ADMIT, "--trace", f"file:{out}")
    assert status == 0, err
    return [s for r in read_trace_file(out) for rs in r["resourceSpans"] for ss in rs["scopeSpans"]
            for s in ss["spans"]]


def _admission(spans: list[dict[str, Any]], pod: str) -> dict[str, Any]:
    return next(s for s in spans if s["name"] == "kubelet admission" and _attrs(s)["k8s.pod.name"] == pod)


def _under(spans: list[dict[str, Any]], parent: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in spans if s.get("parentSpanId") == parent["spanId"]]


def test_the_admission_span_carries_the_verdict(spans):
    a = _attrs(_admission(spans, "api"))
    assert a["kubetwin.kubelet.admitted"] is False
    assert a["kubetwin.kubelet.reason"] == "TopologyAffinityError"
    assert a["kubetwin.kubelet.topology_manager.policy"] == "single-numa-node"
    assert _attrs(_admission(spans, "cache"))["kubetwin.kubelet.admitted"] is True


def test_the_topology_manager_span_has_the_merged_hint_per_container(spans):
    tm = [s for s in _under(spans, _admission(spans, "cache")) if s["name"] == "TopologyManager"]
    a = _attrs(tm[0])
    assert a["k8s.container.name"] == "redis"
    assert a["kubetwin.kubelet.topology_manager.merged_hint"] == "{[0] true}"
    assert a["kubetwin.kubelet.topology_manager.numa_nodes"] == [0]
    assert a["kubetwin.kubelet.topology_manager.admit"] is True


def test_each_manager_has_a_span_with_its_hints(spans):
    tm = next(s for s in _under(spans, _admission(spans, "api")) if s["name"] == "TopologyManager")
    by_name = {s["name"]: _attrs(s) for s in _under(spans, tm)}
    assert {"CPU Manager hints", "Memory Manager hints", "Device Manager hints"} <= set(by_name)
    assert by_name["CPU Manager hints"]["kubetwin.kubelet.hints.cpu"]
    assert "kubetwin.kubelet.hints.memory" in by_name["Memory Manager hints"]
    assert _attrs(tm)["kubetwin.kubelet.topology_manager.admit"] is False


def test_the_predicate_admit_handler_is_the_last_step(spans):
    kids = sorted(_under(spans, _admission(spans, "cache")), key=lambda s: int(s["startTimeUnixNano"]))
    assert kids[-1]["name"] == "predicate admit handler"
