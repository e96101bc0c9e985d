"""The allocator's search when it cannot backtrack: one claim, one ``ExactCount`` request.

Upstream's allocator (``allocator_experimental.go``, modelled in :mod:`kubetwin.dra.allocator`) is a
depth-first search with backtracking. For a run over one claim with one ``exactly`` request of
``count`` devices, no constraints, no admin access, no capacity requests and no devices whose
taking depends on more than the device itself (shared counters, multiple allocations), taking a
device never makes a later step fail: the search takes, in candidate order, every device that
passes the request's own tests and is not in use, until it has ``count`` of them. Its first full
solution is therefore the first ``count`` such devices, and when there are only ``m < count``,
it visits every subset of them once (``2**m`` steps) before giving up.

Which candidates pass the request's tests (the class's and request's CEL selectors, the
device's node selection, binding conditions, taints, counters with the gate off, capacity with
nobody consuming it) does not change while the allocator lives: it is worked out once per
(claim spec, node), with the plain search's own predicates, and each allocation then only skips
the devices in use; the outcome for the same devices taken is kept (it is an immutable value).
Anything else — several claims or requests, constraints, a predicate that
raises, a device consumed by capacity or counters — declines (None) and the plain search runs,
so errors and their wording are always the plain ones. ``FAST = False`` turns the shortcut off
(the tests compare both on random inputs: the same devices, results, attempts and reasons).

Not an upstream module: a shortcut beside ``allocator_experimental.go``'s ``allocateOne``.
"""

from __future__ import annotations

from typing import Sequence

from .allocator import (
    AllocationError,
    Allocator,
    Outcome,
    _Candidate,
    _Request,
    _Run,
    _taint_prevents,
    claim_result,
    device_result,
    invalid_pool_error,
)
from .api import RESULTS_MAX, Node, ResourceClaim
from .pools import Pool

#: use the shortcut where it applies; False: always the plain search
FAST = True


class _Plan:
    """What every allocation of one claim spec on one node shares."""

    __slots__ = ("requests", "data", "count", "eligible", "no_candidates", "pools", "outcomes")

    def __init__(self, requests: dict[tuple[int, int, int], _Request], data: _Request, count: int,
                 eligible: list[_Candidate], no_candidates: bool, pools: Sequence[Pool]):
        self.requests = requests
        self.data = data
        self.count = count
        self.eligible = eligible
        self.no_candidates = no_candidates
        self.pools = pools
        #: positions in ``eligible`` of the devices taken -> the outcome (immutable, so kept)
        self.outcomes: dict[tuple[int, ...], Outcome] = {}


def _plan(alloc: Allocator, node: Node, claim: ResourceClaim, pools: list[Pool],
          candidates: list[_Candidate]) -> _Plan | None:
    """The candidates that pass the request's own tests, in search order; None where the search
    may backtrack or a test needs more than the device (the plain search runs)."""
    if len(claim.requests) != 1 or claim.constraints:
        return None
    request = claim.requests[0]
    spec = request.exactly
    if spec is None or request.first_available or spec.allocation_mode != "ExactCount":
        return None
    if not 1 <= spec.count <= RESULTS_MAX or spec.admin_access is not None or spec.capacity is not None:
        return None
    run = _Run(alloc, node, [claim], pools, candidates, None, None)
    key = (0, 0, 0)
    try:
        data = run._validate(0, spec, None, key)
    except AllocationError:
        return None
    known = alloc._device_verdicts
    eligible: list[_Candidate] = []
    for cand in candidates:
        device = cand.device
        if cand.slice.per_device_node_selection:   # the device's own node selection: per node
            verdict = _verdict(run, key, data, cand)
        else:   # a property of (request, device, driver): kept for every node the device is on
            vkey = (id(spec), id(device), cand.id[0])
            hit = known.get(vkey)
            if hit is not None and hit[0] is spec and hit[1] is device:
                verdict = hit[2]
            else:
                verdict = _verdict(run, key, data, cand)
                if len(known) > 65536:
                    known.clear()
                known[vkey] = (spec, device, verdict)   # the entry keeps both: their ids stay theirs
        if verdict == _DECLINE:
            return None
        if verdict == _ELIGIBLE:
            eligible.append(cand)
    return _Plan({key: data}, data, spec.count, eligible, not candidates, pools)


_ELIGIBLE, _SKIPPED, _DECLINE = 1, 0, -1


def _verdict(run: _Run, key: tuple[int, int, int], data: _Request, cand: _Candidate) -> int:
    """Whether the plain search would take ``cand`` for ``data`` when it is free (the tests
    ``allocateOne`` and ``allocateDevice`` make on the device alone, in their order), or
    :data:`_DECLINE` where taking it depends on more than the device or a test raises."""
    f = run.f
    device = cand.device
    try:
        if not run._selectable(key, data, cand):
            return _SKIPPED
    except AllocationError:
        return _DECLINE
    if f.consumable_capacity:
        if device.allow_multiple_allocations:
            return _DECLINE
        if not run.a.fits_alone(device):
            return _SKIPPED
    if device.consumes_counters:
        return _DECLINE if f.partitionable_devices else _SKIPPED
    if f.device_taints and _taint_prevents(device, data.spec):
        return _SKIPPED
    return _ELIGIBLE


def allocate(alloc: Allocator, node: Node, claims: Sequence[ResourceClaim], pools: list[Pool],
             candidates: list[_Candidate]) -> Outcome | None:
    """The plain search's outcome for ``claims`` on ``node``, or None where it does not apply."""
    if len(claims) != 1:
        return None
    claim = claims[0]
    plans = alloc._plans
    pkey = (id(claim.requests), id(claim.constraints), id(claim.config), id(node))
    hit = plans.get(pkey)
    if hit is not None and hit[0] is claim.requests and hit[1] is claim.constraints and hit[2] is claim.config \
            and hit[3] is node:
        plan = hit[4]
    else:
        plan = _plan(alloc, node, claim, pools, candidates)
        if len(plans) > 4096:
            plans.clear()
        plans[pkey] = (claim.requests, claim.constraints, claim.config, node, plan)   # ids stay theirs
    if plan is None:
        return None
    state = alloc.state
    dedicated = state.dedicated
    shared = state.aggregated_capacity if alloc.features.consumable_capacity else None
    count = plan.count
    picked: list[int] = []
    for i, cand in enumerate(plan.eligible):
        cid = cand.id
        if cid in dedicated:
            continue
        if shared and cid in shared:
            return None   # capacity others consume: the plain search weighs it
        picked.append(i)
        if len(picked) == count:
            break
    else:
        error = invalid_pool_error(plan.pools)
        if error is not None:
            raise error
        reason = ("cannot allocate all claims: no devices available on the node" if plan.no_candidates
                  else "cannot allocate all claims")
        return Outcome(False, reason=reason, attempts=2 ** len(picked))
    key = tuple(picked)
    got = plan.outcomes.get(key)
    if got is None:
        f, data, eligible = alloc.features, plan.data, plan.eligible
        entries = [(device_result(f, data, eligible[i], False), eligible[i], data) for i in picked]
        got = Outcome(True, (claim_result(claim, 0, plan.requests, entries, node),), attempts=count + 3)
        if len(plan.outcomes) > 256:
            plan.outcomes.clear()
        plan.outcomes[key] = got
    return got
