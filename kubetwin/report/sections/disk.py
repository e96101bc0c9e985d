"""The HTML report's disk and PID section: filesystems and processes over time, per node and per pod.

Reads ``SimResult.node_disk`` (:meth:`kubetwin.sim.pressure.NodePressure.disk_result`) and the
run's events (DiskPressure / PIDPressure conditions, image GC, local-storage evictions); empty for
runs whose nodes have no ``disk`` figures.

Not an upstream module: kubetwin's own presentation of the eviction manager's disk and PID signals.
"""

from __future__ import annotations

import html
from typing import Any

MAX_NODE_LINES = 6
MAX_POD_LINES = 6
_EVENTS = ("ImageGC", "FreeDiskSpaceFailed", "PIDLimitReached")


def _e(x: Any) -> str:
    return html.escape(str(x))


def render_disk(r: Any) -> str:
    disk = getattr(r, "node_disk", None)
    if not disk:
        return ""
    from ..svg import COLORS, line_chart

    def chart(title: str, lines: list[tuple[str, list[tuple[float, float]]]], percent: bool = False) -> str:
        legend = "".join(f"<span><i class=sw style='background:{COLORS[k % len(COLORS)]}'></i>{_e(label)}</span>"
                         for k, (label, _) in enumerate(lines)) if len(lines) > 1 else ""
        return f"<div>{line_chart(title, lines, percent=percent)}<div class=legend>{legend}</div></div>"

    def fullest(key: int, cap: str) -> list[tuple[str, Any]]:
        return sorted(disk.items(), key=lambda kv: -max((p[key] / (kv[1][cap] or 1) for p in kv[1]["series"]),
                                                        default=0.0))[:MAX_NODE_LINES]

    charts = [
        chart("nodefs used", [(n, [(p[0], p[1] / v["nodefsBytes"]) for p in v["series"]])
                              for n, v in fullest(1, "nodefsBytes")], percent=True),
        chart("imagefs used", [(n, [(p[0], p[2] / v["imagefsBytes"]) for p in v["series"]])
                               for n, v in fullest(2, "imagefsBytes")], percent=True),
    ]
    with_pids = [(n, v) for n, v in disk.items() if v["maxPID"]]
    if with_pids:
        charts.append(chart("processes / pid_max", [(n, [(p[0], p[3] / v["maxPID"]) for p in v["series"]])
                                                    for n, v in with_pids[:MAX_NODE_LINES]], percent=True))
    pods = [(k, s) for v in disk.values() for k, s in v["pods"].items()]
    if pods:
        top = sorted(pods, key=lambda kv: -max((p[1] for p in kv[1]), default=0))[:MAX_POD_LINES]
        charts.append(chart("pod ephemeral storage (GiB)", [(k, [(p[0], p[1] / (1 << 30)) for p in s]) for k, s in top]))
        top = sorted(pods, key=lambda kv: -max((p[2] for p in kv[1]), default=0))[:MAX_POD_LINES]
        if any(p[2] for _, s in top for p in s):
            charts.append(chart("pod processes", [(k, [(p[0], float(p[2])) for p in s]) for k, s in top]))
    rows = []
    for ev in r.events:
        if ev["type"] in _EVENTS or (ev["type"] == "NodeConditions" and
                                     any(c in ("DiskPressure", "PIDPressure") for c in ev.get("conditions", ()))) \
                or (ev["type"] == "Evicted" and ev.get("cause") != "memory.available"):
            what = ev.get("message") or (f"freed {ev.get('freed', 0) / (1 << 30):.1f} GiB"
                                         if "freed" in ev else ", ".join(ev.get("conditions", ())))
            rows.append(f"<tr><td>{ev['time']:.0f}</td><td class=l>{_e(ev['type'])}</td>"
                        f"<td class=l>{_e(ev.get('node', ''))}</td><td class=l>{_e(ev.get('pod', ''))}</td>"
                        f"<td class=msg>{_e(what)}</td></tr>")
    table = ("<div class=scroll><table><thead><tr><th>time (s)</th><th>event</th><th>node</th><th>pod</th>"
             "<th>what</th></tr></thead>" + "".join(rows[:200]) + "</table></div>") if rows else ""
    return (f"<section><h2>Disk and PIDs — {_e(r.scenario)}</h2>"
            "<p>Node filesystems and process tables as the eviction manager saw them; image garbage collection, "
            "DiskPressure / PIDPressure and local-storage evictions.</p>"
            f"<div class=charts>{''.join(charts)}</div>{table}</section>")
