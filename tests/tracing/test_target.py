"""``--trace`` values: the forms accepted, and every other value refused with the forms to use."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.tracing.target import TraceTarget, parse_target


def test_file_target_takes_the_path_after_file_colon():
    assert parse_target("file:out/trace.json") == TraceTarget("file", "out/trace.json")


def test_file_url_with_slashes_is_a_path():
    assert parse_target("file:///tmp/t.json") == TraceTarget("file", "/tmp/t.json")


def test_otlp_address_is_the_collectors_otlp_http_traces_endpoint():
    assert parse_target("otlp://collector:4318") == TraceTarget("otlp", "http://collector:4318/v1/traces")


def test_http_url_without_a_path_gets_the_traces_path():
    assert parse_target("http://127.0.0.1:4318") == TraceTarget("otlp", "http://127.0.0.1:4318/v1/traces")


def test_http_url_with_a_path_is_used_as_written():
    assert parse_target("https://tempo.example:443/otlp/v1/traces") == \
        TraceTarget("otlp", "https://tempo.example:443/otlp/v1/traces")


@pytest.mark.parametrize("value", ["", "jaeger", "file:", "ftp://host:21", "otlp://host", "otlp://:4318",
                                   "otlp://host:4318/x", "http://host:99999", "http://host:4318/?a=b", " file:x",
                                   "grpc://host:4317"])
def test_bad_values_are_refused_with_the_accepted_forms(value):
    with pytest.raises(InputError) as got:
        parse_target(value)
    assert got.value.path == "--trace"
    assert "otlp://HOST:PORT" in (got.value.fix or "")
