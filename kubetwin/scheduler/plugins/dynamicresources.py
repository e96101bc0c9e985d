"""DynamicResources: pods with ResourceClaims fit only where their devices can be allocated.

PreFilter resolves the pod's claims (named claims from the objects given, template claims
instantiated as the ResourceClaim controller would); Filter checks, per node, that already
allocated claims are reachable from it (their allocation's node selector) and allocates the
others with :mod:`kubetwin.dra`'s structured allocator on that node; Reserve records the
chosen devices as in use so later pods see them taken (Unreserve frees them). PostFilter has
nothing to deallocate in a simulation and says so as upstream does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ...errors import KubetwinError
from ...model.loader import Document
from ...model.meta import convert
from ...model.pod import NodeSelector, Pod
from ..framework.interface import CycleState, Plugin, register
from ..framework.status import SKIP, SUCCESS, Code, Status, unresolvable
from ..framework.types import NodeInfo
from ..labels import node_selector_matcher

ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_NOT_AVAILABLE = "resourceclaim not available on the node"
POST_FILTER_MESSAGE = "still not schedulable"
DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")


@dataclass
class _PodClaims:
    claims: list[Any]            # dra.api.ResourceClaim, in pod order
    to_allocate: list[Any]       # those without an allocation
    selectors: list[Any]         # node matchers of the allocated ones


@register
class DynamicResources(Plugin):
    name = "DynamicResources"

    def __init__(self, args: Any, handle: Any):
        super().__init__(args, handle)
        self._dra: Any = None
        self._allocator: Any = None
        #: claim key -> (allocation result, node matcher, pods using it)
        self._allocated: dict[str, tuple[Any, Any, set[str]]] = {}
        self._last: tuple[str, dict[str, Any]] = ("", {})

    # --- objects ---------------------------------------------------------------------------------

    def _objects(self) -> Any:
        if self._dra is None:
            from ...dra.objects import collect

            docs = []
            origins = getattr(self.handle, "origins", {}) or {}
            for kind in DRA_KINDS:
                where = origins.get(kind, [])
                for i, obj in enumerate(self.handle.objects.get(kind, [])):
                    docs.append(Document(obj, where[i] if i < len(where) else f"-f {kind}", i))
            self._dra = collect(docs)
        return self._dra

    def _alloc(self) -> Any:
        if self._allocator is None:
            from ...dra.allocator import Allocator
            from ...dra.features import AllocatorFeatures

            dra = self._objects()
            self._allocator = Allocator(AllocatorFeatures.from_gates(self.handle.gates), dra.classes, dra.slices,
                                        [c for c in dra.claims if c.allocated is not None])
        return self._allocator

    def _resolve(self, pod: Pod) -> tuple[list[Any] | None, Status]:
        from ...dra.api import parse_resource_claim

        dra = self._objects()
        ns = pod.metadata.namespace
        out = []
        for prc in pod.spec.resource_claims:
            if prc.resource_claim_name:
                claim = next((c for c in dra.claims if c.name == prc.resource_claim_name
                              and (c.namespace or "default") == ns), None)
                if claim is None:
                    return None, unresolvable(f'resourceclaim "{prc.resource_claim_name}" not found')
                if (claim.raw.get("metadata") or {}).get("deletionTimestamp"):
                    return None, unresolvable(f'resourceclaim "{claim.name}" is being deleted')
            elif prc.resource_claim_template_name:
                tpl = next((t for t in dra.templates if t.name == prc.resource_claim_template_name
                            and (t.namespace or "default") == ns), None)
                if tpl is None:
                    return None, unresolvable(f'resourceclaimtemplate "{prc.resource_claim_template_name}" not found')
                name = f"{pod.metadata.name}-{prc.name}"
                claim = parse_resource_claim({"metadata": {"name": name, "namespace": ns, "uid": f"{pod.uid}/{prc.name}"},
                                              "spec": dict(tpl.spec)})
            else:
                return None, unresolvable(f"pod resource claim {prc.name} names neither a claim nor a template")
            out.append(claim)
        return out, SUCCESS

    @staticmethod
    def _key(claim: Any) -> str:
        return f"{claim.namespace or 'default'}/{claim.name}"

    def _allocation_selector(self, claim: Any) -> Any:
        """A matcher for the nodes an allocated claim is reachable from (None: every node)."""
        hit = self._allocated.get(self._key(claim))
        if hit is not None:
            return hit[1]
        sel = ((claim.raw.get("status") or {}).get("allocation") or {}).get("nodeSelector")
        if sel is None:
            return None
        return node_selector_matcher(convert(sel, NodeSelector, path="status.allocation.nodeSelector")
                                     .node_selector_terms)

    # --- extension points ------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]):
        if not pod.spec.resource_claims:
            return None, SKIP
        claims, st = self._resolve(pod)
        if claims is None:
            return None, st
        to_allocate, selectors = [], []
        for c in claims:
            if c.allocated is not None or self._key(c) in self._allocated:
                m = self._allocation_selector(c)
                if m is not None:
                    selectors.append(m)
            else:
                to_allocate.append(c)
        state[self.name] = _PodClaims(claims, to_allocate, selectors)
        return None, SUCCESS

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        s: _PodClaims | None = state.get(self.name)
        if s is None:
            scratch = CycleState()
            _, st = self.pre_filter(scratch, pod, [])
            if not st.is_success:
                return SUCCESS if st.is_skip else st
            s = scratch[self.name]
        for m in s.selectors:
            if not m(node.labels, node.name):
                return unresolvable(ERR_NOT_AVAILABLE)
        if not s.to_allocate:
            return SUCCESS
        from ...dra.allocator import AllocationError
        from ...dra.api import Node as DRANode

        try:
            outcome = self._alloc().allocate(DRANode(node.name, dict(node.labels)), s.to_allocate)
        except AllocationError as exc:
            if exc.node_local:
                return unresolvable(str(exc))
            return Status(Code.Error, (str(exc),))
        if not outcome.allocated:
            return unresolvable(ERR_CANNOT_ALLOCATE)
        if self._last[0] != pod.uid:
            self._last = (pod.uid, {})
        self._last[1][node.name] = (s, outcome)
        return SUCCESS

    def post_filter_message(self, state: CycleState) -> str:
        return POST_FILTER_MESSAGE if state.get(self.name) is not None else ""

    def reserve(self, pod: Pod, node: str) -> None:
        """The pod is bound to ``node``: its new allocations take their devices."""
        if not pod.spec.resource_claims:
            return
        from ...dra.api import AllocatedDevice

        uid, per_node = self._last
        s_outcome = per_node.get(node) if uid == pod.uid else None
        if s_outcome is None:
            state = CycleState()
            _, st = self.pre_filter(state, pod, [])
            if not st.is_success:
                raise KubetwinError(f"cannot bind {pod.key}: {st.message}")
            ni = self.handle.snapshot.get(node)
            st = self.filter(state, pod, ni)
            if not st.is_success:
                raise KubetwinError(f"cannot bind {pod.key} to {node}: {st.message}")
            s_outcome = self._last[1][node]
        s, outcome = s_outcome
        alloc = self._alloc()
        for claim, result in zip(s.to_allocate, outcome.results):
            for r in result.results:
                alloc.state.add(AllocatedDevice(r.request, r.driver, r.pool, r.device, r.admin_access, r.share_id,
                                                r.consumed_capacity), alloc.features)
            sel = result.node_selector
            m = node_selector_matcher(convert(sel, NodeSelector).node_selector_terms) if sel is not None else None
            self._allocated[self._key(claim)] = (result, m, {pod.uid})
        for claim in s.claims:
            hit = self._allocated.get(self._key(claim))
            if hit is not None:
                hit[2].add(pod.uid)
        self._last = ("", {})

    def unreserve(self, pod: Pod) -> None:
        """The pod is gone: claims no other pod uses give their devices back."""
        if not pod.spec.resource_claims:
            return
        alloc = self._allocator
        for key, (result, _, users) in list(self._allocated.items()):
            users.discard(pod.uid)
            if users or alloc is None:
                continue
            for r in result.results:
                did = (r.driver, r.pool, r.device)
                alloc.state.dedicated.discard(did)
                if r.share_id:
                    alloc.state.shared.discard((*did, r.share_id))
            del self._allocated[key]

    def allocations(self) -> Mapping[str, Any]:
        """Claim → allocation result (``status.allocation``) made by this scheduler."""
        return {k: v[0] for k, v in self._allocated.items()}
