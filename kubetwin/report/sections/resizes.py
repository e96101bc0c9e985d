"""In-place resizes (``spec.resizes``): each outcome, retries included, with the kubelet's words.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..markup import escape, sim_time

if TYPE_CHECKING:
    from ...sim.results import SimResult


def resizes_section(r: SimResult, limit: int = 40) -> str:
    """A table of the run's ``PodResize`` events (empty when the scenario has no resizes)."""
    evs = [e for e in r.events if e["type"] == "PodResize"]
    if not evs:
        return ""
    rows = "".join(f"<tr><td>{sim_time(e['time'])}</td><td>{escape(e.get('pod', ''))}</td>"
                   f"<td>{escape(e.get('node', ''))}</td><td>{escape(e['status'])}</td>"
                   f"<td>{escape(e.get('source') or e.get('trigger', ''))}</td>"
                   f"<td class=msg>{escape(e.get('message', ''))}</td></tr>" for e in evs[:limit])
    more = f" (first {limit} of {len(evs)})" if len(evs) > limit else ""
    return (f"<section><h2>In-place resizes — {escape(r.scenario)}{more}</h2><div class=scroll><table><thead><tr>"
            "<th>time</th><th>pod</th><th>node</th><th>outcome</th><th>asked by</th><th>message</th></tr></thead>"
            + rows + "</table></div></section>")
