"""``kubetwin explain``: QoS class, cgroup values and OOM scores of one pod, with their rules.

Output contract (``-o json``): FORMAT.md kind PodResourceConfig — ``qosClass``, ``podCgroup``
(file -> content) and ``containers[]`` with CRI ``LinuxContainerResources`` as JSON; the
formulas ride along in ``qosRule``, ``podCgroupDetails`` and per-container ``notes``.
"""

from __future__ import annotations

from typing import Any

import click

from .common import emit_data, kubernetes_version, output_option


def _machine_facts(source: str | None) -> dict[str, Any]:
    """The few machine facts explain needs (memory/swap capacity, hugepage sizes), from any
    source ``kubetwin.machine`` reads (MachineInfo JSON, sysfs, hwloc XML, a short spec)."""
    if source is None:
        return {}
    from ..machine.source import load_machine

    m = load_machine(source)
    return {"memory_capacity": m.memory_capacity, "swap_capacity": m.swap_capacity,
            "hugepage_sizes": tuple(hp.page_size * 1024 for hp in m.hugepages)}


def build(pod_path: str, node_path: str, config_path: str | None, machine_path: str | None, cgroup: str,
          weight_curve: str, version: str | None) -> dict[str, Any]:
    """Everything ``explain`` reports, as plain data."""
    from ..errors import InputError
    from ..kubelet.cgroups import (CgroupSettings, container_resources, hugepage_size_from_resource,
                                   pod_cgroup_files, resource_config_for_pod)
    from ..kubelet.qos import explain_pod_qos
    from ..model.kubelet_config import load_kubelet_config
    from ..model.objects import load_nodes, load_pods, warn_to_stderr
    from ..model.pod import is_sidecar

    pods = load_pods(pod_path, warn=warn_to_stderr)
    if len(pods) != 1:
        raise InputError(f"expected exactly one Pod, found {len(pods)}", file=pod_path,
                         fix="put one pod in the file (explain accounts for one pod at a time)")
    nodes = load_nodes(node_path)
    if len(nodes) != 1:
        raise InputError(f"expected exactly one Node, found {len(nodes)}", file=node_path)
    pod, node = pods[0], nodes[0]
    config = load_kubelet_config(config_path, version)
    gates = config.feature_gate_values
    machine = _machine_facts(machine_path)
    v2 = cgroup == "v2"
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
        cr = container_resources(pod, c, settings)
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


@click.command("explain")
@click.argument("pod", metavar="POD.yaml")
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
@output_option()
@click.pass_context
def explain(ctx: click.Context, pod: str, node: str, config: str | None, machine: str | None, cgroup: str,
            weight_curve: str, output: str) -> None:
    """QoS class, cgroup values and OOM scores of POD on a node, with the rules that gave them."""
    data = build(pod, node, config, machine, cgroup, weight_curve, kubernetes_version(ctx))
    if output == "table":
        _render(data)
    else:
        emit_data(data, output)
