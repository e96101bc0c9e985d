"""NodeUnschedulable's ``EventsToRegister`` and QueueingHint (``nodeunschedulable/node_unschedulable.go``:
``isSchedulableAfterNodeChange``): Node Add|UpdateNodeTaint (queue if the node is, or became,
schedulable); Pod UpdatePodToleration (the parked pod itself)."""

from __future__ import annotations

from typing import Any

from ...framework import events as ev
from ...framework.events import ClusterEvent, Registration, node_event, pod_event, target_pod_only


def unschedulable_after_node_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if new is None:
        return True
    if old is None:
        return not new.spec.unschedulable
    return bool(old.spec.unschedulable) and not new.spec.unschedulable


EVENTS = (
    Registration(node_event(ev.ADD | ev.UPDATE_NODE_TAINT), unschedulable_after_node_change),
    Registration(pod_event(ev.UPDATE_POD_TOLERATION), target_pod_only),
)
