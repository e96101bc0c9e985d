"""The StatefulSet controller on the simulation's clock: its pods by ordinal, its syncs, its pods.

The decisions are :func:`kubetwin.sim.statefulset.sync`'s (``stateful_set_control.go``); this
module keeps each set's live pods by ordinal, creates pods as ``newVersionedStatefulSetPod``
builds them (``stateful_set_utils.go``: the template, the name ``<set>-<ordinal>``, the identity
labels, the controller reference) through the API server's admission — with the VPA's mutating
webhook when a VerticalPodAutoscaler targets the set — and deletes the condemned ones. The
controller syncs when it is told of a change, as its informers tell it: a pod of the set lost
(failed, evicted, deleted: :meth:`Simulator._owner_lost`), a pod turned Running and Ready
(:meth:`pod_started`), its scale changed (an HPA), and ``minReadySeconds`` later while pods are
not yet available. Each sync comes ``controllerDelay`` after the change, as for the other
controllers of the simulation. Re-creations of lost pods are capped by ``maxRecreations`` as the
ReplicaSet's are (issue 84869's loop of pods the kubelet rejects).

Not an upstream module: kubetwin's glue between the clock (:mod:`.loop`) and :mod:`.statefulset`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ..model.meta import OwnerReference
from ..model.pod import Pod
from .statefulset import Member, StatefulSetSpec, parent_and_ordinal, pod_name, sync

if TYPE_CHECKING:
    from .loop import SimPod, Simulator
    from .workload import Controller

KIND = "StatefulSet"
_LIVE = ("Pending", "Running")


def new_pod(c: Controller, spec: StatefulSetSpec, ordinal: int, instance: int) -> Pod:
    """``newStatefulSetPod``: the template with the set's identity for ``ordinal``; ``instance``
    tells apart the successive pods of one name (their UIDs)."""
    name = pod_name(spec.name, ordinal)
    ref = OwnerReference(api_version="apps/v1", kind=KIND, name=spec.name, uid=spec.uid, controller=True)
    meta = c.template.metadata
    meta = msgspec.structs.replace(meta, name=name, uid=f"{spec.namespace}/{name}/{instance}",
                                   labels={**meta.labels, **spec.labels(ordinal)}, owner_references=[ref])
    return msgspec.structs.replace(c.template, metadata=meta)


class StatefulSetControl:
    """Every StatefulSet of one run."""

    def __init__(self, sim: Simulator):
        self.sim = sim
        #: per controller key: live pods by ordinal (adopted ones found at the first sync)
        self.members: dict[str, dict[int, SimPod]] = {}
        #: per controller key: the time of the minReadySeconds requeue on the clock
        self.requeued: dict[str, float] = {}

    def _members(self, c: Controller) -> dict[int, SimPod]:
        got = self.members.get(c.key)
        if got is None:   # the pods of the scenario adopted by ordinal (a snapshot's running pods)
            spec: StatefulSetSpec = c.meta["statefulset"]
            got = self.members[c.key] = {}
            for sp in self.sim.pods:
                if sp.owner == c.key:
                    parent, ordinal = parent_and_ordinal(sp.pod.name)
                    if parent == spec.name and ordinal >= 0:
                        got[ordinal] = sp
        for o in [o for o, sp in got.items() if sp.phase not in _LIVE]:
            del got[o]
        return got

    def sync(self, c: Controller) -> None:
        """One ``updateStatefulSet`` of ``c`` at the simulation's now."""
        sim = self.sim
        now = sim.now
        if self.requeued.get(c.key, -1.0) <= now:
            self.requeued.pop(c.key, None)
        spec: StatefulSetSpec = c.meta["statefulset"]
        members = self._members(c)
        view = {o: Member(o, sp.phase == "Running", sp.start) for o, sp in members.items()}
        d = sync(spec, c.replicas, view, now)
        for ordinal in d.create:
            if c.created - c.retired - c.replicas >= c.max_recreations:
                break   # the cap on replacements of lost pods (as the ReplicaSet's)
            if not self._create(c, spec, ordinal):
                break
        for ordinal in d.delete:
            c.retired += 1
            sim.delete_pod(members[ordinal], "ScaledDown",
                           f"deleted by the StatefulSet controller: {c.key} scaled to {c.replicas}")
        if d.requeue_at is not None and c.key not in self.requeued:
            from .loop import CONTROLLER

            self.requeued[c.key] = d.requeue_at
            sim.push(d.requeue_at, CONTROLLER, c)

    def _create(self, c: Controller, spec: StatefulSetSpec, ordinal: int) -> bool:
        """``CreateStatefulPod``; False when the API server refused the pod."""
        from .loop import SimPod, _rng

        sim = self.sim
        if c.created - c.retired >= c.replicas:
            sim.counters.recreated += 1
        c.created += 1
        c.active += 1
        pod = new_pod(c, spec, ordinal, c.created)
        sp = SimPod(len(sim.pods), pod, sim.now, c.duration.sample(_rng(sim.sc, c.key, c.created)), c.key, c.usage)
        sim.pods.append(sp)
        self.members.setdefault(c.key, {})[ordinal] = sp
        sim._arrive(sp, sim.autoscalers.vpa_webhook(c) if sim.autoscalers is not None else None)
        return sp.phase != "Rejected"

    def pod_started(self, sp: SimPod) -> None:
        """A pod of a set turned Running and Ready: its controller syncs."""
        c = self.sim.controllers.get(sp.owner or "")
        if c is not None and c.kind == KIND:
            self.wake(c)

    def wake(self, c: Controller) -> None:
        """A change the set's informers report: a sync ``controllerDelay`` later."""
        from .loop import CONTROLLER

        sim = self.sim
        sim.push(sim.now + sim.sc.settings.controller_delay, CONTROLLER, c)


def statefulset_objects(controllers: list[Any]) -> list[dict[str, Any]]:
    """The StatefulSet objects of the scenario's sets, for the scheduler's readers of them
    (PodTopologySpread's default selectors)."""
    return [c.meta["object"] for c in controllers if c.kind == KIND and isinstance(c.meta.get("object"), dict)]
