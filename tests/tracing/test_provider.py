"""``--trace`` end to end through the CLI: OTLP/HTTP protobuf received by a local collector, the
OTLP JSON file, bad values, an unreachable collector, and nothing traced without the option."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

from kubetwin import tracing
from kubetwin.cli.main import main
from kubetwin.tracing.file_exporter import read_trace_file
from tests.tracing.conftest import attrs

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
ADMIT = ["admit", "--machine", str(EX / "pod-level/machine.json"), "--config",
         str(EX / "pod-level/kubelet-container-scope.yaml"), "-f", str(EX / "admit/numa-conflict.yaml")]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        main(list(argv))
        status = 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return status, out, err


def test_spans_reach_an_otlp_http_collector_as_protobuf(receiver, capsys):
    status, _, err = run(capsys, "--trace", f"otlp://{receiver.address}", *ADMIT)
    assert status == 0, err
    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}
    assert set(receiver.content_types) == {"application/x-protobuf"}
    names = [s.name for s in receiver.spans()]
    assert names.count("kubelet admission") == 3


def test_the_resource_names_the_service_and_the_command(receiver, capsys):
    run(capsys, *ADMIT, "--trace", f"http://{receiver.address}")
    resource = attrs(receiver.resources()[0])
    assert resource["service.name"] == "kubetwin"
    assert resource["kubetwin.command"] == "admit"


def test_the_option_before_the_command_names_the_command_too(receiver, capsys):
    run(capsys, "--trace", f"http://{receiver.address}", *ADMIT)
    assert attrs(receiver.resources()[0])["kubetwin.command"] == "admit"


def test_file_target_writes_otlp_json_lines(tmp_path, capsys):
    out = tmp_path / "trace.json"
    status, _, err = run(capsys, *ADMIT, "--trace", f"file:{out}")
    assert status == 0, err
    reqs = read_trace_file(out)
    span = reqs[0]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(span["traceId"]) == 32 and int(span["traceId"], 16) >= 0   # hex, not base64
    assert len(span["spanId"]) == 16
    assert isinstance(span["kind"], int)                                   # enums as integers
    assert span["startTimeUnixNano"].isdigit()
    assert not list(tmp_path.glob(".trace.json.*"))                        # the temporary file is gone


def test_a_failed_command_leaves_no_trace_file(tmp_path, capsys):
    out = tmp_path / "trace.json"
    status, _, _ = run(capsys, "admit", "--machine", str(tmp_path / "missing.json"), "--config",
                       str(EX / "pod-level/kubelet-container-scope.yaml"), "-f", str(EX / "admit/numa-conflict.yaml"),
                       "--trace", f"file:{out}")
    assert status == 1
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_a_bad_trace_value_exits_1_with_the_fix(capsys):
    status, _, err = run(capsys, "--trace", "jaeger:16686", *ADMIT)
    assert status == 1
    line = err.strip().splitlines()[-1]
    assert line.startswith("error: --trace: invalid value") and "fix: give file:PATH, otlp://HOST:PORT" in line


def test_a_trace_file_in_a_directory_path_is_refused(tmp_path, capsys):
    status, _, err = run(capsys, "--trace", f"file:{tmp_path}", *ADMIT)
    assert status == 1
    assert "is a directory" in err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_collector_is_a_warning_not_a_hang(capsys):
    began = time.monotonic()
    status, out, err = run(capsys, "--trace", f"otlp://127.0.0.1:{_free_port()}", *ADMIT, "-o", "json")
    assert status == 0
    assert time.monotonic() - began < 3 * tracing.provider.TIMEOUT + 5
    assert json.loads(out)   # the answer is still written
    assert "warning: --trace:" in err and "not exported" in err


def test_without_the_option_nothing_is_traced(capsys):
    status, _, _ = run(capsys, *ADMIT)
    assert status == 0
    assert tracing.ACTIVE is None


def test_tracing_ends_with_the_command(receiver, capsys):
    run(capsys, "--trace", f"otlp://{receiver.address}", *ADMIT)
    assert tracing.ACTIVE is None
