"""The HTTP application of ``kubetwin serve`` (FastAPI on Starlette): its routes, error answers
and the OpenAPI 3 document at ``/openapi.json``.

Routes (all JSON):

    GET  /healthz                          liveness (no token needed)
    GET  /metrics                          Prometheus text: the service's and the kubelets' metrics
    GET  /api/v1/cluster                   overview: nodes, pods, kubelet classes
    GET  /api/v1/nodes/{name}              a node: its kubelet's NUMA map, pods, containers, devices
    GET  /api/v1/pods/{namespace}/{name}   a pod's drill-down (scheduler plugins per node, kubelet, cgroups)
    GET  /api/v1/pending                   pending pods with the scheduler's message
    POST /api/v1/schedule                  what-if: one explained scheduling cycle + each node's kubelet verdict
    POST /api/v1/admit                     what-if: pods admitted on a copy of a node's kubelet
    POST /api/v1/explain                   what-if: a pod's QoS, cgroup and CRI values on a node
    POST /api/v1/dra                       what-if: claims (or a pod's claims) allocated on a node (``dra allocate``/``explain``)
    POST /api/v1/runtime                   what-if: pods created on a node below its kubelet (``kubetwin runtime``)
    POST /api/v1/simulations               a simulation job (202); GET .../{id} its status and results; DELETE cancels
    POST /extender/{filter,prioritize,preempt,bind}   the kube-scheduler extender (:mod:`.extender`)
    /ui/                                   the web UI (``kubetwin/serve/static``, docs/serve-ui.md); / redirects there

Every body is read by kubetwin's strict readers: a malformed one is a 4xx whose JSON names the
field path (``InputError``); the limits of :mod:`.limits` apply to every request.

Not an upstream module: kubetwin's own service.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, MutableMapping

import msgspec
from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, Response
from starlette.requests import ClientDisconnect

from ..errors import InputError
from ..model.loader import parse_json
from . import schemas as S
from .jobs import JobQueue, QueueFull
from .limits import BodyLimit, ServeLimits, in_data_dir, token_matches
from .metrics import ServiceMetrics

if TYPE_CHECKING:
    from .cluster import ServedCluster

STATIC = Path(__file__).parent / "static"
_ENCODE = msgspec.json.Encoder(enc_hook=str).encode


class Busy(Exception):
    """Every worker is busy, or the request's work is over its time limit."""


class HTTPError(Exception):
    def __init__(self, status: int, message: str, fix: str | None = None):
        super().__init__(message)
        self.status, self.message, self.fix = status, message, fix


def respond(data: Any, status: int = 200) -> Response:
    return Response(_ENCODE(data), status_code=status, media_type="application/json")


def error_body(exc: InputError) -> dict[str, Any]:
    return {"error": exc.message, "path": exc.path, "file": exc.file, "fix": exc.fix, "message": str(exc)}


def needs_token(path: str) -> bool:
    """Every route but ``/healthz`` and the web UI's static files (they hold no cluster data: the
    page asks for the token when the API answers 401)."""
    return not (path == "/healthz" or path == "/" or path == "/ui" or path.startswith("/ui/"))


class Guard:
    """ASGI middleware: the bearer token (not for ``/healthz`` and the UI's files), then the request's metrics."""

    def __init__(self, app: Any, token: str | None, metrics: ServiceMetrics):
        self.app, self.token, self.metrics = app, token, metrics

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def tracked(msg: MutableMapping[str, Any]) -> None:
            nonlocal status
            if msg["type"] == "http.response.start":
                status = msg["status"]
            await send(msg)

        header = None
        for k, v in scope.get("headers", ()):
            if k == b"authorization":
                header = v.decode("latin-1")
        if needs_token(scope["path"]) and not token_matches(self.token, header):
            r = respond({"error": "missing or wrong bearer token",
                         "fix": "send Authorization: Bearer TOKEN (the --token-file's)"}, 401)
            r.headers["WWW-Authenticate"] = "Bearer"
            await r(scope, receive, tracked)
        else:
            await self.app(scope, receive, tracked)
        route = scope.get("route")
        self.metrics.observe(scope["method"], getattr(route, "path", "unmatched"), status,
                             time.perf_counter() - start)


class Worker:
    """Runs a request's work in a thread: at most ``limit`` at once (a timed-out one still counts
    until it finishes), each awaited no longer than ``timeout`` seconds."""

    def __init__(self, limit: int, timeout: float):
        self.limit, self.timeout = limit, timeout
        self.running = 0
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _done(self, _: Any) -> None:
        with self._lock:
            self.running -= 1

    def shutdown(self) -> None:
        """Stop taking work (the app's shutdown); a later request starts a new pool."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        with self._lock:
            if self.running >= self.limit:
                raise Busy(f"all {self.limit} workers are busy")
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.limit, thread_name_prefix="kubetwin-serve")
            self.running += 1
            try:
                fut = self._pool.submit(fn, *args)
            except BaseException:
                self.running -= 1
                raise
        fut.add_done_callback(self._done)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(fut), self.timeout)
        except asyncio.TimeoutError:
            raise Busy(f"the request took longer than {self.timeout:g}s (the per-request time limit)") from None


def create_app(cluster: ServedCluster, limits: ServeLimits | None = None) -> FastAPI:
    """The application over a loaded cluster."""
    limits = limits or ServeLimits()
    metrics = ServiceMetrics()
    worker = Worker(limits.max_concurrent, limits.request_timeout)

    def job_counts(counts: dict[str, int]) -> None:
        for state, n in counts.items():
            metrics.jobs.labels(state).set(n)

    settings = cluster.scenario.settings
    jobs = JobQueue(cluster.sources, settings.kubernetes_version if settings.version_given else None,
                    on_change=job_counts)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if app.state.resync is not None:
            app.state.resync.start()
        try:
            yield
        finally:
            if app.state.resync is not None:
                app.state.resync.stop()
            jobs.close()
            worker.shutdown()

    app = FastAPI(title="kubetwin serve", version="v1", lifespan=lifespan,
                  description="kubetwin's model of a cluster — scheduler, kubelets, NUMA, DRA — over HTTP, "
                              "and a kubelet-aware kube-scheduler extender.",
                  docs_url=None, redoc_url=None)
    app.state.cluster, app.state.limits, app.state.metrics, app.state.jobs = cluster, limits, metrics, jobs
    app.state.resync = None  # a .resync.Resync when the model follows a live cluster (attach_resync)

    def swap_cluster(new: ServedCluster) -> None:
        """Put ``new`` in service: each request reads ``cluster`` once, so one in flight keeps its model."""
        nonlocal cluster
        cluster = new
        app.state.cluster = new

    app.state.swap_cluster = swap_cluster

    async def read_json(request: Request) -> Any:
        try:
            raw = await asyncio.wait_for(request.body(), limits.request_timeout)
        except asyncio.TimeoutError:
            raise HTTPError(408, f"the request body did not arrive within {limits.request_timeout:g}s") from None
        except ClientDisconnect:  # nobody is left to answer; the status is for the metrics
            raise HTTPError(400, "the client went away before sending the whole body") from None
        if not raw:
            raise InputError("Required value: a JSON body")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("the body is not UTF-8 text") from None
        return parse_json(text, "request body")

    def body_object(data: Any, fields: tuple[str, ...], required: tuple[str, ...] = ()) -> dict[str, Any]:
        from ..model.strict import unknown_key_error

        if not isinstance(data, dict):
            raise InputError("expected a JSON object")
        for k in data:
            if k not in fields:
                raise unknown_key_error(k, fields, path=k)
        for k in required:
            if data.get(k) is None:
                raise InputError(f"Required value: {k}", path=k)
        return data

    @app.exception_handler(InputError)
    async def input_error(_: Request, exc: InputError) -> Response:
        return respond(error_body(exc), 400)

    @app.exception_handler(HTTPError)
    async def http_error(_: Request, exc: HTTPError) -> Response:
        return respond({"error": exc.message, "fix": exc.fix}, exc.status)

    @app.exception_handler(LookupError)
    async def not_found(_: Request, exc: LookupError) -> Response:
        return respond({"error": str(exc.args[0]) if exc.args else "not found"}, 404)

    @app.exception_handler(Busy)
    async def busy(_: Request, exc: Busy) -> Response:
        r = respond({"error": str(exc), "fix": "retry later"}, 503)
        r.headers["Retry-After"] = "1"
        return r

    @app.exception_handler(QueueFull)
    async def queue_full(_: Request, exc: QueueFull) -> Response:
        r = respond({"error": str(exc), "fix": "wait for a job to finish, or cancel one"}, 429)
        r.headers["Retry-After"] = "5"
        return r

    @app.exception_handler(Exception)
    async def internal(_: Request, exc: Exception) -> Response:
        return respond({"error": f"internal error: {type(exc).__name__}: {exc}",
                        "fix": "a kubetwin bug: please report it with the request"}, 500)

    def writes_allowed() -> None:
        if not limits.allow_writes:
            raise HTTPError(403, "kubetwin serve is read-only", "start it with --allow-writes")

    # --- service -------------------------------------------------------------------------
    @app.get("/healthz", responses=S.responses({"type": "object"}))
    async def healthz() -> Response:
        return respond({"ok": True} | (app.state.resync.health() if app.state.resync is not None else {}))

    @app.get("/metrics", response_class=PlainTextResponse,
             responses={200: {"description": "Prometheus text format", "content": {"text/plain": {}}}})
    async def prometheus() -> Response:
        text = await worker.run(metrics.render, cluster)
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    # --- views ---------------------------------------------------------------------------
    from . import views

    @app.get("/api/v1/cluster", responses=S.responses(S.OBJECT))
    async def get_cluster() -> Response:
        return respond(await worker.run(views.overview, cluster))

    @app.get("/api/v1/nodes/{name}", responses=S.responses(S.OBJECT, 404))
    async def get_node(name: str) -> Response:
        return respond(await worker.run(views.node_detail, cluster, name))

    @app.get("/api/v1/pods/{namespace}/{name}", responses=S.responses(S.OBJECT, 404))
    async def get_pod(namespace: str, name: str) -> Response:
        return respond(await worker.run(views.pod_detail, cluster, namespace, name))

    @app.get("/api/v1/pending", responses=S.responses(S.OBJECT))
    async def get_pending() -> Response:
        return respond(await worker.run(views.pending, cluster))

    # --- what-if -------------------------------------------------------------------------
    from .extender import decode_pod

    @app.post("/api/v1/schedule", openapi_extra=S.body(S.SCHEDULE_REQUEST),
              responses=S.responses(S.OBJECT, 400, 408, 413))
    async def post_schedule(request: Request) -> Response:
        data = body_object(await read_json(request), ("pod", "seed", "config"), ("pod",))
        seed = data.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise InputError("expected an integer", path="seed")
        config = str(in_data_dir(limits.data_dir, data["config"], "config")) if "config" in data else None

        def run() -> Any:
            pod, served = decode_pod(data["pod"], "pod"), cluster
            if config is None:
                return views.what_if_schedule(served, pod, seed=seed)
            from ..scheduler.run import run_cycle

            return {"scheduling": run_cycle(served.inputs(), pod, served.gates, config_path=config,
                                            seed=seed).to_json()}
        return respond(await worker.run(run))

    @app.post("/api/v1/admit", openapi_extra=S.body(S.ADMIT_REQUEST),
              responses=S.responses(S.OBJECT, 400, 404, 408, 413))
    async def post_admit(request: Request) -> Response:
        data = body_object(await read_json(request), ("node", "pods"), ("node", "pods"))
        if not isinstance(data["node"], str):
            raise InputError("expected a node name (a string)", path="node")
        if not isinstance(data["pods"], list):
            raise InputError("expected an array of Pods", path="pods")

        def run() -> Any:
            pods = [decode_pod(p, f"pods[{i}]") for i, p in enumerate(data["pods"])]
            return views.what_if_admit(cluster, data["node"], pods)
        return respond(await worker.run(run))

    @app.post("/api/v1/explain", openapi_extra=S.body(S.EXPLAIN_REQUEST),
              responses=S.responses(S.OBJECT, 400, 404, 408, 413))
    async def post_explain(request: Request) -> Response:
        data = body_object(await read_json(request), ("node", "pod"), ("node", "pod"))
        if not isinstance(data["node"], str):
            raise InputError("expected a node name (a string)", path="node")
        return respond(await worker.run(lambda: views.what_if_explain(cluster, data["node"],
                                                                      decode_pod(data["pod"], "pod"))))

    @app.post("/api/v1/dra", openapi_extra=S.body(S.DRA_REQUEST),
              responses=S.responses(S.OBJECT, 400, 404, 408, 413))
    async def post_dra(request: Request) -> Response:
        from .dra_views import FIELDS, what_if_dra

        data = body_object(await read_json(request), FIELDS, ("node",))
        if not isinstance(data["node"], str):
            raise InputError("expected a node name (a string)", path="node")
        if (data.get("pod") is None) == (data.get("claims") is None):
            raise InputError("give either pod or claims", path="claims" if data.get("pod") is None else "pod")
        seed = data.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise InputError("expected an integer", path="seed")
        if not isinstance(data.get("explain", False), bool):
            raise InputError("expected a boolean", path="explain")

        def run() -> Any:
            pod = decode_pod(data["pod"], "pod") if data.get("pod") is not None else None
            return what_if_dra(cluster, data, pod)
        return respond(await worker.run(run))

    @app.post("/api/v1/runtime", openapi_extra=S.body(S.RUNTIME_REQUEST),
              responses=S.responses(S.OBJECT, 400, 404, 408, 413))
    async def post_runtime(request: Request) -> Response:
        from .runtime_views import FIELDS, what_if_runtime

        data = body_object(await read_json(request), FIELDS, ("node",))
        return respond(await worker.run(what_if_runtime, cluster, data, limits.data_dir))

    # --- simulations ---------------------------------------------------------------------
    @app.post("/api/v1/simulations", status_code=202, openapi_extra=S.body(S.SIMULATION_REQUEST),
              responses=S.responses(S.JOB, 400, 408, 413, 429, ok=202))
    async def post_simulation(request: Request) -> Response:
        data = body_object(await read_json(request), ("variants",))
        variants = data.get("variants") or []
        if not isinstance(variants, list):
            raise InputError("expected an array of variants", path="variants")
        return respond(jobs.submit(variants).status(), 202)

    @app.get("/api/v1/simulations", responses=S.responses({"type": "array", "items": S.JOB}))
    async def list_simulations() -> Response:
        return respond([j.status() for j in list(jobs.jobs.values())])

    @app.get("/api/v1/simulations/{job_id}", responses=S.responses(S.JOB, 404))
    async def get_simulation(job_id: str) -> Response:
        job = jobs.jobs.get(job_id)
        if job is None:
            raise LookupError(f"no simulation job {job_id!r}")
        return respond({**job.status(), "results": job.results})

    @app.delete("/api/v1/simulations/{job_id}", responses=S.responses(S.JOB, 404))
    async def cancel_simulation(job_id: str) -> Response:
        job = jobs.cancel(job_id)
        if job is None:
            raise LookupError(f"no simulation job {job_id!r}")
        return respond(job.status())

    # --- the extender --------------------------------------------------------------------
    from . import extender

    @app.post("/extender/filter", openapi_extra=S.body(S.EXTENDER_ARGS),
              responses=S.responses(S.EXTENDER_FILTER_RESULT, 400, 408, 413))
    async def extender_filter(request: Request) -> Response:
        data = await read_json(request)
        result = await worker.run(extender.filter_nodes, cluster, data)
        metrics.extender_nodes.labels("passed").inc(len(result["NodeNames"] if result["NodeNames"] is not None
                                                        else result["Nodes"]["items"]))
        metrics.extender_nodes.labels("failed").inc(len(result["FailedNodes"]))
        metrics.extender_nodes.labels("unresolvable").inc(len(result["FailedAndUnresolvableNodes"]))
        return respond(result)

    @app.post("/extender/prioritize", openapi_extra=S.body(S.EXTENDER_ARGS),
              responses=S.responses(S.HOST_PRIORITY_LIST, 400, 408, 413))
    async def extender_prioritize(request: Request) -> Response:
        return respond(await worker.run(extender.prioritize_nodes, cluster, await read_json(request)))

    @app.post("/extender/preempt", openapi_extra=S.body(S.EXTENDER_PREEMPTION_ARGS),
              responses=S.responses(S.EXTENDER_PREEMPTION_RESULT, 400, 408, 413))
    async def extender_preempt(request: Request) -> Response:
        return respond(await worker.run(extender.preempt, cluster, await read_json(request)))

    @app.post("/extender/bind", openapi_extra=S.body(S.EXTENDER_BINDING_ARGS),
              responses=S.responses(S.EXTENDER_BINDING_RESULT, 400, 403, 404, 408, 413))
    async def extender_bind(request: Request) -> Response:
        data = await read_json(request)
        status, result = await worker.run(lambda: extender.bind(cluster, data, allow_writes=limits.allow_writes))
        return respond(result, status)

    if STATIC.is_dir():
        from fastapi.responses import RedirectResponse
        from fastapi.staticfiles import StaticFiles

        @app.get("/", include_in_schema=False)
        async def root() -> Response:
            return RedirectResponse("ui/")

        app.mount("/ui", StaticFiles(directory=STATIC, html=True), name="ui")

    # outermost first: the token and the request metrics, then the body limit before any route reads it
    app.add_middleware(BodyLimit, max_body=limits.max_body)
    app.add_middleware(Guard, token=limits.token, metrics=metrics)
    return app
