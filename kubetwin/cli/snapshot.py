"""``kubetwin snapshot``: kubectl dumps (files, folders) merged into one cluster, written as a
scenario folder that ``simulate``, ``schedule`` and ``dra`` read (``kubetwin/sim/snapshot.py``).
kubetwin's own command."""

from __future__ import annotations

import click

from .common import kubernetes_version


@click.command("snapshot")
@click.option("-f", "--filename", "filenames", multiple=True, metavar="DUMP",
              help="A kubectl get -o yaml|json dump or a folder of them (repeatable; also as arguments).")
@click.option("-o", "--output-dir", "out", required=True, metavar="OUTDIR",
              help="The scenario folder to write (an earlier snapshot there is replaced).")
@click.argument("dumps", nargs=-1, metavar="[DUMP|DIR]...")
@click.pass_context
def snapshot(ctx: click.Context, filenames: tuple[str, ...], out: str, dumps: tuple[str, ...]) -> None:
    """Merge kubectl dumps into ONE cluster and write it as a scenario folder.

    Every object is strictly decoded; DaemonSets get a pod per eligible node that has none;
    Secrets, ConfigMaps, Services, Events and other kinds without a bearing on resources are
    left out with one note per kind. Then: kubetwin simulate OUTDIR/scenario.yaml, or
    kubetwin schedule --nodes OUTDIR/nodes.json --pods OUTDIR/pods.json -f OUTDIR/objects.json POD.yaml.
    """
    from ..errors import InputError
    from ..model.features import gates_for
    from ..sim.snapshot import load, write

    sources = (*filenames, *dumps)
    if not sources:
        raise InputError("no dump given", path="-f", fix="kubetwin snapshot -f cluster.yaml -o OUTDIR")
    gates = gates_for(kubernetes_version(ctx))
    snap = load(sources, comparison_operators=gates.enabled("TaintTolerationComparisonOperators"))
    dest = write(snap, out)
    for note in snap.notes():
        click.echo(f"note: {note}", err=True)
    click.echo(f"{dest}: {snap.summary()}")
