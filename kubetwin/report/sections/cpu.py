"""The HTML report's CPU section: throttling and CPU pressure over time, per node and per pod.

Reads ``SimResult.node_cpu`` (:meth:`kubetwin.sim.cpu.NodeCPU.result`); empty for runs without
CPU curves. The charts are the report's own SVG line charts (:func:`kubetwin.report.html.line_chart`).

Not an upstream module: kubetwin's own presentation of ``cpu.stat`` and ``cpu.pressure`` figures.
"""

from __future__ import annotations

import html
from typing import Any

#: nodes and pods shown with their own charts / rows (the worst first)
MAX_NODE_CHARTS = 6
MAX_POD_ROWS = 50


def _e(x: Any) -> str:
    return html.escape(str(x))


def render_cpu(r: Any) -> str:
    """The section for one run, or "" when it accounted no CPU."""
    cpu = getattr(r, "node_cpu", None)
    if not cpu:
        return ""
    from ..svg import COLORS, line_chart

    def chart(title: str, lines: list[tuple[str, list[tuple[float, float]]]]) -> str:
        """A line chart with a legend of its own (each chart here has its own lines)."""
        legend = "".join(f"<span><i class=sw style='background:{COLORS[k % len(COLORS)]}'></i>{_e(label)}</span>"
                         for k, (label, _) in enumerate(lines)) if len(lines) > 1 else ""
        return f"<div>{line_chart(title, lines)}<div class=legend>{legend}</div></div>"

    series = cpu["series"]
    s = r.summary().get("cpu", {})
    cards = "".join(f"<div class=card><b>{_e(v)}</b><span>{_e(k)}</span></div>" for k, v in (
        ("throttled pods", s.get("throttledPods", 0)),
        ("throttled periods", f"{100 * s.get('throttledPeriodShare', 0.0):.1f}%"),
        ("time throttled", f"{s.get('throttledSeconds', 0.0):,.0f} s"),
        ("peak node cpu some avg10", f"{s.get('peakNodeCpuSomeAvg10', 0.0):.2f}%"),
        ("peak nodes under CPU pressure (avg10 ≥ 10%)", s.get("peakNodesWithCpuPressure", 0))))
    charts = [
        chart("CPU used and wanted (cores)", [
            ("used", [(x["time"], x["cpuUsedCores"]) for x in series]),
            ("wanted", [(x["time"], x["cpuWantedCores"]) for x in series])]),
        chart("throttled containers", [("throttled", [(x["time"], x["throttledContainers"]) for x in series])]),
        chart("cpu.pressure some avg10 (worst node, %)",
                   [("worst node", [(x["time"], x["maxNodeCpuSomeAvg10"]) for x in series])]),
    ]
    nodes = sorted(cpu["nodes"].items(), key=lambda kv: -kv[1]["peakCpuSomeAvg10"])[:MAX_NODE_CHARTS]
    if nodes:
        charts.append(chart("cpu.pressure some avg10 per node (%)",
                                 [(name, [(p[0], p[2]) for p in v["series"]]) for name, v in nodes]))
        charts.append(chart("CPU used per node (cores)",
                                 [(name, [(p[0], p[1]) for p in v["series"]]) for name, v in nodes]))
    pods = _worst_pods(cpu["pods"])
    if pods:
        charts.append(chart("cpu.pressure some avg10 per pod (%)",
                                 [(k, [(p[0], p[2]) for p in v["series"]]) for k, v in pods[:MAX_NODE_CHARTS]]))
    return (f"<section><h2>CPU: throttling and pressure — {_e(r.scenario)}</h2>"
            "<p>CFS bandwidth (<code>cpu.max</code>, <code>cpu.stat</code>), the <code>cpu.weight</code> split of "
            "contended pools and CPU pressure (PSI) as modelled by kubetwin (docs/cpu-throttling.md).</p>"
            f"<div class=cards>{cards}</div><div class=charts>{''.join(charts)}</div>"
            + _pod_table(pods) + "</section>")


def _worst_pods(pods: dict[str, Any]) -> list[tuple[str, Any]]:
    def key(kv: tuple[str, Any]) -> tuple[float, int]:
        cs = kv[1]["containers"]
        return (-max((c["peakSomeAvg10"] for c in cs), default=0.0),
                -sum(c["cpu.stat"]["throttled_usec"] for c in cs))

    hit = [(k, v) for k, v in pods.items()
           if any(c["cpu.stat"]["nr_throttled"] or c["peakSomeAvg10"] for c in v["containers"])]
    return sorted(hit, key=key)[:MAX_POD_ROWS]


def _pod_table(pods: list[tuple[str, Any]]) -> str:
    if not pods:
        return "<p>No container was throttled or waited for CPU.</p>"
    rows = []
    for key, v in pods:
        for c in v["containers"]:
            st, pr = c["cpu.stat"], c["cpu.pressure"]
            rows.append(f"<tr><td>{_e(key)}</td><td class=l>{_e(c['container'])}</td><td>{_e(c['cpu.max'])}</td>"
                        f"<td>{c['cpu.weight']}</td><td class=l>{_e(c['pool'])}</td><td>{st['nr_periods']:,}</td>"
                        f"<td>{st['nr_throttled']:,}</td><td>{st['throttled_usec'] / 1e6:,.1f}</td>"
                        f"<td>{c['peakSomeAvg10']:.2f}</td><td>{pr['some']['avg10']:.2f}</td>"
                        f"<td>{pr['full']['avg10']:.2f}</td></tr>")
    return ("<div class=scroll><table><thead><tr><th>pod</th><th>container</th><th>cpu.max</th><th>cpu.weight</th>"
            "<th>pool</th><th>nr_periods</th><th>nr_throttled</th><th>throttled s</th><th>peak some avg10</th>"
            "<th>some avg10 (end)</th><th>full avg10 (end)</th></tr></thead>" + "".join(rows) + "</table></div>")
