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

kubetwin's own glue (no upstream file) around ``pkg/kubelet/cm/dra/manager.go``.
"""

from __future__ import annotations

from typing import Any, Sequence

import msgspec

from ..dra.api import ResourceClaim
from ..dra.cdi import CDISpec
from ..dra.checkpoint import ClaimInfoState
from ..dra.prepare import PrepareError, prepare_claims
from ..dra.unprepare import UnprepareError, unprepare_pod
from ..errors import InputError
from ..model.pod import Pod, PodResourceClaimStatus


class NodeDRA:
    def __init__(self, sim: Any):
        self.sim = sim
        n = len(sim.sim_nodes)
        #: per node: ``dra_manager_state`` entries, CDI spec files by name
        self.state: list[list[ClaimInfoState]] = [[] for _ in range(n)]
        self.cdi: list[dict[str, CDISpec]] = [{} for _ in range(n)]
        self.mismatches: list[str] = []
        #: the pods as prepared (with the resourceClaimStatuses the controller wrote), by UID
        self.pods: dict[str, Pod] = {}

    def _with_claim_statuses(self, pod: Pod) -> Pod:
        written = (self.sim.dra.pod_status(pod) if self.sim.dra is not None else {}).get("resourceClaimStatuses")
        if not written:
            return pod
        statuses = [PodResourceClaimStatus(name=s["name"], resource_claim_name=s.get("resourceClaimName"))
                    for s in written]
        return msgspec.structs.replace(pod, status=msgspec.structs.replace(pod.status,
                                                                           resource_claim_statuses=statuses))

    def prepare(self, i: int, pod: Pod, claims: Sequence[ResourceClaim]) -> None:
        """NodePrepareResources for a bound pod's claims (the scheduler's decoded objects); the
        containers' views of them (:func:`~kubetwin.dra.prepare.prepare_pod`) are not kept."""
        pod = self._with_claim_statuses(pod)
        try:
            prepared = prepare_claims(pod, claims, None, state=self.state[i])
        except (PrepareError, InputError) as exc:
            self.sim.events.append({"time": self.sim.now, "type": "DRAPrepareFailed", "pod": pod.key,
                                    "node": self.sim.cluster.names[i], "message": str(exc)})
            return
        self.state[i] = list(prepared.state)
        self.cdi[i].update(prepared.cdi_specs)
        self.pods[pod.uid] = pod

    def unprepare(self, i: int, pod: Pod) -> None:
        if not pod.spec.resource_claims:
            return
        prepared = self.pods.pop(pod.uid, None)
        if prepared is None:
            return   # never prepared here (refused before its containers started): nothing to undo
        pod = prepared
        try:
            done = unprepare_pod(pod, self.state[i])
        except UnprepareError as exc:
            self.mismatches.append(f"{pod.key}: {exc}")
            return
        self.state[i] = list(done.state)
        for name in done.cdi_specs_removed:
            self.cdi[i].pop(name, None)
        allocated = self.sim.dra.allocations() if self.sim.dra is not None else {}
        for e in done.unprepared:
            key = f"{e.namespace}/{e.claim_name}"
            if key in allocated:
                self.mismatches.append(f"claim {key} unprepared on node {self.sim.cluster.names[i]} but still "
                                       "allocated by the scheduler")

    def reindex(self, old_names: list[str], names: list[str]) -> None:
        """Nodes joined or left (the Cluster Autoscaler): per-node state follows the nodes by
        name; a new node starts with nothing prepared, a removed node's state is gone."""
        state = dict(zip(old_names, self.state))
        cdi = dict(zip(old_names, self.cdi))
        self.state = [state.get(n, []) for n in names]
        self.cdi = [cdi.get(n, {}) for n in names]
