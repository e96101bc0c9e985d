"""The structured-parameters allocator: which devices a pod's claims get on one node.

Same search as Kubernetes (the incubating/experimental allocator of v1.36): claims in order,
requests in order, one device slot after the other; candidates in pool order (driver, pool,
binding-condition pools last), slice name, device index; combinations within a request,
depth-first with backtracking; the first full solution wins. The same devices come out.

Build one :class:`Allocator` per cluster state (classes, slices, allocated claims) and call
:meth:`Allocator.allocate` per node, as the scheduler's DynamicResources plugin does: CEL is
compiled once per expression, and selector verdicts are cached per (device, expression) for
the allocator's lifetime, so per-node work is the search itself.

Upstream:
``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/experimental/allocator_experimental.go``
(and its incubating twin ``internal/incubating/allocator_incubating.go``).
"""

from __future__ import annotations

import functools
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from .. import tracing as _tracing
from ..errors import KubetwinError
from ..fastinit import fast_init
from ..model.quantity import Quantity
from . import capacity as cap
from .api import (
    RESULTS_MAX,
    AllocatedDevice,
    Device,
    DeviceClass,
    DeviceSubRequest,
    Node,
    ResourceClaim,
    ResourceSlice,
)
from .cel import CELError, CELOptions, compile_selector
from .constraints import Constraint, DistinctAttribute, MatchAttribute
from .features import AllocatorFeatures
from .nodeselector import NodeSelectorError, node_matches
from .pools import Pool, PoolError, SliceIndex, gather_pools

DeviceID = tuple[str, str, str]  # driver, pool, device


class AllocationError(KubetwinError):
    """Allocation cannot proceed (Kubernetes returns an error, not "unsatisfiable")."""

    def __init__(self, message: str, node_local: bool = False):
        super().__init__(message)
        self.node_local = node_local  # wraps ErrFailedAllocationOnNode: other nodes may still work


class _Stop(Exception):
    pass


class _MaxSizeExceeded(Exception):
    """More than 32 results would be needed: try the next subrequest instead."""


@fast_init
@dataclass(frozen=True, slots=True)
class DeviceResult:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False
    tolerations: tuple[Mapping[str, Any], ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    share_id: str | None = None
    consumed_capacity: Mapping[str, Quantity] | None = None

    def allocated_device(self) -> AllocatedDevice:
        """This result as the allocated state reads it back from ``status.allocation``."""
        return AllocatedDevice(self.request, self.driver, self.pool, self.device, self.admin_access, self.share_id,
                               self.consumed_capacity)

    def to_api(self) -> dict[str, Any]:
        out: dict[str, Any] = {"request": self.request, "driver": self.driver, "pool": self.pool,
                               "device": self.device}
        if self.admin_access:
            out["adminAccess"] = True
        if self.tolerations:
            out["tolerations"] = [dict(t) for t in self.tolerations]
        if self.binding_conditions:
            out["bindingConditions"] = list(self.binding_conditions)
        if self.binding_failure_conditions:
            out["bindingFailureConditions"] = list(self.binding_failure_conditions)
        if self.share_id:
            out["shareID"] = self.share_id
        if self.consumed_capacity:
            out["consumedCapacity"] = {k: str(v.canonical()) for k, v in self.consumed_capacity.items()}
        return out


@fast_init
@dataclass(frozen=True, slots=True)
class AllocationResult:
    """One claim's ``status.allocation`` (without the timestamp the scheduler adds later)."""

    results: tuple[DeviceResult, ...]
    config: tuple[Mapping[str, Any], ...] = ()
    node_selector: Mapping[str, Any] | None = None

    def devices(self) -> tuple[AllocatedDevice, ...]:
        return tuple([r.allocated_device() for r in self.results])

    def to_api(self) -> dict[str, Any]:
        out: dict[str, Any] = {"devices": {"results": [r.to_api() for r in self.results]}}
        if self.config:
            out["devices"]["config"] = [dict(c) for c in self.config]
        if self.node_selector is not None:
            out["nodeSelector"] = self.node_selector
        return out


@fast_init
@dataclass(frozen=True, slots=True)
class Outcome:
    """``allocated`` with one result per claim, or ``unsatisfiable`` with a reason."""

    allocated: bool
    results: tuple[AllocationResult, ...] = ()
    reason: str = ""
    attempts: int = 0


@dataclass(slots=True)
class AllocatedState:
    """Devices already in use, from claims with ``status.allocation``."""

    dedicated: set[DeviceID] = field(default_factory=set)
    shared: set[tuple[str, str, str, str]] = field(default_factory=set)
    aggregated_capacity: dict[DeviceID, cap.ConsumedCapacity] = field(default_factory=dict)

    @classmethod
    def from_claims(cls, claims: Iterable[ResourceClaim], features: AllocatorFeatures) -> "AllocatedState":
        state = cls()
        for claim in claims:
            for r in claim.allocated or ():
                state.add(r, features)
        return state

    def add(self, r: AllocatedDevice, features: AllocatorFeatures) -> None:
        if r.admin_access:
            return
        did = (r.driver, r.pool, r.device)
        if features.consumable_capacity and r.share_id:
            self.shared.add((*did, r.share_id))
            agg = self.aggregated_capacity.setdefault(did, {})
            if r.consumed_capacity:
                cap.add_into(agg, r.consumed_capacity)
            return
        self.dedicated.add(did)

    def add_all(self, devices: Iterable[AllocatedDevice], features: AllocatorFeatures) -> None:
        """A claim got allocated: its devices (and the counters they consume) are taken."""
        for r in devices:
            self.add(r, features)

    def release(self, r: AllocatedDevice, features: AllocatorFeatures) -> None:
        """Undo :meth:`add`: the device is free again once no share of it is left.

        Shared counters need no bookkeeping of their own: they are charged for every device
        :meth:`is_allocated` reports, so a released device gives its counters back.
        """
        if r.admin_access:
            return
        did = (r.driver, r.pool, r.device)
        if features.consumable_capacity and r.share_id:
            self.shared.discard((*did, r.share_id))
            agg = self.aggregated_capacity.get(did)
            if agg is None:
                return
            if r.consumed_capacity:
                cap.subtract_from(agg, r.consumed_capacity)
            if not any(s[:3] == did for s in self.shared):
                del self.aggregated_capacity[did]
            return
        self.dedicated.discard(did)

    def release_all(self, devices: Iterable[AllocatedDevice], features: AllocatorFeatures) -> None:
        """A claim got deallocated (no consumer left, or deleted with its pod)."""
        for r in devices:
            self.release(r, features)

    def is_allocated(self, did: DeviceID) -> bool:
        return did in self.dedicated or did in self.aggregated_capacity


@dataclass(slots=True)
class _Request:
    """One request or one subrequest of a claim, as the search sees it."""

    spec: DeviceSubRequest
    parent: str | None           # name of the request owning this subrequest
    cls: DeviceClass
    num_devices: int
    claim_index: int = -1        # which of the run's claims asks (specs may be shared between claims)
    all_devices: list["_Candidate"] | None = None
    selected_sub: int = 0

    @property
    def name(self) -> str:
        return f"{self.parent}/{self.spec.name}" if self.parent else self.spec.name

    @property
    def admin(self) -> bool:
        return bool(self.spec.admin_access)


@dataclass(slots=True, eq=False)
class _Candidate:
    id: DeviceID
    device: Device
    slice: ResourceSlice
    pool: Pool


#: Pools and candidates per (slices, features, node), shared by allocators built on the same
#: slice objects (the scheduler builds one allocator per cycle on an unchanged slice list).
#: Gathering pools is a pure function of these immutable inputs; the entry keeps the slice
#: tuple alive, so the ids in the key cannot be reused by other objects while it exists.
_SHARED_POOLS: dict[tuple, tuple[tuple[ResourceSlice, ...], list[Pool], list["_Candidate"]]] = {}


class Allocator:
    """Allocation for one cluster state; call :meth:`allocate` for each candidate node."""

    def __init__(self, features: AllocatorFeatures, classes: Mapping[str, DeviceClass],
                 slices: Sequence[ResourceSlice], allocated_claims: Iterable[ResourceClaim] = (),
                 allocated_state: AllocatedState | None = None):
        self.features = features
        self.classes = dict(classes)
        self.slices = tuple(slices)
        self._slices_key = tuple(map(id, self.slices))
        self._index: SliceIndex | None = None   # built on first need
        self.state = allocated_state or AllocatedState.from_claims(allocated_claims, features)
        self.cel_options = CELOptions(features.consumable_capacity, features.list_type_attributes)
        self._verdicts: dict[tuple[int, str, str], bool] = {}
        self._fits_alone: dict[int, tuple[Device, bool]] = {}
        self._pools: dict[tuple, tuple[list[Pool], list[_Candidate]]] = {}
        #: the same, by Node object (a caller that keeps its Node objects skips sorting labels)
        self._pools_by_node: dict[int, tuple[Node, tuple[list[Pool], list[_Candidate]]]] = {}
        self.last_attempts = 0
        #: :mod:`.firstfree`'s plans per (claim spec, node)
        self._plans: dict[tuple[int, int, int, int], tuple] = {}
        self._first_free = _first_free()
        #: :mod:`.firstfree`'s verdicts per (request spec, device, driver)
        self._device_verdicts: dict[tuple[int, int, str], tuple[Any, Device, int]] = {}

    @property
    def index(self) -> SliceIndex:
        if self._index is None:
            self._index = SliceIndex(self.slices)
        return self._index

    # ---------------------------------------------------------------------------------------
    def allocate(self, node: Node, claims: Sequence[ResourceClaim], timeout: float | None = None,
                 trace: list | None = None) -> Outcome:
        """Allocate all ``claims`` jointly on ``node``; raises :class:`AllocationError`."""
        if _tracing.ACTIVE is not None:
            from ..tracing.dra import traced_allocate

            return traced_allocate(self, node, claims, lambda: self._allocate(node, claims, timeout, trace))
        return self._allocate(node, claims, timeout, trace)

    def _allocate(self, node: Node, claims: Sequence[ResourceClaim], timeout: float | None,
                  trace: list | None) -> Outcome:
        pools, candidates = self._pools_for(node)
        firstfree = self._first_free
        if trace is None and timeout is None and firstfree.FAST:
            got = firstfree.allocate(self, node, claims, pools, candidates)
            if got is not None:
                self.last_attempts = got.attempts
                return got
        run = _Run(self, node, list(claims), pools, candidates, timeout, trace)
        limit = sys.getrecursionlimit()
        if limit < 20000:
            sys.setrecursionlimit(20000)
        try:
            return run.execute()
        finally:
            self.last_attempts = run.attempts

    def pools_for(self, node: Node) -> list[Pool]:
        """The pools whose devices ``node`` can use, in search order (what an allocation on the
        node reads besides the claims: a caller caching verdicts watches these pools' devices)."""
        return self._pools_for(node)[0]

    def _pools_for(self, node: Node) -> tuple[list[Pool], list["_Candidate"]]:
        """Pools and candidates in search order; cached per node (slices never change here)."""
        same = self._pools_by_node.get(id(node))
        if same is not None and same[0] is node:
            return same[1]
        got = self._pools_for_labels(node)
        if len(self._pools_by_node) > 4096:
            self._pools_by_node.clear()
        self._pools_by_node[id(node)] = (node, got)   # the entry keeps the node: its id stays its own
        return got

    def _pools_for_labels(self, node: Node) -> tuple[list[Pool], list["_Candidate"]]:
        key = (node.name, tuple(sorted(node.labels.items())))
        hit = self._pools.get(key)
        if hit is not None:
            return hit
        shared_key = (self._slices_key, self.features, key)
        shared = _SHARED_POOLS.get(shared_key)
        if shared is not None and len(shared[0]) == len(self.slices) and \
                all(a is b for a, b in zip(shared[0], self.slices)):
            pools, candidates = shared[1], shared[2]
        else:
            try:
                pools = gather_pools(self.index, node, self.features)
            except PoolError as exc:
                raise AllocationError(f"gather pool information: {exc}") from None
            candidates = [_Candidate((p.driver, p.name, d.name), d, s, p)
                          for p in pools if not (p.incomplete or p.invalid)
                          for s in p.device_slices for d in s.devices]
            if len(_SHARED_POOLS) > 256:
                _SHARED_POOLS.clear()
            _SHARED_POOLS[shared_key] = (self.slices, pools, candidates)
        if len(self._pools) > 4096:
            self._pools.clear()
        self._pools[key] = (pools, candidates)
        return pools, candidates

    # ---------------------------------------------------------------------------------------
    def selector_matches(self, expression: str, device: Device, driver: str) -> bool:
        key = (id(device), driver, expression)   # one device object may sit in several drivers' slices
        hit = self._verdicts.get(key)
        if hit is not None:
            return hit
        verdict = compile_selector(expression, self.cel_options).matches(device, driver)
        self._verdicts[key] = verdict
        return verdict

    def fits_alone(self, device: Device) -> bool:
        """``cap.fits`` for a request that names no capacity on a device nobody consumes:
        a property of the (immutable) device alone, worked out once per device."""
        hit = self._fits_alone.get(id(device))
        if hit is None or hit[0] is not device:
            hit = self._fits_alone[id(device)] = (device, cap.fits(device, None, None, None))
        return hit[1]

    def available_counters(self, pool: Pool) -> dict[str, dict[str, Quantity]]:
        """Counter sets of the pool minus what already-allocated devices consume (any node)."""
        avail: dict[str, dict[str, Quantity]] = {cs.name: dict(cs.counters) for cs in pool.counter_sets.values()}
        for s in pool.device_slices + pool.other_slices:
            for d in s.devices:
                if not self.state.is_allocated((s.driver, s.pool, d.name)):
                    continue
                for cc in d.consumes_counters:
                    counters = avail.get(cc.counter_set)
                    if counters is None:
                        continue
                    for name, q in cc.counters.items():
                        if name in counters:
                            counters[name] = counters[name] - q
        return avail


@functools.cache
def _first_free() -> Any:
    """:mod:`.firstfree` (which reads this module's search), imported when the first allocator is made."""
    from . import firstfree

    return firstfree


class _Run:
    """The state of one ``Allocate`` call (single-threaded, thrown away afterwards)."""

    def __init__(self, alloc: Allocator, node: Node, claims: list[ResourceClaim], pools: list[Pool],
                 candidates: list[_Candidate], timeout: float | None, trace: list | None):
        self.a = alloc
        self.f = alloc.features
        self.node = node
        self.claims = claims
        self.pools = pools
        self.deadline = time.monotonic() + timeout if timeout else None
        self.trace = trace
        self.requests: dict[tuple[int, int, int], _Request] = {}
        self.constraints: list[list[Constraint]] = []
        self.results: list[list[tuple[DeviceResult, _Candidate, _Request]]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, cap.ConsumedCapacity] = {}
        self.consumed_counters: dict[tuple[str, str], dict[str, dict[str, Quantity]]] = {}
        self.available: dict[tuple[str, str], dict[str, dict[str, Quantity]]] = {}
        self.matches: dict[tuple[DeviceID, int, int, int], bool] = {}
        self.attempts = 0
        # Candidates in search order, from usable pools only (incomplete/invalid are skipped).
        self.candidates = candidates

    # -------------------------------------------------------------------------- validation
    def execute(self) -> Outcome:
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(claim.requests):
                if request.first_available:
                    if not self.f.prioritized_list:
                        raise AllocationError(f"claim {claim.ref}, request {request.name}: has subrequests, but the "
                                              "DRAPrioritizedList feature is disabled")
                    if not self.f.consumable_capacity:
                        for sub in request.first_available:
                            if sub.capacity is not None:
                                raise AllocationError(f"claim {claim.ref}, subrequest {sub.name}: has capacity "
                                                      "requests, but the DRAConsumableCapacity feature is disabled")
                    smallest = None
                    for si, sub in enumerate(request.first_available):
                        data = self._validate(ci, sub, request.name, (ci, ri, si))
                        self.requests[(ci, ri, si)] = data
                        smallest = data.num_devices if smallest is None else min(smallest, data.num_devices)
                    min_devices += smallest or 0
                else:
                    spec = request.exactly
                    assert spec is not None
                    if not self.f.consumable_capacity and spec.capacity is not None:
                        raise AllocationError(f"claim {claim.ref}, request {request.name}: has capacity requests, "
                                              "but the DRAConsumableCapacity feature is disabled")
                    data = self._validate(ci, spec, None, (ci, ri, 0))
                    self.requests[(ci, ri, 0)] = data
                    min_devices += data.num_devices
            if min_devices > RESULTS_MAX:
                raise AllocationError(f"claim {claim.ref}: number of requested devices {min_devices} exceeds the "
                                      f"claim limit of {RESULTS_MAX}")
            constraints: list[Constraint] = []
            for i, c in enumerate(claim.constraints):
                if c.match_attribute:
                    constraints.append(MatchAttribute(c, self.f.list_type_attributes))
                elif c.distinct_attribute:
                    constraints.append(DistinctAttribute(c, self.f.list_type_attributes))
                else:
                    raise AllocationError(f"claim {claim.ref}, constraint #{i}: empty constraint (unsupported "
                                          "constraint type?)")
            self.constraints.append(constraints)

        try:
            done = self._allocate_one(0, 0, 0, 0, False, 0)
        except _Stop:
            done = False
        except _MaxSizeExceeded:
            done = False
        if not done:
            error = invalid_pool_error(self.pools)
            if error is not None:
                raise error
            return Outcome(False, reason=self._unsatisfiable_reason(), attempts=self.attempts)
        return Outcome(True, tuple([self._result(ci) for ci in range(len(self.claims))]), attempts=self.attempts)

    def _validate(self, ci: int, spec: DeviceSubRequest, parent: str | None, key: tuple[int, int, int]) -> _Request:
        claim = self.claims[ci]
        for i, sel in enumerate(spec.selectors):
            if sel is None:
                raise AllocationError(f"claim {claim.ref}, request {spec.name}, selector #{i}: CEL expression empty "
                                      "(unsupported selector type?)")
        if not self.f.admin_access and spec.admin_access is not None:
            raise AllocationError(f"claim {claim.ref}, request {spec.name}: admin access is requested, but the "
                                  "feature is disabled")
        if not spec.device_class_name:
            raise AllocationError(f"claim {claim.ref}, request {spec.name}: missing device class name (unsupported "
                                  "request type?)")
        cls = self.a.classes.get(spec.device_class_name)
        if cls is None:
            raise AllocationError(f"claim {claim.ref}, request {spec.name}: could not retrieve device class "
                                  f"{spec.device_class_name}: deviceclass.resource.k8s.io "
                                  f"\"{spec.device_class_name}\" not found")
        data = _Request(spec, parent, cls, 0, ci)
        if spec.allocation_mode == "ExactCount":
            data.num_devices = spec.count
        elif spec.allocation_mode == "All":
            devices: list[_Candidate] = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(f"claim {claim.ref}, request {spec.name}: asks for all devices, but "
                                          f"resource pool {pool.id} is currently being updated")
                if pool.invalid:
                    raise AllocationError(f"claim {claim.ref}, request {spec.name}: asks for all devices, but "
                                          f"resource pool {pool.id} is currently invalid")
                for s in pool.device_slices:
                    for d in s.devices:
                        cand = _Candidate((pool.driver, pool.name, d.name), d, s, pool)
                        if not self._selectable(key, data, cand):
                            continue
                        if self.f.consumable_capacity and not self._capacity_fits(data, cand):
                            continue
                        devices.append(cand)
            data.all_devices = devices
            data.num_devices = len(devices)
        else:
            raise AllocationError(f"claim {claim.ref}, request {spec.name}: unsupported count mode "
                                  f"{spec.allocation_mode}")
        return data

    # ------------------------------------------------------------------------------ search
    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int) -> bool:
        self.attempts += 1
        if self.deadline is not None and self.attempts % 64 == 0 and time.monotonic() > self.deadline:
            raise AllocationError("timed out trying to allocate devices")
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False, 0)
            except _MaxSizeExceeded:
                return False
        data = self.requests[(ci, ri, si)]
        if not in_sub and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.requests:
                try:
                    ok = self._allocate_one(ci, ri, sub, 0, True, 0)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.requests[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded()
            return False

        spec = data.spec
        do_all = spec.allocation_mode == "All"
        if do_all and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + data.num_devices - di > RESULTS_MAX:
            raise _MaxSizeExceeded()

        if do_all:
            assert data.all_devices is not None
            cand = data.all_devices[di]
            undo = self._allocate_device(ci, data, cand, must=True)
            if undo is None:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, in_sub, 0)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done

        key = (ci, ri, si)
        admin = data.admin
        candidates, allocating, dedicated = self.candidates, self.allocating, self.a.state.dedicated
        capacity = self.f.consumable_capacity
        for index in range(start, len(candidates)):
            cand = candidates[index]
            if admin:
                if ci in allocating.get(cand.id, ()):
                    continue
            elif cand.id in dedicated or allocating.get(cand.id):   # _in_use, the loop's hot test
                continue
            if not self._selectable(key, data, cand):
                continue
            if capacity and not self._capacity_fits(data, cand):
                continue
            undo = self._allocate_device(ci, data, cand, must=False)
            if undo is None:
                continue
            try:
                done = self._allocate_one(ci, ri, si, di + 1, in_sub, index + 1)
            except BaseException:
                undo()
                raise
            if done:
                return True
            undo()
        return False

    def _in_use(self, did: DeviceID) -> bool:
        return did in self.a.state.dedicated or bool(self.allocating.get(did))

    def _selectable(self, key: tuple[int, int, int], data: _Request, cand: _Candidate) -> bool:
        device = cand.device
        if not self.f.device_binding_and_status and device.binding_conditions:
            return False
        mkey = (cand.id, *key)
        hit = self.matches.get(mkey)
        if hit is not None:
            return hit
        verdict = self._selectors_match(data, cand)
        if verdict and cand.slice.per_device_node_selection:
            try:
                verdict = node_matches(self.node, device.node_name, device.all_nodes, device.node_selector)
            except NodeSelectorError as exc:
                raise AllocationError(f"failed to parse node selector of device {_fmt(cand.id)}: {exc}") from None
        self.matches[mkey] = verdict
        if self.trace is not None:
            self.trace.append(("select", data.name, cand.id, verdict))
        return verdict

    def _selectors_match(self, data: _Request, cand: _Candidate) -> bool:
        claim_ref = None
        for owner, selectors in ((data.cls, data.cls.selectors), (None, data.spec.selectors)):
            for i, expr in enumerate(selectors):
                if expr is None:  # a DeviceClass selector of a type this release does not know
                    raise AllocationError(f"class {owner.name if owner else data.cls.name}: selector #{i}: CEL "
                                          "expression empty (unsupported selector type?)")
                try:
                    if not self.a.selector_matches(expr, cand.device, cand.id[0]):
                        if self.trace is not None:
                            self.trace.append(("selector", data.name, cand.id, owner.name if owner else "request",
                                               i, expr, False))
                        return False
                except CELError as exc:
                    text = str(exc)
                    runtime = not text.startswith(("compilation failed", "must evaluate"))
                    where = f"class {owner.name}" if owner is not None else f"claim {claim_ref or self._claim_of(data)}"
                    if runtime:
                        raise AllocationError(f"{where}: selector #{i} on device {_fmt(cand.id)}: CEL runtime error: "
                                              f"{text} (expression: {expr})") from None
                    raise AllocationError(f"{where}: selector #{i}: CEL compile error: {text} "
                                          f"(expression: {expr})") from None
        return True

    def _claim_of(self, data: _Request) -> str:
        return self.claims[data.claim_index].ref if 0 <= data.claim_index < len(self.claims) else "?"

    def _capacity_fits(self, data: _Request, cand: _Candidate) -> bool:
        allocated = self.a.state.aggregated_capacity.get(cand.id)
        allocating = self.allocating_capacity.get(cand.id)
        requests = data.spec.capacity
        if not requests and allocated is None and allocating is None:
            return self.a.fits_alone(cand.device)
        return cap.fits(cand.device, requests, allocated, allocating)

    def _allocate_device(self, ci: int, data: _Request, cand: _Candidate, must: bool):
        """Check availability, counters, taints and constraints; record the device.

        Returns an undo callable, or None when the device cannot be taken.
        """
        device = cand.device
        multi = self.f.consumable_capacity and bool(device.allow_multiple_allocations)
        admin = data.admin
        if not multi and admin and ci in self.allocating.get(cand.id, ()):
            return None
        if not admin and self._in_use(cand.id):
            return None
        if not self.f.partitionable_devices and device.consumes_counters:
            return None
        skip_counters = multi and (cand.id in self.a.state.aggregated_capacity or cand.id in self.allocating_capacity)
        counted = False
        if not skip_counters and device.consumes_counters:
            if not self._take_counters(cand):
                return None
            counted = True
        # As upstream, a device refused for taints or constraints after its counters were
        # counted keeps them counted for the rest of this attempt.
        if self.f.device_taints and _taint_prevents(device, data.spec):
            return None
        base = data.parent or data.spec.name
        sub = data.spec.name if data.parent else ""
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, device, cand.id[0]):
                for e in range(i):
                    constraints[e].remove(base, sub, device, cand.id[0])
                if must:
                    raise AllocationError(f"claim {self.claims[ci].ref}, request {data.spec.name}: cannot add device "
                                          f"{_fmt(cand.id)} because a claim constraint would not be satisfied")
                return None
        if not multi:
            self.allocating.setdefault(cand.id, set()).add(ci)
        consumed = None
        share_id = None
        if self.f.consumable_capacity:
            if not self._capacity_fits(data, cand):
                for c in constraints:
                    c.remove(base, sub, device, cand.id[0])
                if not multi:
                    self.allocating[cand.id].discard(ci)
                if counted:
                    self._release_counters(cand)
                return None
            if multi:
                consumed = cap.consumed_by(device, data.spec.capacity)
                share_id = str(uuid.uuid4())
                cap.add_into(self.allocating_capacity.setdefault(cand.id, {}), consumed)
        result = device_result(self.f, data, cand, admin, share_id, consumed)
        self.results[ci].append((result, cand, data))
        if self.trace is not None:
            self.trace.append(("take", data.name, cand.id))

        def undo() -> None:
            for c in constraints:
                c.remove(base, sub, device, cand.id[0])
            if multi:
                if consumed:
                    cap.subtract_from(self.allocating_capacity[cand.id], consumed)
                    if all(q.sign() == 0 for q in self.allocating_capacity[cand.id].values()):
                        del self.allocating_capacity[cand.id]
            else:
                self.allocating[cand.id].discard(ci)
                if counted:
                    self._release_counters(cand)
            self.results[ci].pop()
            if self.trace is not None:
                self.trace.append(("undo", data.name, cand.id))

        return undo

    # --------------------------------------------------------------------------- counters
    def _take_counters(self, cand: _Candidate) -> bool:
        key = (cand.pool.driver, cand.pool.name)
        avail = self.available.get(key)
        if avail is None:
            avail = self.a.available_counters(cand.pool)
            self.available[key] = avail
        consumed = self.consumed_counters.setdefault(key, {})
        for cc in cand.device.consumes_counters:
            target = consumed.setdefault(cc.counter_set, {})
            cap.add_into(target, cc.counters)
        for set_name, counters in avail.items():
            used = consumed.get(set_name, {})
            for name, q in counters.items():
                if name in used and q.cmp(used[name]) < 0:
                    self._release_counters(cand)
                    return False
                if name not in used and q.sign() < 0:
                    self._release_counters(cand)
                    return False
        return True

    def _release_counters(self, cand: _Candidate) -> None:
        consumed = self.consumed_counters.get((cand.pool.driver, cand.pool.name), {})
        for cc in cand.device.consumes_counters:
            cap.subtract_from(consumed.setdefault(cc.counter_set, {}), cc.counters)

    # ----------------------------------------------------------------------------- result
    def _result(self, ci: int) -> AllocationResult:
        return claim_result(self.claims[ci], ci, self.requests, self.results[ci], self.node)

    def _unsatisfiable_reason(self) -> str:
        if not self.candidates and not any(r.all_devices for r in self.requests.values()):
            return "cannot allocate all claims: no devices available on the node"
        return "cannot allocate all claims"


def claim_result(claim: ResourceClaim, ci: int, requests: Mapping[tuple[int, int, int], _Request],
                 entries: Sequence[tuple[DeviceResult, _Candidate, _Request]], node: Node) -> AllocationResult:
    """One claim's ``status.allocation`` from the devices the search took for it (``entries``, in
    order) and its requests (``requests[(ci, ri, si)]``, with the selected subrequests)."""
    config: list[dict[str, Any]] = []
    by_class: dict[str, tuple[int, int]] = {}
    chosen: dict[str, str] = {}  # request name -> name used in results (req or req/sub)
    for ri, request in enumerate(claim.requests):
        data = requests[(ci, ri, 0)]
        if data.parent is not None:
            data = requests[(ci, ri, data.selected_sub)]
        chosen[request.name] = data.name
        span = by_class.get(data.cls.name)
        if span is not None:
            for i in range(*span):
                config[i]["requests"].append(data.name)
            continue
        start = len(config)
        for c in data.cls.config:
            config.append({"source": "FromClass", "requests": [data.name], **c})
        by_class[data.cls.name] = (start, len(config))
    for cc in claim.config:
        if not cc.requests:
            config.append({"source": "FromClaim", **cc.config})
            continue
        for request in claim.requests:
            if request.name in cc.requests or (request.first_available and chosen[request.name] in cc.requests):
                config.append({"source": "FromClaim", "requests": list(cc.requests), **cc.config})
    results, cands = [], []
    for e in entries:
        results.append(e[0])
        cands.append(e[1])
    try:
        selector = node_selector(cands, node)
    except AllocationError as exc:
        raise AllocationError(f"create NodeSelector for claim {claim.name}: {exc}") from None
    return AllocationResult(tuple(results), tuple(config), selector)


def node_selector(cands: Sequence[_Candidate], node: Node) -> dict[str, Any] | None:
    """``status.allocation.nodeSelector`` for devices taken on ``node``."""
    fields: list[dict[str, Any]] = []
    exprs: list[dict[str, Any]] = []
    for cand in cands:
        s = cand.slice
        if s.per_device_node_selection:
            node_name, selector = cand.device.node_name, cand.device.node_selector
        else:
            node_name, selector = s.node_name, s.node_selector
        if node_name or cand.device.binds_to_node:
            return {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node.name]}]}]}
        if selector is not None:
            terms = selector.get("nodeSelectorTerms") or []
            if len(terms) > 1:
                raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
            if terms:
                _merge(terms[0].get("matchFields") or [], fields)
                _merge(terms[0].get("matchExpressions") or [], exprs)
    if not fields and not exprs:
        return None
    term: dict[str, Any] = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def device_result(f: AllocatorFeatures, data: _Request, cand: _Candidate, admin: bool, share_id: str | None = None,
                  consumed: Mapping[str, Quantity] | None = None) -> DeviceResult:
    """The ``status.allocation.devices.results`` entry for taking ``cand`` for ``data``."""
    device = cand.device
    return DeviceResult(
        request=data.name, driver=cand.id[0], pool=cand.id[1], device=cand.id[2], admin_access=admin,
        tolerations=tuple([t.raw for t in data.spec.tolerations]) if data.spec.tolerations else (),
        binding_conditions=device.binding_conditions if f.device_binding_and_status else (),
        binding_failure_conditions=(device.binding_failure_conditions if f.device_binding_and_status else ()),
        share_id=share_id, consumed_capacity=consumed or None)


def invalid_pool_error(pools: Sequence[Pool]) -> AllocationError | None:
    """An unsatisfiable search over ``pools`` is this error when one of them is invalid."""
    for pool in pools:
        if pool.invalid:
            return AllocationError(f"invalid resource pools were encountered: {pool.id}: {pool.invalid_reason}",
                                   node_local=True)
    return None


def _merge(src: list[dict[str, Any]], dst: list[dict[str, Any]]) -> None:
    for req in src:
        values = set(req.get("values") or [])
        if not any(r.get("key") == req.get("key") and r.get("operator") == req.get("operator")
                   and set(r.get("values") or []) == values for r in dst):
            dst.append(dict(req))


def _taint_prevents(device: Device, spec: DeviceSubRequest) -> bool:
    for taint in device.taints:
        if taint.effect in ("NoSchedule", "NoExecute"):
            if not any(t.tolerates(taint) for t in spec.tolerations):
                return True
    return False


def _fmt(did: DeviceID) -> str:
    return "/".join(did)

