"""Each simulated node's kubelet DRA manager: claims prepared when a pod is admitted and
unprepared when it ends, so the scheduler's claim deallocation is checked against the node's side.

At admission the node prepares the pod's claims as the API holds them after PreBind
(:func:`kubetwin.dra.prepare.prepare_claims`: ``dra_manager_state`` entries, CDI spec files); when
the pod leaves its node, after the resourceclaim controller released its claims,
``UnprepareResources`` (:func:`kubetwin.dra.unprepare.unprepare_pod`) removes the entries no
other pod uses and their CDI specs. A claim the node unprepared must have lost its allocation on
the scheduler's side (its devices back in the pool); a disagreement is kept in ``mismatches``
(and is a kubetwin bug). A preparation the model driver refuses is an event of the run
(``DRAPrepareFailed``); the pod's outcome is the scheduler's and kubelet admission's.

The nodes' state is kept in place (:class:`kubetwin.dra.claiminfo.NodeClaims`: entries by claim
UID, the checkpoint and CDI specs built only when read); ``FAST = False`` runs the plain
``prepare_claims``/``unprepare_pod`` on whole checkpoints instead (the tests compare the two).

kubetwin's own glue (no upstream file) around ``pkg/kubelet/cm/dra/manager.go``.
"""

from __future__ import annotations

from typing import Any, Sequence

import msgspec

from ..dra.api import ResourceClaim
from ..dra.cdi import CDISpec
from ..dra.checkpoint import ClaimInfoState
from ..dra.claiminfo import NodeClaims
from ..dra.prepare import PrepareError, prepare_claims
from ..dra.unprepare import UnprepareError, unprepare_pod
from ..errors import InputError
from ..model.pod import Pod, PodResourceClaimStatus

#: keep the nodes' prepared claims in place (:class:`NodeClaims`); False: the plain whole-checkpoint path
FAST = True


class NodeDRA:
    def __init__(self, sim: Any):
        self.sim = sim
        n = len(sim.sim_nodes)
        self.fast = FAST
        #: per node, fast path: the prepared claims (:class:`NodeClaims`)
        self.nodes: list[NodeClaims] = [NodeClaims() for _ in range(n)] if self.fast else []
        #: per node, plain path: ``dra_manager_state`` entries, CDI spec files by name
        self._state: list[list[ClaimInfoState]] = [] if self.fast else [[] for _ in range(n)]
        self._cdi: list[dict[str, CDISpec]] = [] if self.fast else [{} for _ in range(n)]
        self.mismatches: list[str] = []
        #: plain path: the pods as prepared (with the resourceClaimStatuses the controller wrote), by UID
        self.pods: dict[str, Pod] = {}
        #: fast path: the prepared pods' namespace and claim names, by UID
        self.claim_names: dict[str, tuple[str, tuple[str, ...]]] = {}

    @property
    def state(self) -> list[list[ClaimInfoState]]:
        """Per node: the ``dra_manager_state`` entries (built when read on the fast path)."""
        if self.fast:
            return [list(n.checkpoint()) for n in self.nodes]
        return self._state

    @property
    def cdi(self) -> list[dict[str, CDISpec]]:
        """Per node: the CDI spec files by name (built when read on the fast path)."""
        if self.fast:
            return [n.cdi_specs() for n in self.nodes]
        return self._cdi

    def _written(self, pod: Pod) -> list[dict[str, Any]]:
        return (self.sim.dra.pod_status(pod) if self.sim.dra is not None else {}).get("resourceClaimStatuses") or []

    def _with_claim_statuses(self, pod: Pod) -> Pod:
        written = self._written(pod)
        if not written:
            return pod
        statuses = [PodResourceClaimStatus(name=s["name"], resource_claim_name=s.get("resourceClaimName"))
                    for s in written]
        return msgspec.structs.replace(pod, status=msgspec.structs.replace(pod.status,
                                                                           resource_claim_statuses=statuses))

    def _failed(self, i: int, pod: Pod, exc: Exception) -> None:
        self.sim.events.append({"time": self.sim.now, "type": "DRAPrepareFailed", "pod": pod.key,
                                "node": self.sim.cluster.names[i], "message": str(exc)})

    def prepare(self, i: int, pod: Pod, claims: Sequence[ResourceClaim]) -> None:
        """NodePrepareResources for a bound pod's claims (the scheduler's decoded objects); the
        containers' views of them (:func:`~kubetwin.dra.prepare.prepare_pod`) are not kept."""
        if self.fast:
            try:
                names = self.nodes[i].prepare(pod, self._written(pod), claims)
            except (PrepareError, InputError) as exc:
                self._failed(i, pod, exc)
                return
            self.claim_names[pod.uid] = (pod.namespace or "default", names)
            return
        pod = self._with_claim_statuses(pod)
        try:
            prepared = prepare_claims(pod, claims, None, state=self._state[i])
        except (PrepareError, InputError) as exc:
            self._failed(i, pod, exc)
            return
        self._state[i] = list(prepared.state)
        self._cdi[i].update(prepared.cdi_specs)
        self.pods[pod.uid] = pod

    def unprepare(self, i: int, pod: Pod) -> None:
        if not pod.spec.resource_claims:
            return
        if self.fast:
            kept = self.claim_names.pop(pod.uid, None)
            if kept is None:
                return   # never prepared here (refused before its containers started): nothing to undo
            namespace, names = kept
            gone = self.nodes[i].unprepare(pod.uid, namespace, names).unprepared
            self._check_released(i, gone)
            return
        prepared = self.pods.pop(pod.uid, None)
        if prepared is None:
            return   # never prepared here (refused before its containers started): nothing to undo
        pod = prepared
        try:
            done = unprepare_pod(pod, self._state[i])
        except UnprepareError as exc:
            self.mismatches.append(f"{pod.key}: {exc}")
            return
        self._state[i] = list(done.state)
        for name in done.cdi_specs_removed:
            self._cdi[i].pop(name, None)
        self._check_released(i, [(e.namespace, e.claim_name) for e in done.unprepared])

    def _check_released(self, i: int, gone: Sequence[tuple[str, str]]) -> None:
        """A claim the node unprepared must no longer be allocated on the scheduler's side."""
        if not gone or self.sim.dra is None:
            return
        for namespace, name in gone:
            key = f"{namespace}/{name}"
            if self.sim.dra.is_allocated(key):
                self.mismatches.append(f"claim {key} unprepared on node {self.sim.cluster.names[i]} but still "
                                       "allocated by the scheduler")

    def reindex(self, old_names: list[str], names: list[str]) -> None:
        """Nodes joined or left (the Cluster Autoscaler): per-node state follows the nodes by
        name; a new node starts with nothing prepared, a removed node's state is gone."""
        if self.fast:
            nodes = dict(zip(old_names, self.nodes))
            self.nodes = [nodes.get(n) or NodeClaims() for n in names]
            return
        state = dict(zip(old_names, self._state))
        cdi = dict(zip(old_names, self._cdi))
        self._state = [state.get(n, []) for n in names]
        self._cdi = [cdi.get(n, {}) for n in names]
