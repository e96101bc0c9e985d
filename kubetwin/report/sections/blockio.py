"""The HTML report's I/O pressure by Block I/O class: per node, each class's weight on the simulated
disk, its ``io.max`` line and what throttling and contention cost its containers; per pod the
class and the cgroup lines the runtime wrote.

Reads ``SimResult.blockio`` (:meth:`kubetwin.sim.blockio.BlockIOClasses.result`); empty for runs
without a node group with a Block I/O configuration.

Not an upstream module: kubetwin's own presentation of goresctrl's classes
(intel/goresctrl ``pkg/blockio``) acting in its I/O model (:mod:`kubetwin.sim.blockio`).
"""

from __future__ import annotations

import html
from typing import Any

MAX_POD_ROWS = 50


def _e(x: Any) -> str:
    return html.escape(str(x))


def _mib(n: float) -> str:
    return f"{n / (1 << 20):,.1f}"


def render_blockio(r: Any) -> str:
    """One section, or "" when no node had Block I/O classes."""
    data = getattr(r, "blockio", None)
    if not data or not data.get("nodes") and not data.get("pods"):
        return ""
    rows = []
    for node, v in data["nodes"].items():
        disk = v["disk"]
        for c in v["classes"]:
            rows.append(f"<tr><td>{_e(node)}</td><td>{_e(disk['name'])} ({_e(disk['device'])}, {_e(disk['scheduler'])})"
                        f"</td><td>{_e(c['class'])}</td><td>{c['weight']}</td><td><code>{_e(c['ioMax'] or '—')}</code></td>"
                        f"<td>{c['containers']}</td><td>{c['throttledSeconds']:,.0f}</td>"
                        f"<td>{_mib(c['throttledBytes'])}</td><td>{_mib(c['contendedBytes'])}</td></tr>")
    classes = ("<table><tr><th>node</th><th>simulated disk</th><th>class</th><th>weight</th><th>io.max</th>"
               "<th>containers</th><th>throttled (container-s)</th><th>held back by io.max (MiB)</th>"
               f"<th>not served, disk contended (MiB)</th></tr>{''.join(rows)}</table>") if rows else ""
    pods = []
    for pod, cs in list(data["pods"].items())[:MAX_POD_ROWS]:
        for c in cs:
            lines = "<br>".join(f"<code>{_e(f)}: {_e(t)}</code>".replace("\n", "<br>")
                                for f, t in (c.get("files") or {}).items())
            pods.append(f"<tr><td>{_e(pod)}</td><td>{_e(c['container'])}</td><td>{_e(c['node'])}</td>"
                        f"<td>{_e(c['blockioClass'] or '—')}</td><td>{_e(c.get('origin', ''))}</td><td>{lines}</td></tr>")
    per_pod = ("<table><tr><th>pod</th><th>container</th><th>node</th><th>Block I/O class</th><th>from</th>"
               f"<th>cgroup lines</th></tr>{''.join(pods)}</table>") if pods else ""
    return (f"<section><h2>I/O pressure by Block I/O class — {_e(r.scenario)}</h2>"
            "<p>goresctrl Block I/O classes as the runtime assigns them: the weight and <code>io.max</code> of each "
            "class on the simulated disk, what <code>io.max</code> held back (the container stalls: "
            "<code>io.pressure</code>) and what the saturated disk did not serve (docs/pressure-stalls.md).</p>"
            f"{classes}{per_pod}</section>")
