"""NodePorts' ``EventsToRegister`` and QueueingHint (``nodeports/node_ports.go``:
``isSchedulableAfterPodDeleted``): Pod Delete (queue if the deleted pod's host ports
conflicted); Node Add."""

from __future__ import annotations

from typing import Any

from ...framework import events as ev
from ...framework.events import ClusterEvent, Registration, hint_data, node_event, pod_event
from . import NAME


def ports_after_pod_deleted(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if old is None:
        return True
    if event.resource != ev.ASSIGNED_POD and not (old.spec.node_name or old.status.nominated_node_name):
        return False
    from ...framework.types import host_ports, ports_conflict

    freed = host_ports(old)
    if not freed:
        return False
    wanted = hint_data(q, qp, NAME, lambda _q, pod: host_ports(pod))
    return any(ports_conflict(freed, p) for p in wanted)


EVENTS = (
    Registration(pod_event(ev.DELETE), ports_after_pod_deleted),
    Registration(node_event(ev.ADD)),
)
