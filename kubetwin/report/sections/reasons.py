"""Why pods did not run: the scheduler's and the kubelets' reasons as bars, with example pods.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..markup import escape
from ..svg import bar_chart

if TYPE_CHECKING:
    from ...sim.results import SimResult


def reasons_section(r: SimResult, s: dict[str, Any]) -> str:
    """One run's reasons (``s`` its summary); empty when every pod ran."""
    reasons = sorted(s["pendingByReason"].items(), key=lambda kv: -kv[1])
    kub = sorted(s["rejectedByKubelet"].items(), key=lambda kv: -kv[1])
    if not (reasons or kub):
        return ""
    return (f"<section><h2>Why pods did not run — {escape(r.scenario)}</h2><div class=charts>"
            + bar_chart("pending, by scheduler reason", reasons)
            + bar_chart("rejected by the kubelet, by reason", kub) + "</div>" + _examples(r) + "</section>")


def _examples(r: SimResult, limit: int = 8) -> str:
    seen: dict[str, Any] = {}
    for p in r.pods:
        if p.message and p.phase in ("Pending", "Failed") and p.reason not in seen:
            seen[p.reason + p.message[:40]] = p
        if len(seen) >= limit:
            break
    if not seen:
        return ""
    rows = "".join(f"<tr><td>{escape(p.namespace)}/{escape(p.name)}</td><td>{escape(p.phase)}</td><td>{escape(p.reason)}</td>"
                   f"<td class=msg>{escape(p.message)}</td></tr>" for p in seen.values())
    return ("<h3 style='font-size:14px'>Examples</h3><table><thead><tr><th>pod</th><th>phase</th><th>reason</th>"
            "<th>message</th></tr></thead>" + rows + "</table>")
