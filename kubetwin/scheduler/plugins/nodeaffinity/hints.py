"""NodeAffinity's ``EventsToRegister`` and QueueingHint (``nodeaffinity/node_affinity.go``:
``isSchedulableAfterNodeChange``): Node Add|UpdateNodeLabel (queue if the node now matches the
profile's added affinity and the pod's required affinity, and did not before)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ...framework import events as ev
from ...framework.events import ClusterEvent, Registration, hint_data, node_event, queue_plugin
from . import NAME

if TYPE_CHECKING:
    from .node_affinity import NodeAffinity


def _node_matcher(q: Any, pod: Any) -> Any:
    from .node_affinity import required_node_affinity

    return required_node_affinity(pod)


def affinity_after_node_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if new is None:
        return True
    pl = cast("NodeAffinity | None", queue_plugin(q, NAME))
    added = pl.added_selector if pl is not None else None
    if added is not None and not added(new.metadata.labels, new.metadata.name):
        return False
    match = hint_data(q, qp, NAME, _node_matcher)
    if not match(new.metadata.labels, new.metadata.name):
        return False
    return old is None or not match(old.metadata.labels, old.metadata.name)


EVENTS = (Registration(node_event(ev.ADD | ev.UPDATE_NODE_LABEL), affinity_after_node_change),)
