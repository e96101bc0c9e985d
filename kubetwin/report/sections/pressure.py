"""Node pressure: evictions and OOM kills, with the kubelet's and the kernel's words.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..markup import escape, sim_time

if TYPE_CHECKING:
    from ...sim.results import SimResult


def pressure_section(r: SimResult, limit: int = 40) -> str:
    """Evictions and OOM kills, with the kubelet's and the kernel's words."""
    evs = [e for e in r.events if e["type"] in ("Evicted", "OOMKilled")]
    if not evs:
        return ""
    rows = "".join(f"<tr><td>{sim_time(e['time'])}</td><td>{escape(e['type'])}</td><td>{escape(e['node'])}</td>"
                   f"<td>{escape(e['pod'])}</td><td class=msg>{escape(e['message'])}</td></tr>" for e in evs[:limit])
    more = f" (first {limit} of {len(evs)})" if len(evs) > limit else ""
    return (f"<section><h2>Node pressure — {escape(r.scenario)}{more}</h2><div class=scroll><table><thead><tr>"
            "<th>time</th><th>what</th><th>node</th><th>pod</th><th>message</th></tr></thead>" + rows
            + "</table></div></section>")
