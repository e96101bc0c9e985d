"""The README's ``kubetwin serve`` session runs as written: the snapshot, the server, each
``curl`` and what they print (the port taken is a free one, not 8080)."""

from __future__ import annotations

import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

from tests.test_readme import ALL, README, ROOT, matches

SERVE = [e for e in ALL if e.command.startswith("kubetwin serve")]
CURLS = [e for e in ALL if e.command.startswith("curl ")]


def test_the_readme_has_a_serve_session():
    assert len(SERVE) == 1 and CURLS


def test_the_readme_serve_session_runs_as_written(tmp_path: Path):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    kubetwin = [str(Path(sys.executable).parent / "kubetwin")]
    subprocess.run([*kubetwin, "snapshot", "-f", "examples/snapshot", "-o", "cluster-snapshot"], cwd=tmp_path,
                   check=True, capture_output=True)
    serve = SERVE[0]
    argv = shlex.split(serve.command.rstrip("&").strip().replace("--port 8080", "--port 0"))
    proc = subprocess.Popen([*kubetwin, *argv[1:]], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().rstrip("\n")
        port = re.search(r"127\.0\.0\.1:(\d+)", line)
        assert port, line
        ok, why = matches(serve.expected or (), [line.replace(f":{port.group(1)}", ":8080")])
        assert ok, f"{README.name}:{serve.line}\n{why}"
        for curl in CURLS:
            cmd = curl.command.replace("localhost:8080", f"127.0.0.1:{port.group(1)}")
            out = subprocess.run(shlex.split(cmd), cwd=tmp_path, capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, out.stderr
            ok, why = matches(curl.expected or (), out.stdout.splitlines())
            assert ok, f"{README.name}:{curl.line}: {curl.command}\n{why}"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
