"""Cluster events as the scheduling queue sees them (``fwk.ClusterEvent``): a resource and an
``ActionType`` bit set; a plugin's ``EventsToRegister`` entries with their QueueingHints
(``fwk.ClusterEventWithHint``). Upstream: ``k8s.io/kube-scheduler/framework/types.go``
(``ClusterEvent``, ``ActionType``), ``pkg/scheduler/framework/types.go`` (``QueueingHintFn``).

Plugins register events with the actions they care about (``EventsToRegister``); an incoming
event carries one specific action (a node update whose taints changed is ``Node``/
``UpdateNodeTaint``), or the generic ``Update`` when nothing more specific applies. Incoming pod
events name ``AssignedPod`` or ``UnscheduledPod``; a registration for ``Pod`` matches both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar

if TYPE_CHECKING:
    from ...model.features import FeatureGates
    from ...model.node import Node
    from ...model.pod import Pod
    from ..backend.queue import QueuedPod, SchedulingQueue
    from .interface import Plugin

T = TypeVar("T")

# ActionType, in upstream's bit order
ADD = 1 << 0
DELETE = 1 << 1
UPDATE_NODE_ALLOCATABLE = 1 << 2
UPDATE_NODE_LABEL = 1 << 3
UPDATE_NODE_TAINT = 1 << 4
UPDATE_NODE_CONDITION = 1 << 5
UPDATE_NODE_ANNOTATION = 1 << 6
UPDATE_POD_LABEL = 1 << 7
UPDATE_POD_SCALE_DOWN = 1 << 8
UPDATE_POD_TOLERATION = 1 << 9
UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11
ALL = (1 << 12) - 1
#: the general update: any of the specific ones
UPDATE = ALL & ~(ADD | DELETE)

POD = "Pod"
ASSIGNED_POD = "AssignedPod"
UNSCHEDULED_POD = "UnscheduledPod"
NODE = "Node"
RESOURCE_CLAIM = "ResourceClaim"
RESOURCE_SLICE = "ResourceSlice"
DEVICE_CLASS = "DeviceClass"
WILDCARD = "*"


@dataclass(frozen=True)
class ClusterEvent:
    resource: str
    action: int
    label: str = ""

    def matches(self, incoming: "ClusterEvent") -> bool:
        """``MatchClusterEvents`` (self registered, ``incoming`` observed): the resources match
        (``Pod`` covers assigned and unscheduled pods, ``*`` anything) and the incoming action is
        one of the registered ones — a generic ``Update`` only matches a registration of every
        update kind."""
        if self.resource == WILDCARD and self.action == ALL:
            return True
        r = self.resource
        if not (r == WILDCARD or r == incoming.resource
                or (r == POD and incoming.resource in (ASSIGNED_POD, UNSCHEDULED_POD))):
            return False
        return bool(self.action & incoming.action) and incoming.action <= self.action

    @property
    def kind(self) -> tuple[str, int]:
        return (self.resource, self.action)


ASSIGNED_POD_ADD = ClusterEvent(ASSIGNED_POD, ADD, "AssignedPodAdd")
ASSIGNED_POD_DELETE = ClusterEvent(ASSIGNED_POD, DELETE, "AssignedPodDelete")
ASSIGNED_POD_UPDATE = ClusterEvent(ASSIGNED_POD, UPDATE, "AssignedPodUpdate")
NODE_ADD = ClusterEvent(NODE, ADD, "NodeAdd")
#: any node update: as a registration every update kind, as an event an unspecified change
NODE_UPDATE = ClusterEvent(NODE, UPDATE, "NodeUpdate")
NODE_DELETE = ClusterEvent(NODE, DELETE, "NodeDelete")
POD_UPDATE = ClusterEvent(UNSCHEDULED_POD, UPDATE, "UnscheduledPodUpdate")
RESOURCE_CLAIM_CHANGE = ClusterEvent(RESOURCE_CLAIM, ADD | UPDATE, "ResourceClaimChange")
RESOURCE_CLAIM_UPDATE = ClusterEvent(RESOURCE_CLAIM, UPDATE, "ResourceClaimUpdate")
RESOURCE_SLICE_CHANGE = ClusterEvent(RESOURCE_SLICE, ADD | UPDATE, "ResourceSliceChange")
DEVICE_CLASS_CHANGE = ClusterEvent(DEVICE_CLASS, ADD | UPDATE, "DeviceClassChange")

_NODE_UPDATES = {
    UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable", UPDATE_NODE_LABEL: "UpdateNodeLabel",
    UPDATE_NODE_TAINT: "UpdateNodeTaint", UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
}
NODE_UPDATE_EVENTS = {a: ClusterEvent(NODE, a, label) for a, label in _NODE_UPDATES.items()}

#: what ``ClusterState.update_node`` reports changed -> the ``NodeSchedulingPropertiesChange``
#: extractor for it, in upstream's order
_CHANGE_ORDER = ("unschedulable", "allocatable", "labels", "taints", "conditions", "annotations")
_CHANGE_ACTION = {"allocatable": UPDATE_NODE_ALLOCATABLE, "labels": UPDATE_NODE_LABEL, "taints": UPDATE_NODE_TAINT,
                  "conditions": UPDATE_NODE_CONDITION, "annotations": UPDATE_NODE_ANNOTATION}


def node_update_events(changed: Iterable[str], new: Node) -> list[ClusterEvent]:
    """``NodeSchedulingPropertiesChange``: one event per changed property. ``spec.unschedulable``
    turning false counts as ``UpdateNodeTaint`` (turning true is no event: nothing it can help);
    a taint change reported with it is one event, as upstream's two would be one move."""
    changed = set(changed)
    out: list[ClusterEvent] = []
    for c in _CHANGE_ORDER:
        if c not in changed:
            continue
        if c == "unschedulable":
            if not new.spec.unschedulable:
                out.append(NODE_UPDATE_EVENTS[UPDATE_NODE_TAINT])
            continue
        ev = NODE_UPDATE_EVENTS[_CHANGE_ACTION[c]]
        if ev not in out:
            out.append(ev)
    return out


#: ``QueueingHintFn``: (queue, parked pod's queue record, event, old, new) -> may it help (``Queue``)?
#: ``old``/``new`` are the event's objects, of whatever kind the event is about (Pod, Node,
#: ResourceClaim, ...; None for an add or a delete)
Hint = Callable[["SchedulingQueue", "QueuedPod", ClusterEvent, Any, Any], bool]


@dataclass(frozen=True)
class Registration:
    """``ClusterEventWithHint``: no hint means every matching event queues."""

    event: ClusterEvent
    hint: Hint | None = None


_MISSING = object()


def hint_data(q: SchedulingQueue, qp: QueuedPod, plugin: str, build: Callable[[SchedulingQueue, Pod], T]) -> T:
    """What a plugin's hints need of a parked pod, worked out once per pod (``qp.hint_data``)."""
    d = qp.hint_data
    if d is None:
        d = qp.hint_data = {}
    got = d.get(plugin, _MISSING)
    if got is _MISSING:
        got = d[plugin] = build(q, qp.pod)
    return got


def queue_gates(q: SchedulingQueue) -> FeatureGates:
    """The feature gates the queue was given (the current release's defaults otherwise)."""
    g = q.gates
    if g is None:
        from ...model.features import gates_for

        g = q.gates = gates_for()
    return g


def queue_plugin(q: SchedulingQueue, name: str) -> Plugin | None:
    """The profile's plugin called ``name``, when the queue was given the profile's plugins."""
    plugins = q.plugins
    return plugins.get(name) if plugins else None


def target_pod_only(q: SchedulingQueue, qp: QueuedPod, event: ClusterEvent, old: Any, new: Any) -> bool:
    """An update of the parked pod itself (tolerations, generated claims) may help it; others' not."""
    return new is None or new.uid == qp.pod.uid


def pod_event(actions: int) -> ClusterEvent:
    return ClusterEvent(POD, actions)


def node_event(actions: int) -> ClusterEvent:
    return ClusterEvent(NODE, actions)
