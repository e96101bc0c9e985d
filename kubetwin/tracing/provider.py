"""The trace session behind ``--trace``: an OpenTelemetry ``TracerProvider`` with one exporter
(OTLP/HTTP protobuf to a collector, or :mod:`.file_exporter`'s OTLP JSON file), spans handed over in
batches, and the clock spans are stamped with.

Batches: every :data:`BATCH` ended spans are exported at once, in the thread that ended them, so
memory stays bounded (a 50,000-pod simulation never holds its spans) and no span is dropped, as the
SDK's ``BatchSpanProcessor`` drops them when its queue outruns the exporter.

An unreachable or failing collector costs one bounded export attempt (:data:`TIMEOUT` seconds); the
rest of the run's batches are dropped and one warning says so at the end — never a hang, never an
error that would hide the command's answer.

Time: a decision's root span starts at the clock's now — the wall clock, or in ``simulate`` the
scenario's clock (:meth:`Tracing.simulated_clock`), so a trace viewer shows the simulation's
timeline; the spans inside a decision are placed after its start by the wall time they took.

Not an upstream module: kubetwin's own wiring of opentelemetry-sdk (``sdk/trace``).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Any, Callable, Mapping, Sequence

from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from .target import TraceTarget

#: spans per export (the SDK's default ``max_export_batch_size``)
BATCH = 512
#: seconds one OTLP/HTTP export may take, retries included
TIMEOUT = 2.0
#: the instrumentation scope of every span
SCOPE = "kubetwin"

Attributes = Mapping[str, Any]


class _Capture(logging.Handler):
    """Keeps the exporter's last log message (its reason for a failed export) instead of printing it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.last = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed log record must not break the export
            self.last = str(record.msg)


class GuardedExporter(SpanExporter):
    """An exporter that gives up after its first failure: later batches are counted, not sent."""

    def __init__(self, inner: SpanExporter, where: str):
        self.inner = inner
        self.where = where
        self.failed = False
        self.reason = ""
        self.exported = 0
        self.dropped = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self.failed:
            self.dropped += len(spans)
            return SpanExportResult.FAILURE
        try:
            got = self.inner.export(spans)
        except Exception as exc:  # noqa: BLE001 - a transport error is a failed export, not a crash
            got, self.reason = SpanExportResult.FAILURE, str(exc)
        if got is SpanExportResult.SUCCESS:
            self.exported += len(spans)
        else:
            self.failed = True
            self.dropped += len(spans)
        return got

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


class BatchingProcessor(SpanProcessor):
    """Exports ended spans every :data:`BATCH`, synchronously (bounded memory, nothing dropped)."""

    def __init__(self, exporter: SpanExporter, batch: int = BATCH):
        self.exporter = exporter
        self.batch = batch
        self._spans: list[ReadableSpan] = []
        self._lock = threading.Lock()

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            self._spans.append(span)
            if len(self._spans) < self.batch:
                return
            spans, self._spans = self._spans, []
        self.exporter.export(spans)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        with self._lock:
            spans, self._spans = self._spans, []
        if spans:
            self.exporter.export(spans)
        return True

    def shutdown(self) -> None:
        self.force_flush()
        self.exporter.shutdown()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kubetwin")
    except PackageNotFoundError:
        return "0"


class DecisionClock:
    """Nanoseconds for one decision's spans: :attr:`start` (the decision's instant), then calling it
    gives the start plus the wall time elapsed since the clock was made."""

    __slots__ = ("start", "_zero")

    def __init__(self, start: int):
        self.start = start
        self._zero = time.perf_counter_ns()

    def __call__(self) -> int:
        return self.start + (time.perf_counter_ns() - self._zero)


class Tracing:
    """One command's trace session (see the module docstring)."""

    def __init__(self, target: TraceTarget, command: str):
        self.target = target
        self._capture = _Capture()
        self.file: Any = None
        inner: SpanExporter
        if target.kind == "file":
            from .file_exporter import FileSpanExporter

            inner = self.file = FileSpanExporter(target.where)
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            for name in ("opentelemetry.exporter.otlp", "opentelemetry.exporter"):
                log = logging.getLogger(name)
                log.addHandler(self._capture)
                log.propagate = False
            inner = OTLPSpanExporter(endpoint=target.where, timeout=TIMEOUT)
        self.exporter = GuardedExporter(inner, target.where)
        #: the command traced (the resource's ``kubetwin.command``); may be named after the option
        #: is parsed, until the first span
        self.command = command
        self._provider: TracerProvider | None = None
        self._tracer: Any = None
        self._sim: Callable[[], float] | None = None
        self._epoch = 0
        #: the scheduling cycle being traced (:class:`.scheduler.CycleTrace`): decisions made inside
        #: it (DRA allocations) become its spans' children
        self.cycle: Any = None
        #: attributes of every decision's root span (the scenario being simulated)
        self.scope: dict[str, Any] = {}

    @property
    def tracer(self) -> Any:
        """The tracer, its provider made at the first span (the command is known by then)."""
        if self._tracer is None:
            version = _version()
            resource = Resource.create({"service.name": "kubetwin", "service.version": version,
                                        "kubetwin.command": self.command})
            self._provider = TracerProvider(resource=resource, sampler=ALWAYS_ON)
            self._provider.add_span_processor(BatchingProcessor(self.exporter))
            self._tracer = self._provider.get_tracer(SCOPE, version)
        return self._tracer

    # --- time --------------------------------------------------------------------------------------
    def simulated_clock(self, now: Callable[[], float] | None, scope: Mapping[str, Any] | None = None, *,
                        epoch_ns: int = 0) -> None:
        """Stamp decisions with ``now()`` (seconds of simulated time since ``epoch_ns``, the scenario's
        time zero) instead of the wall clock, their root spans with ``scope`` (None: back to the wall
        clock, no scope)."""
        self._sim = now
        self._epoch = epoch_ns
        self.scope = dict(scope or {})

    def decision_clock(self) -> "DecisionClock":
        """A clock for one decision: it starts at now (the simulated instant in ``simulate``) and
        moves on by the wall time since (nanoseconds)."""
        base = self._epoch + int(round(self._sim() * 1e9)) if self._sim is not None else time.time_ns()
        return DecisionClock(base)

    # --- spans -------------------------------------------------------------------------------------
    def span(self, name: str, attributes: Attributes, start: int, end: int, parent: Any = None) -> Any:
        """A finished span (``start``/``end`` in ns) under ``parent`` (a span or None: a new trace)."""
        s = self.open(name, attributes, start, parent)
        s.end(end_time=max(end, start))
        return s

    def open(self, name: str, attributes: Attributes, start: int, parent: Any = None) -> Any:
        """A span left open: the caller ends it (``span.end(end_time=...)``). A root span (no
        ``parent``: a decision) carries the session's :attr:`scope`."""
        if parent is not None:
            ctx = otel_trace.set_span_in_context(parent)
        else:
            ctx = otel_context.Context()
            if self.scope:
                attributes = {**self.scope, **attributes}
        return self.tracer.start_span(name, context=ctx, attributes=_clean(attributes), start_time=start)

    # --- the end -----------------------------------------------------------------------------------
    def stop(self, ok: bool = True) -> None:
        """Export what is left; commit (``ok``) or discard a trace file; warn about a failed collector."""
        if self._provider is not None:
            self._provider.shutdown()
        ex = self.exporter
        if self.file is not None:
            if ok and not ex.failed:
                self.file.commit()
            else:
                self.file.discard()
        elif ex.failed:
            reason = ex.reason or self._capture.last or "the export failed"
            print(f"warning: --trace: {ex.dropped} span(s) not exported to {ex.where} ({reason}); "
                  f"is an OpenTelemetry Collector listening there for OTLP/HTTP?", file=sys.stderr)


def _clean(attributes: Attributes) -> dict[str, Any]:
    """OpenTelemetry attribute values: str, bool, int, float or a homogeneous list of them; None left out."""
    out: dict[str, Any] = {}
    for k, v in attributes.items():
        if v is None:
            continue
        if isinstance(v, (str, bool, int, float)):
            out[k] = v
        elif isinstance(v, (list, tuple, frozenset, set)):
            items = sorted(v) if isinstance(v, (set, frozenset)) else list(v)
            if all(isinstance(x, (bool, int, float)) for x in items) and len({type(x) for x in items}) <= 1:
                out[k] = items
            else:
                out[k] = [str(x) for x in items]
        else:
            out[k] = str(v)
    return out
