"""InterPodAffinity's ``EventsToRegister`` and QueueingHints (``interpodaffinity/plugin.go``:
``isSchedulableAfterPodChange``, ``isSchedulableAfterNodeChange``).

Pod Add|UpdatePodLabel|Delete: an added pod matching all required affinity terms, a deleted one
matching all anti-affinity terms. Node Add|UpdateNodeLabel|UpdateNodeTaint: the node has a
term's topology key.
"""

from __future__ import annotations

from typing import Any

from ...framework import events as ev
from ...framework.events import ClusterEvent, Registration, hint_data, node_event, pod_event
from . import NAME


def _affinity_terms(q: Any, pod: Any) -> tuple[tuple, tuple]:
    from ...framework.types import PodInfo

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
    terms, anti = hint_data(q, qp, NAME, _affinity_terms)
    if old is not None and new is not None:
        return ((not _matches_all(terms, old) and _matches_all(terms, new))
                or (_matches_all(anti, old) and not _matches_all(anti, new)))
    if new is not None:
        return _matches_all(terms, new)
    return _matches_all(anti, old)


def ipa_after_node_change(q: Any, qp: Any, event: ClusterEvent, old: Any, new: Any) -> bool:
    if new is None:
        return True
    terms, anti = hint_data(q, qp, NAME, _affinity_terms)
    labels = new.metadata.labels
    return any(t.topology_key in labels for t in terms) or any(t.topology_key in labels for t in anti)


EVENTS = (
    Registration(pod_event(ev.ADD | ev.UPDATE_POD_LABEL | ev.DELETE), ipa_after_pod_change),
    Registration(node_event(ev.ADD | ev.UPDATE_NODE_LABEL | ev.UPDATE_NODE_TAINT), ipa_after_node_change),
)
