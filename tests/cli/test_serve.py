"""Specifications of ``kubetwin serve`` as a command: bad input exits 1 with a message before
anything listens; good input serves until interrupted."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.serve.cluster_fixture import write_scenario

KUBETWIN = [sys.executable, "-m", "kubetwin"]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*KUBETWIN, "serve", *args], capture_output=True, text=True, timeout=120)


def test_a_missing_cluster_file_exits_1(tmp_path):
    r = _run("--cluster", str(tmp_path / "nope.yaml"), "--port", "0")
    assert r.returncode == 1 and r.stderr.startswith("error:")


def test_a_folder_that_is_no_snapshot_exits_1(tmp_path):
    r = _run("--cluster", str(tmp_path), "--port", "0")
    assert r.returncode == 1 and "not a kubetwin snapshot" in r.stderr


def test_an_empty_token_file_exits_1(tmp_path):
    (tmp_path / "token").write_text("")
    r = _run("--cluster", str(write_scenario(tmp_path)), "--token-file", str(tmp_path / "token"), "--port", "0")
    assert r.returncode == 1 and "one token" in r.stderr


def test_a_bad_kubelets_file_exits_1_naming_the_field(tmp_path):
    k = tmp_path / "k.yaml"
    k.write_text("apiVersion: kubetwin.io/v1alpha1\nkind: NodeKubelets\nspec: {nodes: [{selectr: {}}]}\n")
    r = _run("--cluster", str(write_scenario(tmp_path)), "--kubelets", str(k), "--port", "0")
    assert r.returncode == 1 and "selectr" in r.stderr and "Traceback" not in r.stderr


def test_serve_listens_on_loopback_and_answers(tmp_path: Path):
    proc = subprocess.Popen([*KUBETWIN, "serve", "--cluster", str(write_scenario(tmp_path)), "--port", "0"],
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+) \(read-only\)", line)
        assert m, line
        url = f"http://127.0.0.1:{m.group(1)}/healthz"
        for _ in range(100):
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    assert r.status == 200
                    break
            except OSError:
                time.sleep(0.05)
        else:
            raise AssertionError("no answer")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_an_output_format_without_check_is_a_usage_error(tmp_path):
    r = _run("--cluster", str(write_scenario(tmp_path)), "-o", "json")
    assert r.returncode == 2 and "--check" in r.stderr


def test_check_prints_what_would_be_served_and_exits(tmp_path):
    r = _run("--cluster", str(write_scenario(tmp_path)), "--check", "-o", "json")
    assert r.returncode == 0
    import json

    data = json.loads(r.stdout)
    assert (data["nodes"], data["kubeletModelledNodes"], data["runningPods"], data["pendingPods"]) == (3, 2, 1, 1)


def test_a_malformed_resync_interval_exits_1_naming_the_flag(tmp_path):
    r = _run("--kubeconfig", str(tmp_path / "kubeconfig"), "--resync-interval", "5x", "--port", "0")
    assert r.returncode == 1 and r.stderr.startswith("error: --resync-interval:") and 'unknown unit "x"' in r.stderr


def test_a_live_cluster_is_read_at_start(tmp_path):
    from tests.live.fakeapi import cluster, kubeconfig

    server, url = cluster(nodes=2, pods=3).serve()
    try:
        r = _run("--kubeconfig", str(kubeconfig(tmp_path, url)), "--resync-interval", "30s", "--check")
    finally:
        server.shutdown()
    assert r.returncode == 0 and "2 nodes" in r.stdout and "2 running pods, 1 pending" in r.stdout
