"""DynamicResources: pods with ResourceClaims fit only where their devices can be allocated
(``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go``).

Claims are resolved exactly as ``kubetwin dra allocate --pod`` resolves them
(:func:`kubetwin.dra.podclaims.claims_for_pod`: template claims named, owned and adopted as the
resourceclaim controller does, with the same seeded name suffix), so a pod's claims carry the
same names in a single cycle, a simulation and the DRA command. Filter checks, per node, that
already-allocated claims are reachable from it and allocates the others together on that node
(:func:`~kubetwin.dra.podclaims.filter_on_node`); Reserve turns the node's result into the
claims as PreBind writes them (:func:`~kubetwin.dra.podclaims.bind_claims`) and marks their
devices in use. When a pod goes away its claims are released as the resourceclaim controller
does (:func:`~kubetwin.dra.podclaims.release_for_pod`): generated claims are deleted, shared
ones lose the pod from ``reservedFor`` and are deallocated once nobody uses them.

Extended resources backed by DRA (KEP-5004, :mod:`.dra_extended`) ride along as one more claim
per pod, built per node from the requests the node's device plugins do not cover.

Score (gate DRAPrioritizedList, v1.35+): a node where the allocator could use a higher-ranked
``firstAvailable`` subrequest scores higher — ``8 - i`` for the subrequest at index ``i`` of
each request, summed over the pod's claims — then ``DefaultNormalizeScore``. Claims already
allocated count with their own allocation, as the scoring fix for mixed allocated and
unallocated claims (kubernetes#139017, 1.36.x) does; 1.36.0 failed such cycles instead.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ....errors import KubetwinError
from ....model.loader import Document
from ....model.pod import ContainerExtendedResourceRequest, Pod, PodExtendedResourceClaimStatus
from ...framework.interface import MAX_NODE_SCORE, CycleState, Plugin
from ...framework.status import SKIP, SUCCESS, Code, Status, unresolvable
from ...framework.types import NodeInfo
from . import NAME
from . import extended as ext
from .args import parse_dynamic_resources_args

ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_NOT_AVAILABLE = "resourceclaim not available on the node"
ERR_IN_USE = "resourceclaim in use"
#: ``resourceapi.FirstAvailableDeviceRequestMaxSize``: the best-ranked subrequest scores this much
FIRST_AVAILABLE_MAX_SIZE = 8
POST_FILTER_MESSAGE = "still not schedulable"
DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")


@dataclass
class _State:
    """PreFilter's findings for one pod (``stateData``)."""

    pod_claims: Any                     # dra.podclaims.PodClaims (user claims)
    extended: Any = None                # dra_extended.PodExtendedResources or None


@dataclass
class _NodeResult:
    pod_claims: Any                     # PodClaims allocated on this node (incl. the extended claim)
    outcome: Any                        # dra.allocator.Outcome
    mappings: tuple[Mapping[str, str], ...] = ()


def _key(claim: Any) -> str:
    return f"{claim.namespace or 'default'}/{claim.name}"


@functools.cache
def _dra() -> Any:
    """The DRA library the extension points call, imported on first use: a scheduler whose
    pods claim nothing never loads it, and a cycle that does pays no import statement."""
    from ....dra.allocator import AllocationError
    from ....dra.api import Node
    from ....dra.podclaims import (
        CLAIM_NOT_AVAILABLE,
        PodClaimError,
        bind_claims,
        claims_for_pod,
        filter_on_node,
        release_for_pod,
    )
    from . import verdicts

    return types.SimpleNamespace(
        AllocationError=AllocationError, Node=Node, CLAIM_NOT_AVAILABLE=CLAIM_NOT_AVAILABLE,
        PodClaimError=PodClaimError, bind_claims=bind_claims, claims_for_pod=claims_for_pod,
        filter_on_node=filter_on_node, release_for_pod=release_for_pod, verdicts=verdicts)


class DynamicResources(Plugin):
    name = NAME

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any] | None, path: str, file: str | None = None) -> None:
        return parse_dynamic_resources_args(raw, path, file)

    def __init__(self, args: Any, handle: Any):
        super().__init__(args, handle)
        self._dra: Any = None
        self._allocator: Any = None
        #: every ResourceClaim as the API holds it now, by namespace/name (input, then updates)
        self._claims: Any = None   # dra.podclaims.ClaimIndex, made with the objects
        #: pod UID -> keys of the claims reserved for it
        self._reserved: dict[str, set[str]] = {}
        #: pod UID -> ``status.extendedResourceClaimStatus`` written at PreBind
        self._extended_status: dict[str, PodExtendedResourceClaimStatus] = {}
        #: pod UID -> ``status.resourceClaimStatuses`` (the resourceclaim controller's)
        self._claim_statuses: dict[str, list[dict[str, Any]]] = {}
        #: this cycle's per-node Filter results (a dict, or the vector Filter's :class:`.verdicts.CycleResults`)
        self._last: tuple[str, Any] = ("", {})
        #: (before, after) of the claims deallocated since the scheduler last took them
        self.claim_changes: list[tuple[dict[str, Any], dict[str, Any]]] = []
        # NodeResourcesFit scores DRA-backed extended resources on this plugin's allocated state
        handle.dynamic_resources = self
        self._class_devices: dict[tuple[str, str], tuple[Any, tuple | None]] = {}
        self._verdicts: Any = None  # dra_verdicts.VerdictCache, made on the first vector Filter
        #: node name -> (the NodeInfo's labels, the allocator's Node made from them)
        self._nodes: dict[str, tuple[Any, Any]] = {}

    @property
    def seed(self) -> int:
        """Seed of generated claim names: the run's seed, as ``dra allocate --seed``."""
        return int(getattr(self.handle, "seed", 0) or 0)

    # --- objects ---------------------------------------------------------------------------------

    def _objects(self) -> Any:
        if self._dra is None:
            from ....dra.objects import collect
            from ....dra.podclaims import ClaimIndex

            docs = []
            origins = getattr(self.handle, "origins", {}) or {}
            for kind in DRA_KINDS:
                where = origins.get(kind, [])
                for i, obj in enumerate(self.handle.objects.get(kind, [])):
                    docs.append(Document(obj, where[i] if i < len(where) else f"-f {kind}", i))
            self._dra = collect(docs, checked=True)  # checked when the cluster's objects were read
            self._claims = ClaimIndex()
            for c in self._dra.claims:
                self._claims.setdefault(_key(c), c)
                for ref in c.reserved_for:
                    if isinstance(ref, Mapping) and ref.get("uid"):
                        self._reserved.setdefault(str(ref["uid"]), set()).add(_key(c))
            # a running pod's extended-resource claim is its own even where reservedFor is not given
            for ni in self.handle.snapshot.node_infos:
                for pi in ni.pods:
                    st = pi.pod.status.extended_resource_claim_status
                    if st is not None and st.resource_claim_name:
                        key = f"{pi.pod.namespace or 'default'}/{st.resource_claim_name}"
                        if key in self._claims:
                            self._reserved.setdefault(pi.pod.uid, set()).add(key)
        return self._dra

    def _claims_now(self) -> Any:
        self._objects()
        return self._claims.values()

    def allocator(self) -> Any:
        """The allocator over the cluster's classes and slices, with the devices in use now."""
        return self._alloc()

    def class_devices_on(self, class_name: str, node: NodeInfo) -> tuple | None:
        """Devices of a DeviceClass usable from ``node`` (slices never change here, so once per
        class and node labels); None when a selector fails to evaluate."""
        key = (class_name, node.name)
        hit = self._class_devices.get(key)
        if hit is not None and hit[0] is node.labels:
            return hit[1]
        ids = ext.class_device_ids(self._alloc(), class_name, node)
        self._class_devices[key] = (node.labels, ids)
        return ids

    def _alloc(self) -> Any:
        if self._allocator is None:
            from ....dra.allocator import Allocator
            from ....dra.features import AllocatorFeatures

            dra = self._objects()
            self._allocator = Allocator(AllocatorFeatures.from_gates(self.handle.gates), dra.classes, dra.slices,
                                        [c for c in self._claims.values() if c.allocated is not None])
        return self._allocator

    def _extended_enabled(self) -> bool:
        return self.handle.gates.enabled("DRAExtendedResource")

    # --- extension points ------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]):
        extended = None
        if self._extended_enabled() and self.handle.objects.get("DeviceClass"):
            self._objects()
            extended = ext.pod_extended_resources(self.handle, pod, self._claims.controlled_by(pod.uid))
        if not pod.spec.resource_claims and extended is None:
            return None, SKIP
        lib = _dra()
        dra = self._objects()
        try:
            pod_claims = lib.claims_for_pod(pod, self._claims, dra.templates, seed=self.seed)
        except lib.PodClaimError as exc:
            return None, unresolvable(str(exc))
        for pc in pod_claims.claims:
            c = pc.claim
            if (c.raw.get("metadata") or {}).get("deletionTimestamp"):
                return None, unresolvable(f'resourceclaim "{c.name}" is being deleted')
            if c.allocated is not None and not _can_be_reserved(c) and not _reserved_for(c, pod):
                return None, unresolvable(ERR_IN_USE)
        if not pod_claims.claims and extended is None:
            return None, SKIP
        self._last = (pod.uid, {})
        state[self.name] = _State(pod_claims, extended)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        s: _State | None = state.get(self.name)
        if s is None:  # called without this cycle's PreFilter (preemption's dry runs)
            kept = self._last
            scratch = CycleState()
            _, st = self.pre_filter(scratch, pod, [])
            if not st.is_success:
                return SUCCESS if st.is_skip else st
            s = scratch[self.name]
            if kept[0] == pod.uid:  # keep the other nodes' results of this pod
                self._last = kept
        pod_claims = s.pod_claims
        mappings: tuple[Mapping[str, str], ...] = ()
        if s.extended is not None:
            st, claim, mappings = ext.node_claim(self.handle, s.extended, node)
            if not st.is_success:
                return st
            if claim is not None:
                pod_claims = ext.with_claim(pod_claims, claim)
        if not pod_claims.claims:
            return SUCCESS
        lib = _dra()
        try:
            outcome = lib.filter_on_node(self._alloc(), lib.Node(node.name, dict(node.labels)), pod_claims)
        except lib.AllocationError as exc:
            if exc.node_local:
                return unresolvable(str(exc))
            return Status(Code.Error, (str(exc),))
        if not outcome.allocated:
            return unresolvable(ERR_NOT_AVAILABLE if outcome.reason == lib.CLAIM_NOT_AVAILABLE
                                else ERR_CANNOT_ALLOCATE)
        if self._last[0] != pod.uid:
            self._last = (pod.uid, {})
        self._last[1][node.name] = _NodeResult(pod_claims, outcome, mappings)
        return SUCCESS

    def filter_all(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Any:
        """Filter over every node at once, for pods whose claims all wait for an allocation and
        that need no DRA-backed extended resources: verdicts kept per (claim specs, node) until
        the devices the node sees change (:mod:`.dra_verdicts`), so a cycle runs the allocator
        only where a bind or a pod's end changed something. Returns the failing nodes (bool
        array, reason :data:`ERR_CANNOT_ALLOCATE`), or None where the per-node Filter must run
        (already-allocated claims, extended resources, an allocation error)."""
        s: _State | None = state.get(self.name)
        if s is None or s.extended is not None:
            return None
        pod_claims = s.pod_claims
        if not pod_claims.claims:
            return None
        claims = []
        for pc in pod_claims.claims:
            if pc.claim.allocated is not None:
                return None
            claims.append(pc.claim)
        lib = _dra()
        v = lib.verdicts
        cache = self._verdicts
        if cache is None or len(cache.names) != len(nodes):
            cache = self._verdicts = v.VerdictCache([ni.name for ni in nodes])
        entry = cache.verdicts(v.claims_signature(pod.namespace or "default", claims))
        stale, mark = cache.stale(entry)
        if stale:
            entry.before_write()
            alloc = self._alloc()
            allocate = alloc.allocate
            for i in stale:
                node = self._node(nodes[i])
                try:
                    if not cache.registered[i]:
                        cache.watch(i, alloc.pools_for(node))
                    # filter_on_node with every claim waiting for an allocation: reachable from
                    # any node, all allocated together
                    outcome = allocate(node, claims)
                except lib.AllocationError:
                    return None
                entry.fits[i] = outcome.allocated
                entry.outcomes[i] = outcome if outcome.allocated else None
                if not outcome.allocated or v.reusable(outcome):
                    entry.seen[i] = cache.version[i]
                else:
                    entry.seen[i] = -1
                    entry.volatile = True
        entry.read_to = mark
        self._last = (pod.uid, v.CycleResults(pod_claims, entry, cache.index, _NodeResult))
        return ~entry.fits

    def _node(self, ni: NodeInfo) -> Any:
        """The allocator's Node for ``ni``: one object per node while its labels stay the same
        object (the allocator then finds the node's pools without sorting its labels)."""
        hit = self._nodes.get(ni.name)
        if hit is not None and hit[0] is ni.labels:
            return hit[1]
        node = _dra().Node(ni.name, dict(ni.labels))
        self._nodes[ni.name] = (ni.labels, node)
        return node

    def node_changed(self, name: str) -> None:
        """A node's labels changed (its usable pools may differ): forget its verdicts."""
        if self._verdicts is not None:
            self._verdicts.node_changed(name)
        self._class_devices = {k: v for k, v in self._class_devices.items() if k[1] != name}
        self._nodes.pop(name, None)

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        """Ranks of the ``firstAvailable`` subrequests the node's allocation used."""
        uid, per_node = self._last
        if state.get(self.name) is None or uid != pod.uid or not self.handle.gates.enabled("DRAPrioritizedList"):
            return 0, SUCCESS
        result = per_node.get(node.name)
        return (0 if result is None else prioritized_list_score(result.pod_claims, result.outcome)), SUCCESS

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status:
        """``helper.DefaultNormalizeScore(MaxNodeScore, reverse=false)``."""
        top = max(scores.values(), default=0)
        if top > 0:
            for name, v in scores.items():
                scores[name] = MAX_NODE_SCORE * v // top
        return SUCCESS

    def scores_pod(self, pod: Pod) -> bool:
        """False when this cycle left nothing to score (no claims, nothing allocated, gate
        off): every node scores 0 and the plugin adds nothing to the totals."""
        uid, per_node = self._last
        if uid != pod.uid or not self.handle.gates.enabled("DRAPrioritizedList"):
            return False
        pod_claims = getattr(per_node, "pod_claims", None)  # the same claims on every node (vector Filter)
        if pod_claims is not None and not _names_first_available(pod_claims):
            return False
        return bool(per_node)

    def node_scores(self, pod: Pod, names: list[str]) -> list[int]:
        """Raw scores of ``names`` from this cycle's Filter results (``nodeAllocations``)."""
        if not self.scores_pod(pod):
            return [0] * len(names)
        per_node = self._last[1]
        out = []
        for name in names:
            r = per_node.get(name)
            out.append(0 if r is None else prioritized_list_score(r.pod_claims, r.outcome))
        return out

    def post_filter(self, state: CycleState, pod: Pod, diagnosis: Any) -> tuple[None, Status]:
        """PostFilter: a pod with claims whose cycle failed is ``still not schedulable``."""
        return None, Status(Code.Unschedulable, (POST_FILTER_MESSAGE,) if state.get(self.name) is not None else ())

    def reserve(self, pod: Pod, node: str) -> None:
        """The pod is bound to ``node``: Reserve and PreBind write its claims, devices are taken."""
        if not pod.spec.resource_claims and not (self._extended_enabled() and self.handle.objects.get("DeviceClass")):
            return
        uid, per_node = self._last
        pod_uid = pod.uid
        result = per_node.get(node) if uid == pod_uid else None
        if result is None:
            state = CycleState()
            _, st = self.pre_filter(state, pod, [])
            if st.is_skip:
                return
            if not st.is_success:
                raise KubetwinError(f"cannot bind {pod.key}: {st.message}")
            ni = self.handle.snapshot.get(node)
            if ni is None:
                raise KubetwinError(f"cannot bind {pod.key}: no node {node!r}")
            st = self.filter(state, pod, ni)
            if not st.is_success:
                raise KubetwinError(f"cannot bind {pod.key} to {node}: {st.message}")
            result = self._last[1].get(node)
            if result is None:  # nothing for DRA on this node (device plugins cover the requests)
                return
        bound = _dra().bind_claims(result.pod_claims, result.outcome, node, lazy=True)
        alloc = self._alloc()
        for devices in bound.devices.values():
            alloc.state.add_all(devices, alloc.features)
            if self._verdicts is not None:
                self._verdicts.devices_changed(devices)
        keys = self._reserved.setdefault(pod_uid, set())
        for claim in bound.parsed:
            key = _key(claim)
            self._claims[key] = claim
            keys.add(key)
        if bound.resource_claim_statuses:
            self._claim_statuses[pod_uid] = [dict(x) for x in bound.resource_claim_statuses]
        ext_claim = None if not result.mappings else next(
            (pc.claim for pc in result.pod_claims.claims if pc.name == ext.POD_CLAIM_NAME), None)
        if ext_claim is not None:
            self._extended_status[pod_uid] = PodExtendedResourceClaimStatus(
                request_mappings=[ContainerExtendedResourceRequest(
                    container_name=m["containerName"], resource_name=m["resourceName"], request_name=m["requestName"])
                    for m in result.mappings],
                resource_claim_name=ext_claim.name)
        self._last = ("", {})

    def unreserve(self, pod: Pod) -> None:
        """The pod is gone: the resourceclaim controller deletes its generated claims and
        deallocates claims nobody else uses; their devices are free again."""
        self._objects()
        keys = self._reserved.pop(pod.uid, None)
        self._extended_status.pop(pod.uid, None)
        self._claim_statuses.pop(pod.uid, None)
        if not keys:
            return
        release_for_pod = _dra().release_for_pod
        alloc = self._allocator
        for key in sorted(keys):
            claim = self._claims.get(key)
            if claim is None:
                continue
            after = release_for_pod(claim, pod)
            if claim.allocated is not None and (after is None or after.allocated is None):
                # the claim's deallocation is a ResourceClaim update the scheduling queue sees
                ns, _, name = key.partition("/") if isinstance(key, str) else ("", "", str(key))
                meta = {"namespace": ns, "name": name}
                self.claim_changes.append(({"metadata": meta, "status": {"allocation": True}},
                                           {"metadata": meta, "status": {}}))
            if claim.allocated is not None and (after is None or after.allocated is None) and alloc is not None:
                alloc.state.release_all(claim.allocated, alloc.features)
                if self._verdicts is not None:
                    self._verdicts.devices_changed(claim.allocated)
            if after is None:
                del self._claims[key]
            else:
                self._claims[key] = after

    # --- results ---------------------------------------------------------------------------------

    def claims_of(self, pod: Pod) -> list[dict[str, Any]]:
        """The pod's ResourceClaims as the API holds them after PreBind (bound pods only)."""
        self._objects()
        return [dict(self._claims[k].raw) for k in sorted(self._reserved.get(pod.uid, ())) if k in self._claims]

    def resource_claims_of(self, pod: Pod) -> list[Any]:
        """:meth:`claims_of` as the parsed ResourceClaims (same order): what the kubelet prepares,
        without decoding again the objects Reserve has just decoded."""
        self._objects()
        return [self._claims[k] for k in sorted(self._reserved.get(pod.uid, ())) if k in self._claims]

    def extended_resource_claim_status(self, pod: Pod) -> PodExtendedResourceClaimStatus | None:
        """``status.extendedResourceClaimStatus``: what PreBind wrote for the pod, else what the
        pod already carries (a pod bound before this scheduler started)."""
        return self._extended_status.get(pod.uid) or pod.status.extended_resource_claim_status

    def pod_status(self, pod: Pod) -> dict[str, Any]:
        """The pod status fields written for a bound pod: ``resourceClaimStatuses`` (controller)
        and ``extendedResourceClaimStatus`` (PreBind)."""
        out: dict[str, Any] = {}
        uid = pod.uid
        statuses = self._claim_statuses.get(uid)
        if statuses:
            out["resourceClaimStatuses"] = statuses
        ext_status = self._extended_status.get(uid)
        if ext_status is not None:
            import msgspec

            out["extendedResourceClaimStatus"] = msgspec.to_builtins(ext_status)
        return out

    def allocated_devices(self) -> int:
        """How many devices the allocated claims hold: the length of every ``status.allocation``
        :meth:`allocations` lists, counted from the decoded claims."""
        self._objects()
        return sum(len(c.allocated) for c in self._claims.values() if c.allocated is not None)

    def allocated_results(self) -> list[Any]:
        """Every ``status.allocation.devices.results`` entry of the allocated claims, decoded
        (``AllocatedDevice``: driver, pool, device), claims in :meth:`allocations` order."""
        self._objects()
        return [r for c in self._claims.values() if c.allocated is not None for r in c.allocated]

    def allocations(self) -> Mapping[str, Any]:
        """Claim → ``status.allocation`` of every allocated claim the scheduler knows."""
        self._objects()
        return {k: (c.raw.get("status") or {}).get("allocation") for k, c in self._claims.items()
                if c.allocated is not None}

    def is_allocated(self, key: str) -> bool:
        """``key in allocations()`` for one claim (``namespace/name``), without building the mapping."""
        self._objects()
        claim = self._claims.get(key)
        return claim is not None and claim.allocated is not None


def prioritized_list_score(pod_claims: Any, outcome: Any) -> int:
    """``computeScore``: ``8 - i`` for every allocated subrequest at index ``i`` of a
    ``firstAvailable`` request. Claims allocated on this node take ``outcome.results`` in
    :attr:`PodClaims.to_allocate` order; claims allocated before keep their own results."""
    if not outcome.results and not pod_claims.to_allocate:
        return 0
    results = iter(outcome.results)
    score = 0
    for pc in pod_claims.claims:
        claim = pc.claim
        if claim.allocated is not None:
            used = {d.request for d in claim.allocated}
        else:
            res = next(results, None)
            used = {d.request for d in res.results} if res is not None else set()
        for req in claim.requests:
            if req.exactly is not None:
                continue
            for i, sub in enumerate(req.first_available):
                if f"{req.name}/{sub.name}" in used:
                    score += FIRST_AVAILABLE_MAX_SIZE - i
    return score


def _names_first_available(pod_claims: Any) -> bool:
    """Some request of the pod's claims lists ``firstAvailable`` subrequests."""
    for pc in pod_claims.claims:
        for req in pc.claim.requests:
            if req.first_available:
                return True
    return False


def _reserved_for(claim: Any, pod: Pod) -> bool:
    for r in claim.reserved_for:
        if (type(r) is dict or isinstance(r, Mapping)) and r.get("uid") == pod.uid:
            return True
    return False


def _can_be_reserved(claim: Any) -> bool:
    """``resourceclaim.CanBeReserved``: room for one more consumer."""
    from ....dra.api import RESERVED_FOR_MAX

    return len(claim.reserved_for) < RESERVED_FOR_MAX
