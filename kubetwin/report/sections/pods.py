"""Pods: placement, phase, reason and message of each pod, those that did not run first.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..markup import escape
from ..terminal import pod_rows

if TYPE_CHECKING:
    from ...sim.results import SimResult

MAX_POD_ROWS = 2000


def pods_section(r: SimResult) -> str:
    """One run's pods (at most ``MAX_POD_ROWS``)."""
    rows = pod_rows(r, MAX_POD_ROWS)
    if not rows:
        return ""
    more = f" (first {len(rows)} of {len(r.pods)}, pods that did not run first; --json has all)" \
        if len(r.pods) > len(rows) else ""
    body = "".join(f"<tr><td>{escape(p['pod'])}</td><td>{escape(p['node'])}</td>"
                   f"<td class=l>{escape(p['placement'])}</td><td>{escape(p['phase'])}</td>"
                   f"<td>{escape(p['reason'])}</td><td class=msg>{escape(p['message'])}</td></tr>"
                   for p in rows)
    return (f"<section><h2>Pods — {escape(r.scenario)}{more}</h2><div class=scroll><table><thead><tr><th>pod</th>"
            "<th>node</th><th>placement</th><th>phase</th><th>reason</th><th>message</th></tr></thead>" + body
            + "</table></div></section>")
