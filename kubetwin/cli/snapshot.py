"""``kubetwin snapshot``: a cluster in — kubectl dumps (files, folders) merged into one cluster, or
a live cluster read through a kubeconfig (``kubetwin/live/``) — written as a scenario folder that
``simulate``, ``schedule`` and ``dra`` read (``kubetwin/sim/snapshot.py``). kubetwin's own command."""

from __future__ import annotations

import click

from .common import kubernetes_version


@click.command("snapshot")
@click.option("-f", "--filename", "filenames", multiple=True, metavar="DUMP",
              help="A kubectl get -o yaml|json dump or a folder of them (repeatable; also as arguments).")
@click.option("-o", "--output-dir", "out", required=True, metavar="OUTDIR",
              help="The scenario folder to write (an earlier snapshot there is replaced).")
@click.option("--kubeconfig", metavar="PATH",
              help="Read this live cluster (read-only); default with no dump: $KUBECONFIG, ~/.kube/config, "
                   "else the in-cluster service account.")
@click.option("--context", metavar="NAME", help="The kubeconfig context to use (default: its current context).")
@click.option("--in-cluster", is_flag=True, help="Use the pod's service account, even if a kubeconfig exists.")
@click.option("-n", "--namespace", metavar="NS",
              help="Read namespaced objects of this namespace only (default: all namespaces).")
@click.option("-A", "--all-namespaces", is_flag=True, help="Read every namespace (the default).")
@click.option("--no-configz", is_flag=True,
              help="Do not read each node's kubelet configuration (GET nodes/NAME/proxy/configz).")
@click.option("--per-node", is_flag=True,
              help="Also write nodes/NAME/node.json and nodes/NAME/pods.json (the pods bound to it) for each node.")
@click.option("--timings", is_flag=True, help="Print wall and CPU time per phase on stderr.")
@click.argument("dumps", nargs=-1, metavar="[DUMP|DIR]...")
@click.pass_context
def snapshot(ctx: click.Context, filenames: tuple[str, ...], out: str, kubeconfig: str | None,
             context: str | None, in_cluster: bool, namespace: str | None, all_namespaces: bool,
             no_configz: bool, per_node: bool, timings: bool, dumps: tuple[str, ...]) -> None:
    """Take ONE cluster — kubectl dumps merged, or a live cluster — and write it as a scenario folder.

    From dumps: every object is strictly decoded; DaemonSets get a pod per eligible node that has
    none; Secrets, ConfigMaps, Events and other kinds without a bearing on resources are
    left out with one note per kind. With no dump, the live cluster of --kubeconfig / $KUBECONFIG /
    ~/.kube/config (or the in-cluster service account) is read, read-only: the permissions needed
    are in docs/snapshot-rbac.yaml. Then: kubetwin simulate OUTDIR/scenario.yaml, or
    kubetwin schedule --nodes OUTDIR/nodes.json --pods OUTDIR/pods.json -f OUTDIR/objects.json POD.yaml.
    """
    from ..errors import InputError
    from ..model.features import gates_for
    from ..sim.snapshot import Phases, load, write

    sources = (*filenames, *dumps)
    live = bool(kubeconfig or context or in_cluster)
    if sources and live:
        raise InputError("dumps and a live cluster cannot be read together", path="--kubeconfig",
                         fix="snapshot the cluster, or the dumps")
    if namespace is not None and all_namespaces:
        raise InputError("--namespace and --all-namespaces exclude each other", path="--namespace",
                         fix="give one of them")
    if sources and (namespace is not None or all_namespaces or no_configz):
        raise InputError("--namespace, --all-namespaces and --no-configz apply to a live cluster only",
                         path="--namespace", fix="drop them, or give no dump")
    if namespace is not None and not namespace:
        raise InputError("empty namespace", path="--namespace", fix="name a namespace, or give -A")
    gates = gates_for(kubernetes_version(ctx))
    comparison = gates.enabled("TaintTolerationComparisonOperators")
    phases = Phases()
    if sources:
        snap = load(sources, comparison_operators=comparison, phases=phases)
    else:
        from ..live.client import Client
        from ..live.config import load as load_cluster
        from ..live.read import read_cluster

        def progress(msg: str) -> None:
            click.echo(f"snapshot: {msg}", err=True)

        cluster = load_cluster(kubeconfig, context, in_cluster=in_cluster)
        progress(f"reading {cluster.server} ({cluster.name}), read-only")
        client = Client(cluster, progress=progress)
        from ..live.read import check_server_version

        check_server_version(client, kubernetes_version(ctx))
        snap = read_cluster(client, namespace=namespace, configz=not no_configz,
                            comparison_operators=comparison, progress=progress)
        phases.mark(f"read ({client.requests} requests)")
    dest = write(snap, out, phases=phases, per_node=per_node)
    for note in snap.notes():
        click.echo(f"note: {note}", err=True)
    if timings:
        for line in phases.lines():
            click.echo(f"time: {line}", err=True)
    click.echo(f"{dest}: {snap.summary()}")
