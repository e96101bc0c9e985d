"""PodTopologySpread's ``EventsToRegister`` and QueueingHints (``podtopologyspread/plugin.go``:
``isSchedulableAfterPodChange``, ``isSchedulableAfterNodeChange``).

Pod Add|UpdatePodLabel|UpdatePodToleration|Delete: queue if the pod is assigned, in the
namespace, and matches a constraint's selector. Node Add|Delete|UpdateNodeLabel|UpdateNodeTaint:
queue if the node carries the topology keys, or they or its taints changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ...framework import events as ev
from ...framework.events import ClusterEvent, Registration, hint_data, node_event, pod_event, queue_plugin
from . import NAME

if TYPE_CHECKING:
    from .plugin import PodTopologySpread


def _spread_constraints(q: Any, pod: Any) -> tuple:
    """``getConstraints``: the pod's hard constraints, or the profile's defaults, as (topology
    key, selector match). A queue without the profile's plugin reads the pod's own constraints."""
    pl = cast("PodTopologySpread | None", queue_plugin(q, NAME))
    if pl is not None:
        return tuple((c.topology_key, c.selector.matches) for c in pl.constraints(pod, "DoNotSchedule"))
    from .plugin import and_labels, selector_of
    from .repeats import held_once

    labels = pod.metadata.labels
    return tuple((c.topology_key,
                  and_labels(selector_of(c.label_selector),
                             {k: labels[k] for k in c.match_label_keys if k in labels}).matches)
                 for c in held_once(pod.spec.topology_spread_constraints, "DoNotSchedule")[0])


def _involved(incoming: Any, pod: Any, event: ClusterEvent) -> bool:
    """``involvedInTopologySpreading``: the pod itself, or an assigned pod of its namespace."""
    assigned = event.resource == ev.ASSIGNED_POD or bool(incoming.spec.node_name)
    return incoming.uid == pod.uid or (assigned and incoming.metadata.namespace == pod.metadata.namespace)


def spread_after_pod_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    pod = qp.pod
    for p in (new, old):
        if p is not None and not _involved(p, pod, event):
            return False
    if old is None and new is None:
        return True
    cons = hint_data(q, qp, NAME, _spread_constraints)
    if old is not None and new is not None:
        if new.uid == pod.uid and new.spec.tolerations != old.spec.tolerations:
            return True   # a new toleration of the pod itself (with a NodeTaintsPolicy Honor constraint)
        if new.metadata.labels == old.metadata.labels:
            return False
        return any(m(old.metadata.labels) != m(new.metadata.labels) for _, m in cons)
    labels = (new if new is not None else old).metadata.labels
    return any(m(labels) for _, m in cons)


def spread_after_node_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if old is None and new is None:
        return True
    cons = hint_data(q, qp, NAME, _spread_constraints)
    keys = [k for k, _ in cons]

    def has_keys(n: Any) -> bool:
        return all(k in n.metadata.labels for k in keys)

    if old is not None and new is not None:
        was, now = has_keys(old), has_keys(new)
        if was != now:
            return True
        return now and (any(old.metadata.labels.get(k) != new.metadata.labels.get(k) for k in keys)
                        or old.spec.taints != new.spec.taints)
    return has_keys(new if new is not None else old)


EVENTS = (
    Registration(pod_event(ev.ADD | ev.UPDATE_POD_LABEL | ev.UPDATE_POD_TOLERATION | ev.DELETE),
                 spread_after_pod_change),
    Registration(node_event(ev.ADD | ev.DELETE | ev.UPDATE_NODE_LABEL | ev.UPDATE_NODE_TAINT),
                 spread_after_node_change),
)
