"""The HTML report's memory and I/O pressure section: ``memory.pressure`` and ``io.pressure`` over
time, per node and per pod.

Reads ``SimResult.node_psi`` (:meth:`kubetwin.sim.pressure.NodePressure.psi_result`); empty for
runs in which nothing stalled on memory or I/O. Charts as in the CPU section.

Not an upstream module: kubetwin's own presentation of the PSI figures (``kernel/sched/psi.c``)
its memory and I/O models derive (:mod:`kubetwin.sim.memory_psi`, :mod:`kubetwin.sim.io_psi`).
"""

from __future__ import annotations

import html
from typing import Any

MAX_NODE_LINES = 6
MAX_POD_ROWS = 50
_TITLES = {"memory": "Memory", "io": "I/O"}
_KEYS = {"memory": "Memory", "io": "IO"}


def _e(x: Any) -> str:
    return html.escape(str(x))


def render_stalls(r: Any) -> str:
    """One section per resource that stalled, or ""."""
    psi = getattr(r, "node_psi", None)
    if not psi:
        return ""
    return "".join(_section(r, res, psi[res]) for res in ("memory", "io") if res in psi)


def _section(r: Any, res: str, data: dict[str, Any]) -> str:
    from ..svg import COLORS, line_chart

    def chart(title: str, lines: list[tuple[str, list[tuple[float, float]]]]) -> str:
        legend = "".join(f"<span><i class=sw style='background:{COLORS[k % len(COLORS)]}'></i>{_e(label)}</span>"
                         for k, (label, _) in enumerate(lines)) if len(lines) > 1 else ""
        return f"<div>{line_chart(title, lines)}<div class=legend>{legend}</div></div>"

    key = _KEYS[res]
    series = data["series"]
    s = r.summary().get(f"{res}Pressure", {})
    cards = "".join(f"<div class=card><b>{_e(v)}</b><span>{_e(k)}</span></div>" for k, v in (
        ("stalled pods", s.get("stalledPods", 0)),
        (f"peak node {res} some avg10", f"{s.get(f'peakNode{key}SomeAvg10', 0.0):.2f}%"),
        (f"peak node {res} full avg10", f"{s.get(f'peakNode{key}FullAvg10', 0.0):.2f}%"),
        (f"peak nodes under {res} pressure (avg10 ≥ 10%)", s.get(f"peakNodesWith{key}Pressure", 0))))
    charts = [chart(f"{res}.pressure avg10 (worst node, %)", [
        ("some", [(x["time"], x[f"maxNode{key}SomeAvg10"]) for x in series]),
        ("full", [(x["time"], x[f"maxNode{key}FullAvg10"]) for x in series])])]
    nodes = sorted(data["nodes"].items(), key=lambda kv: (-kv[1]["peakSomeAvg10"], kv[0]))[:MAX_NODE_LINES]
    if nodes:
        charts.append(chart(f"{res}.pressure some avg10 per node (%)",
                            [(n, [(p[0], p[1]) for p in v["series"]]) for n, v in nodes]))
    pods = sorted(((k, v) for k, v in data["pods"].items() if v["peakSomeAvg10"] > 0),
                  key=lambda kv: (-kv[1]["peakSomeAvg10"], kv[0]))[:MAX_POD_ROWS]
    with_series = [(k, v) for k, v in pods if v["series"]][:MAX_NODE_LINES]
    if with_series:
        charts.append(chart(f"{res}.pressure some avg10 per pod (%)",
                            [(k, [(p[0], p[1]) for p in v["series"]]) for k, v in with_series]))
    rows = "".join(
        f"<tr><td>{_e(k)}</td><td>{_e(c['container'])}</td><td>{v['peakSomeAvg10']:.2f}</td>"
        f"<td>{c[f'{res}.pressure']['some']['total'] / 1e6:,.1f}</td><td>{_e(c['why'])}</td></tr>"
        for k, v in pods for c in v["containers"])
    table = ("<table><tr><th>pod</th><th>container</th><th>peak some avg10 (%)</th><th>some total (s)</th>"
             f"<th>stalled on</th></tr>{rows}</table>") if rows else ""
    doc = "docs/pressure-stalls.md"
    return (f"<section><h2>{_TITLES[res]} pressure — {_e(r.scenario)}</h2>"
            f"<p><code>{res}.pressure</code> (PSI) as modelled by kubetwin ({doc}): what the model derives and "
            "what it approximates is stated there.</p>"
            f"<div class=cards>{cards}</div><div class=charts>{''.join(charts)}</div>{table}</section>")
