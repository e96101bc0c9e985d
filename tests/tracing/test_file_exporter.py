"""Specifications of the OTLP JSON file writer (``kubetwin.tracing.file_exporter``): the direct
encoder writes what opentelemetry-proto's encoder and protobuf's JSON mapping write."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from kubetwin.tracing import file_exporter
from kubetwin.tracing.file_exporter import fast_otlp_json, otlp_json


def _spans():
    mem = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "kubetwin", "n": 3}))
    provider.add_span_processor(SimpleSpanProcessor(mem))
    tracer = provider.get_tracer("kubetwin", "0.1", schema_url="https://opentelemetry.io/schemas/1.21.0")
    with tracer.start_as_current_span("root", attributes={"s": "", "i": 0, "b": False, "f": 1.5, "neg": -7,
                                                         "list": [1, 2], "strs": ["a", ""], "empty": []}) as root:
        root.add_event("rejected", {"k8s.node.name": "n-0", "reasons": ["Insufficient cpu"]}, timestamp=5)
        root.add_event("", {})
        with tracer.start_as_current_span("child", kind=SpanKind.CLIENT,
                                          links=[Link(root.get_span_context(), {"why": "link"})]) as child:
            child.set_status(Status(StatusCode.ERROR, "failed"))
        with tracer.start_as_current_span("ok") as ok:
            ok.set_status(Status(StatusCode.OK))
    return mem.get_finished_spans()


def test_every_kind_of_value_event_link_and_status_is_written_as_the_protobuf_mapping_writes_it():
    spans = _spans()
    assert fast_otlp_json(spans) == otlp_json(spans)


def test_no_spans_is_an_empty_request():
    assert fast_otlp_json([]) == otlp_json([])


def test_a_traced_simulations_batches_are_written_as_the_protobuf_mapping_writes_them(tmp_path: Path, monkeypatch):
    from kubetwin import tracing
    from kubetwin.sim.loop import simulate
    from tests.sim import reference_scenarios as rs

    checked = []
    real = file_exporter.FileSpanExporter.export

    def export(self, spans):
        assert fast_otlp_json(spans) == otlp_json(spans)
        checked.append(len(spans))
        return real(self, spans)

    monkeypatch.setattr(file_exporter.FileSpanExporter, "export", export)
    tracing.start(f"file:{tmp_path / 'trace.json'}", "simulate")
    try:
        simulate(rs.bench_scenario("e2e", rs.bench_nodes(4), rs.bench_pods(40)))
    finally:
        tracing.stop(ok=True)
    assert sum(checked) > 100
