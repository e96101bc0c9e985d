"""Per-node NUMA maps: exclusive, reserved and shared CPUs of each NUMA node, GPUs and DRA
devices in use; the nodes with the most stranded CPUs first.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..markup import escape

if TYPE_CHECKING:
    from ...sim.results import NodeReport, SimResult

MAX_NUMA_MAPS = 48


def numa_section(r: SimResult) -> str:
    """One run's NUMA maps; empty when no node has NUMA figures, GPUs or DRA devices."""
    with_numa = [n for n in r.node_reports if n.numa or n.gpus or n.dra_devices]
    if not with_numa:
        return ""
    shown = sorted(with_numa, key=lambda n: (-n.stranded_cpus, -n.pods))[:MAX_NUMA_MAPS]
    return (f"<section><h2>Per-node NUMA maps — {escape(r.scenario)}</h2>"
            "<p><i class=sw style='background:#2563eb'></i>exclusive CPUs "
            "<i class=sw style='background:#9ca3af'></i>reserved "
            "<i class=sw style='background:#d1fae5'></i>shared pool"
            + (f" · showing {len(shown)} of {len(with_numa)} nodes" if len(shown) < len(with_numa) else "")
            + "</p><div class=numa>" + "".join(numa_map(n) for n in shown) + "</div></section>")


def numa_map(node: NodeReport) -> str:
    """One node's NUMA nodes as bars: exclusive CPUs, reserved, shared/free."""
    cells = []
    for n in node.numa:
        total = max(n.cpus, 1)
        excl_w = 120 * n.exclusive / total
        free_w = 120 * n.free / total
        res_w = 120 - excl_w - free_w
        cells.append(f'<div>NUMA {n.id}: {n.exclusive}/{n.cpus} exclusive<br><svg width="122" height="12">'
                     f'<rect x="0" y="0" width="{excl_w:.1f}" height="12" fill="#2563eb"/>'
                     f'<rect x="{excl_w:.1f}" y="0" width="{max(res_w, 0):.1f}" height="12" fill="#9ca3af"/>'
                     f'<rect x="{excl_w + max(res_w, 0):.1f}" y="0" width="{free_w:.1f}" height="12" fill="#d1fae5"/></svg></div>')
    gpus = ""
    if node.gpus:
        gpus = "<div>GPUs: " + " ".join(
            f'<svg width="14" height="14"><rect width="14" height="14" fill="#e5e7eb"/>'
            f'<rect y="{14 - 14 * g / 1000:.1f}" width="14" height="{14 * g / 1000:.1f}" fill="#9333ea"/>'
            f'<title>{g / 10:.0f}% used</title></svg>' for g in node.gpus) + "</div>"
    dra = ""
    for kind, total in sorted(node.dra_devices.items()):
        used = node.dra_allocated.get(kind, 0)
        dra += (f"<div>DRA {escape(kind)}: {used}/{total} allocated " + "".join(
            f'<svg width="12" height="12"><rect width="12" height="12" fill="{"#9333ea" if k < used else "#e5e7eb"}"/>'
            "</svg>" for k in range(min(total, 64))) + "</div>")
    return (f'<div class="nm"><b>{escape(node.name)}</b> · {node.pods} pods'
            + (f" · {node.stranded_cpus} stranded" if node.stranded_cpus else "") + "".join(cells) + gpus + dra
            + "</div>")
