"""The report's autoscaling section: replicas, VPA recommendations and node counts over time (one
line per run, so a variant's estimator is compared with the baseline's), each Cluster Autoscaler
scale-up with its node group and why, the pods the kubelets of added nodes rejected.

Reads :attr:`kubetwin.sim.results.SimResult.autoscaling` (plain data). Not an upstream module.
"""

from __future__ import annotations

import html
from typing import Any, Callable, Sequence

MAX_SCALE_UP_ROWS = 500


def _e(x: Any) -> str:
    return html.escape(str(x))


def _series(results: Sequence[Any], key: str, value: Any) -> list[tuple[str, list[tuple[float, float]]]]:
    out = []
    for r in results:
        rows = (r.autoscaling or {}).get("timeSeries") or []
        out.append((r.scenario, [(row["time"], float(value(row[key]))) for row in rows if key in row]))
    return out


def autoscaling_section(results: Sequence[Any]) -> str:
    """The section's HTML; empty when no run has autoscalers."""
    from .html import line_chart

    runs = [r for r in results if r.autoscaling is not None]
    if not runs:
        return ""
    charts = []
    if any("replicas" in row for r in runs for row in r.autoscaling.get("timeSeries") or []):
        charts.append(line_chart("replicas (HPA targets, summed)", _series(runs, "replicas",
                                                                          lambda v: sum(v.values()))))
    if any("nodes" in row for r in runs for row in r.autoscaling.get("timeSeries") or []):
        charts.append(line_chart("nodes in autoscaled groups", _series(runs, "nodes", lambda v: sum(v.values()))))
    if any("recommendations" in row for r in runs for row in r.autoscaling.get("timeSeries") or []):
        def cpu(v: Any) -> float:
            return sum((c.get("cpu") or 0) for recs in v.values() for c in recs.values()) / 1000.0

        charts.append(line_chart("VPA target CPU (cores, summed)", _series(runs, "recommendations", cpu)))
    parts = ["<section><h2>Autoscaling</h2><div class=charts>" + "".join(charts) + "</div>"]
    for r in runs:
        ca = r.autoscaling.get("clusterAutoscaler")
        if ca is not None:
            rejected = ", ".join(f"{k}: {v}" for k, v in (ca.get("podsRejectedOnAddedNodes") or {}).items()) or "none"
            parts.append(f"<h3 style='font-size:14px'>Cluster Autoscaler — {_e(r.scenario)} (estimator "
                         f"{_e(ca['estimator'])}, expander {_e(ca['expander'])}): {ca['nodesAdded']} nodes added, "
                         f"{len(ca['scaleDowns'])} removed; pods the kubelets of added nodes rejected: "
                         f"{_e(rejected)}</h3>")
            rows = "".join(
                f"<tr><td>{_e(_clock(u['time']))}</td><td class=l>{_e(u['nodeGroup'])}</td><td>{u['nodes']}</td>"
                f"<td>{u['pods']}</td><td>{u['unschedulablePods']}</td><td class=l>"
                f"{_e(', '.join(str(o['nodeGroup']) + ': ' + str(o['nodes']) + ' nodes for ' + str(o['pods']) + ' pods' for o in u['options']))}</td>"
                f"<td class='l msg'>{_e('; '.join(f'{n}× {k}' for k, n in u['why'].items()))}</td></tr>"
                for u in (ca.get("scaleUps") or [])[:MAX_SCALE_UP_ROWS])
            more = len(ca.get("scaleUps") or []) - MAX_SCALE_UP_ROWS
            if more > 0:
                parts.append(f"<p>the first {MAX_SCALE_UP_ROWS} scale-ups; {more} more in the JSON results</p>")
            if rows:
                parts.append("<div class=scroll><table><thead><tr><th>time</th><th>node group</th><th>nodes</th>"
                             "<th>pods placed</th><th>unschedulable</th><th>options (estimator)</th><th>why: "
                             "the pods' scheduler reasons</th></tr></thead><tbody>" + rows + "</tbody></table></div>")
        vpas = r.autoscaling.get("verticalPodAutoscalers") or []
        if vpas:
            parts.append(f"<h3 style='font-size:14px'>Vertical Pod Autoscalers — {_e(r.scenario)}</h3>"
                         "<div class=scroll><table><thead><tr><th>VPA</th><th>mode</th><th>evictions</th>"
                         "<th>in-place resizes</th><th>fallbacks to eviction</th></tr></thead><tbody>" + "".join(
                             f"<tr><td class=l>{_e(v['name'])}</td><td class=l>{_e(v['updateMode'])}</td>"
                             f"<td>{v['evictions']}</td><td>{v.get('inPlaceUpdates', 0)}</td>"
                             f"<td>{v.get('inPlaceFallbacks', 0)}</td></tr>" for v in vpas[:MAX_SCALE_UP_ROWS])
                         + "</tbody></table></div>")
        for note in r.autoscaling.get("notes") or []:
            parts.append(f"<p><i>{_e(note)}</i></p>")
    parts.append("</section>")
    return "".join(parts)


def _clock(t: float) -> str:
    t = int(t)
    return f"{t // 3600}h{t % 3600 // 60:02d}m{t % 60:02d}s"


def autoscaling_rows(sums: Sequence[dict[str, Any]]) -> list[tuple[str, Callable[[dict[str, Any]], float], str]]:
    """The terminal summary's autoscaling rows (label, figure, kind), for the runs' summaries."""
    a = [s.get("autoscaling") or {} for s in sums]
    rows: list[tuple[str, Callable[[dict[str, Any]], float], str]] = []

    def get(*path: str) -> Callable[[dict[str, Any]], float]:
        def fig(s: dict[str, Any]) -> float:
            v: Any = s.get("autoscaling") or {}
            for p in path:
                v = v.get(p, 0) if isinstance(v, dict) else 0
            return int(v or 0)
        return fig

    if any("replicas" in x for x in a):
        rows.append(("HPA replicas, peak (summed)", lambda s: int(sum(
            r["max"] for r in ((s.get("autoscaling") or {}).get("replicas") or {}).values())), "n"))
        rows.append(("HPA rescales", get("hpaRescales"), "n"))
    if any("vpaEvictions" in x for x in a):
        rows.append(("VPA evictions", get("vpaEvictions"), "n"))
    if any("vpaInPlaceUpdates" in x for x in a):
        rows.append(("VPA in-place resizes", get("vpaInPlaceUpdates"), "n"))
    if any("nodes" in x for x in a):
        rows.append(("autoscaled nodes, peak", get("nodes", "max"), "n"))
        rows.append(("nodes added by the Cluster Autoscaler", get("nodesAdded"), "n"))
        rows.append(("nodes removed by the Cluster Autoscaler", get("scaleDowns"), "n"))
        rows.append(("pods rejected by the kubelets of added nodes", lambda s: int(sum(
            ((s.get("autoscaling") or {}).get("podsRejectedOnAddedNodes") or {}).values())), "n"))
    return rows
