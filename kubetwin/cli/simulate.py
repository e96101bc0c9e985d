"""``kubetwin simulate``: replay a workload on a cluster over time and write the report.

With no scenario, the bundled default scenario runs (real hwloc machines, a mixed workload).
``--variant`` runs the same workload under other configurations side by side (compare);
several scenarios × variants run in parallel processes (sweep).

Not an upstream module: kubetwin's own command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .common import emit_data, kubernetes_version, rejected

DEFAULT_SCENARIO = Path(__file__).resolve().parent.parent / "sim" / "default" / "scenario.yaml"


@click.command("simulate")
@click.argument("scenarios", nargs=-1, metavar="[SCENARIO.yaml]...")
@click.option("-f", "--filename", "filenames", multiple=True, metavar="SCENARIO.yaml",
              help="A scenario to run (repeatable; or as arguments); none: the embedded default scenario.")
@click.option("--alibaba", "alibaba", type=click.Path(exists=True, file_okay=False), default=None,
              help="Replay the Alibaba GPU trace (cluster-trace-gpu-v2023) folder instead of a scenario.")
@click.option("--alibaba-pods", default="openb_pod_list_default.csv", show_default=True,
              help="Pod list of the Alibaba trace to replay.")
@click.option("--deletions", is_flag=True, help="Alibaba trace: pods leave at their deletion_time.")
@click.option("--scheduler-config", "scheduler_config", type=click.Path(dir_okay=False), default=None,
              help="KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) for every run.")
@click.option("--variant", "variants", multiple=True, metavar="NAME:KEY=VALUE[,KEY=VALUE]",
              help="Also run the workload with these settings changed (kubelet.<field>, scheduler.scoringStrategy, "
                   "scheduler.percentageOfNodesToScore, gates.<Gate>, runtime.policy, runtime.config, "
                   "whatif.evictionPolicy=psi-aware: not upstream); repeat to compare several.")
@click.option("--jobs", "-j", type=click.IntRange(1, 256), default=None,
              help="Parallel processes for several runs (default: the number of CPUs).")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Run the runs on this Dask scheduler (tcp://host:8786) instead of local processes.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None,
              help="Write the self-contained HTML report to FILE (only files asked for are written).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Write the JSON results (per-pod placement, time series, nodes) to FILE.")
@click.option("--metrics", "metrics_path", type=click.Path(dir_okay=False), default=None,
              help="Write Prometheus text-format metrics to FILE.")
@click.option("-o", "--output", type=click.Choice(("table", "json", "yaml")), default="table", show_default=True,
              help="Summary format on stdout.")
@click.option("--pods", "show_pods", is_flag=True,
              help="Also print the per-pod table (placement, phase, reason, message), pods that did not run first.")
@click.option("--no-progress", is_flag=True, help="No progress on stderr.")
@click.option("--write-end-state", "end_state_dir", default=None, metavar="DIR",
              help="Write the cluster at the end as manifests (nodes, bound and pending pods, controllers): a "
                   "folder kubetwin snapshot would write (one per run under DIR when there are several).")
@click.pass_context
def simulate(ctx: click.Context, scenarios: tuple[str, ...], filenames: tuple[str, ...], alibaba: str | None, alibaba_pods: str, deletions: bool,
             scheduler_config: str | None, variants: tuple[str, ...], jobs: int | None, dask_address: str | None,
             report_path: str | None, json_path: str | None, metrics_path: str | None, output: str,
             show_pods: bool, no_progress: bool, end_state_dir: str | None) -> None:
    """Simulate the scheduler and every node's kubelet over time; summary, HTML report, JSON.

    Only the files asked for are written (--report, --json, --metrics). Pods rejected by a kubelet
    or by admission control, or still pending at the end, are an answer: exit status 0, or 3 with
    --fail-on-reject.
    """
    from ..outputs import check_output, write_atomic
    from ..sim.sweep import RunSpec, parse_variant, run_all

    # Outputs are checked before the (possibly long) run, so it never fails at the very end.
    out = check_output(report_path, "--report") if report_path and report_path != "-" else None
    if json_path:
        check_output(json_path, "--json")
    if metrics_path:
        check_output(metrics_path, "--metrics")
    parsed = [parse_variant(v, i) for i, v in enumerate(variants)]
    sources: list[Any] = []
    if alibaba:
        sources.append(("alibaba", alibaba, alibaba_pods, deletions))
    sources.extend(("file", s) for s in (*filenames, *scenarios))
    if not sources:
        sources.append(("file", str(DEFAULT_SCENARIO)))
    specs = []
    extra = {"end_state": True} if end_state_dir else {}
    for src in sources:
        specs.append(RunSpec(src, None, scheduler_config, kubernetes_version(ctx), dict(extra)))
        for v in parsed:
            specs.append(RunSpec(src, v, scheduler_config, kubernetes_version(ctx), dict(extra)))
    if end_state_dir:
        from ..sim.end_state import INDEX
        from ..sim.snapshot import check_destination

        check_destination(end_state_dir, "scenario.yaml" if len(specs) == 1 else INDEX)
    show = not no_progress
    results = run_all(specs, jobs=jobs, dask_address=dask_address, progress=show)
    if out is not None:
        from ..report.html import render_html

        write_atomic(out, render_html(results, title=f"kubetwin simulation — {results[0].scenario}"), "--report")
    if json_path:
        import json

        data = [r.to_json() for r in results]
        write_atomic(json_path, json.dumps(data[0] if len(data) == 1 else {"runs": data}, default=str) + "\n", "--json")
    if metrics_path:
        from ..report.prometheus import render_metrics

        write_atomic(metrics_path, render_metrics(results), "--metrics")
    if end_state_dir:
        from ..sim.end_state import write_end_states

        for line in write_end_states(results, end_state_dir):
            click.echo(line, err=True)
    if output == "table":
        from ..report.terminal import render_summary
        from .common import console

        render_summary(results, console(), pods=show_pods)
        if out is not None:
            click.echo(f"report: {report_path}")
    else:
        sums = [r.summary() for r in results]
        if show_pods:
            from ..report.terminal import pod_rows

            for r, s in zip(results, sums):
                s["podTable"] = pod_rows(r)
        emit_data(sums[0] if len(sums) == 1 else {"runs": sums}, output)
    for r in results:
        s = r.summary()
        kubelet, control = sum(s["rejectedByKubelet"].values()), sum(s["rejectedByAdmissionControl"].values())
        if kubelet:
            rejected(f"{r.scenario}: {kubelet} pod(s) rejected by kubelets")
        if control:
            rejected(f"{r.scenario}: {control} pod(s) rejected by admission control")
        if s["pending"]:
            rejected(f"{r.scenario}: {s['pending']} pod(s) pending at the end")
