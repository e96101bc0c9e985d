"""The autoscalers' figures in a run's summary: replicas, node counts, scale-ups, pods the
kubelets of added nodes rejected. Plain data read from :attr:`SimResult.autoscaling`.

Not an upstream module: kubetwin's result format.
"""

from __future__ import annotations

from typing import Any, Mapping


def autoscaling_summary(a: Mapping[str, Any]) -> dict[str, Any]:
    series = a.get("timeSeries") or []
    out: dict[str, Any] = {}
    replicas = [row["replicas"] for row in series if "replicas" in row]
    if replicas:
        keys = sorted({k for r in replicas for k in r})
        out["replicas"] = {k: {"min": min(r.get(k, 0) for r in replicas), "max": max(r.get(k, 0) for r in replicas),
                               "end": replicas[-1].get(k, 0)} for k in keys}
    nodes = [sum(row["nodes"].values()) for row in series if "nodes" in row]
    ca = a.get("clusterAutoscaler")
    if ca is not None:
        out["nodes"] = {"min": min(nodes) if nodes else 0, "max": max(nodes) if nodes else 0,
                        "end": sum((ca.get("finalSizes") or {}).values())}
        out["scaleUps"] = len(ca.get("scaleUps") or [])
        out["scaleDowns"] = len(ca.get("scaleDowns") or [])
        out["nodesAdded"] = ca.get("nodesAdded", 0)
        out["estimator"] = ca.get("estimator")
        out["podsRejectedOnAddedNodes"] = dict(ca.get("podsRejectedOnAddedNodes") or {})
    vpas = a.get("verticalPodAutoscalers") or []
    if vpas:
        out["vpaEvictions"] = sum(v.get("evictions", 0) for v in vpas)
        if any(v.get("updateMode") == "InPlaceOrRecreate" for v in vpas):
            out["vpaInPlaceUpdates"] = sum(v.get("inPlaceUpdates", 0) for v in vpas)
    events = a.get("events") or []
    out["hpaRescales"] = sum(1 for e in events if e.get("type") == "HPARescale")
    return out
