"""``kubetwin evict``: the kubelet's eviction ranking for one signal, or its eviction manager
over a timeline of Summary API readings.

Not an upstream module: kubetwin's own command; the ranking and the manager are
:mod:`kubetwin.kubelet.eviction`'s (``pkg/kubelet/eviction``)."""

from __future__ import annotations

import click

from .common import (
    api_defaulting_option,
    emit_data,
    filename_option,
    kubernetes_version,
    main_input,
    output_option,
    pods_as_written,
    rejected,
    warn_if_defaulting_changes,
)

SIGNAL_CHOICES = ("memory.available", "allocatableMemory.available", "nodefs.available", "nodefs.inodesFree",
                  "imagefs.available", "imagefs.inodesFree", "containerfs.available", "containerfs.inodesFree",
                  "pid.available")


@click.command("evict")
@click.option("--signal", "signal", type=click.Choice(SIGNAL_CHOICES), default=None,
              help="Rank the pods for this eviction signal (needs --summary).")
@click.option("--summary", "summary_file", default=None, metavar="SUMMARY.json",
              help="The kubelet Summary API (/stats/summary) JSON with the node's and pods' usage.")
@click.option("--config", "config_file", default=None, metavar="KUBELET.yaml",
              help="KubeletConfiguration: thresholds, grace periods, feature gates (kubelet defaults otherwise).")
@click.option("--timeline", "timeline_file", default=None, metavar="TIMELINE.yaml",
              help="Steps (after, summary, afterReclaim, pods, admit) to run the eviction manager over.")
@click.option("--oom", "oom", is_flag=True,
              help="With --signal memory.available: also what the kernel's OOM killer would do if it acted first.")
@click.option("--cgroup", "cgroup", type=click.Choice(("v1", "v2")), default="v2", show_default=True,
              help="cgroup version, for OOM-kill scope and MemoryQoS (v2 only).")
@click.option("--dedicated-imagefs", is_flag=True, help="Images on their own filesystem (imagefs).")
@click.option("--split-containerfs", is_flag=True,
              help="Writable container layers apart from the images (KEP-4191 split image filesystem).")
@api_defaulting_option()
@output_option()
@filename_option("PODS.yaml", "The pods on the node")
@click.argument("pods_file", metavar="[PODS.yaml]", required=False)
@click.pass_context
def evict(ctx: click.Context, signal, summary_file, config_file, timeline_file, oom, cgroup, dedicated_imagefs,
          split_containerfs, api_defaulting, output, filename, pods_file) -> None:
    """Who the kubelet evicts first, and when, under node pressure.

    Pods refused admission under pressure (--timeline) are an answer: exit status 0, or 3 with
    --fail-on-reject.

    \b
    kubetwin evict --signal memory.available --summary summary.json pods.yaml
    kubetwin evict --config kubelet.yaml --timeline timeline.yaml pods.yaml
    """
    from ..errors import InputError
    from ..kubelet.eviction.ranking import DiskLayout
    from ..model.kubelet_config import load_kubelet_config
    from ..model.objects import load_pods, warn_to_stderr

    pods_file = main_input(pods_file, filename, "PODS.yaml")
    if (signal is None) == (timeline_file is None):
        raise click.UsageError("give either --signal with --summary (a ranking) or --timeline (the manager over time)")
    if signal is not None and summary_file is None:
        raise click.UsageError("--signal needs --summary SUMMARY.json")
    if timeline_file is not None and summary_file is not None:
        raise click.UsageError("--summary goes with --signal; a timeline carries a summary per step")
    layout = DiskLayout(dedicated_imagefs, split_containerfs)
    config = load_kubelet_config(config_file, kubernetes_version(ctx))
    pods_as_written(api_defaulting)
    pods = load_pods(pods_file, warn=warn_to_stderr, reader="kubelet")
    warn_if_defaulting_changes(pods, api_defaulting)
    if oom and signal is None:
        raise click.UsageError("--oom goes with --signal and --summary")
    if signal is not None:
        _rank(signal, summary_file, pods, layout, config, output, oom=oom, cgroup_v2=cgroup == "v2")
        return
    from ..kubelet.eviction.manager import EvictionManager
    from ..kubelet.eviction.report import decision_to_dict
    from ..kubelet.eviction.thresholds import update_containerfs_thresholds
    from ..kubelet.eviction.timeline import load_timeline, run_timeline
    from .eviction_tables import render_decision

    steps = load_timeline(timeline_file, warn=warn_to_stderr)
    try:
        thresholds = config.eviction_thresholds()
    except InputError as exc:
        raise exc.in_file(config_file) from None
    manager = EvictionManager(config, layout, thresholds)
    results = run_timeline(manager, pods, steps)
    effective = update_containerfs_thresholds(thresholds, dedicated_image_fs=layout.dedicated_image_fs,
                                              split_container_fs=layout.split_container_fs)
    data = decision_to_dict(thresholds, effective, results)
    if output == "table":
        render_decision(data)
    else:
        emit_data(data, output)
    rejected(f"pod {a['namespace']}/{a['name']}: {a['reason']}" for s in data.get("steps") or ()
             for a in s.get("admission") or () if not a["admitted"])


def _rank(signal, summary_file, pods, layout, config, output, *, oom: bool = False, cgroup_v2: bool = True) -> None:
    from ..kubelet.eviction.ranking import rank_pods
    from ..kubelet.eviction.report import ranking_rows
    from ..model.summary import load_summary
    from .eviction_tables import render_ranking

    summary = load_summary(summary_file)
    gates = config.feature_gate_values
    ranked = rank_pods(signal, pods, summary, layout=layout, gates=gates)
    rows = ranking_rows(signal, ranked, summary, layout, gates)
    data = {"signal": signal, "ranking": [p.name for p in ranked], "pods": rows}
    if oom:
        from ..errors import InputError
        from ..kubelet.eviction.oom_kill import oom_report
        from ..kubelet.eviction.report import oom_to_dict

        try:
            report = oom_report(pods, summary, config, cgroup_v2=cgroup_v2)
        except InputError as exc:
            if not exc.file and exc.path == "status.capacity.memory":  # the capacity comes from the Summary
                raise InputError("the node's memory capacity (availableBytes + workingSetBytes) is needed for a "
                                 "Burstable pod's OOM score", path="node.memory", file=summary_file,
                                 fix="give the summary's node.memory availableBytes and workingSetBytes") from None
            raise
        data["oom"] = oom_to_dict(report)
    if output == "table":
        render_ranking(signal, rows)
        if oom:
            from .eviction_tables import render_oom

            render_oom(data["oom"])
    else:
        emit_data(data, output)
