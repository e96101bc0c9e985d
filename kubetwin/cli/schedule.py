"""``kubetwin schedule``: one kube-scheduler cycle for a pod, or one plugin alone.

Not an upstream module: kubetwin's own command; the cycle is :mod:`kubetwin.scheduler`'s
(``pkg/scheduler``)."""

from __future__ import annotations

import click

from .common import emit_data, kubernetes_version, output_option, rejected


@click.command("schedule")
@click.option("--nodes", "nodes", multiple=True, required=True, metavar="NODES.yaml", help="Node objects (candidates).")
@click.option("--pods", "pods", multiple=True, metavar="RUNNING.yaml", help="Pods already running (spec.nodeName set).")
@click.option("-f", "objects", multiple=True, metavar="OBJECTS.yaml",
              help="Other objects: Namespaces, Services, PriorityClasses, DeviceClasses, ResourceSlices, "
                   "NodeResourceTopologies, PodDisruptionBudgets, LimitRanges, ResourceQuotas.")
@click.option("--config", "config", default=None, metavar="CONFIG.yaml",
              help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1); default profile otherwise.")
@click.option("--plugin", "plugin", default=None, metavar="NAME", help="Run this plugin alone (PreFilter, Filter, Score).")
@click.option("--plugin-args", "plugin_args", default=None, metavar="ARGS.yaml", help="The plugin's args (<Plugin>Args).")
@click.option("--feature-gates", "feature_gates", default=None, metavar="A=true,B=false", help="Scheduler feature gates.")
@click.option("--admit", is_flag=True, help="Run the admission controllers (Priority, LimitRange, ResourceQuota) first.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for the tie-break among top-scoring nodes.")
@output_option()
@click.argument("pod_file", metavar="POD.yaml")
@click.pass_context
def schedule(ctx: click.Context, nodes, pods, objects, config, plugin, plugin_args, feature_gates, admit, seed,
             output, pod_file) -> None:
    """One scheduling cycle for the pod in POD.yaml, explained per node and plugin.

    -f names the other objects of the cluster (as kubectl's -f names objects). An unschedulable
    pod is an answer: exit status 0, or 3 with --fail-on-reject.
    """
    from ..model.features import gates_for, parse_feature_gates_flag
    from ..scheduler.inputs import load_cluster, load_pod

    overrides = parse_feature_gates_flag(feature_gates) if feature_gates else None
    gates = gates_for(kubernetes_version(ctx), overrides, path="--feature-gates")
    cluster = load_cluster(nodes, pods, objects)
    pod = load_pod(pod_file)
    if plugin is not None:
        from ..scheduler.run import run_single_plugin

        result = run_single_plugin(plugin, plugin_args, cluster, pod, gates)
        data = result.to_json()
        if output == "table":
            _single_table(plugin, data)
        else:
            emit_data(data, output)
        if data["filter"] and all(v.get("code") not in ("Success", "Skip") for v in data["filter"].values()):
            rejected(f"pod {pod.key}: {plugin} rejects every node")
        return
    from ..scheduler.run import run_cycle

    outcome = run_cycle(cluster, pod, gates, config_path=config, admit=admit, seed=seed)
    if output == "table":
        _cycle_table(outcome)
    else:
        emit_data(outcome.to_json(), output)
    if outcome.node is None:
        rejected(f"pod {pod.key}: {outcome.message}")


def _single_table(plugin: str, data: dict) -> None:
    from rich.table import Table

    from .common import console

    table = Table(title=f"{plugin}", show_lines=False)
    table.add_column("node")
    table.add_column("filter")
    table.add_column("reasons")
    table.add_column("score", justify="right")
    scores = data.get("scores") or {}
    for node, verdict in data["filter"].items():
        table.add_row(node, verdict["code"], "; ".join(verdict.get("reasons", [])),
                      str(scores[node]) if node in scores else "")
    console().print(table)


def _cycle_table(outcome) -> None:
    """One explained cycle: each node's first rejection or its weighted scores and total."""
    from rich.table import Table

    from .common import console

    con = console()
    for change in outcome.admission:
        con.print(f"[dim]admission: {change}[/dim]")
    table = Table(title=f"scheduling {outcome.pod.key}", show_lines=False)
    table.add_column("node")
    table.add_column("filter")
    table.add_column("scores (normalized × weight)")
    table.add_column("total", justify="right")
    for name, v in outcome.nodes.items():
        if not v.filter:
            table.add_row(name, "[dim]not evaluated[/dim]", "", "")
            continue
        st = v.status
        verdict = "Success" if st.is_success else f"{st.code.name}: {st.message}"
        scores = ", ".join(f"{p} {v.normalized[p]}×{v.weighted[p] // v.normalized[p] if v.normalized[p] else '-'}"
                           for p in v.raw)
        mark = " ←" if name == outcome.node else ""
        table.add_row(name + mark, verdict, scores, "" if v.total is None else str(v.total))
    con.print(table)
    con.print(outcome.message)
    if outcome.nominated_node:
        con.print(f"preemption: nominate {outcome.nominated_node}, evicting {', '.join(outcome.victims)}")
    if outcome.not_modelled:
        con.print(f"[dim]not modelled: {', '.join(outcome.not_modelled)}[/dim]")
