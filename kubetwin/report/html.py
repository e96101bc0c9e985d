"""A self-contained HTML report: inline CSS and SVG charts drawn here, no script, no network.

One report holds one or several runs (a comparison): what each ``--variant`` changed, a summary
table with a column per run (a variant's figures with their difference to its baseline; each
figure labelled whole run, end of run or time average), charts over time with a line per run,
the reasons pods did not run, per-node NUMA maps and DRA devices, a table per node and a table
per pod (placement, phase, reason, message). SVG keeps the file small (no 1 MB plotting bundle)
and opens anywhere.
"""

from __future__ import annotations

import html
from typing import Any, Sequence

COLORS = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777")
MAX_NODE_ROWS = 300
MAX_NUMA_MAPS = 48
MAX_POD_ROWS = 2000

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


def _e(x: Any) -> str:
    return html.escape(str(x))


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def line_chart(title: str, series: Sequence[tuple[str, Sequence[tuple[float, float]]]], *, percent: bool = False,
               width: int = 600, height: int = 230) -> str:
    """An SVG line chart; ``series`` = [(label, [(x, y), ...])]."""
    pad_l, pad_b, pad_t, pad_r = 54, 30, 26, 12
    xs = [x for _, pts in series for x, _ in pts] or [0.0]
    ys = [y for _, pts in series for _, y in pts] or [0.0]
    x0, x1 = min(xs), max(xs)
    y1 = max(ys) if ys else 1.0
    if percent:
        y1 = max(y1, 0.01)
    y1 = y1 or 1.0
    x1 = x1 if x1 > x0 else x0 + 1

    def sx(x: float) -> float:
        return pad_l + (x - x0) / (x1 - x0) * (width - pad_l - pad_r)

    def sy(y: float) -> float:
        return height - pad_b - y / y1 * (height - pad_b - pad_t)

    out = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}">',
           f'<text x="{pad_l}" y="16" font-size="13" font-weight="600">{_e(title)}</text>',
           f'<line x1="{pad_l}" y1="{height - pad_b}" x2="{width - pad_r}" y2="{height - pad_b}" stroke="#9ca3af"/>',
           f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{height - pad_b}" stroke="#9ca3af"/>']
    for k in range(5):
        yv = y1 * k / 4
        y = sy(yv)
        label = _pct(yv) if percent else (f"{yv:.0f}" if y1 >= 4 else f"{yv:.2f}")
        out.append(f'<line x1="{pad_l}" y1="{y:.1f}" x2="{width - pad_r}" y2="{y:.1f}" stroke="#f0f0f0"/>'
                   f'<text x="{pad_l - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{label}</text>')
    for k in range(5):
        xv = x0 + (x1 - x0) * k / 4
        out.append(f'<text x="{sx(xv):.1f}" y="{height - 10}" font-size="10" text-anchor="middle">{_time(xv)}</text>')
    for idx, (label, pts) in enumerate(series):
        if not pts:
            continue
        color = COLORS[idx % len(COLORS)]
        d = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in _thin(pts))
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.8" points="{d}"><title>{_e(label)}</title></polyline>')
    out.append("</svg>")
    return "".join(out)


def _thin(pts: Sequence[tuple[float, float]], limit: int = 800) -> Sequence[tuple[float, float]]:
    if len(pts) <= limit:
        return pts
    step = len(pts) / limit
    return [pts[int(k * step)] for k in range(limit)] + [pts[-1]]


def bar_chart(title: str, rows: Sequence[tuple[str, int]], width: int = 600) -> str:
    rows = list(rows)[:14]
    if not rows:
        return ""
    bar_h, label_w = 20, 330
    height = 28 + bar_h * len(rows)
    top = max(v for _, v in rows) or 1
    out = [f'<svg width="{width}" height="{height}" role="img" aria-label="{_e(title)}">',
           f'<text x="0" y="16" font-size="13" font-weight="600">{_e(title)}</text>']
    for k, (label, v) in enumerate(rows):
        y = 26 + k * bar_h
        w = (width - label_w - 50) * v / top
        short = label if len(label) <= 52 else label[:50] + "…"
        out.append(f'<text x="0" y="{y + 13}" font-size="11"><title>{_e(label)}</title>{_e(short)}</text>'
                   f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{bar_h - 6}" fill="#f59e0b"/>'
                   f'<text x="{label_w + w + 4:.1f}" y="{y + 13}" font-size="11">{v}</text>')
    out.append("</svg>")
    return "".join(out)


def numa_map(node: Any) -> str:
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
        dra += (f"<div>DRA {_e(kind)}: {used}/{total} allocated " + "".join(
            f'<svg width="12" height="12"><rect width="12" height="12" fill="{"#9333ea" if k < used else "#e5e7eb"}"/>'
            "</svg>" for k in range(min(total, 64))) + "</div>")
    return (f'<div class="nm"><b>{_e(node.name)}</b> · {node.pods} pods'
            + (f" · {node.stranded_cpus} stranded" if node.stranded_cpus else "") + "".join(cells) + gpus + dra
            + "</div>")


def _time(s: float) -> str:
    s = int(s)
    if s >= 86400:
        return f"{s / 86400:.1f}d"
    if s >= 3600:
        return f"{s // 3600}h{(s % 3600) // 60:02d}"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}"
    return f"{s}s"


def _delta_cell(value: float, base: float | None, kind: str) -> str:
    from .terminal import fmt

    text = _e(fmt(value, kind))
    if base is None or kind not in ("n", "%", "f"):
        return f"<td>{text}</td>"
    d = value - base
    if abs(d) < (0.0005 if kind == "%" else 1e-9):
        return f"<td>{text}<span class=d>(=)</span></td>"
    shown = f"{abs(100 * d):.1f} pts" if kind == "%" else (f"{abs(d):.1f}" if kind == "f" else str(int(abs(d))))
    return f"<td>{text}<span class='d {'up' if d > 0 else 'down'}'>({'+' if d > 0 else '−'}{shown})</span></td>"


def _variants(results: Sequence[Any], bases: Sequence[Any]) -> str:
    rows = [(r, b) for r, b in zip(results, bases) if r.variant]
    if not rows:
        return ""
    body = "".join(f"<tr><td>{_e(r.scenario)}</td><td class=l>{_e(', '.join(r.changes) or 'no change')}</td>"
                   f"<td class=l>{_e(b.scenario) if b is not None else '—'}</td></tr>" for r, b in rows)
    return ("<section><h2>Variants</h2><table><thead><tr><th>run</th><th>changes (--variant)</th>"
            "<th>compared with</th></tr></thead>" + body + "</table></section>")


def render_html(results: Sequence[Any], title: str = "kubetwin simulation") -> str:
    from ..sim.results import baseline_of
    from .terminal import summary_rows

    results = list(results)
    sums = [r.summary() for r in results]
    bases = baseline_of(results)
    base_sums = [None if b is None else sums[results.index(b)] for b in bases]
    parts = ["<!doctype html><html lang=en><head><meta charset=utf-8>",
             f"<meta name=viewport content='width=device-width,initial-scale=1'><title>{_e(title)}</title>",
             f"<style>{_CSS}</style></head><body>",
             f"<header><h1>{_e(title)}</h1><p>{_e(', '.join(r.scenario for r in results))} · "
             f"{results[0].nodes} nodes · {sums[0]['pods']} pods · what the scheduler and each node's kubelet "
             "would do, over time</p></header><main>"]
    # cards for the first run
    s0 = sums[0]
    cards = [("scheduled", s0["scheduled"]), ("running at the end", s0["running"]),
             ("pending at the end", s0["pending"]),
             ("rejected by kubelets", sum(s0["rejectedByKubelet"].values())),
             ("rejected by admission", sum(s0["rejectedByAdmissionControl"].values())),
             ("preempted", s0["preempted"]), ("evicted", s0["evicted"]), ("OOM kills", s0["oomKilled"]),
             ("cpu requested, time average", _pct(s0.get("utilizationAverage", {}).get("cpu", 0))),
             ("stranded CPUs at the end", s0["strandedCpus"])]
    if "gpu" in s0["utilization"]:
        cards.append(("gpu allocated, time average", _pct(s0.get("utilizationAverage", {}).get("gpu", 0))))
    if "devices" in s0["utilization"]:
        cards.append(("DRA devices allocated, time average",
                      _pct(s0.get("utilizationAverage", {}).get("devices", 0))))
    parts.append("<section><h2>At a glance" + (f" — {_e(results[0].scenario)}" if len(results) > 1 else "")
                 + "</h2><div class=cards>"
                 + "".join(f"<div class=card><b>{_e(v)}</b><span>{_e(k)}</span></div>" for k, v in cards)
                 + "</div></section>")
    parts.append(_variants(results, bases))
    # summary table (comparison): the terminal's rows, a variant's figures with their delta
    rows = ["<tr><th></th>" + "".join(f"<th>{_e(r.scenario)}" + (" <span class=d>(Δ baseline)</span>"
                                                                  if b is not None else "") + "</th>"
                                      for r, b in zip(results, bases)) + "</tr>"]
    for label, fig, kind in summary_rows(sums):
        rows.append(f"<tr><td>{_e(label)}</td>" + "".join(
            _delta_cell(fig(s), None if bs is None else fig(bs), kind) for s, bs in zip(sums, base_sums)) + "</tr>")
    rows.append("<tr><td>rejected by kubelets, by reason</td>" + "".join(
        f"<td>{_e(', '.join(f'{k}: {v}' for k, v in s['rejectedByKubelet'].items()) or 0)}</td>" for s in sums) + "</tr>")
    rows.append("<tr><td>scheduling attempts</td>" + "".join(f"<td>{s['schedulingAttempts']}</td>" for s in sums)
                + "</tr>")
    parts.append("<section><h2>Summary</h2><p>Counts are over the whole run unless labelled <i>at the end</i> "
                 "(the state when the simulation stopped) or <i>time average</i> (averaged over simulated time)."
                 "</p><table>" + "".join(rows) + "</table></section>")
    # charts
    legend = "<div class=legend>" + "".join(
        f"<span><i class=sw style='background:{COLORS[k % len(COLORS)]}'></i>{_e(r.scenario)}</span>"
        for k, r in enumerate(results)) + "</div>"
    charts = [line_chart("running pods", [(r.scenario, [(s.time, s.running) for s in r.samples]) for r in results]),
              line_chart("pending pods", [(r.scenario, [(s.time, s.pending) for s in r.samples]) for r in results])]
    for res in ("cpu", "memory", "gpu", "devices"):
        if any(res in s.utilization for r in results for s in r.samples[:1]):
            charts.append(line_chart("DRA devices allocated" if res == "devices" else f"{res} requested / allocatable",
                                     [(r.scenario, [(s.time, s.utilization.get(res, 0.0)) for s in r.samples])
                                      for r in results], percent=True))
    if any(s.evicted for r in results for s in r.samples):
        charts.append(line_chart("evictions (cumulative)", [(r.scenario, [(s.time, s.evicted) for s in r.samples])
                                                             for r in results]))
    if any(s.oom_killed for r in results for s in r.samples):
        charts.append(line_chart("OOM kills (cumulative)", [(r.scenario, [(s.time, s.oom_killed) for s in r.samples])
                                                             for r in results]))
    if any(s.pressure for r in results for s in r.samples):
        charts.append(line_chart("nodes under memory pressure", [
            (r.scenario, [(s.time, s.pressure.get("MemoryPressure", 0)) for s in r.samples]) for r in results]))
    if any(s.gpu_fragmentation for r in results for s in r.samples):
        charts.append(line_chart("GPU fragmentation", [(r.scenario, [(s.time, s.gpu_fragmentation) for s in r.samples])
                                                        for r in results], percent=True))
    parts.append("<section><h2>Over time</h2>" + legend + "<div class=charts>" + "".join(charts) + "</div></section>")
    from .autoscaling import autoscaling_section

    parts.append(autoscaling_section(results))
    # reasons
    for r, s in zip(results, sums):
        reasons = sorted(s["pendingByReason"].items(), key=lambda kv: -kv[1])
        kub = sorted(s["rejectedByKubelet"].items(), key=lambda kv: -kv[1])
        if reasons or kub:
            parts.append(f"<section><h2>Why pods did not run — {_e(r.scenario)}</h2><div class=charts>"
                         + bar_chart("pending, by scheduler reason", reasons)
                         + bar_chart("rejected by the kubelet, by reason", kub) + "</div>" + _examples(r) + "</section>")
    # NUMA maps and node table for each run
    for r in results:
        with_numa = [n for n in r.node_reports if n.numa or n.gpus or n.dra_devices]
        if with_numa:
            shown = sorted(with_numa, key=lambda n: (-n.stranded_cpus, -n.pods))[:MAX_NUMA_MAPS]
            parts.append(f"<section><h2>Per-node NUMA maps — {_e(r.scenario)}</h2>"
                         "<p><i class=sw style='background:#2563eb'></i>exclusive CPUs "
                         "<i class=sw style='background:#9ca3af'></i>reserved "
                         "<i class=sw style='background:#d1fae5'></i>shared pool"
                         + (f" · showing {len(shown)} of {len(with_numa)} nodes" if len(shown) < len(with_numa) else "")
                         + "</p><div class=numa>" + "".join(numa_map(n) for n in shown) + "</div></section>")
        parts.append(_pressure_events(r))
        parts.append(_node_table(r))
        parts.append(_pod_table(r))
    parts.append("<footer style='padding:8px 32px;color:#6b7280'>kubetwin · self-contained report, no network needed"
                 "</footer></main></body></html>")
    return "".join(parts)


def _examples(r: Any, limit: int = 8) -> str:
    seen: dict[str, Any] = {}
    for p in r.pods:
        if p.message and p.phase in ("Pending", "Failed") and p.reason not in seen:
            seen[p.reason + p.message[:40]] = p
        if len(seen) >= limit:
            break
    if not seen:
        return ""
    rows = "".join(f"<tr><td>{_e(p.namespace)}/{_e(p.name)}</td><td>{_e(p.phase)}</td><td>{_e(p.reason)}</td>"
                   f"<td class=msg>{_e(p.message)}</td></tr>" for p in seen.values())
    return ("<h3 style='font-size:14px'>Examples</h3><table><thead><tr><th>pod</th><th>phase</th><th>reason</th>"
            "<th>message</th></tr></thead>" + rows + "</table>")


def _pressure_events(r: Any, limit: int = 40) -> str:
    """Evictions and OOM kills, with the kubelet's and the kernel's words."""
    evs = [e for e in r.events if e["type"] in ("Evicted", "OOMKilled")]
    if not evs:
        return ""
    rows = "".join(f"<tr><td>{_time(e['time'])}</td><td>{_e(e['type'])}</td><td>{_e(e['node'])}</td>"
                   f"<td>{_e(e['pod'])}</td><td class=msg>{_e(e['message'])}</td></tr>" for e in evs[:limit])
    more = f" (first {limit} of {len(evs)})" if len(evs) > limit else ""
    return (f"<section><h2>Node pressure — {_e(r.scenario)}{more}</h2><div class=scroll><table><thead><tr>"
            "<th>time</th><th>what</th><th>node</th><th>pod</th><th>message</th></tr></thead>" + rows
            + "</table></div></section>")


def _pod_table(r: Any) -> str:
    from .terminal import pod_rows

    rows = pod_rows(r, MAX_POD_ROWS)
    if not rows:
        return ""
    more = f" (first {len(rows)} of {len(r.pods)}, pods that did not run first; --json has all)" \
        if len(r.pods) > len(rows) else ""
    body = "".join(f"<tr><td>{_e(p['pod'])}</td><td>{_e(p['node'])}</td><td class=l>{_e(p['placement'])}</td>"
                   f"<td>{_e(p['phase'])}</td><td>{_e(p['reason'])}</td><td class=msg>{_e(p['message'])}</td></tr>"
                   for p in rows)
    return (f"<section><h2>Pods — {_e(r.scenario)}{more}</h2><div class=scroll><table><thead><tr><th>pod</th>"
            "<th>node</th><th>placement</th><th>phase</th><th>reason</th><th>message</th></tr></thead>" + body
            + "</table></div></section>")


def _devices_used(n: Any) -> str:
    """GPUs in use at the end: shared GPUs (GPU-sharing model) as GPUs' worth, DRA devices by kind."""
    parts = []
    if n.gpus:
        parts.append(f"{sum(n.gpus) / 1000:.2f}/{len(n.gpus)} GPUs")
    for kind, total in sorted(n.dra_devices.items()):
        parts.append(f"{n.dra_allocated.get(kind, 0)}/{total} {kind} (DRA)")
    return ", ".join(parts)


def _node_table(r: Any) -> str:
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
            cells.append(f"<td>{_pct(n.requested.get(x, 0) / a) if a else '—'}</td>")
        pol = ", ".join(f"{k}={v}" for k, v in n.policies.items())
        gpu = _e(_devices_used(n))
        rows.append(f"<tr><td>{_e(n.name)}</td><td>{_e(n.group)}</td><td>{n.pods}</td>{''.join(cells)}"
                    f"<td style='text-align:left'>{_e(pol)}</td><td>{n.stranded_cpus}</td><td>{gpu}</td>"
                    f"<td>{n.evicted or ''}</td><td>{_e(', '.join(n.conditions))}</td></tr>")
    more = f" (the {len(nodes)} busiest of {len(r.node_reports)})" if len(r.node_reports) > len(nodes) else ""
    return (f"<section><h2>Nodes — {_e(r.scenario)}{more}</h2><div class=scroll><table><thead>{head}</thead>"
            + "".join(rows) + "</table></div></section>")
