"""``kubetwin plan``: the smallest (or, with prices, cheapest) mix of node types on which a
workload is scheduled by the default scheduler and admitted by every kubelet (``kubetwin/plan``).
Output: a terminal table, or the JSON/YAML document of docs/plan.md.

Not an upstream module: kubetwin's own command.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .common import emit_data, kubernetes_version, output_option, rejected


@click.command("plan")
@click.argument("workloads", nargs=-1, metavar="WORKLOAD...")
@click.option("-f", "--filename", "filenames", multiple=True, metavar="WORKLOAD",
              help="Manifests (Deployments, ReplicaSets, StatefulSets, Jobs, DaemonSets, Pods, PriorityClasses, "
                   "DRA objects), a folder of them or a kubetwin snapshot folder (repeatable; also as arguments).")
@click.option("--node-type", "node_types", multiple=True, required=True,
              metavar="NAME=MACHINE[,kubelet=FILE,price=P,max=N,labels=K=V,taints=K=V:EFFECT,dra=DRIVER,devices=SRC]",
              help="A node type the plan may use (repeatable): MACHINE is a spec like 2s2n16c2t:mem=256Gi or a "
                   "machine file; kubelet a KubeletConfiguration file; price per node (all types or none); max "
                   "nodes of it; labels, taints and dra (a DRA driver publishing its PCI devices) repeatable; "
                   "devices: device plugins ('machine': its GPUs, or a DeviceInventory file).")
@click.option("--max-trials", type=click.IntRange(1, 100_000), default=200, show_default=True,
              help="The most simulations the search runs; past it the answer is a bound, said so.")
@click.option("--no-scheduler-only", is_flag=True,
              help="Do not also size each node type for the scheduler alone (kubelet admission off).")
@click.option("--no-progress", is_flag=True, help="No progress on stderr.")
@output_option()
@click.pass_context
def plan(ctx: click.Context, workloads: tuple[str, ...], filenames: tuple[str, ...], node_types: tuple[str, ...],
         max_trials: int, no_scheduler_only: bool, no_progress: bool, output: str) -> None:
    """Size a cluster for a workload: the fewest (or cheapest) nodes of the given types on which the
    default scheduler places every pod and every kubelet admits it (Topology, CPU, Memory and
    Device Managers, DRA).

    The answer says whether it is proven minimal or a bound, the headroom left per resource and per
    NUMA node, and why each type's last node is needed. An answer with no mix that fits exits 0
    (3 with --fail-on-reject). Search and output: docs/plan.md.
    """
    from ..errors import InputError
    from ..plan.answer import INFEASIBLE_STATUS, plan_document
    from ..plan.nodetype import parse_node_type
    from ..plan.search import plan as search
    from ..plan.trial import run_trial
    from ..plan.workload import read_workload, scenario_for

    version = kubernetes_version(ctx)
    sources = (*filenames, *workloads)
    if not sources:
        raise InputError("no workload given", path="WORKLOAD", fix="kubetwin plan workload.yaml --node-type NAME=MACHINE")
    types = [parse_node_type(text, i, kubernetes_version=version) for i, text in enumerate(node_types)]
    seen: dict[str, int] = {}
    for i, t in enumerate(types):
        if t.name in seen:
            raise InputError(f'Duplicate value: "{t.name}" (also --node-type[{seen[t.name]}])',
                             path=f"--node-type[{i}].name", fix="give each node type its own name")
        seen[t.name] = i
    priced = [t.priced for t in types]
    if any(priced) and not all(priced):
        i = priced.index(False)
        raise InputError("a price is given for some node types but not this one", path=f"--node-type[{i}].price",
                         fix="give every node type a price, or none")
    wl = read_workload(sources)
    scenario_for(wl, [], kubernetes_version=version)   # every object checked before the first trial
    show = not no_progress and sys.stderr.isatty()

    def progress(msg: str) -> None:
        click.echo(f"plan: {msg}", err=True)

    p = search(wl, types, kubernetes_version=version, max_trials=max_trials, scheduler_only=not no_scheduler_only,
               progress=progress if show else None)

    done = {(tuple(c for _, c in t.mix), t.kubelet): t for t in p.trials}

    def trial(counts: tuple[int, ...]) -> Any:
        got = done.get((counts, True))
        return got if got is not None else run_trial(wl, types, counts, kubernetes_version=version)

    doc = plan_document(p, workload=wl, trial=trial)
    if doc["status"] == INFEASIBLE_STATUS:
        rejected("no mix of the node types runs the workload")
    if output != "table":
        emit_data(doc, output)
        return
    click.echo(render(doc), nl=False)


def render(doc: dict[str, Any]) -> str:
    """The terminal answer: the mix and its status, the node types, headroom, why."""
    lines: list[str] = []
    status = doc["status"]
    if doc.get("nodes") == 0:
        lines.append("plan: no nodes — the workload has no pod that needs one (daemon pods run only on nodes "
                     f"there are) — {_status_text(doc)}")
    elif "mix" in doc:
        mix = " + ".join(f"{n} × {name}" for name, n in doc["mix"].items())
        price = f", price {doc['price']:g}" if "price" in doc else ""
        lines.append(f"plan: {mix} ({doc['nodes']} node{'s' if doc['nodes'] != 1 else ''}{price}) runs all "
                     f"{doc['pods']} pods — {_status_text(doc)}")
    else:
        lines.append(f"plan: no mix of the node types runs the workload ({status})")
    lb = doc["lowerBound"]
    bound = lb.get("price", lb.get("nodes"))
    if bound is not None:
        lines.append(f"lower bound: {bound:g} ({lb['basis']})")
    s = doc["search"]
    off = sum(1 for t in doc["trials"] if not t["kubeletAdmission"])
    lines.append(f"search: {s['trials']} simulations" + (f" ({off} with kubelet admission off)" if off else "")
                 + (", trial budget spent" if s["budgetSpent"] else "")
                 + (", mixes of several types not searched (more than 200,000 cheaper ones)"
                    if s["mixesNotEnumerated"] else "")
                 + (f", {s['untriedCandidates']} candidates untried" if s["untriedCandidates"] else ""))
    lines.append("")
    rows: list[tuple[str, ...]] = [("NODE TYPE", "MACHINE", "ALLOCATABLE", "BOUND", "ALONE", "SCHEDULER ONLY")]
    for t in doc["nodeTypes"]:
        alloc = ", ".join(f"{k} {v}" for k, v in t["allocatable"].items() if k in ("cpu", "memory", "pods"))
        rows.append((t["name"], t["machine"], alloc, _opt(t["lowerBound"]["nodes"]),
                     _opt(t["alone"]) + {"Bound": " (bound)", "MinimalForScheduler": " (searched)"}.get(
                         t["aloneStatus"], ""),
                     _opt(t["schedulerOnly"])))
    lines.extend(_table(rows))
    for t in doc["nodeTypes"]:
        if t["alone"] is not None and t["schedulerOnly"] is not None and t["schedulerOnly"] < t["alone"]:
            lines.append(f"{t['name']}: the scheduler alone (kube-scheduler, the Cluster Autoscaler's estimator) "
                         f"sizes it at {t['schedulerOnly']}; the kubelets then reject pods there")
    for h in doc.get("headroom", []):
        lines.append("")
        lines.append(f"headroom on {h['nodes']} × {h['nodeType']} ({h['pods']} pods):")
        rows = [("RESOURCE", "ALLOCATABLE", "REQUESTED", "FREE", "FREE %")]
        for r, v in h["resources"].items():
            rows.append((r, v["allocatable"], v["requested"], v["free"], f"{v['freePercent']:g}"))
        lines.extend("  " + x for x in _table(rows))
        if h["numa"]:
            rows = [("NUMA NODE", "CPUS", "RESERVED", "EXCLUSIVE", "UNALLOCATED", "LEAST UNALLOCATED ON A NODE",
                     "MEMORY")]
            for n in h["numa"]:
                rows.append((str(n["numaNode"]), str(n["cpus"]), str(n["reservedCpus"]), str(n["exclusiveCpus"]),
                             str(n["unallocatedCpus"]), str(n["leastUnallocatedCpusOnANode"]), n["memory"]))
            lines.extend("  " + x for x in _table(rows))
    if doc.get("why"):
        lines.append("")
        lines.append("why the last node of each type is needed (the mix with one node fewer, simulated):")
        for w in doc["why"]:
            if not w.get("simulated"):
                lines.append(f"  {w['withoutNode']}: {w['reason']}")
            elif not w.get("needed"):
                lines.append(f"  {w['withoutNode']}: not needed — {w['reason']}")
            else:
                lines.append(f"  without {w['withoutNode']}: {', '.join(w['bindingConstraints'])}")
                for o in w["notRunning"]:
                    reasons = "; ".join(f"{f['reason']} ({f['pods']} pod(s) {f['phase']}, e.g. {f['example']})"
                                        for f in w["failures"] if f["owner"] == o["owner"])
                    lines.append(f"    {o['owner']}: {o['running']} of {o['wanted']} running — {reasons}")
    for note in doc.get("notes", []):
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


def _status_text(doc: dict[str, Any]) -> str:
    if doc["status"] == "ProvenMinimal":
        return "proven minimal (it meets the lower bound)"
    if doc["status"] == "MinimalForScheduler":
        return ("minimal for the default scheduler: every smaller candidate was simulated and did not fit "
                "(another placement might need fewer, down to the lower bound)")
    return "a bound, not proven minimal"


def _opt(v: Any) -> str:
    return "-" if v is None else str(v)


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
