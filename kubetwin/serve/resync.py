"""Keeping ``kubetwin serve``'s model in step with a live cluster: ``--kubeconfig`` and
``--resync-interval``.

Every interval a thread reads the cluster with the snapshot reader (:mod:`kubetwin.live.read`),
writes it as a scenario folder (the same one ``kubetwin snapshot`` writes, replaced atomically),
loads a new :class:`~.cluster.ServedCluster` from it off the request path, and hands it to
``swap``. The application reads its cluster once per request, so a request in flight finishes on
the model it started with. A read that fails keeps the old model: a warning on stderr and
``kubetwin_serve_resync_failures_total`` in ``/metrics``; the service never stops for it.

The model is at most one interval plus one read old: that is the extender's staleness bound
(what kube-scheduler's informers would see within a watch event's delay). Pods bound through
the extender's ``bind`` verb into the old model are replaced by what the API server says.

Not an upstream module: kubetwin's own refresh of its serving state (the role
``client-go/tools/cache`` reflectors' relist plays for kube-scheduler's informer cache).
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..errors import InputError

if TYPE_CHECKING:
    from fastapi import FastAPI
    from prometheus_client import CollectorRegistry
    from prometheus_client.metrics_core import Metric

    from ..live.config import Cluster
    from .cluster import ServedCluster

#: the shortest interval accepted: a full LIST of every kind each time is not a watch
MIN_INTERVAL_S = 1.0


def parse_interval(text: str, flag: str = "--resync-interval") -> float:
    """``--resync-interval`` (a Go duration, ``30s``, ``5m``, ``1m30s``) in seconds."""
    from ..model.duration import DurationError, parse_go_duration

    try:
        seconds = parse_go_duration(text) / 1e9
    except DurationError as exc:
        raise InputError(exc.message, path=flag, fix='a duration such as "30s", "5m" or "1m30s"') from None
    if seconds < MIN_INTERVAL_S:
        raise InputError(f"resync interval {text!r} is below the minimum of {MIN_INTERVAL_S:g}s", path=flag,
                         fix="each resync LISTs every kind: give 1s or more (30s or more on a large cluster)")
    return seconds


def live_loader(clusters: tuple[str, ...], kubeconfig: str | None, context: str | None, in_cluster: bool,
                interval: str | None, kubelets_file: str | None,
                version: str | None) -> tuple[Callable[[], ServedCluster] | None, float | None]:
    """``serve``'s cluster options checked together: (a live cluster's loader or None for
    ``--cluster``, the resync interval in seconds or None). Every option is checked before any read."""
    live = bool(kubeconfig or context or in_cluster)
    if clusters and live:
        raise InputError("--cluster and a live cluster cannot be served together", path="--kubeconfig",
                         fix="give --cluster DIR, or --kubeconfig PATH [--context NAME]")
    if not clusters and not live:
        raise InputError("no cluster given", path="--cluster",
                         fix="kubetwin serve --cluster SNAPSHOT_DIR, or --kubeconfig PATH for a live cluster")
    seconds = parse_interval(interval) if interval is not None else None
    if seconds is not None and not live:
        raise InputError("only a live cluster is re-read: give --kubeconfig (or --context, --in-cluster)",
                         path="--resync-interval", fix="drop it for --cluster, or serve the live cluster")
    if not live:
        return None, None
    from ..live.config import load

    source = LiveSource(load(kubeconfig, context, in_cluster=in_cluster), kubelets_file, version)
    return source.read, seconds


@dataclass
class LiveSource:
    """A live cluster read into a scenario folder kubetwin owns (under a temporary folder)."""

    cluster: Cluster
    kubelets_file: str | None = None
    version: str | None = None
    configz: bool = True
    page_size: int | None = None
    _tmp: tempfile.TemporaryDirectory[str] = field(default_factory=lambda: tempfile.TemporaryDirectory(
        prefix="kubetwin-serve-"))
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _version_checked: bool = False

    @property
    def folder(self) -> Path:
        return Path(self._tmp.name) / "snapshot"

    def read(self) -> ServedCluster:
        """The cluster as it is now, as a served cluster (every object checked, as at start)."""
        from ..live.client import Client
        from ..live.read import read_cluster
        from ..model.features import gates_for
        from ..sim.snapshot import write
        from .cluster import load_cluster
        from .dra_views import served_objects

        comparison = gates_for(self.version).enabled("TaintTolerationComparisonOperators")
        client = Client(self.cluster) if self.page_size is None else Client(self.cluster, page_size=self.page_size)
        if not self._version_checked:
            from ..live.read import check_server_version

            check_server_version(client, self.version)
            self._version_checked = True
        snap = read_cluster(client, configz=self.configz, comparison_operators=comparison)
        with self._lock:  # one writer of the folder at a time; the folder is replaced whole
            write(snap, self.folder)
            served = load_cluster([str(self.folder)], kubelets_file=self.kubelets_file, version=self.version)
        served_objects(served)
        return served

    def close(self) -> None:
        self._tmp.cleanup()


@dataclass
class Resync:
    """The periodic reload: ``load`` builds a model, ``swap`` puts it in service."""

    load: Callable[[], ServedCluster]
    swap: Callable[[ServedCluster], None]
    interval: float
    clock: Callable[[], float] = time.time
    #: when the model in service was read (``clock`` seconds)
    loaded_at: float = 0.0
    resyncs: int = 0
    failures: int = 0
    last_error: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        self.loaded_at = self.clock()

    def age(self) -> float:
        """Seconds since the model in service was read."""
        return max(0.0, self.clock() - self.loaded_at)

    def once(self) -> bool:
        """One resync: True when a new model was swapped in; a failure keeps the old one."""
        started = self.clock()
        try:
            new = self.load()
        except Exception as exc:  # noqa: BLE001 - any failure keeps the old model, the service goes on
            self.failures += 1
            self.last_error = str(exc) if isinstance(exc, InputError) else f"{type(exc).__name__}: {exc}"
            print(f"warning: kubetwin serve: resync failed, keeping the model read {self.age():.0f}s ago: "
                  f"{self.last_error}", file=sys.stderr, flush=True)
            return False
        self.swap(new)
        self.loaded_at, self.resyncs, self.last_error = started, self.resyncs + 1, None
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.once()

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="kubetwin-serve-resync", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def health(self) -> dict[str, object]:
        """What ``/healthz`` adds: the model's age and the resync counts."""
        return {"modelAgeSeconds": round(self.age(), 3), "resyncIntervalSeconds": self.interval,
                "resyncs": self.resyncs, "resyncFailures": self.failures, "lastResyncError": self.last_error}

    def register(self, registry: CollectorRegistry) -> None:
        """The resync's series in the app's ``/metrics`` registry (read at scrape time)."""
        registry.register(_Collector(self))


def attach(app: FastAPI, load: Callable[[], ServedCluster], interval: float) -> Resync:
    """Make ``app`` (:func:`.app.create_app`'s) follow ``load`` every ``interval`` seconds; the
    thread runs while the app does (its lifespan)."""
    resync = Resync(load, app.state.swap_cluster, interval)
    resync.register(app.state.metrics.registry)
    app.state.resync = resync
    return resync


class _Collector:
    """prometheus_client's custom-collector protocol over a :class:`Resync`."""

    def __init__(self, resync: Resync):
        self.resync = resync

    def describe(self) -> list[Metric]:
        return self.collect()

    def collect(self) -> list[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        r = self.resync
        return [GaugeMetricFamily("kubetwin_serve_model_age_seconds",
                                  "Seconds since the served model was read from the cluster.", value=r.age()),
                CounterMetricFamily("kubetwin_serve_resyncs", "Models read from the live cluster and swapped in.",
                                    value=r.resyncs),
                CounterMetricFamily("kubetwin_serve_resync_failures",
                                    "Resyncs that failed (the old model was kept).", value=r.failures)]
