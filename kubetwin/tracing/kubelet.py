"""Spans of a kubelet admission: the pod's admission on a node, the Topology Manager's decision
per container (or per pod, pod scope) with the merged hint, a span per hint provider — the device,
CPU and memory managers, in the order the container manager registers them — with its hints per
resource, and the predicate admit handler's verdict (node allocatable)
(``pkg/kubelet/lifecycle/predicate.go``, ``cm/topologymanager/scope.go``).

The Topology Manager's own record of each decision (``TopologyManager.record``, what ``admit
--explain`` shows) is what the spans are made from: it is switched on for the traced admission only.

Not an upstream module: kubetwin's tracing of the kubelet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .attributes import CONTAINER_NAME, NODE_NAME, pod_attributes

if TYPE_CHECKING:
    from ..kubelet.admission import NodeAdmission, PodDecision
    from ..kubelet.topology.hint import TopologyHint
    from ..model.pod import Pod


def hint_text(h: "TopologyHint") -> str:
    """A hint as the kubelet logs it: ``{01 true}`` (NUMA bit mask, preferred)."""
    return str(h)


def traced_admit(node: "NodeAdmission", pod: "Pod", admit: Callable[["Pod"], "PodDecision"]) -> "PodDecision":
    """``admit(pod)`` with its spans (see the module docstring)."""
    from . import ACTIVE

    assert ACTIVE is not None
    t = ACTIVE
    clock = t.decision_clock()
    tm = node.topology
    own_record = tm.explain is None
    if own_record:
        tm.explain = []
    first = len(tm.explain or ())
    try:
        decision = admit(pod)
        end = clock()
        records = list((tm.explain or [])[first:])
    finally:
        if own_record:
            tm.explain = None
    attrs: dict[str, Any] = pod_attributes(pod)
    attrs.update({
        NODE_NAME: getattr(node, "node_name", "") or None,
        "kubetwin.kubelet.admitted": decision.admitted,
        "kubetwin.kubelet.reason": decision.reason or None,
        "kubetwin.kubelet.message": decision.message or None,
        "kubetwin.kubelet.topology_manager.policy": tm.policy.name,
        "kubetwin.kubelet.topology_manager.scope": tm.scope,
        "kubetwin.kubelet.upstream_bugs": list(decision.upstream_bugs) or None,
        "kubetwin.kubelet.hang": decision.hang or None,
    })
    root = t.open("kubelet admission", attrs, clock.start)
    share = (end - clock.start) // max(1, len(records) + 1)
    at = clock.start
    for rec in records:
        ta = {CONTAINER_NAME: rec.container, "kubetwin.kubelet.scope": "container" if rec.container else "pod",
              "kubetwin.kubelet.topology_manager.merged_hint": hint_text(rec.merged),
              "kubetwin.kubelet.topology_manager.numa_nodes": rec.merged.nodes() or None,
              "kubetwin.kubelet.topology_manager.preferred": rec.merged.preferred,
              "kubetwin.kubelet.topology_manager.admit": rec.admit}
        span = t.open("TopologyManager", ta, at, root)
        for provider, hints in rec.providers:
            pa: dict[str, Any] = {"kubetwin.kubelet.manager": provider, CONTAINER_NAME: rec.container}
            if hints is None:
                pa["kubetwin.kubelet.hints"] = "none (no preference)"
            else:
                pa["kubetwin.kubelet.hints.resources"] = sorted(hints)
                for resource, hs in sorted(hints.items()):
                    pa[f"kubetwin.kubelet.hints.{resource}"] = (
                        "nil (any)" if hs is None else [hint_text(h) for h in hs] or ["[] (none)"])
            t.span(f"{_manager_name(provider)} hints", pa, at, at + share, span)
        t.span("allocate", {CONTAINER_NAME: rec.container, "kubetwin.kubelet.allocated": rec.admit},
               at, at + share, span)
        at += share
        span.end(end_time=at)
    t.span("predicate admit handler", {
        "kubetwin.kubelet.admitted": decision.admitted,
        "kubetwin.kubelet.reason": decision.reason or None,
    }, at, end, root)
    root.end(end_time=end)
    return decision


def _manager_name(provider: str) -> str:
    return {"cpu": "CPU Manager", "memory": "Memory Manager", "devices": "Device Manager"}.get(provider, provider)
