"""The report's "CPU placement" section: kubelet managers and runtime policies side by side.

For every run whose nodes have a kubelet on a known machine, the figures of
:func:`kubetwin.sim.runtime_policies.placement_report` per node manager (``kubelet static``,
``topology-aware``, ``balloons``, a Python NRI plugin): exclusive CPUs, stranded CPUs,
NUMA-misaligned and unpinned containers at the end of the run, and the pods refused by the
kubelet and by the runtime over the run. Runs side by side, one column each, so "kubelet static +
single-numa-node" and "kubelet none + topology-aware" compare on one workload.

Not an upstream module: kubetwin's own report section.
"""

from __future__ import annotations

from html import escape
from typing import Any, Sequence

ROWS = (("exclusive CPUs, at the end", "exclusiveCpus"),
        ("stranded CPUs (free CPUs of NUMA nodes holding exclusive ones), at the end", "strandedCpus"),
        ("containers running, at the end", "containers"),
        ("NUMA-misaligned containers, at the end", "misalignedContainers"),
        ("unpinned containers, at the end", "unpinnedContainers"),
        ("pods rejected by the kubelet", "rejectedByKubelet"),
        ("pods rejected by the runtime (NRI)", "rejectedByRuntime"))


def _managers(placement: dict[str, Any]) -> str:
    seen: dict[str, int] = {}
    for n in placement.get("nodes") or ():
        seen[n["manager"]] = seen.get(n["manager"], 0) + 1
    return ", ".join(f"{m} ({k} nodes)" if k > 1 else m for m, k in seen.items())


def _placed(results: Sequence[Any]) -> str:
    """Containers the runtime policies placed over the run, per run: how many, how many misaligned."""
    cells = []
    for r in results:
        rows = (r.placement or {}).get("containers")
        if rows is None:
            cells.append("<td>–</td>")
        else:
            bad = sum(1 for c in rows if c["misaligned"])
            cells.append(f"<td>{len(rows)} ({bad} misaligned)</td>")
    return "<tr><td>containers placed by runtime policies, over the run</td>" + "".join(cells) + "</tr>"


def placement_section(results: Sequence[Any]) -> str:
    """The section, or "" when no run has placement figures or none runs a runtime policy."""
    results = [r for r in results if getattr(r, "placement", None)]
    if not results or not any("containers" in r.placement for r in results):
        return ""
    head = "<tr><th></th>" + "".join(f"<th>{escape(r.scenario)}</th>" for r in results) + "</tr>"
    rows = ["<tr><td>node managers</td>" + "".join(f"<td>{escape(_managers(r.placement))}</td>" for r in results)
            + "</tr>"]
    for label, key in ROWS:
        rows.append(f"<tr><td>{escape(label)}</td>"
                    + "".join(f"<td>{r.placement['totals'].get(key, 0)}</td>" for r in results) + "</tr>")
    rows.append(_placed(results))
    return ("<section><h2>CPU placement — kubelet managers and runtime policies</h2><p>A container is "
            "<i>NUMA-misaligned</i> when its cpuset.cpus spans more NUMA nodes than its CPUs need, or its "
            "cpuset.mems names a NUMA node with CPUs outside its CPUs' nodes; <i>unpinned</i> when nobody set "
            "its cpuset.</p><table>" + head + "".join(rows) + "</table></section>")


def placement_table(results: Sequence[Any]) -> Any:
    """The same figures as a terminal table (rich), or None when no run has a runtime policy."""
    from rich.markup import escape as rich_escape
    from rich.table import Table

    results = [r for r in results if getattr(r, "placement", None)]
    if not results or not any("containers" in r.placement for r in results):
        return None
    t = Table(title="CPU placement — kubelet managers and runtime policies")
    t.add_column("")
    for r in results:
        t.add_column(rich_escape(r.scenario), justify="right")
    t.add_row("node managers", *(rich_escape(_managers(r.placement)) for r in results))
    for label, key in ROWS:
        t.add_row(label.replace(" (free CPUs of NUMA nodes holding exclusive ones)", ""),
                  *(str(r.placement["totals"].get(key, 0)) for r in results))
    return t
