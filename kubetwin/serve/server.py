"""Running the application: uvicorn on one address, its own access log off (the service's
``/metrics`` count requests), a clear error when the address is taken.

Not an upstream module: kubetwin's own service runner."""

from __future__ import annotations

import socket
import sys
from typing import TYPE_CHECKING, Callable

from ..errors import InputError

if TYPE_CHECKING:
    from .cluster import ServedCluster
    from .limits import ServeLimits


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the server starts (so a taken port is an InputError)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise InputError(f"cannot resolve {host!r}: {exc.strerror}", path="--host") from None
    family, _, _, _, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}", path="--port",
                         fix="pick a free port (--port 0 picks one)") from None
    sock.listen(128)
    return sock


def summary(cluster: ServedCluster) -> str:
    models = cluster.kubelets
    return (f"{len(cluster.nodes)} nodes ({sum(1 for _ in models.node_names)} with a modelled kubelet, "
            f"{models.class_count()} kubelet states), {sum(len(v) for v in cluster.bound.values())} running pods, "
            f"{len(cluster.pending)} pending")


def run(cluster: ServedCluster, limits: ServeLimits, host: str, port: int,
        resync: tuple[Callable[[], ServedCluster], float] | None = None) -> None:
    """Serve until interrupted; ``resync`` = (a loader, seconds): the model reloaded that often (:mod:`.resync`)."""
    import uvicorn

    from .app import create_app

    sock = listen(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    app = create_app(cluster, limits)
    if resync is not None:
        from .resync import attach

        attach(app, *resync)
    print(f"kubetwin serve: {summary(cluster)}; listening on http://{bound_host}:{bound_port}"
          f"{' (read-only)' if not limits.allow_writes else ''}", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_keep_alive=5,
                            limit_concurrency=max(64, limits.max_concurrent * 8))
    uvicorn.Server(config).run(sockets=[sock])
