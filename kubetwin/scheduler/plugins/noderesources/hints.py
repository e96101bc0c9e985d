"""NodeResourcesFit's ``EventsToRegister`` and QueueingHints (``noderesources/fit.go``:
``EventsToRegister``, ``isSchedulableAfterPodEvent``, ``isSchedulableAfterNodeChange``).

Pod Delete|UpdatePodScaleDown: queue on any assigned or nominated pod's delete. Node
Add|UpdateNodeAllocatable: queue if the pod fits the node's allocatable and, on an update, a
requested resource or the pod count grew.
"""

from __future__ import annotations

from typing import Any

from ...framework import events as ev
from ...framework.events import ClusterEvent, Registration, hint_data, node_event, pod_event, queue_gates
from . import FIT


def _fit_request(q: Any, pod: Any) -> dict[str, int]:
    from ...framework.resources import pod_request_amounts

    return {k: v for k, v in pod_request_amounts(pod, queue_gates(q), status=False).items() if v}


def _allocatable(node: Any) -> dict[str, int]:
    from ...framework.types import resource_amounts

    return resource_amounts(node.status.allocatable)


def _fits_empty(req: dict[str, int], alloc: dict[str, int]) -> bool:
    """``isFit``: the pod fits the node's allocatable with nothing on it."""
    if alloc.get("pods", 0) < 1:
        return False
    return all(v <= alloc.get(k, 0) for k, v in req.items())


def fit_after_pod_event(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if new is None:   # deleted: queue if it was assigned or nominated somewhere
        if old is None or event.resource == ev.ASSIGNED_POD:
            return True
        return bool(old.spec.node_name or old.status.nominated_node_name)
    return True   # a scale-down (InPlacePodVerticalScaling): kubetwin emits none, queue


def fit_after_node_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if new is None:
        return True
    req = hint_data(q, qp, FIT, _fit_request)
    alloc = _allocatable(new)
    if not _fits_empty(req, alloc):
        return False
    if old is None:
        return True
    before = _allocatable(old)
    if alloc.get("pods", 0) > before.get("pods", 0):
        return True
    return any(alloc.get(k, 0) > before.get(k, 0) for k in req)


EVENTS = (
    Registration(pod_event(ev.DELETE | ev.UPDATE_POD_SCALE_DOWN), fit_after_pod_event),
    Registration(node_event(ev.ADD | ev.UPDATE_NODE_ALLOCATABLE), fit_after_node_change),
)
