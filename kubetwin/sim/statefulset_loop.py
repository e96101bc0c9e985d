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
controllers of the simulation; changes at one instant make one sync (the workqueue holds a set's
key once). Re-creations of lost pods are capped by ``maxRecreations`` as the
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


def new_pod(c: Controller, spec: StatefulSetSpec, ordinal: int, instance: int) -> Pod:
    """``newStatefulSetPod``: the template with the set's identity for ``ordinal``; ``instance``
    tells apart the successive pods of one name (their UIDs)."""
    name = pod_name(spec.name, ordinal)
    ref = OwnerReference(api_version="apps/v1", kind=KIND, name=spec.name, uid=spec.uid, controller=True)
    meta = c.template.metadata
    meta = msgspec.structs.replace(meta, name=name, uid=f"{spec.namespace}/{name}/{instance}",
                                   labels={**meta.labels, **spec.labels(ordinal)}, owner_references=[ref])
    return msgspec.structs.replace(c.template, metadata=meta)


class _SetPods:
    """One set's live pods by ordinal, and the controller's view of them, kept as pods come and go."""

    __slots__ = ("pods", "view")

    def __init__(self) -> None:
        self.pods: dict[int, SimPod] = {}
        self.view: dict[int, Member] = {}

    def put(self, ordinal: int, sp: SimPod) -> None:
        self.pods[ordinal] = sp
        self.view[ordinal] = Member(ordinal, True, sp.start) if sp.phase == "Running" else Member(ordinal)


class StatefulSetControl:
    """Every StatefulSet of one run."""

    def __init__(self, sim: Simulator):
        self.sim = sim
        #: per controller key: live pods by ordinal (adopted ones found at the first sync)
        self.sets: dict[str, _SetPods] = {}
        #: ordinal of every pod a set holds, by the simulation's pod index
        self.ordinal_of: dict[int, int] = {}
        #: per controller key: the time of the minReadySeconds requeue on the clock
        self.requeued: dict[str, float] = {}
        #: per controller key: the time of the sync a change already put on the clock (the
        #: workqueue holds a key once: changes at one instant make one sync)
        self.due: dict[str, float] = {}

    def _pods(self, c: Controller) -> _SetPods:
        got = self.sets.get(c.key)
        if got is None:   # the pods of the scenario adopted by ordinal (a snapshot's running pods)
            spec: StatefulSetSpec = c.meta["statefulset"]
            got = self.sets[c.key] = _SetPods()
            for sp in self.sim.pods:
                if sp.owner == c.key and sp.phase in ("Pending", "Running"):
                    parent, ordinal = parent_and_ordinal(sp.pod.name)
                    if parent == spec.name and ordinal >= 0:
                        got.put(ordinal, sp)
                        self.ordinal_of[sp.i] = ordinal
        return got

    def sync(self, c: Controller) -> None:
        """One ``updateStatefulSet`` of ``c`` at the simulation's now."""
        sim = self.sim
        now = sim.now
        key = c.key
        if self.requeued.get(key, -1.0) <= now:
            self.requeued.pop(key, None)
        if self.due.get(key) == now:
            del self.due[key]
        spec: StatefulSetSpec = c.meta["statefulset"]
        pods = self._pods(c)
        d = sync(spec, c.replicas, pods.view, now)
        for ordinal in d.create:
            if c.created - c.retired - c.replicas >= c.max_recreations:
                break   # the cap on replacements of lost pods (as the ReplicaSet's)
            if not self._create(c, spec, pods, ordinal):
                break
        for ordinal in d.delete:
            c.retired += 1
            sim.delete_pod(pods.pods[ordinal], "ScaledDown",
                           f"deleted by the StatefulSet controller: {c.key} scaled to {c.replicas}")
        if d.requeue_at is not None and key not in self.requeued:
            from .loop import CONTROLLER

            self.requeued[key] = d.requeue_at
            sim.push(d.requeue_at, CONTROLLER, c)

    def _create(self, c: Controller, spec: StatefulSetSpec, pods: _SetPods, ordinal: int) -> bool:
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
        pods.put(ordinal, sp)
        self.ordinal_of[sp.i] = ordinal
        sim._arrive(sp, sim.autoscalers.vpa_webhook(c) if sim.autoscalers is not None else None)
        return sp.phase != "Rejected"

    def pod_started(self, sp: SimPod) -> None:
        """A pod of a set turned Running and Ready: its controller syncs."""
        c = self.sim.controllers.get(sp.owner or "")
        if c is not None and c.kind == KIND:
            got = self.sets.get(c.key)
            ordinal = self.ordinal_of.get(sp.i)
            if got is not None and ordinal is not None and got.pods.get(ordinal) is sp:
                got.put(ordinal, sp)
            self.wake(c)

    def pod_lost(self, c: Controller, sp: SimPod) -> None:
        """A pod of ``c`` ended (failed, evicted, deleted, finished, refused): its controller syncs."""
        got = self.sets.get(c.key)
        ordinal = self.ordinal_of.pop(sp.i, None)
        if got is not None and ordinal is not None and got.pods.get(ordinal) is sp:
            del got.pods[ordinal], got.view[ordinal]
        self.wake(c)

    def wake(self, c: Controller) -> None:
        """A change the set's informers report: a sync ``controllerDelay`` later (one for every
        change at the same instant)."""
        from .loop import CONTROLLER

        sim = self.sim
        t = sim.now + sim.sc.settings.controller_delay
        if self.due.get(c.key) == t:
            return
        self.due[c.key] = t
        sim.push(t, CONTROLLER, c)


def statefulset_objects(controllers: list[Any]) -> list[dict[str, Any]]:
    """The StatefulSet objects of the scenario's sets, for the scheduler's readers of them
    (PodTopologySpread's default selectors)."""
    return [c.meta["object"] for c in controllers if c.kind == KIND and isinstance(c.meta.get("object"), dict)]
