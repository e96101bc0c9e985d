"""Specifications of simulation jobs (``kubetwin.serve.jobs``): bounded queue, progress, cancel."""

from __future__ import annotations

import threading
import time

import pytest

from kubetwin.errors import InputError
from kubetwin.serve.jobs import JobQueue, QueueFull

from .cluster_fixture import write_scenario


def _wait(queue: JobQueue, job_id: str, timeout: float = 60.0) -> str:
    end = time.time() + timeout
    while time.time() < end:
        state = queue.jobs[job_id].state
        if state not in ("queued", "running"):
            return state
        time.sleep(0.02)
    return queue.jobs[job_id].state


def test_a_job_runs_once_as_is_and_once_per_variant(tmp_path):
    q = JobQueue([str(write_scenario(tmp_path))], None)
    job = q.submit(["none:kubelet.cpuManagerPolicy=none"])
    assert _wait(q, job.id) == "succeeded"
    assert len(job.results or []) == 2
    assert job.status()["variants"] == ["none"]
    q.close()


def test_a_bad_variant_is_refused_at_submission(tmp_path):
    q = JobQueue([str(write_scenario(tmp_path))], None)
    with pytest.raises(InputError) as err:
        q.submit(["x:kubelet.cpuManagerPolcy=none"])
    assert err.value.path.startswith("variants[0]")
    assert q.jobs == {}


def test_a_full_queue_refuses_a_job(tmp_path):
    q = JobQueue([str(write_scenario(tmp_path))], None, max_queued=1)
    gate = threading.Event()
    q._execute = lambda job: gate.wait(10)  # the worker holds its first job until released
    q.submit([])
    for _ in range(200):
        if not q._queue:
            break
        time.sleep(0.01)
    q.submit([])
    with pytest.raises(QueueFull):
        q.submit([])
    gate.set()
    q.close()


def test_cancelling_a_queued_job_drops_it(tmp_path):
    q = JobQueue([str(write_scenario(tmp_path))], None, max_queued=2)
    gate = threading.Event()
    q._execute = lambda job: gate.wait(10)
    q.submit([])
    queued = q.submit([])
    assert q.cancel(queued.id) is queued and queued.state == "cancelled"
    gate.set()
    q.close()


def test_cancelling_an_unknown_job_answers_none(tmp_path):
    assert JobQueue([str(write_scenario(tmp_path))], None).cancel("nope") is None
