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
from typing import Any, Sequence

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from ..errors import InputError
from ..outputs import _mode_for, check_output

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


def otlp_json(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """The spans as one ``ExportTraceServiceRequest`` in OTLP JSON."""
    data = json_format.MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    _hex_ids(data)
    return data


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
        line = json.dumps(otlp_json(spans), separators=(",", ":"))
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
