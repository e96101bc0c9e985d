"""``--trace file:PATH``: spans written in the OTLP JSON shape, one ``ExportTraceServiceRequest``
per line (each batch), as the OpenTelemetry Collector's ``file`` exporter writes and its ``otlpjson``
receiver reads (opentelemetry-proto ``docs/specification.md``, "JSON Protobuf Encoding": lowerCamelCase
names, trace and span ids as hex, enums as integers).

Batches go to a temporary file beside PATH as they come (memory stays bounded however many spans a
simulation makes); :meth:`FileSpanExporter.commit` renames it over PATH when the command succeeded,
:meth:`FileSpanExporter.discard` removes it otherwise, so a reader sees a whole trace file or none.

Not an upstream module: kubetwin's own exporter over opentelemetry-sdk's ``SpanExporter``.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ..errors import InputError
from ..outputs import _mode_for, check_output

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """The spans as one ``ExportTraceServiceRequest`` in OTLP JSON, through opentelemetry-proto's
    encoder and protobuf's JSON mapping (the reference :func:`fast_otlp_json` is tested against)."""
    data = json_format.MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    _hex_ids(data)
    return data


def _value(v: Any) -> dict[str, Any]:
    """An ``AnyValue`` as protobuf's JSON mapping writes it (int64 as a string, a oneof member
    written even at its default)."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, str):
        return {"stringValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, bytes):
        return {"bytesValue": base64.b64encode(v).decode()}
    if v is None:
        return {}
    if isinstance(v, Mapping):
        kv = [{"key": str(k), "value": _value(x)} for k, x in v.items()]
        return {"kvlistValue": {"values": kv} if kv else {}}
    values = [_value(x) for x in v]
    return {"arrayValue": {"values": values} if values else {}}


def _attributes(out: dict[str, Any], attributes: Any) -> None:
    if attributes:
        out["attributes"] = [{"key": k, "value": _value(v)} for k, v in attributes.items()]


def _span(s: ReadableSpan) -> dict[str, Any]:
    ctx = s.get_span_context()
    assert ctx is not None
    out: dict[str, Any] = {"traceId": f"{ctx.trace_id:032x}", "spanId": f"{ctx.span_id:016x}"}
    state = ",".join(f"{k}={v}" for k, v in ctx.trace_state.items()) if ctx.trace_state is not None else ""
    if state:
        out["traceState"] = state
    if s.parent is not None:
        out["parentSpanId"] = f"{s.parent.span_id:016x}"
    out["name"] = s.name
    kind = s.kind.value + 1  # SpanKind INTERNAL..CONSUMER are 0..4 in the SDK, 1..5 in OTLP
    if kind:
        out["kind"] = kind
    if s.start_time:
        out["startTimeUnixNano"] = str(s.start_time)
    if s.end_time:
        out["endTimeUnixNano"] = str(s.end_time)
    _attributes(out, s.attributes)
    if s.dropped_attributes:
        out["droppedAttributesCount"] = s.dropped_attributes
    if s.events:
        events = []
        for e in s.events:
            ev: dict[str, Any] = {}
            if e.timestamp:
                ev["timeUnixNano"] = str(e.timestamp)
            if e.name:
                ev["name"] = e.name
            _attributes(ev, e.attributes)
            if e.dropped_attributes:
                ev["droppedAttributesCount"] = e.dropped_attributes
            events.append(ev)
        out["events"] = events
    if s.dropped_events:
        out["droppedEventsCount"] = s.dropped_events
    if s.links:
        links = []
        for link in s.links:
            lk: dict[str, Any] = {"traceId": f"{link.context.trace_id:032x}",
                                  "spanId": f"{link.context.span_id:016x}"}
            _attributes(lk, link.attributes)
            if link.dropped_attributes:
                lk["droppedAttributesCount"] = link.dropped_attributes
            lk["flags"] = 256 | (512 if link.context.is_remote else 0)
            links.append(lk)
        out["links"] = links
    if s.dropped_links:
        out["droppedLinksCount"] = s.dropped_links
    status: dict[str, Any] = {}
    if s.status.description:
        status["message"] = s.status.description
    if s.status.status_code.value:
        status["code"] = s.status.status_code.value
    out["status"] = status
    out["flags"] = 256 | (512 if s.parent is not None and s.parent.is_remote else 0)
    return out


def fast_otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """:func:`otlp_json`'s answer written directly from the SDK's spans (no protobuf messages in
    between: the bulk of a traced simulation's cost was that round trip)."""
    # grouped by identity: hashing a Resource hashes its attributes, once per span
    groups: dict[int, tuple[Any, dict[int, tuple[Any, list[dict[str, Any]]]]]] = {}
    for s in spans:
        g = groups.get(id(s.resource))
        if g is None:
            g = groups[id(s.resource)] = (s.resource, {})
        scope = s.instrumentation_scope or None
        sg = g[1].get(id(scope))
        if sg is None:
            sg = g[1][id(scope)] = (scope, [])
        sg[1].append(_span(s))
    out = []
    for resource, scopes in groups.values():
        res: dict[str, Any] = {}
        _attributes(res, resource.attributes)
        scope_spans = []
        for scope, encoded in scopes.values():
            sc: dict[str, Any] = {}
            if scope is not None:
                if scope.name:
                    sc["name"] = scope.name
                if scope.version:
                    sc["version"] = scope.version
                _attributes(sc, scope.attributes)
            entry: dict[str, Any] = {"scope": sc, "spans": encoded}
            if scope is not None and scope.schema_url:
                entry["schemaUrl"] = scope.schema_url
            scope_spans.append(entry)
        rs: dict[str, Any] = {"resource": res, "scopeSpans": scope_spans}
        if resource.schema_url:
            rs["schemaUrl"] = resource.schema_url
        out.append(rs)
    return {"resourceSpans": out} if out else {}


def _hex_ids(value: Any) -> None:
    """protobuf's JSON mapping writes bytes as base64; OTLP JSON wants ids as hex."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k in _ID_KEYS and isinstance(v, str):
                value[k] = base64.b64decode(v).hex()
            else:
                _hex_ids(v)
    elif isinstance(value, list):
        for v in value:
            _hex_ids(v)


class FileSpanExporter(SpanExporter):
    """Appends each batch as a line to a temporary file; :meth:`commit` makes it PATH."""

    def __init__(self, path: str):
        self.path = check_output(path, "--trace")
        try:
            fd, self._tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", file=str(self.path), path="--trace") from None
        os.fchmod(fd, _mode_for(self.path))
        self._file = os.fdopen(fd, "w", encoding="utf-8")
        self._lock = threading.Lock()
        self.spans = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        line = json.dumps(fast_otlp_json(spans), separators=(",", ":"))
        with self._lock:
            if self._file.closed:
                return SpanExportResult.FAILURE
            self._file.write(line + "\n")
            self.spans += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing: the file is committed or discarded by the owner once every batch is in."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def commit(self) -> None:
        """Every batch written: the file becomes PATH in one rename."""
        with self._lock:
            try:
                self._file.flush()
                os.fsync(self._file.fileno())
                self._file.close()
                os.replace(self._tmp, self.path)
            except OSError as exc:
                self._drop()
                raise InputError(f"cannot write: {exc.strerror or exc}", file=str(self.path), path="--trace") \
                    from None

    def discard(self) -> None:
        """The command failed: no trace file (an existing PATH is left as it was)."""
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        if not self._file.closed:
            self._file.close()
        try:
            os.unlink(self._tmp)
        except OSError:
            pass


def read_trace_file(path: str | Path) -> list[dict[str, Any]]:
    """The ``ExportTraceServiceRequest`` objects of a trace file, one per line (for tests and tools)."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]
