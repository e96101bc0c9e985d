"""The in-tree plugins' ``EventsToRegister`` with ``SchedulerQueueingHints`` on (GA, locked in
1.36), and their ``QueueingHintFn``s.

A hint answers, for one parked pod its plugin rejected and one event (``old``/``new`` objects:
a deleted pod is ``old``, an added one ``new``), whether the event may make the pod schedulable
(True: ``Queue``) or not (False: ``QueueSkip``). An event delivered without its objects makes
every hint answer ``Queue``, as upstream treats a hint's error. A registration without a hint
always queues. What a hint needs of the parked pod is worked out once per pod (``qp.hint_data``).

Registrations follow upstream v1.36 (``pkg/scheduler/framework/plugins/*/``):

========================  ==========================================================================
NodeResourcesFit          Pod Delete|UpdatePodScaleDown (queue on any assigned or nominated pod's
                          delete); Node Add|UpdateNodeAllocatable (queue if the pod fits the node's
                          allocatable and, on update, a requested resource or the pod count grew)
NodePorts                 Pod Delete (queue if the deleted pod's host ports conflicted); Node Add
NodeName                  Node Add
NodeUnschedulable         Node Add|UpdateNodeTaint (queue if the node is, or became, schedulable);
                          Pod UpdatePodToleration
TaintToleration           Node Add|UpdateNodeTaint (queue if the pod now tolerates the node and did
                          not before); Pod UpdatePodToleration
NodeAffinity              Node Add|UpdateNodeLabel (queue if the node now matches and did not)
PodTopologySpread         Pod Add|UpdatePodLabel|UpdatePodToleration|Delete (queue if the pod is
                          assigned, in the namespace, and matches a constraint's selector); Node
                          Add|Delete|UpdateNodeLabel|UpdateNodeTaint (topology keys present / changed)
InterPodAffinity          Pod Add|UpdatePodLabel|Delete (an added pod matching all required affinity
                          terms, a deleted one matching all anti-affinity terms); Node
                          Add|UpdateNodeLabel|UpdateNodeTaint (the node has a term's topology key)
DynamicResources          Node Add|UpdateNodeLabel|UpdateNodeAllocatable; ResourceClaim Add|Update
                          (a deallocation queues every pod); Pod UpdatePodGeneratedResourceClaim;
                          DeviceClass and ResourceSlice Add|Update
========================  ==========================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from . import events as ev
from .events import ClusterEvent

Hint = Callable[[Any, Any, ClusterEvent, Any, Any], bool]


@dataclass(frozen=True)
class Registration:
    """``ClusterEventWithHint``: no hint means every matching event queues."""

    event: ClusterEvent
    hint: Hint | None = None


def _data(q: Any, qp: Any, plugin: str, build: Callable[[Any, Any], Any]) -> Any:
    d = qp.hint_data
    if d is None:
        d = qp.hint_data = {}
    got = d.get(plugin, _MISSING)
    if got is _MISSING:
        got = d[plugin] = build(q, qp.pod)
    return got


_MISSING = object()


def _gates(q: Any) -> Any:
    g = getattr(q, "gates", None)
    if g is None:
        from ..model.features import gates_for

        g = q.gates = gates_for()
    return g


def _plugin(q: Any, name: str) -> Any:
    plugins = getattr(q, "plugins", None)
    return plugins.get(name) if plugins else None


# --- NodeResourcesFit --------------------------------------------------------------------------

_FIXED = ("cpu", "memory", "ephemeral-storage")


def _fit_request(q: Any, pod: Any) -> dict[str, int]:
    from .framework.resources import pod_request_amounts

    return {k: v for k, v in pod_request_amounts(pod, _gates(q), status=False).items() if v}


def _allocatable(node: Any) -> dict[str, int]:
    from .framework.types import resource_amounts

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
    req = _data(q, qp, "NodeResourcesFit", _fit_request)
    alloc = _allocatable(new)
    if not _fits_empty(req, alloc):
        return False
    if old is None:
        return True
    before = _allocatable(old)
    if alloc.get("pods", 0) > before.get("pods", 0):
        return True
    return any(alloc.get(k, 0) > before.get(k, 0) for k in req)


# --- NodePorts ---------------------------------------------------------------------------------

def ports_after_pod_deleted(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if old is None:
        return True
    if event.resource != ev.ASSIGNED_POD and not (old.spec.node_name or old.status.nominated_node_name):
        return False
    from .framework.types import host_ports, ports_conflict

    freed = host_ports(old)
    if not freed:
        return False
    wanted = _data(q, qp, "NodePorts", lambda _q, pod: host_ports(pod))
    return any(ports_conflict(freed, p) for p in wanted)


# --- NodeUnschedulable / TaintToleration / NodeAffinity ----------------------------------------

def unschedulable_after_node_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if new is None:
        return True
    if old is None:
        return not new.spec.unschedulable
    return bool(old.spec.unschedulable) and not new.spec.unschedulable


def _untolerated(q: Any, node: Any, pod: Any) -> bool:
    from .plugins.helpers import untolerated_taint

    ops = _gates(q).enabled("TaintTolerationComparisonOperators")
    return untolerated_taint(node.spec.taints, pod.spec.tolerations, ops) is not None


def taints_after_node_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if new is None:
        return True
    was = True if old is None else _untolerated(q, old, qp.pod)
    return was and not _untolerated(q, new, qp.pod)


def _node_matcher(q: Any, pod: Any) -> Any:
    from .plugins.nodeaffinity import required_node_affinity

    return required_node_affinity(pod)


def affinity_after_node_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if new is None:
        return True
    pl = _plugin(q, "NodeAffinity")
    added = getattr(pl, "_added_selector", None) if pl is not None else None
    if added is not None and not added(new.metadata.labels, new.metadata.name):
        return False
    match = _data(q, qp, "NodeAffinity", _node_matcher)
    if not match(new.metadata.labels, new.metadata.name):
        return False
    return old is None or not match(old.metadata.labels, old.metadata.name)


def target_pod_only(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    """An update of the parked pod itself (tolerations, generated claims) may help it; others' not."""
    return new is None or new.uid == qp.pod.uid


# --- PodTopologySpread -------------------------------------------------------------------------

def _spread_constraints(q: Any, pod: Any) -> tuple:
    """``getConstraints``: the pod's hard constraints, or the profile's defaults, as (topology
    key, selector match). A queue without the profile's plugin reads the pod's own constraints."""
    pl = _plugin(q, "PodTopologySpread")
    if pl is not None:
        return tuple((c.topology_key, c.selector.matches) for c in pl._constraints(pod, "DoNotSchedule"))
    from .plugins.podtopologyspread import and_labels, selector_of

    labels = pod.metadata.labels
    return tuple((c.topology_key,
                  and_labels(selector_of(c.label_selector),
                             {k: labels[k] for k in c.match_label_keys if k in labels}).matches)
                 for c in pod.spec.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule")


def spread_after_pod_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    pod = qp.pod
    for p in (new, old):
        if p is not None and not _involved(p, pod, event):
            return False
    if old is None and new is None:
        return True
    cons = _data(q, qp, "PodTopologySpread", _spread_constraints)
    if old is not None and new is not None:
        if new.uid == pod.uid and new.spec.tolerations != old.spec.tolerations:
            return True   # a new toleration of the pod itself (with a NodeTaintsPolicy Honor constraint)
        if new.metadata.labels == old.metadata.labels:
            return False
        return any(m(old.metadata.labels) != m(new.metadata.labels) for _, m in cons)
    labels = (new if new is not None else old).metadata.labels
    return any(m(labels) for _, m in cons)


def _involved(incoming: Any, pod: Any, event: ClusterEvent) -> bool:
    """``involvedInTopologySpreading``: the pod itself, or an assigned pod of its namespace."""
    assigned = event.resource == ev.ASSIGNED_POD or bool(incoming.spec.node_name)
    return incoming.uid == pod.uid or (assigned and incoming.metadata.namespace == pod.metadata.namespace)


def spread_after_node_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if old is None and new is None:
        return True
    cons = _data(q, qp, "PodTopologySpread", _spread_constraints)
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


# --- InterPodAffinity --------------------------------------------------------------------------

def _affinity_terms(q: Any, pod: Any) -> tuple[tuple, tuple]:
    from .framework.types import PodInfo

    aff = pod.spec.affinity
    if aff is None or (aff.pod_affinity is None and aff.pod_anti_affinity is None):
        return (), ()
    pi = PodInfo(pod)
    return pi.required_affinity_terms, pi.required_anti_affinity_terms


def _matches_all(terms: tuple, pod: Any) -> bool:
    """``podMatchesAllAffinityTerms``: no terms match nothing; namespace labels are not used."""
    return bool(terms) and all(t.matches(pod, {}) for t in terms)


def ipa_after_pod_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    unassigned = event.resource != ev.ASSIGNED_POD
    if unassigned and ((new is not None and not new.spec.node_name) or (old is not None and not old.spec.node_name)):
        return False
    if old is None and new is None:
        return True
    terms, anti = _data(q, qp, "InterPodAffinity", _affinity_terms)
    if old is not None and new is not None:
        return ((not _matches_all(terms, old) and _matches_all(terms, new))
                or (_matches_all(anti, old) and not _matches_all(anti, new)))
    if new is not None:
        return _matches_all(terms, new)
    return _matches_all(anti, old)


def ipa_after_node_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if new is None:
        return True
    terms, anti = _data(q, qp, "InterPodAffinity", _affinity_terms)
    labels = new.metadata.labels
    return any(t.topology_key in labels for t in terms) or any(t.topology_key in labels for t in anti)


# --- DynamicResources --------------------------------------------------------------------------

def dra_after_claim_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    """``isSchedulableAfterClaimChange``: a deallocated claim frees devices for every pod; a
    change of one of the pod's own claims' status may help it. ``old``/``new`` are the claim's
    before and after (dicts with ``metadata`` and ``status``); kubetwin emits deallocations."""
    if new is None:
        return True
    if old is not None and (old.get("status") or {}).get("allocation") and not (new.get("status") or {}).get(
            "allocation"):
        return True
    uid = (new.get("metadata") or {}).get("uid")
    names = {rc.resource_claim_name for rc in qp.pod.spec.resource_claims if getattr(rc, "resource_claim_name", None)}
    uses = (new.get("metadata") or {}).get("name") in names or uid is None
    if not uses:
        return False
    return old is None or old.get("status") != new.get("status")


# --- the table ---------------------------------------------------------------------------------

def _pod(actions: int) -> ClusterEvent:
    return ClusterEvent(ev.POD, actions)


def _node(actions: int) -> ClusterEvent:
    return ClusterEvent(ev.NODE, actions)


IN_TREE: dict[str, tuple[Registration, ...]] = {
    "NodeResourcesFit": (
        Registration(_pod(ev.DELETE | ev.UPDATE_POD_SCALE_DOWN), fit_after_pod_event),
        Registration(_node(ev.ADD | ev.UPDATE_NODE_ALLOCATABLE), fit_after_node_change)),
    "NodePorts": (
        Registration(_pod(ev.DELETE), ports_after_pod_deleted),
        Registration(_node(ev.ADD))),
    "NodeName": (Registration(_node(ev.ADD)),),
    "NodeUnschedulable": (
        Registration(_node(ev.ADD | ev.UPDATE_NODE_TAINT), unschedulable_after_node_change),
        Registration(_pod(ev.UPDATE_POD_TOLERATION), target_pod_only)),
    "TaintToleration": (
        Registration(_node(ev.ADD | ev.UPDATE_NODE_TAINT), taints_after_node_change),
        Registration(_pod(ev.UPDATE_POD_TOLERATION), target_pod_only)),
    "NodeAffinity": (Registration(_node(ev.ADD | ev.UPDATE_NODE_LABEL), affinity_after_node_change),),
    "PodTopologySpread": (
        Registration(_pod(ev.ADD | ev.UPDATE_POD_LABEL | ev.UPDATE_POD_TOLERATION | ev.DELETE),
                     spread_after_pod_change),
        Registration(_node(ev.ADD | ev.DELETE | ev.UPDATE_NODE_LABEL | ev.UPDATE_NODE_TAINT),
                     spread_after_node_change)),
    "InterPodAffinity": (
        Registration(_pod(ev.ADD | ev.UPDATE_POD_LABEL | ev.DELETE), ipa_after_pod_change),
        Registration(_node(ev.ADD | ev.UPDATE_NODE_LABEL | ev.UPDATE_NODE_TAINT), ipa_after_node_change)),
    "DynamicResources": (
        Registration(_node(ev.ADD | ev.UPDATE_NODE_LABEL | ev.UPDATE_NODE_ALLOCATABLE)),
        Registration(ClusterEvent(ev.RESOURCE_CLAIM, ev.ADD | ev.UPDATE), dra_after_claim_change),
        Registration(_pod(ev.UPDATE_POD_GENERATED_RESOURCE_CLAIM), target_pod_only),
        Registration(ev.DEVICE_CLASS_CHANGE),
        Registration(ev.RESOURCE_SLICE_CHANGE)),
}
