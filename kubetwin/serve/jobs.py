"""Simulations of the served cluster as jobs: a bounded queue, one worker, progress, results as
JSON, cancel.

A job runs ``kubetwin simulate`` on the files the service was started with — once as they are
and once per variant (``--variant``'s ``NAME:KEY=VALUE,...``, parsed at submission so a bad one is
a 400, never a failed job) — through :func:`kubetwin.sim.sweep.load_run` and
:func:`kubetwin.sim.loop.simulate`. Pods bound through the extender since start are not part of
it (a simulation plays the scenario from its files). The queue holds ``max_queued`` jobs; a
submission beyond is refused (429). Cancelling a queued job drops it; a running one stops at its
next progress report. The last ``keep`` finished jobs are kept for their results.

Not an upstream module: kubetwin's own job runner.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import InputError

STATES = ("queued", "running", "succeeded", "failed", "cancelled")


class QueueFull(Exception):
    pass


class Cancelled(Exception):
    pass


@dataclass
class Job:
    id: str
    variants: list[Any]
    state: str = "queued"
    done: int = 0
    total: int = 0
    run: int = 0                      # which run of the job is going (0: as is, then one per variant)
    submitted: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    error: str = ""
    results: list[dict[str, Any]] | None = None
    cancel: bool = False

    def status(self) -> dict[str, Any]:
        runs = 1 + len(self.variants)
        return {"id": self.id, "state": self.state,
                "progress": {"run": self.run, "runs": runs, "done": self.done, "total": self.total},
                "variants": [v.name for v in self.variants], "submitted": self.submitted,
                "started": self.started, "finished": self.finished, "error": self.error or None}


class JobQueue:
    """One worker thread over a bounded queue of simulation jobs."""

    def __init__(self, files: list[str], version: str | None, *, max_queued: int = 4, keep: int = 32,
                 on_change: Callable[[dict[str, int]], None] | None = None):
        self.files, self.version = files, version
        self.max_queued, self.keep = max_queued, keep
        self.jobs: OrderedDict[str, Job] = OrderedDict()
        self._queue: deque[Job] = deque()
        self._lock = threading.Condition()
        self._on_change = on_change
        self._worker: threading.Thread | None = None
        self._stop = False
        self._ids = itertools.count()

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in STATES}
        for j in self.jobs.values():
            out[j.state] += 1
        return out

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self.counts())

    def submit(self, variants: list[str]) -> Job:
        from ..sim.sweep import parse_variant

        parsed = []
        for i, text in enumerate(variants):
            if not isinstance(text, str):
                raise InputError("expected a variant NAME:KEY=VALUE[,KEY=VALUE] (a string)", path=f"variants[{i}]")
            try:
                parsed.append(parse_variant(text, i))
            except InputError as exc:
                raise exc.within(f"variants[{i}]") from None
        with self._lock:
            if len(self._queue) >= self.max_queued:
                raise QueueFull(f"{len(self._queue)} simulation jobs are queued already (the limit)")
            job = Job(f"{next(self._ids):04d}-{uuid.uuid4().hex[:8]}", parsed)
            self.jobs[job.id] = job
            self._queue.append(job)
            self._trim()
            if self._worker is None or not self._worker.is_alive():
                self._stop = False
                self._worker = threading.Thread(target=self._work, name="kubetwin-serve-jobs", daemon=True)
                self._worker.start()
            self._lock.notify()
        self._changed()
        return job

    def _trim(self) -> None:
        finished = [j for j in self.jobs.values() if j.state in ("succeeded", "failed", "cancelled")]
        for j in finished[:max(0, len(finished) - self.keep)]:
            del self.jobs[j.id]

    def cancel(self, job_id: str) -> Job | None:
        with self._lock:
            job = self.jobs.get(job_id)
            if job is None:
                return None
            if job.state == "queued":
                self._queue.remove(job)
                job.state, job.finished = "cancelled", time.time()
            elif job.state == "running":
                job.cancel = True
        self._changed()
        return job

    def close(self) -> None:
        """Stop the worker (the app's shutdown): the running job is cancelled, queued ones stay
        queued for a worker a later submission starts."""
        with self._lock:
            self._stop = True
            for j in self.jobs.values():
                if j.state == "running":
                    j.cancel = True
            self._lock.notify_all()

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._stop:
                    self._lock.wait()
                if self._stop:
                    return
                job = self._queue.popleft()
                job.state, job.started = "running", time.time()
            self._changed()
            self._execute(job)
            with self._lock:
                job.finished = time.time()
                self._trim()
            self._changed()

    def _execute(self, job: Job) -> None:
        from ..sim.loop import simulate
        from ..sim.sweep import RunSpec, load_run

        def progress(done: int, total: int) -> None:
            if job.cancel:
                raise Cancelled()
            job.done, job.total = done, total

        try:
            results = []
            for k, variant in enumerate([None, *job.variants]):
                job.run = k
                sc = load_run(RunSpec(("file", list(self.files)), variant, None, self.version))
                result = simulate(sc, progress=progress)
                if variant is not None:
                    result.variant = variant.name
                    result.changes = variant.changes()
                results.append(result.to_json())
            job.results = results
            job.state = "succeeded"
        except Cancelled:
            job.state = "cancelled"
        except InputError as exc:
            job.state, job.error = "failed", str(exc)
        except Exception as exc:  # a bug: the job says so, the service keeps answering
            job.state, job.error = "failed", f"internal error: {type(exc).__name__}: {exc}"
