"""Specifications of running ``kubetwin serve`` on a socket: the address, and a bounded loopback
load test — concurrent good and bad requests, and the service keeps answering."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import uvicorn

from kubetwin.errors import InputError
from kubetwin.serve.app import create_app
from kubetwin.serve.cluster import load_cluster
from kubetwin.serve.limits import ServeLimits
from kubetwin.serve.server import listen

from .cluster_fixture import NODES, pod, write_scenario


def test_a_taken_port_is_an_input_error():
    taken = listen("127.0.0.1", 0)
    try:
        with pytest.raises(InputError, match="cannot listen"):
            listen("127.0.0.1", taken.getsockname()[1])
    finally:
        taken.close()


def test_port_zero_picks_a_free_port():
    sock = listen("127.0.0.1", 0)
    try:
        assert sock.getsockname()[1] > 0
    finally:
        sock.close()


@pytest.fixture
def served(tmp_path):
    cluster = load_cluster([str(write_scenario(tmp_path))])
    sock = listen("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(create_app(cluster, ServeLimits(max_body=64 << 10, request_timeout=10.0,
                                                                           max_concurrent=4)),
                                           log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(500):
        if server.started:
            break
        time.sleep(0.01)
    yield sock.getsockname()[1]
    server.should_exit = True
    thread.join(timeout=10)


def _post(port: int, path: str, body: bytes, headers: dict[str, str] | None = None) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", path, body=body, headers={"content-type": "application/json", **(headers or {})})
        r = conn.getresponse()
        r.read()
        return r.status
    finally:
        conn.close()


def _half_request(port: int) -> None:
    """A request that announces a body and never sends it (the client gives up)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"POST /extender/filter HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
    time.sleep(0.05)
    s.close()


def test_under_concurrent_good_and_bad_requests_the_service_keeps_answering(served):
    good = json.dumps({"Pod": pod("p", "5"), "NodeNames": NODES}).encode()
    bad = [b"{not json", json.dumps({"Pod": pod("p", "1"), "NodeNamez": []}).encode(), b"[]",
           json.dumps({"Pod": {"spec": {"containers": "x"}}, "NodeNames": []}).encode(), b"x" * (128 << 10)]
    jobs = []
    for i in range(120):
        if i % 10 == 9:
            jobs.append(("half", None))
        elif i % 2:
            jobs.append(("bad", bad[i % len(bad)]))
        else:
            jobs.append(("good", good))

    def run(job):
        kind, body = job
        if kind == "half":
            _half_request(served)
            return kind, None
        return kind, _post(served, "/extender/filter", body)

    with ThreadPoolExecutor(max_workers=12) as pool:
        answers = list(pool.map(run, jobs))
    codes = {kind: sorted({c for k, c in answers if k == kind}) for kind in ("good", "bad")}
    assert set(codes["good"]) <= {200, 503} and 200 in codes["good"]
    assert set(codes["bad"]) <= {400, 413, 503}  # 503: every worker busy (max_concurrent), never a 500
    t = time.perf_counter()
    assert _post(served, "/extender/filter", good) == 200
    assert time.perf_counter() - t < 10
