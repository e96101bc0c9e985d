"""The plan's answer as data (the JSON/YAML contract of docs/plan.md): the mix, whether it is
proven minimal or a bound, the headroom left per node type, per resource and per NUMA node, and
why each type's last node is needed (the mix with one node fewer, simulated: the pods that then
do not run and their binding constraint).

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import Any

from .bounds import INFEASIBLE

API_VERSION = "kubetwin.io/v1alpha1"
#: ``status``: the found mix meets its lower bound: no mix, however placed, does with less
PROVEN = "ProvenMinimal"
#: ``status``: every cheaper candidate from the lower bound up was simulated and did not fit: minimal
#: for the default scheduler's placement and the kubelets, not proven for every placement
SCHEDULER_MINIMAL = "MinimalForScheduler"
#: ``status``: a mix that fits, not proven minimal (the trial budget ran out, or too many mixes)
BOUND = "Bound"
#: ``status``: no mix within the node types' ``max`` runs the workload
INFEASIBLE_STATUS = "Infeasible"


def _quantity(resource: str, amount: int) -> str:
    """A scheduler amount as a quantity (cpu in cores, memory and storage in binary units)."""
    from ..model.quantity import Quantity

    if resource == "cpu":
        return str(Quantity.from_milli(amount))
    return _binary(amount) if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-") \
        else str(amount)


def _binary(n: int) -> str:
    for unit, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if n and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def headroom(result: Any, types: list[Any]) -> list[dict[str, Any]]:
    """Per node type of the mix: allocatable, requested and free per resource, pods, and per
    NUMA node (by id, summed over the type's nodes) its CPUs — reserved, held exclusively by
    pods (static CPU Manager), unallocated (neither: the shared pool, what new exclusive CPUs
    can come from) — and its memory: capacity, and with the Static Memory Manager its allocatable,
    assigned and free memory (``memorymanager/state``'s table)."""
    out = []
    for t in types:
        reports = [r for r in result.node_reports if r.group == t.name]
        if not reports:
            continue
        alloc: dict[str, int] = {}
        req: dict[str, int] = {}
        for r in reports:
            for k, v in r.allocatable.items():
                alloc[k] = alloc.get(k, 0) + int(v)
            for k, v in r.requested.items():
                req[k] = req.get(k, 0) + int(v)
        resources = {}
        for k in sorted(alloc):
            if alloc[k] <= 0 and not req.get(k):
                continue
            free = alloc[k] - req.get(k, 0)
            resources[k] = {"allocatable": _quantity(k, alloc[k]), "requested": _quantity(k, req.get(k, 0)),
                            "free": _quantity(k, free), "freePercent": round(100.0 * free / alloc[k], 1) if alloc[k] else 0.0}
        numa: dict[int, dict[str, int]] = {}
        # the Static Memory Manager's free memory per NUMA node (what a Guaranteed pod's memory can
        # still be pinned to), when every node of the type runs it
        managed = all(n.memory_free is not None for r in reports for n in r.numa)
        for r in reports:
            for n in r.numa:
                d = numa.setdefault(n.id, {"cpus": 0, "exclusive": 0, "free": 0, "memory": 0, "leastFree": n.free,
                                           "mAlloc": 0, "mAssigned": 0, "mFree": 0, "leastMFree": n.memory_free or 0})
                d["cpus"] += n.cpus
                d["exclusive"] += n.exclusive
                d["free"] += n.free
                d["memory"] += n.memory_bytes
                d["leastFree"] = min(d["leastFree"], n.free)
                if managed:
                    d["mAlloc"] += n.memory_allocatable or 0
                    d["mAssigned"] += n.memory_reserved
                    d["mFree"] += n.memory_free or 0
                    d["leastMFree"] = min(d["leastMFree"], n.memory_free or 0)
        per_numa = []
        for i, d in sorted(numa.items()):
            row: dict[str, Any] = {"numaNode": i, "cpus": d["cpus"], "reservedCpus": d["cpus"] - d["exclusive"] - d["free"],
                                   "exclusiveCpus": d["exclusive"], "unallocatedCpus": d["free"],
                                   "leastUnallocatedCpusOnANode": d["leastFree"], "memory": _binary(d["memory"])}
            if managed:
                row.update({"memoryAllocatable": _binary(d["mAlloc"]), "memoryAssigned": _binary(d["mAssigned"]),
                            "memoryFree": _binary(d["mFree"]), "leastMemoryFreeOnANode": _binary(d["leastMFree"])})
            per_numa.append(row)
        out.append({"nodeType": t.name, "nodes": len(reports), "pods": sum(r.pods for r in reports),
                    "resources": resources, "numa": per_numa,
                    "perNode": [{"name": r.name, "pods": r.pods,
                                 "free": {k: _quantity(k, int(r.allocatable[k]) - int(r.requested.get(k, 0)))
                                          for k in sorted(r.allocatable) if int(r.allocatable[k]) > 0},
                                 "numa": [_node_numa(n) for n in r.numa]}
                                for r in reports]})
    return out


def _node_numa(n: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"numaNode": n.id, "unallocatedCpus": n.free, "exclusiveCpus": n.exclusive}
    if n.memory_free is not None:
        row["memoryFree"] = _binary(n.memory_free)
    return row


def why(best: Any, types: list[Any], trial: Any) -> list[dict[str, Any]]:
    """For each type in the mix: the mix with one node of it fewer (``trial(counts)``) and what
    then does not run."""
    out = []
    counts = tuple(c for _, c in best.mix)
    for i, t in enumerate(types):
        if counts[i] == 0:
            continue
        fewer = tuple(c - 1 if j == i else c for j, c in enumerate(counts))
        got = trial(fewer)
        item: dict[str, Any] = {"nodeType": t.name, "withoutNode": f"{t.name}-{counts[i] - 1}",
                                "mix": dict((n, c) for n, c in zip((x.name for x in types), fewer))}
        if got is None:
            item.update(simulated=False, reason="the trial budget ran out before this mix was simulated")
        elif got.fits:
            item.update(simulated=True, needed=False,
                        reason="the workload also runs without it (the answer is not minimal)")
        else:
            constraints: list[str] = []
            for f in got.failures:
                for c in f.constraints:
                    if c not in constraints:
                        constraints.append(c)
            item.update(simulated=True, needed=True, bindingConstraints=constraints,
                        notRunning=[{"owner": o, "running": r, "wanted": w} for o, r, w in got.short],
                        failures=[f.to_dict() for f in got.failures])
        out.append(item)
    return out


def _alone_status(a: Any) -> str:
    if a.nodes is None:
        return INFEASIBLE_STATUS if a.exhaustive else "Undecided"
    return PROVEN if a.proven else SCHEDULER_MINIMAL if a.exhaustive else BOUND


def plan_document(p: Any, *, workload: Any, trial: Any) -> dict[str, Any]:
    """The whole answer, in the documented shape."""
    types = p.types
    if p.best is None:
        status = INFEASIBLE_STATUS
    else:
        status = PROVEN if p.proven else SCHEDULER_MINIMAL if p.exhaustive else BOUND
    doc: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "Plan", "status": status,
                           "objective": "price" if p.priced else "nodes"}
    if p.best is not None:
        doc["mix"] = {n: c for n, c in p.best.mix if c}
        doc["nodes"] = p.best.nodes
        if p.priced:
            doc["price"] = round(p.cost(tuple(c for _, c in p.best.mix)), 6)
        doc["pods"] = p.best.pods
    lb: dict[str, Any] = {"basis": p.lower_basis}
    if p.lower_bound != INFEASIBLE:
        lb["price" if p.priced else "nodes"] = round(p.lower_bound, 6) if p.priced else int(p.lower_bound)
    doc["lowerBound"] = lb
    doc["search"] = {"trials": len(p.trials), "budgetSpent": p.budget_spent, "untriedCandidates": p.untried,
                     "mixesNotEnumerated": p.too_many_mixes,
                     "strategy": "bounds, each type alone (gallop, bisect, every count below), "
                                 "then mixes cheapest first; see docs/plan.md"}
    doc["nodeTypes"] = [{"name": t.name, "machine": t.machine_source,
                         **({"price": t.price} if p.priced else {}), "max": t.max,
                         "allocatable": {k: _quantity(k, v) for k, v in sorted(t.allocatable().items()) if v > 0},
                         "lowerBound": a.bound.to_dict(), "alone": a.nodes,
                         "aloneStatus": _alone_status(a),
                         "schedulerOnly": a.scheduler_only}
                        for t, a in zip(types, p.alone)]
    if p.best is not None:
        doc["headroom"] = headroom(p.best.result, types)
        doc["why"] = why(p.best, types, trial)
    else:
        closest = max((t for t in p.trials if t.kubelet), key=lambda t: (t.pods, -t.nodes), default=None)
        if closest is not None:
            doc["closest"] = closest.to_dict()
    doc["notes"] = list(workload.notes)
    doc["trials"] = [t.to_dict() | {"nodes": t.nodes} for t in p.trials]
    return doc
