"""DRA in the Cluster Autoscaler's simulation: the DynamicResources plugin's state forked into the
autoscaler's snapshot, template nodes carrying their node group's ResourceSlices, claims
allocated and released in the snapshot; and the live plugin's state carried over when nodes join
or leave the simulated cluster.

Why: upstream's Cluster Autoscaler (1.36) keeps a DRA snapshot beside its cluster snapshot
(``simulator/dynamicresources/snapshot/snapshot.go``): the cluster's ResourceSlices, claims and
device classes, changed in the snapshot only. A pod scheduled in the simulation has its claims
allocated by the scheduler's own DynamicResources Filter and Reserve against that snapshot
(``ReservePodClaims``, the allocation written into the snapshot's claim), so two pods never take
the same device of one template node; a pod leaving a node (the drain simulation) has its
reservations cleared and, when the pod owns the claim or nobody else uses it, the claim
deallocated (``UnreservePodClaims``). A node group's template node carries the group's
node-local slices renamed for the new node (``simulator/dynamicresources/utils/sanitize.go``'s
``SanitizedNodeResourceSlices``: the slice and pool names suffixed, ``nodeName`` the new node),
added with the template node (``AddNodeResourceSlices``).

kubetwin runs its own DynamicResources plugin (:mod:`kubetwin.scheduler.plugins.dynamicresources`)
over the fork: :func:`fork_plugin` copies the live plugin's claims, reservations and devices in
use; :func:`add_slices` adds a template node's slices. A claim generated from a template and
deallocated here is deleted from the fork (kubetwin's resourceclaim controller deletes it with
its pod) and generated again under the same seeded name when the pod is placed again: the same
allocation search as upstream's deallocated-but-kept claim.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Iterable, Mapping

from ..dra.allocator import AllocatedState, Allocator
from ..dra.api import ResourceSlice, parse_resource_slice
from ..dra.podclaims import ClaimIndex
from ..model.pod import Pod
from ..scheduler.plugins.dynamicresources.dynamicresources import DynamicResources


def has_claims(pod: Pod) -> bool:
    """The pod references ResourceClaims (its fit depends on the DRA snapshot)."""
    return bool(pod.spec.resource_claims)


def node_local_slices(slices: Iterable[Mapping[str, Any]], node: str) -> list[Mapping[str, Any]]:
    """The slices a node's drivers publish for it (``spec.nodeName`` the node)."""
    return [s for s in slices if ((s.get("spec") or {}).get("nodeName")) == node]


def sanitized_node_resource_slices(slices: Iterable[Mapping[str, Any]], new_node: str,
                                   suffix: str) -> list[dict[str, Any]]:
    """``SanitizedNodeResourceSlices``: each node-local slice copied for ``new_node``, its name
    and its pool's name suffixed with ``-suffix`` (pool names are unique within a driver)."""
    out = []
    for s in slices:
        obj = copy.deepcopy(dict(s))
        meta = dict(obj.get("metadata") or {})
        spec = dict(obj.get("spec") or {})
        if not spec.get("nodeName"):
            raise ValueError(f"can't sanitize slice {meta.get('name')} because it isn't node-local")
        meta["name"] = f"{meta.get('name', '')}-{suffix}"
        meta.pop("uid", None)
        pool = dict(spec.get("pool") or {})
        pool["name"] = f"{pool.get('name', '')}-{suffix}"
        spec["pool"] = pool
        spec["nodeName"] = new_node
        obj["metadata"], obj["spec"] = meta, spec
        out.append(obj)
    return out


def _copy_state(state: AllocatedState) -> AllocatedState:
    return AllocatedState(set(state.dedicated), set(state.shared),
                          {k: dict(v) for k, v in state.aggregated_capacity.items()})


def _with_slices(plugin: DynamicResources, slices: list[ResourceSlice], state: AllocatedState) -> None:
    """The plugin's objects and allocator over ``slices``, with the devices of ``state`` in use."""
    dra = plugin._objects()
    plugin._dra = dataclasses.replace(dra, slices=slices)
    plugin._allocator = Allocator(plugin._alloc().features, dra.classes, slices, allocated_state=state)
    plugin._verdicts = None
    plugin._class_devices = {}


def fork_plugin(live: DynamicResources, handle: Any) -> DynamicResources:
    """A DynamicResources plugin over ``handle`` (the autoscaler's fork) that starts from
    ``live``'s claims, reservations and devices in use; changes to either stay apart."""
    live._objects()
    alloc = live._alloc()
    fork = DynamicResources(live.args, handle)
    fork._dra = dataclasses.replace(live._dra, slices=list(live._dra.slices))
    fork._claims = ClaimIndex()
    for key, claim in live._claims.items():
        fork._claims[key] = claim
    fork._reserved = {uid: set(keys) for uid, keys in live._reserved.items()}
    fork._extended_status = dict(live._extended_status)
    fork._claim_statuses = dict(live._claim_statuses)
    fork._allocator = Allocator(alloc.features, fork._dra.classes, fork._dra.slices,
                                allocated_state=_copy_state(alloc.state))
    return fork


def parse_slices(raw: Iterable[Mapping[str, Any]]) -> list[ResourceSlice]:
    """ResourceSlices kubetwin wrote itself (a driver's publication, sanitized copies)."""
    return [parse_resource_slice(s) for s in raw]


def add_slices(plugin: DynamicResources, raw: Iterable[Mapping[str, Any]]) -> None:
    """``AddNodeResourceSlices``: more slices (a template node's) in the plugin's view."""
    new = parse_slices(raw)
    if not new:
        return
    plugin._objects()
    _with_slices(plugin, list(plugin._dra.slices) + new, plugin._alloc().state)


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """The fork's DRA state at one point (a drain trial's start), for :func:`restore`."""

    dra: Any
    claims: tuple[tuple[str, Any], ...]
    reserved: dict[str, set[str]]
    state: AllocatedState


def checkpoint(plugin: DynamicResources) -> Checkpoint:
    plugin._objects()
    return Checkpoint(plugin._dra, tuple(plugin._claims.items()),
                      {u: set(k) for u, k in plugin._reserved.items()}, _copy_state(plugin._alloc().state))


def restore(plugin: DynamicResources, cp: Checkpoint) -> None:
    """Back to ``cp``: claims, reservations and devices in use as they were (a failed trial)."""
    plugin._claims = ClaimIndex()
    for key, claim in cp.claims:
        plugin._claims[key] = claim
    plugin._reserved = {u: set(k) for u, k in cp.reserved.items()}
    if plugin._dra is not cp.dra:
        plugin._dra = cp.dra
        _with_slices(plugin, list(cp.dra.slices), _copy_state(cp.state))
    else:
        plugin._alloc().state = _copy_state(cp.state)
        plugin._verdicts = None
    plugin._last = ("", {})


def carry_over(old: DynamicResources, new: DynamicResources, slices: Iterable[Mapping[str, Any]]) -> None:
    """Nodes joined or left the simulated cluster and the scheduler started again: the new
    plugin takes the old one's claims, reservations, statuses and devices in use, over the
    slices published now (``slices``: the cluster's ResourceSlice objects after the change)."""
    old._objects()
    state = old._alloc().state
    new._objects()
    new._claims = old._claims
    new._reserved = old._reserved
    new._extended_status = old._extended_status
    new._claim_statuses = old._claim_statuses
    new.claim_changes = old.claim_changes
    new._dra = dataclasses.replace(old._dra, slices=[])
    new._allocator = Allocator(old._alloc().features, new._dra.classes, [], allocated_state=state)
    from ..dra.objects import collect
    from ..model.loader import Document

    parsed = collect([Document(dict(s), "-", i) for i, s in enumerate(slices)], checked=True).slices
    _with_slices(new, parsed, state)


# --- utilization (simulator/dynamicresources/utils/utilization.go, simulator/utilization/info.go) ----
class UtilizationError(ValueError):
    """A pool whose newest generation is not complete (``allCurrentGenSlices``)."""


def _current_gen(slices: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``allCurrentGenSlices``: the slices of the pool's newest generation, all of them."""
    best: list[Mapping[str, Any]] = []
    top = 0
    for s in slices:
        gen = int(((s.get("spec") or {}).get("pool") or {}).get("generation") or 0)
        if gen > top:
            top, best = gen, [s]
        elif gen == top:
            best.append(s)
    if not best:
        return []
    want = int(((best[0].get("spec") or {}).get("pool") or {}).get("resourceSliceCount") or 0)
    if len(best) != want:
        raise UtilizationError(f"newest generation: {top}, slice count: {want} - found only {len(best)} slices")
    return best


def _counter_value(c: Any) -> float:
    from ..model.quantity import parse_quantity

    return parse_quantity((c or {}).get("value", "0")).as_float()


def _pool_util(slices: list[Mapping[str, Any]], allocated: set[str]) -> float:
    """``calculatePoolUtil``: allocated over all devices, or for a pool with shared counters the
    highest counter use of each counter set averaged over the partitionable devices."""
    devices = [d for s in slices for d in ((s.get("spec") or {}).get("devices") or ())]
    used = [d for d in devices if d.get("name") in allocated]
    counter_sets = [cs for s in slices for cs in ((s.get("spec") or {}).get("sharedCounters") or ())]
    if not counter_sets:
        return len(used) / len(devices) if devices else 0.0
    unique = {cc.get("counterSet") for d in devices for cc in (d.get("consumesCounters") or ())}
    if not unique:
        return 0.0
    consumed: dict[str, dict[str, float]] = {}
    for d in used:
        for cc in d.get("consumesCounters") or ():
            into = consumed.setdefault(cc.get("counterSet"), {})
            for name, c in (cc.get("counters") or {}).items():
                into[name] = into.get(name, 0.0) + _counter_value(c)
    total = 0.0
    for cs in counter_sets:
        top = 0.0
        for name, c in (cs.get("counters") or {}).items():
            value = _counter_value(c)
            if value == 0:
                continue
            got = consumed.get(cs.get("name"), {}).get(name)
            if got is not None and got / value > top:
                top = got / value
        total += top / len(unique)
    return total


def highest_dynamic_resource_utilization(local_slices: Iterable[Mapping[str, Any]], claims: Iterable[Any]) -> float:
    """``HighestDynamicResourceUtilization``: the highest utilization of the node's pools (by
    driver and pool), the devices in use being those the node's pods' claims allocated
    (admin access excluded). Raises :class:`UtilizationError` for an incomplete pool."""
    in_use: dict[tuple[str, str], set[str]] = {}
    for claim in claims:
        for r in claim.allocated or ():
            if not r.admin_access:
                in_use.setdefault((r.driver, r.pool), set()).add(r.device)
    pools: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for s in local_slices:
        spec = s.get("spec") or {}
        pools.setdefault((spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")), []).append(s)
    top = 0.0
    for key, slices in pools.items():
        top = max(top, _pool_util(_current_gen(slices), in_use.get(key, set())))
    return top
