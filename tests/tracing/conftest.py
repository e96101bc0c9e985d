"""A local OTLP/HTTP receiver (a collector's ``otlp`` receiver, traces only) on 127.0.0.1: it decodes
each ``ExportTraceServiceRequest`` with opentelemetry-proto and keeps the spans, so tests check what
``--trace otlp://...`` really sends."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from kubetwin import tracing


class Receiver:
    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []
        self.content_types: list[str] = []
        self.server: ThreadingHTTPServer | None = None

    @property
    def address(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"{host}:{port}"

    def spans(self) -> list[Any]:
        return [s for r in self.requests for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]

    def resources(self) -> list[Any]:
        return [rs.resource for r in self.requests for rs in r.resource_spans]


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            req = ExportTraceServiceRequest()
            req.ParseFromString(body)
            receiver.requests.append(req)
            receiver.paths.append(self.path)
            receiver.content_types.append(self.headers.get("Content-Type", ""))
            out = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    r.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(r))
    thread = threading.Thread(target=r.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield r
    finally:
        r.server.shutdown()
        r.server.server_close()


@pytest.fixture(autouse=True)
def _no_tracing_left() -> Iterator[None]:
    """A test that fails half-way must not leave tracing on for the next."""
    yield
    tracing.stop(ok=False)


def attrs(span: Any) -> dict[str, Any]:
    """A protobuf span's (or resource's) attributes as plain values."""
    out: dict[str, Any] = {}
    for kv in span.attributes:
        v = kv.value
        kind = v.WhichOneof("value")
        if kind == "array_value":
            out[kv.key] = [getattr(x, x.WhichOneof("value")) for x in v.array_value.values]
        else:
            out[kv.key] = getattr(v, kind)
    return out
