"""``kubetwin explain``: QoS class, cgroup values and OOM scores of one pod, with their rules.

Output contract (``-o json``): FORMAT.md kind PodResourceConfig — ``qosClass``, ``podCgroup``
(file -> content) and ``containers[]`` with CRI ``LinuxContainerResources`` as JSON; the
formulas ride along in ``qosRule``, ``podCgroupDetails`` and per-container ``notes``. The
cgroups above the pod come as extra keys: ``qosCgroup`` (the pod's QoS parent, with both
tiers), ``nodeCgroup`` (``kubepods``) and ``cgroupPaths`` (both drivers' naming, as configured).

Not an upstream module: kubetwin's own command; QoS, cgroups and OOM scores come from
:mod:`kubetwin.kubelet` (``pkg/kubelet/qos``, ``pkg/kubelet/cm``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from .common import (
    api_defaulting_option,
    emit_data,
    filename_option,
    kubernetes_version,
    main_input,
    output_option,
    pods_as_written,
    warn_if_defaulting_changes,
)

if TYPE_CHECKING:
    from ..kubelet.qos_cgroups import LevelCgroup


def _machine_facts(source: str | None) -> dict[str, Any]:
    """The few machine facts explain needs (memory/swap capacity, hugepage sizes), from any
    source ``kubetwin.machine`` reads (MachineInfo JSON, sysfs, hwloc XML, a short spec)."""
    if source is None:
        return {}
    from ..machine.source import load_machine

    m = load_machine(source)
    return {"memory_capacity": m.memory_capacity, "swap_capacity": m.swap_capacity,
            "hugepage_sizes": tuple(hp.page_size * 1024 for hp in m.hugepages)}


def _level(level: LevelCgroup | None) -> dict[str, Any] | None:
    return None if level is None else _level_data(level)


def _level_data(level: LevelCgroup) -> dict[str, Any]:
    return {"name": level.tier, "path": level.path, "files": {f.file: f.content for f in level.files},
            "details": [{"file": f.file, "value": f.content, "formula": f.formula, "written": f.written}
                        for f in level.files]}


def _upper_cgroups(pod: Any, running: list[Any], node: Any, config: Any, config_path: str | None, qos_class: str,
                   sizes: tuple[int, ...], v2: bool, pid_max: int | None) -> dict[str, Any]:
    """``qosCgroup``, ``nodeCgroup`` and ``cgroupPaths``: the cgroups above the pod, on this node's pods."""
    from ..errors import InputError
    from ..kubelet.cgroup_paths import CgroupLayout, cgroup_mount
    from ..kubelet.qos_cgroups import QOSCgroupSettings, parse_qos_reserved, qos_cgroups

    layout = CgroupLayout(config.cgroup_driver, config.cgroup_root, config.cgroups_per_qos)
    try:
        settings = QOSCgroupSettings(
            gates=config.feature_gate_values, cgroup_version=2 if v2 else 1, layout=layout,
            capacity=dict(node.capacity), pid_max=pid_max, kube_reserved=config.kube_reserved,
            system_reserved=config.system_reserved, enforce_node_allocatable=tuple(config.enforce_node_allocatable),
            memory_reservation_policy=config.memory_reservation_policy,
            qos_reserved=parse_qos_reserved(config.qos_reserved), hugepage_sizes=sizes)
        result = qos_cgroups([*running, pod], settings)
        pod_name = layout.pod(qos_class, pod.metadata.uid or "<uid>")
        paths = {"driver": layout.driver, "cgroupRoot": config.cgroup_root or "/",
                 "cgroupsPerQOS": layout.cgroups_per_qos, "mount": cgroup_mount(2 if v2 else 1),
                 "node": layout.path(layout.node_allocatable()), "qos": layout.path(layout.qos(qos_class)),
                 "pod": layout.path(pod_name),
                 "containers": {c.name: layout.container_path(pod_name) for c, _ in pod.all_containers()}}
    except InputError as exc:
        raise exc.in_file(config_path or "KubeletConfiguration defaults") from None
    if not layout.cgroups_per_qos:
        paths["note"] = "cgroupsPerQOS is false: no kubepods, QoS or pod cgroups; the runtime picks the parent"
    parent = result.parent_of(qos_class) if layout.cgroups_per_qos else None
    sums = result.sums
    qos = None
    if parent is not None:
        qos = {**_level_data(parent), "qosClass": qos_class,
               "requestSums": {"burstableCpuMilli": sums.burstable_cpu_milli,
                               "guaranteedMemory": sums.memory.get("Guaranteed", 0),
                               "burstableMemory": sums.memory.get("Burstable", 0)},
               "pods": {k: list(v) for k, v in sums.pods.items()},
               "tiers": {"burstable": _level(result.burstable), "besteffort": _level(result.besteffort)}}
    node_cg = _level(result.node)
    if node_cg is not None:
        node_cg.update(enforced=result.enforced, sizedFrom={k: str(q) for k, q in result.node_resources.items()})
    return {"qosCgroup": qos, "nodeCgroup": node_cg, "cgroupPaths": paths}


def build(pod_path: str, node_path: str, config_path: str | None, machine_path: str | None, cgroup: str,
          weight_curve: str, version: str | None, running_path: str | None = None,
          pid_max: int | None = None) -> dict[str, Any]:
    """Everything ``explain`` reports, as plain data."""
    from ..errors import InputError
    from ..kubelet.cgroups import (
        CgroupSettings,
        container_resources,
        hugepage_size_from_resource,
        pod_cgroup_files,
        resource_config_for_pod,
    )
    from ..kubelet.qos import explain_pod_qos
    from ..model.defaulting import api_defaulting
    from ..model.kubelet_config import load_kubelet_config
    from ..model.objects import load_nodes, load_pods, warn_to_stderr
    from ..model.pod import is_sidecar

    pods = load_pods(pod_path, warn=warn_to_stderr, reader="kubelet")
    warn_if_defaulting_changes(pods, api_defaulting())
    if len(pods) != 1:
        raise InputError(f"expected exactly one Pod, found {len(pods)}", file=pod_path,
                         fix="put one pod in the file (explain accounts for one pod at a time)")
    nodes = load_nodes(node_path)
    if len(nodes) != 1:
        raise InputError(f"expected exactly one Node, found {len(nodes)}", file=node_path)
    pod, node = pods[0], nodes[0]
    running = load_pods(running_path, warn=warn_to_stderr, reader="kubelet") if running_path is not None else []
    config = load_kubelet_config(config_path, version)
    gates = config.feature_gate_values
    machine = _machine_facts(machine_path)
    v2 = cgroup == "v2"
    if not v2 and config.fail_cgroup_v1:
        from ..diagnostics import warn

        warn(InputError("failCgroupV1 is true (the default since Kubernetes 1.35): a kubelet on a cgroup v1 host "
                        "refuses to start; the answer is for a kubelet that would run", path="failCgroupV1",
                        file=config_path, fix="set failCgroupV1: false, or use --cgroup v2"))
    if machine.get("swap_capacity", 0) and config.fail_swap_on:
        from ..diagnostics import warn

        warn(InputError("failSwapOn is true (the default) and the machine has swap: the kubelet refuses to start "
                        "(\"running with swap on is not supported\"); the answer is for a kubelet that would run",
                        path="failSwapOn", file=config_path, fix="set failSwapOn: false"))
    mem_cap = machine.get("memory_capacity")
    if mem_cap is None:
        q = node.capacity.get("memory")
        mem_cap = q.value() if q is not None else 0
    if "hugepage_sizes" in machine:
        sizes = machine["hugepage_sizes"]
    else:
        sizes = tuple(s for s in (hugepage_size_from_resource(n) for n in node.capacity) if s is not None)
    alloc = node.allocatable.get("memory")
    swap_behavior = config.memory_swap.swap_behavior or "NoSwap"
    settings = CgroupSettings(
        gates=gates, cgroup_version=2 if v2 else 1, cpu_cfs_quota=config.cpu_cfs_quota,
        cpu_cfs_quota_period_us=int(config.cpu_cfs_quota_period) // 1000,
        memory_throttling_factor=config.memory_throttling_factor,
        memory_reservation_policy=config.memory_reservation_policy,
        single_process_oom_kill=config.single_process_oom_kill_for(v2),
        swap_behavior=swap_behavior, pod_pids_limit=config.pod_pids_limit,
        memory_capacity=mem_cap, swap_capacity=machine.get("swap_capacity", 0),
        node_allocatable_memory=alloc.value() if alloc is not None else mem_cap,
        hugepage_sizes=tuple(sizes), weight_curve=weight_curve)

    decision = explain_pod_qos(pod, gates)
    rc = resource_config_for_pod(pod, settings)
    files = pod_cgroup_files(rc, settings)
    containers = []
    for c, init in pod.all_containers():
        try:
            cr = container_resources(pod, c, settings)
        except InputError as exc:  # a fact the node (or machine) lacks, e.g. its memory capacity
            raise exc.in_file(node_path if exc.path.startswith("status.") else pod_path) from None
        entry: dict[str, Any] = {"name": c.name, "type": ("sidecar" if is_sidecar(c) else "init") if init else "app",
                                 "resources": dict(cr.resources), "oomScoreAdjRule": cr.oom.rule,
                                 "notes": dict(cr.notes)}
        if cr.runtime_cpu_weight is not None:
            entry["runtimeCpuWeight"] = {"value": cr.runtime_cpu_weight, "curve": weight_curve}
        containers.append(entry)
    return {
        "name": pod.name, "namespace": pod.namespace, "cgroupVersion": cgroup,
        "kubernetesVersion": gates.version,
        "qosClass": decision.qos_class, "qosRule": decision.rule,
        "podCgroup": {f.file: f.content for f in files},
        "podCgroupDetails": [{"file": f.file, "value": f.content, "formula": f.formula, "written": f.written}
                             for f in files],
        "containers": containers,
        **_upper_cgroups(pod, running, node, config, config_path, decision.qos_class, settings.hugepage_sizes, v2,
                         pid_max),
    }


def _render(data: dict[str, Any]) -> None:
    from rich.table import Table

    out = __import__("kubetwin.cli.common", fromlist=["console"]).console()
    out.print(f"[bold]{data['namespace']}/{data['name']}[/bold]  QoS [bold]{data['qosClass']}[/bold] "
              f"— {data['qosRule']}  (cgroup {data['cgroupVersion']}, Kubernetes {data['kubernetesVersion']})")
    t = Table(title="pod cgroup", title_justify="left")
    for col in ("file", "value", "how"):
        t.add_column(col)
    for f in data["podCgroupDetails"]:
        how = f["formula"] if f["written"] else f"{f['formula']} (not written)"
        t.add_row(f["file"], str(f["value"]), how)
    out.print(t)
    _render_upper(out, data)
    t = Table(title="containers (CRI LinuxContainerResources)", title_justify="left")
    for col in ("container", "field", "value", "how"):
        t.add_column(col)
    for c in data["containers"]:
        res, notes = c["resources"], c["notes"]
        label = f"{c['name']} ({c['type']})"
        rows = [("oomScoreAdj", res["oomScoreAdj"], c["oomScoreAdjRule"]),
                ("cpuShares", res["cpuShares"], notes.get("cpuShares", "")),
                ("cpuQuota / cpuPeriod", f"{res['cpuQuota']} / {res['cpuPeriod']}", notes.get("cpuQuota", "")),
                ("memoryLimitInBytes", res["memoryLimitInBytes"] or "0 (unlimited)", "")]
        if "runtimeCpuWeight" in c:
            w = c["runtimeCpuWeight"]
            rows.append(("cpu.weight (runtime)", w["value"], f"{w['curve']} curve from cpuShares"))
        if "memorySwapLimitInBytes" in res:
            rows.append(("memorySwapLimitInBytes", res["memorySwapLimitInBytes"], notes.get("memorySwapLimitInBytes", "")))
        for hp in res["hugepageLimits"]:
            rows.append((f"hugepage {hp['pageSize']}", hp["limit"], "container hugepages limit"))
        for k, v in res["unified"].items():
            rows.append((f"unified {k}", v, notes.get(k, "")))
        for i, (field, value, how) in enumerate(rows):
            t.add_row(label if i == 0 else "", field, str(value), how)
    out.print(t)


def _render_upper(out: Any, data: dict[str, Any]) -> None:
    from rich.table import Table

    paths = data["cgroupPaths"]
    levels = []
    if data["qosCgroup"] is not None and data["qosCgroup"]["name"] != "kubepods":
        levels.append((f"QoS cgroup {data['qosCgroup']['path']}", data["qosCgroup"]))
    if data["nodeCgroup"] is not None:
        levels.append((f"node allocatable cgroup {data['nodeCgroup']['path']}", data["nodeCgroup"]))
    for title, level in levels:
        t = Table(title=title, title_justify="left")
        for col in ("file", "value", "how"):
            t.add_column(col)
        for f in level["details"]:
            how = f["formula"] if f["written"] else f"{f['formula']} (not written)"
            t.add_row(f["file"], "?" if f["value"] is None else str(f["value"]), how)
        out.print(t)
    t = Table(title=f"cgroup paths ({paths['driver']} driver, under {paths['mount']})", title_justify="left")
    t.add_column("cgroup")
    t.add_column("path", overflow="fold")
    for key in ("node", "qos", "pod"):
        t.add_row(key, paths[key] or "-")
    for name, path in paths["containers"].items():
        t.add_row(f"container {name}", path or "-")
    out.print(t)
    if "note" in paths:
        out.print(paths["note"])


@click.command("explain")
@click.argument("pod", metavar="[POD.yaml]", required=False)
@filename_option("POD.yaml", "The pod to explain")
@click.option("--node", "node", required=True, metavar="NODE.yaml", help="The Node (capacity, allocatable).")
@click.option("--config", "config", default=None, metavar="KUBELET.yaml", help="KubeletConfiguration (default: kubelet defaults).")
@click.option("--machine", "machine", default=None, metavar="MACHINE.json",
              help="The machine: cAdvisor MachineInfo JSON (memory_capacity, swap_capacity, hugepages), "
              "sysfs, hwloc XML or a spec like 2s2n8c2t.")
@click.option("--cgroup", "cgroup", type=click.Choice(["v1", "v2"]), default="v2", show_default=True,
              help="cgroup version of the node.")
@click.option("--weight-curve", "weight_curve", type=click.Choice(["quadratic", "linear"]), default="quadratic",
              show_default=True, help="How the runtime turns a container's cpuShares into cpu.weight on v2 "
              "(quadratic: runc >= 1.3.2, crun >= 1.23; linear: older runtimes).")
@click.option("--pods", "running", default=None, metavar="RUNNING.yaml",
              help="The other pods on the node (for the QoS-level cgroup sums); POD itself is always counted.")
@click.option("--pid-max", "pid_max", type=click.IntRange(min=1), default=None, metavar="N",
              help="min(kernel.pid_max, kernel.threads-max) of the node: sizes kubepods pids.max.")
@api_defaulting_option()
@output_option()
@click.pass_context
def explain(ctx: click.Context, pod: str | None, filename: str | None, node: str, config: str | None, machine: str | None, cgroup: str,
            weight_curve: str, running: str | None, pid_max: int | None, api_defaulting: bool, output: str) -> None:
    """QoS class, cgroup values and OOM scores of POD on a node, with the rules that gave them."""
    pod = main_input(pod, filename, "POD.yaml")
    pods_as_written(api_defaulting)
    data = build(pod, node, config, machine, cgroup, weight_curve, kubernetes_version(ctx), running, pid_max)
    if output == "table":
        _render(data)
    else:
        emit_data(data, output)
