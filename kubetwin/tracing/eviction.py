"""Spans of the kubelet's eviction passes (``pkg/kubelet/eviction/eviction_manager.go``'s
``synchronize``): the signals observed, the thresholds met and acting, the node-level reclaim, the
pods ranked for the starved resource and the victim with its grace period and message.

Only passes that find something — a threshold met, a pod evicted, an error — become spans: a quiet
node's pass every ten seconds of a long simulation would bury the ones that matter.

Not an upstream module: kubetwin's tracing of the eviction manager.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .attributes import MAX_NODES, NODE_NAME, pod_attributes

if TYPE_CHECKING:
    from ..kubelet.eviction.manager import SyncResult
    from ..model.summary import Summary


def _threshold(t: Any) -> str:
    return f"{t.signal}{'<' if t.operator == 'LessThan' else ' ' + t.operator + ' '}{t.value}" + \
        (f" (grace {t.grace_period})" if not t.is_hard else "")


def traced_synchronize(summary: "Summary", sync: Callable[[], "SyncResult"]) -> "SyncResult":
    """``sync()`` with its span when the pass found something (see the module docstring)."""
    from . import ACTIVE

    assert ACTIVE is not None
    t = ACTIVE
    clock = t.decision_clock()
    r = sync()
    if not (r.thresholds_met or r.evicted or r.error):
        return r
    end = clock()
    attrs: dict[str, Any] = {
        NODE_NAME: summary.node.node_name or None,
        "kubetwin.eviction.conditions": list(r.conditions) or None,
        "kubetwin.eviction.thresholds_met": [_threshold(x) for x in r.thresholds_met] or None,
        "kubetwin.eviction.thresholds_acting": [_threshold(x) for x in r.thresholds_acting] or None,
        "kubetwin.eviction.resource_to_reclaim": r.resource_to_reclaim,
        "kubetwin.eviction.error": r.error,
    }
    for signal, obs in sorted(r.observations.items()):
        attrs[f"kubetwin.eviction.signal.{signal}.available"] = str(obs.available)
        if obs.capacity is not None:
            attrs[f"kubetwin.eviction.signal.{signal}.capacity"] = str(obs.capacity)
    root = t.open("eviction pass", attrs, clock.start)
    at = clock.start
    if r.reclaimed:
        t.span("node-level reclaim", {"kubetwin.eviction.reclaim_functions": list(r.reclaimed),
                                      "kubetwin.eviction.reclaim_sufficed": r.reclaim_sufficed}, at, end, root)
    if r.ranking:
        ranked = [f"{p.metadata.namespace or 'default'}/{p.metadata.name}" for p in r.ranking[:MAX_NODES]]
        t.span("rank pods", {"kubetwin.eviction.ranking": ranked,
                             "kubetwin.eviction.ranked_pods": len(r.ranking)}, at, end, root)
    for ev in r.evicted:
        ea = pod_attributes(ev.pod)
        ea.update({"kubetwin.eviction.cause": ev.cause, "kubetwin.eviction.grace_period_seconds": ev.grace_period_seconds,
                   "kubetwin.eviction.message": ev.message, "kubetwin.eviction.reason": ev.reason})
        t.span("evict pod", ea, end, end, root)
    root.end(end_time=end)
    return r
