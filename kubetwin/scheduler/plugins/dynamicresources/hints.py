"""DynamicResources' ``EventsToRegister`` and QueueingHints (``dynamicresources/dynamicresources.go``:
``isSchedulableAfterClaimChange`` & co.).

Node Add|UpdateNodeLabel|UpdateNodeAllocatable; ResourceClaim Add|Update (a deallocation queues
every pod); Pod UpdatePodGeneratedResourceClaim (the parked pod itself); DeviceClass and
ResourceSlice Add|Update.
"""

from __future__ import annotations

from typing import Any

from ...framework import events as ev
from ...framework.events import ClusterEvent, Registration, node_event, pod_event, target_pod_only


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


EVENTS = (
    Registration(node_event(ev.ADD | ev.UPDATE_NODE_LABEL | ev.UPDATE_NODE_ALLOCATABLE)),
    Registration(ClusterEvent(ev.RESOURCE_CLAIM, ev.ADD | ev.UPDATE), dra_after_claim_change),
    Registration(pod_event(ev.UPDATE_POD_GENERATED_RESOURCE_CLAIM), target_pod_only),
    Registration(ev.DEVICE_CLASS_CHANGE),
    Registration(ev.RESOURCE_SLICE_CHANGE),
)
