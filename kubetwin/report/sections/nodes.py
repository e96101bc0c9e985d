"""Nodes: requests, policies, stranded CPUs, devices in use, evictions and conditions of the
busiest nodes.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..markup import escape, pct

if TYPE_CHECKING:
    from ...sim.results import SimResult

MAX_NODE_ROWS = 300


def nodes_section(r: SimResult) -> str:
    nodes = sorted(r.node_reports, key=lambda n: -n.pods)[:MAX_NODE_ROWS]
    res = [x for x in ("cpu", "memory") if any(x in n.allocatable for n in nodes)]
    head = "<tr><th>node</th><th>group</th><th>pods at the end</th>" + "".join(
        f"<th>{x} requested</th>" for x in res) + \
        "<th>policies</th><th>stranded CPUs</th><th>GPUs / devices used</th><th>evicted</th><th>conditions</th></tr>"
    rows = []
    for n in nodes:
        cells = []
        for x in res:
            a = n.allocatable.get(x, 0)
            cells.append(f"<td>{pct(n.requested.get(x, 0) / a) if a else '—'}</td>")
        pol = ", ".join(f"{k}={v}" for k, v in n.policies.items())
        gpu = escape(_devices_used(n))
        rows.append(f"<tr><td>{escape(n.name)}</td><td>{escape(n.group)}</td><td>{n.pods}</td>{''.join(cells)}"
                    f"<td style='text-align:left'>{escape(pol)}</td><td>{n.stranded_cpus}</td><td>{gpu}</td>"
                    f"<td>{n.evicted or ''}</td><td>{escape(', '.join(n.conditions))}</td></tr>")
    more = f" (the {len(nodes)} busiest of {len(r.node_reports)})" if len(r.node_reports) > len(nodes) else ""
    return (f"<section><h2>Nodes — {escape(r.scenario)}{more}</h2><div class=scroll><table><thead>{head}</thead>"
            + "".join(rows) + "</table></div></section>")


def _devices_used(n: Any) -> str:
    """GPUs in use at the end: shared GPUs (GPU-sharing model) as GPUs' worth, DRA devices by kind."""
    parts = []
    if n.gpus:
        parts.append(f"{sum(n.gpus) / 1000:.2f}/{len(n.gpus)} GPUs")
    for kind, total in sorted(n.dra_devices.items()):
        parts.append(f"{n.dra_allocated.get(kind, 0)}/{total} {kind} (DRA)")
    return ", ".join(parts)
