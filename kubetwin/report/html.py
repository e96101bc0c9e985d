"""A self-contained HTML report: inline CSS and SVG charts drawn here, no script, no network.

One report holds one or several runs (a comparison): what each ``--variant`` changed, a summary
table with a column per run (a variant's figures with their difference to its baseline; each
figure labelled whole run, end of run or time average), charts over time with a line per run,
the reasons pods did not run, per-node NUMA maps and DRA devices, a table per node and a table
per pod (placement, phase, reason, message). SVG keeps the file small (no 1 MB plotting bundle)
and opens anywhere.

Each section is its own module under :mod:`kubetwin.report.sections`; this module holds the
page (style, header, footer) and composes the sections in order.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .autoscaling import autoscaling_section
from .markup import escape
from .placement import placement_section
from .sections.blockio import render_blockio
from .sections.cpu import render_cpu
from .sections.disk import render_disk
from .sections.glance import glance_section
from .sections.nodes import MAX_NODE_ROWS, nodes_section
from .sections.numa import MAX_NUMA_MAPS, numa_map, numa_section
from .sections.over_time import over_time_section
from .sections.pods import MAX_POD_ROWS, pods_section
from .sections.pressure import pressure_section
from .sections.reasons import reasons_section
from .sections.resizes import resizes_section
from .sections.stalls import render_stalls
from .sections.summary import summary_section
from .sections.variants import variants_section
from .svg import COLORS, bar_chart, line_chart

if TYPE_CHECKING:
    from ..sim.results import SimResult

__all__ = ["render_html", "line_chart", "bar_chart", "numa_map", "COLORS", "MAX_NODE_ROWS", "MAX_NUMA_MAPS",
           "MAX_POD_ROWS"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#111827;background:#f9fafb}
header{background:#111827;color:#f9fafb;padding:18px 32px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;color:#d1d5db}main{padding:16px 32px;max-width:1300px}
section{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:14px 18px;margin:14px 0}
h2{font-size:17px;margin:0 0 10px}table{border-collapse:collapse;font-size:13px}
th,td{padding:4px 10px;border-bottom:1px solid #f0f0f0;text-align:right}th:first-child,td:first-child{text-align:left}
thead th{background:#f3f4f6;position:sticky;top:0}.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{border:1px solid #e5e7eb;border-radius:8px;padding:8px 14px;min-width:130px;background:#fff}
.card b{display:block;font-size:22px}.card span{color:#6b7280;font-size:12px}
.charts{display:flex;flex-wrap:wrap;gap:18px}.legend span{display:inline-block;margin-right:14px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}
.numa{display:flex;flex-wrap:wrap;gap:10px}.nm{border:1px solid #e5e7eb;border-radius:6px;padding:6px 8px;font-size:12px}
.scroll{max-height:520px;overflow:auto}.msg{max-width:700px;text-align:left;color:#374151}
.d{font-size:11px;margin-left:4px;color:#6b7280}.up,.down{color:#1d4ed8;font-weight:600}td.l{text-align:left}
"""


def render_html(results: Sequence[SimResult], title: str = "kubetwin simulation") -> str:
    from ..sim.results import baseline_of

    results = list(results)
    sums = [r.summary() for r in results]
    bases = baseline_of(results)
    base_sums = [None if b is None else sums[results.index(b)] for b in bases]
    parts = ["<!doctype html><html lang=en><head><meta charset=utf-8>",
             f"<meta name=viewport content='width=device-width,initial-scale=1'><title>{escape(title)}</title>",
             f"<style>{_CSS}</style></head><body>",
             f"<header><h1>{escape(title)}</h1><p>{escape(', '.join(r.scenario for r in results))} · "
             f"{results[0].nodes} nodes · {sums[0]['pods']} pods · what the scheduler and each node's kubelet "
             "would do, over time</p></header><main>"]
    parts.append(glance_section(results, sums))
    parts.append(variants_section(results, bases))
    parts.append(summary_section(results, sums, bases, base_sums))
    parts.append(placement_section(results))
    parts.append(over_time_section(results))
    parts.append(autoscaling_section(results))
    for r, s in zip(results, sums):
        parts.append(reasons_section(r, s))
    for r in results:
        parts.append(numa_section(r))
        parts.append(pressure_section(r))
        parts.append(resizes_section(r))
        parts.append(render_cpu(r))
        parts.append(render_disk(r))
        parts.append(render_stalls(r))
        parts.append(render_blockio(r))
        parts.append(nodes_section(r))
        parts.append(pods_section(r))
    parts.append("<footer style='padding:8px 32px;color:#6b7280'>kubetwin · self-contained report, no network needed"
                 "</footer></main></body></html>")
    return "".join(parts)
