"""TaintToleration's ``EventsToRegister`` and QueueingHint (``tainttoleration/taint_toleration.go``:
``isSchedulableAfterNodeChange``): Node Add|UpdateNodeTaint (queue if the pod now tolerates the
node and did not before); Pod UpdatePodToleration (the parked pod itself)."""

from __future__ import annotations

from typing import Any

from ...framework import events as ev
from ...framework.events import ClusterEvent, Registration, node_event, pod_event, queue_gates, target_pod_only


def _untolerated(q: Any, node: Any, pod: Any) -> bool:
    from ..helpers import untolerated_taint

    ops = queue_gates(q).enabled("TaintTolerationComparisonOperators")
    return untolerated_taint(node.spec.taints, pod.spec.tolerations, ops) is not None


def taints_after_node_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if new is None:
        return True
    was = True if old is None else _untolerated(q, old, qp.pod)
    return was and not _untolerated(q, new, qp.pod)


EVENTS = (
    Registration(node_event(ev.ADD | ev.UPDATE_NODE_TAINT), taints_after_node_change),
    Registration(pod_event(ev.UPDATE_POD_TOLERATION), target_pod_only),
)
