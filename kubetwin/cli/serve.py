"""``kubetwin serve``: a loaded cluster over HTTP — the what-if API, the kubelet-aware
kube-scheduler extender, simulations as jobs, ``/metrics`` (:mod:`kubetwin.serve`).

Not an upstream module: kubetwin's own command; the extender protocol is kube-scheduler's
(``pkg/scheduler/extender.go``)."""

from __future__ import annotations

import click

from .common import emit_data, kubernetes_version, output_option


@click.command("serve")
@click.option("--cluster", "clusters", multiple=True, metavar="DIR|FILE",
              help="A scenario folder from kubetwin snapshot, or the files simulate reads (repeatable).")
@click.option("--kubeconfig", metavar="PATH", help="Serve this live cluster instead (read-only, as kubetwin snapshot reads it).")
@click.option("--context", metavar="NAME", help="The kubeconfig context to use (default: its current context).")
@click.option("--in-cluster", "in_cluster", is_flag=True, help="Serve the live cluster of the pod's service account.")
@click.option("--resync-interval", "resync_interval", default=None, metavar="DURATION",
              help="Re-read the live cluster this often (30s, 5m) and swap the new model in (default: never).")
@click.option("--kubelets", "kubelets", default=None, metavar="KUBELETS.yaml",
              help="NodeKubelets: the machine and KubeletConfiguration of nodes, by label selector (docs/extender.md).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True, help="Port to listen on.")
@click.option("--token-file", "token_file", default=None, metavar="FILE",
              help="Require Authorization: Bearer TOKEN with the token in FILE.")
@click.option("--allow-writes", is_flag=True, help="Let the extender's bind verb change the served cluster.")
@click.option("--data-dir", "data_dir", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="The only folder requests may name files in (none by default).")
@click.option("--max-body", "max_body", type=click.IntRange(1), default=64 << 20, show_default=True, metavar="BYTES",
              help="Largest request body.")
@click.option("--request-timeout", "request_timeout", type=click.FloatRange(0.001), default=30.0, show_default=True,
              metavar="SECONDS", help="Longest time a request's work may take (then 503).")
@click.option("--max-concurrent", "max_concurrent", type=click.IntRange(1, 256), default=8, show_default=True,
              help="Requests worked on at once (then 503).")
@click.option("--check", is_flag=True, help="Read and check the cluster and --kubelets, print what would be served, exit.")
@output_option()
@click.pass_context
def serve(ctx: click.Context, clusters: tuple[str, ...], kubeconfig: str | None, context: str | None,
          in_cluster: bool, resync_interval: str | None, kubelets: str | None, host: str, port: int,
          token_file: str | None, allow_writes: bool, data_dir: str | None, max_body: int, request_timeout: float,
          max_concurrent: int, check: bool, output: str) -> None:
    """Serve a cluster over HTTP until interrupted: /api/v1 (what-if schedule, admit, explain,
    simulations), /extender (a kube-scheduler extender answering from each node's kubelet),
    /metrics, /openapi.json. Read-only and on 127.0.0.1 unless told otherwise."""
    from pathlib import Path

    from ..errors import InputError

    if output != "table" and not check:
        raise click.UsageError("-o is the format of what --check prints: give --check", ctx=ctx)
    from ..serve.cluster import load_cluster
    from ..serve.limits import ServeLimits, read_token

    token = read_token(token_file) if token_file else None
    root = None
    if data_dir is not None:
        root = Path(data_dir)
        if not root.is_dir():
            raise InputError("no such folder", file=data_dir, path="--data-dir")
    from ..serve.resync import live_loader

    loader, interval = live_loader(clusters, kubeconfig, context, in_cluster, resync_interval, kubelets,
                                   kubernetes_version(ctx))
    if loader is not None:
        cluster = loader()  # the first read: a failure here is an error, later ones keep the model
    else:
        cluster = load_cluster(list(clusters), kubelets_file=kubelets, version=kubernetes_version(ctx))
        from ..serve.dra_views import served_objects

        served_objects(cluster)  # DRA objects read now: a bad one is refused at start, not in a drill-down
    limits = ServeLimits(max_body=max_body, request_timeout=request_timeout, max_concurrent=max_concurrent,
                         token=token, data_dir=root, allow_writes=allow_writes)
    from ..serve.server import run, summary

    if check:
        if output == "table":
            click.echo(f"kubetwin serve: {summary(cluster)}")
        else:
            from ..serve.views import overview

            data = overview(cluster)
            emit_data({k: v for k, v in data.items() if k != "nodes"} | {"nodes": len(data["nodes"]),
                      "kubeletModelledNodes": sum(1 for n in data["nodes"] if n["kubeletModelled"])}, output)
        return
    run(cluster, limits, host, port, (loader, interval) if loader is not None and interval is not None else None)
