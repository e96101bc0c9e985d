"""At a glance: the first run's headline figures as cards.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ..markup import escape, pct

if TYPE_CHECKING:
    from ...sim.results import SimResult


def glance_section(results: Sequence[SimResult], sums: Sequence[dict[str, Any]]) -> str:
    s0 = sums[0]
    cards = [("scheduled", s0["scheduled"]), ("running at the end", s0["running"]),
             ("pending at the end", s0["pending"]),
             ("rejected by kubelets", sum(s0["rejectedByKubelet"].values())),
             ("rejected by admission", sum(s0["rejectedByAdmissionControl"].values())),
             ("preempted", s0["preempted"]), ("evicted", s0["evicted"]), ("OOM kills", s0["oomKilled"]),
             ("cpu requested, time average", pct(s0.get("utilizationAverage", {}).get("cpu", 0))),
             ("stranded CPUs at the end", s0["strandedCpus"])]
    if "gpu" in s0["utilization"]:
        cards.append(("gpu allocated, time average", pct(s0.get("utilizationAverage", {}).get("gpu", 0))))
    if "devices" in s0["utilization"] or "devices" in s0.get("utilizationAverage", {}):
        cards.append(("DRA devices allocated, time average",
                      pct(s0.get("utilizationAverage", {}).get("devices", 0))))
    return ("<section><h2>At a glance" + (f" — {escape(results[0].scenario)}" if len(results) > 1 else "")
            + "</h2><div class=cards>"
            + "".join(f"<div class=card><b>{escape(v)}</b><span>{escape(k)}</span></div>" for k, v in cards)
            + "</div></section>")
