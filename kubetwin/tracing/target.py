"""Where ``--trace`` sends spans: ``file:PATH`` (OTLP JSON lines) or an OTLP/HTTP collector
(``otlp://HOST:PORT``, ``http://HOST:PORT[/path]``, ``https://...``).

The address forms follow the OpenTelemetry SDK's exporter configuration
(``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``: a full URL, ``/v1/traces`` appended to a bare
``HOST:PORT``, opentelemetry-specification ``protocol/exporter.md``). Anything else is refused
before any work starts, with the forms that are accepted.

Not an upstream module: kubetwin's own option parsing.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from ..errors import InputError

#: the OTLP/HTTP path of the traces signal (opentelemetry-proto ``collector/trace/v1``)
TRACES_PATH = "/v1/traces"
#: what the error message offers as the fix
FORMS = "file:PATH, otlp://HOST:PORT or http(s)://HOST:PORT[/v1/traces] (OTLP/HTTP protobuf)"


@dataclass(frozen=True)
class TraceTarget:
    """``kind`` is ``file`` (``where`` is the path) or ``otlp`` (``where`` is the full URL)."""

    kind: str
    where: str


def _bad(value: str, why: str) -> InputError:
    return InputError(f"invalid value {value!r}: {why}", path="--trace", fix=f"give {FORMS}")


def parse_target(value: str) -> TraceTarget:
    """The ``--trace`` value as a target, or an :class:`InputError` naming the accepted forms."""
    if not value or value != value.strip():
        raise _bad(value, "empty or surrounded by spaces")
    if value.startswith("file:"):
        path = value[len("file:"):]
        if path.startswith("//"):
            path = path[2:]
        if not path:
            raise _bad(value, "file: needs a path")
        return TraceTarget("file", path)
    scheme, sep, _rest = value.partition("://")
    if not sep:
        raise _bad(value, "no scheme")
    scheme = scheme.lower()
    if scheme == "otlp":
        url = "http://" + value[len("otlp://"):]
    elif scheme in ("http", "https"):
        url = value
    elif scheme == "grpc":
        raise _bad(value, "OTLP over gRPC is not supported, only OTLP/HTTP (a collector listens for it on port 4318)")
    else:
        raise _bad(value, f"unknown scheme {scheme!r}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise _bad(value, str(exc)) from None
    if not parts.hostname:
        raise _bad(value, "no host")
    if port is None:
        raise _bad(value, "no port (an OpenTelemetry Collector takes OTLP/HTTP on 4318)")
    if parts.query or parts.fragment:
        raise _bad(value, "a query or fragment is not part of an OTLP endpoint")
    if scheme == "otlp":
        if parts.path not in ("", "/"):
            raise _bad(value, "otlp://HOST:PORT takes no path (use http://HOST:PORT/PATH for a path)")
        url = f"http://{parts.netloc}{TRACES_PATH}"
    elif parts.path in ("", "/"):
        url = f"{parts.scheme}://{parts.netloc}{TRACES_PATH}"
    return TraceTarget("otlp", url)
