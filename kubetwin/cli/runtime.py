"""``kubetwin runtime``: one node below the kubelet — CRI calls, NRI plugins, resource policies. Not an upstream module: the command line of ``kubetwin runtime`` (the library is :mod:`kubetwin.runtime.run`)."""

from __future__ import annotations

from typing import Any

import click

from .common import console, emit_data, kubernetes_version, output_option


@click.command("runtime")
@click.option("--machine", "machine", required=True, metavar="SOURCE",
              help="The node's hardware: MachineInfo JSON, sysfs (dir or tarball), hwloc XML or a spec like 2s2n8c2t.")
@click.option("--policy", "policy", required=True, metavar="POLICY.yaml|topology-aware|balloons|none",
              help="The resource policy: a config.nri/v1alpha1 TopologyAwarePolicy or BalloonsPolicy resource, "
                   "or a chart name (its Helm defaults, merged with --helm-values), or none.")
@click.option("--helm-values", "helm_values", type=click.Path(dir_okay=False), default=None, metavar="VALUES.yaml",
              help="Helm values for the chart named by --policy (config: becomes the policy resource's spec).")
@click.option("--config", "kubelet_config", type=click.Path(dir_okay=False), default=None,
              help="KubeletConfiguration (kubelet.config.k8s.io/v1beta1); default: the kubelet's defaults "
                   "(cpuManagerPolicy none).")
@click.option("--rdt", "rdt", type=click.Path(dir_okay=False), default=None, help="goresctrl RDT configuration.")
@click.option("--blockio", "blockio", type=click.Path(dir_okay=False), default=None,
              help="goresctrl Block I/O configuration.")
@click.option("--plugin", "plugins", multiple=True, metavar="FILE.py[:Class]",
              help="A Python NRI plugin (a kubetwin.runtime.nri.stub.Plugin subclass); repeatable.")
@click.option("--isolated-cpus", "isolated", default="", metavar="CPUSET",
              help="The kernel's isolated CPUs (isolcpus) on this node.")
@click.option("--state-dir", "state_dir", type=click.Path(file_okay=False), default=None,
              help="Start from the node a previous call wrote with --write-state.")
@click.option("--write-state", "write_state", type=click.Path(file_okay=False), default=None,
              help="Write the node after this call into this folder (atomically).")
@click.option("--delete", "delete", multiple=True, metavar="[NAMESPACE/]POD",
              help="Delete a running pod first (StopContainer, RemoveContainer, StopPodSandbox, RemovePodSandbox); "
                   "repeatable.")
@click.option("--explain", is_flag=True, help="Show the pool scores that decided, and every NRI event of the step.")
@click.option("--node-name", "node_name", default="",
              help="metadata.name of the NodeResourceTopology of -o nrt (default: the machine's name).")
@output_option(choices=("table", "json", "yaml", "nrt"))
@click.argument("pods", nargs=-1, type=click.Path(dir_okay=False), metavar="[PODS.yaml]...")
@click.pass_context
def runtime(ctx: click.Context, machine: str, policy: str, helm_values: str | None, kubelet_config: str | None,
            rdt: str | None, blockio: str | None, plugins: tuple[str, ...], isolated: str, state_dir: str | None,
            write_state: str | None, delete: tuple[str, ...], explain: bool, node_name: str, output: str,
            pods: tuple[str, ...]) -> None:
    """Create PODS.yaml in order on one node (after the --delete pods are gone): kubelet admission, the
    runtime's NRI events, the resource policy's and plugins' adjustments; each container's cpuset,
    memory nodes, RDT and Block I/O class, and a NUMA map."""
    from ..runtime.resmgr.policy import PolicyError
    from ..runtime.run import RuntimeInputs, run_runtime

    inputs = RuntimeInputs(machine=machine, policy=policy, pods=list(pods), helm_values=helm_values,
                           kubelet_config=kubelet_config, rdt=rdt, blockio=blockio, plugins=list(plugins),
                           isolated=isolated, state_dir=state_dir, write_state=write_state, delete=list(delete),
                           kubernetes_version=kubernetes_version(ctx), explain=explain, nrt=output == "nrt",
                           node_name=node_name)
    try:
        data = run_runtime(inputs)
    except PolicyError as exc:
        from ..errors import InputError

        chart = policy in ("topology-aware", "balloons", "none")
        if chart and helm_values:   # the chart's defaults merged with the values file: its config is at fault
            raise InputError(str(exc), file=helm_values, path="config") from None
        raise InputError(str(exc), file=None if chart else policy, path="--policy") from None
    if output == "table":
        render_table(data, explain=explain)
    elif output == "nrt":
        emit_nrt(data["nodeResourceTopology"], policy)
    else:
        emit_data(data, output)


def render_table(data: dict[str, Any], explain: bool = False) -> None:
    from rich.table import Table

    con = console()
    t = Table(title="containers after the step", show_lines=False)
    for col in ("pod", "container", "qos", "pool", "cpus", "mems", "numa", "rdt", "blockio"):
        t.add_column(col)
    for c in data["containers"]:
        grant = c.get("grant") or {}
        kind = grant.get("cpuType", "")
        pool = grant.get("pool", "-")
        if "exclusive" in grant or "isolated" in grant:
            pool += " (exclusive" + ("+shared" if "shared" in grant else "") + ")"
        elif kind:
            pool += f" ({kind})"
        name = c["name"] + ("" if c.get("type") == "app" else f" [{c.get('type')}]")
        t.add_row(f"{c['namespace']}/{c['pod']}", name, c.get("qosClass", ""), pool, c["cpus"], c["mems"],
                  c.get("numaNodes", ""), c.get("rdtClass") or "-", c.get("blockioClass") or "-")
    con.print(t)
    if data["rejected"]:
        r = Table(title="rejected pods")
        for col in ("pod", "reason", "message"):
            r.add_column(col)
        for x in data["rejected"]:
            r.add_row(f"{x['namespace']}/{x['pod']}", x["reason"], x["message"])
        con.print(r)
    m = Table(title="NUMA map")
    for col in ("node", "cpus", "memory", "exclusive", "shared"):
        m.add_column(col)
    for n in data["node"]["numaNodes"]:
        excl = "\n".join(f"{e['container']}: {e['cpus']}" for e in n.get("exclusive", [])) or "-"
        m.add_row(str(n["node"]), n["cpus"], f"{n['memoryType']} {n['memory'] // (1 << 20)}Mi", excl,
                  "\n".join(n.get("shared", [])) or "-")
    con.print(m)
    policy = data["node"].get("policy")
    if policy:
        p = Table(title=f"{policy['policy']} pools (reserved {policy['reserved']})")
        for col in ("pool", "capacity", "free", "allocatable shared"):
            p.add_column(col)
        for pool in policy.get("pools", []):
            cap = ", ".join(f"{k} {v}" for k, v in pool["capacity"].items())
            free = ", ".join(f"{k} {v}" for k, v in pool["free"].items())
            p.add_row("  " * pool["depth"] + pool["name"], cap, free, pool["allocatableShared"])
        con.print(p)
    if explain:
        for c in data["containers"]:
            why = c.get("explain")
            if not why or "pools" not in why:
                continue
            e = Table(title=f"pool scores for {c['namespace']}/{c['pod']}/{c['name']}: {why['request']}")
            for col in ("rank", "pool", "affinity", "isolated", "reserved", "shared", "colocated", "memory offer"):
                e.add_column(col)
            for s in why["pools"]:
                e.add_row(str(s["rank"]), s["pool"], str(s["affinity"]), str(s["isolated"]), str(s["reserved"]),
                          str(s["shared"]), str(s["colocated"]), str(s.get("memoryOffer")))
            con.print(e)


def emit_nrt(nrt: dict[str, Any] | None, policy: str) -> None:
    """``-o nrt``: the NodeResourceTopology the policy's agent publishes after the step, as YAML."""
    from ..errors import InputError
    from .common import yaml_text

    if nrt is None:
        raise InputError("the node publishes no NodeResourceTopology: no nri-plugins policy runs (--policy none), "
                         "or its configuration sets agent.nodeResourceTopology: false", path="-o nrt",
                         file=policy if policy not in ("topology-aware", "balloons", "none") else None,
                         fix="run --policy topology-aware or balloons with agent.nodeResourceTopology: true")
    import sys

    sys.stdout.write(yaml_text(nrt))
