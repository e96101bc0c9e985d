"""Why each device was or was not a candidate for each request: the allocator's checks, one by one.

The search itself only records the first failing check; this walks every (request, device)
pair on the node and evaluates every check independently, so a reader sees all reasons.
A device passing every check is *eligible* for the request: whether the claim can be allocated
also depends on constraints, shared counters and the other requests (``dra.diagnose``).

Not an upstream module: kubetwin's own explanation over the allocator's checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from . import capacity as cap
from .allocator import Allocator, _taint_prevents
from .api import Device, DeviceClass, DeviceSubRequest, Node, ResourceClaim, ResourceSlice
from .cel import CELError
from .nodeselector import NodeSelectorError, node_matches
from .pools import Pool, gather_pools


@dataclass(frozen=True, slots=True)
class Check:
    name: str          # e.g. "class gpu selector #0", "in use", "taints"
    passed: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class DeviceVerdict:
    device: str        # driver/pool/device
    checks: tuple[Check, ...]

    @property
    def eligible(self) -> bool:
        return all(c.passed for c in self.checks)


@dataclass(frozen=True, slots=True)
class RequestExplanation:
    claim: str
    request: str
    device_class: str
    mode: str
    count: int
    devices: tuple[DeviceVerdict, ...]
    pools: tuple[str, ...]


def pool_note(pool: Pool) -> str:
    return f"{pool.id}: " + ("incomplete" if pool.incomplete else "invalid: " + pool.invalid_reason if pool.invalid
                             else "complete")


def device_checks(allocator: Allocator, node: Node, spec: DeviceSubRequest, cls: DeviceClass | None, pool: Pool,
                  s: ResourceSlice, d: Device) -> tuple[Check, ...]:
    """Every check the allocator makes of one device for one request, each on its own."""
    f = allocator.features
    did = (pool.driver, pool.name, d.name)
    checks: list[Check] = []
    if cls is None:
        checks.append(Check("device class", False, f"{spec.device_class_name} does not exist"))
    if pool.incomplete or pool.invalid:
        checks.append(Check("pool", False, pool_note(pool)))
    if not spec.admin_access:
        used = allocator.state.is_allocated(did)
        checks.append(Check("not in use", not used, "allocated to another claim" if used else ""))
    if d.binding_conditions and not f.device_binding_and_status:
        checks.append(Check("binding conditions", False, "DRADeviceBindingConditions is off"))
    selectors: list[tuple[str, str]] = []
    if cls is not None:
        selectors += [(f"class {cls.name} selector #{i}", e or "") for i, e in enumerate(cls.selectors)]
    selectors += [(f"request selector #{i}", e or "") for i, e in enumerate(spec.selectors)]
    for what, expr in selectors:
        try:
            ok = allocator.selector_matches(expr, d, pool.driver)
            checks.append(Check(what, ok, expr))
        except CELError as exc:
            checks.append(Check(what, False, f"{expr}: error: {exc}"))
    if s.per_device_node_selection:
        try:
            ok = node_matches(node, d.node_name, d.all_nodes, d.node_selector)
        except NodeSelectorError:
            ok = False
        checks.append(Check("device node selection", ok))
    if f.consumable_capacity and (spec.capacity or d.allow_multiple_allocations):
        ok = cap.fits(d, spec.capacity, allocator.state.aggregated_capacity.get(did), None)
        checks.append(Check("capacity", ok))
    if f.device_taints and d.taints:
        blocked = _taint_prevents(d, spec)
        checks.append(Check("taints tolerated", not blocked,
                            ", ".join(f"{t.key}={t.value}:{t.effect}" for t in d.taints)))
    if d.consumes_counters and not f.partitionable_devices:
        checks.append(Check("counters", False, "DRAPartitionableDevices is off"))
    return tuple(checks)


def subrequests(claim: ResourceClaim) -> list[tuple[str, str, DeviceSubRequest]]:
    """(request name, label, spec) of each request, or of each ``firstAvailable`` alternative."""
    out = []
    for request in claim.requests:
        if request.exactly is not None:
            out.append((request.name, request.name, request.exactly))
        else:
            out += [(request.name, f"{request.name}/{s.name}", s) for s in request.first_available]
    return out


def explain(allocator: Allocator, node: Node, claims: Sequence[ResourceClaim]) -> list[RequestExplanation]:
    pools = gather_pools(allocator.index, node, allocator.features)
    pool_notes = tuple(pool_note(p) for p in pools)
    out: list[RequestExplanation] = []
    for claim in claims:
        for _, label, spec in subrequests(claim):
            cls = allocator.classes.get(spec.device_class_name)
            verdicts = [DeviceVerdict("/".join((pool.driver, pool.name, d.name)),
                                      device_checks(allocator, node, spec, cls, pool, s, d))
                        for pool in pools for s in pool.device_slices for d in s.devices]
            out.append(RequestExplanation(claim.name, label, spec.device_class_name
                                          + ("" if cls else " (not found)"), spec.allocation_mode,
                                          spec.count, tuple(verdicts), pool_notes))
    return out


def to_data(items: list[RequestExplanation]) -> list[dict[str, Any]]:
    return [{"claim": e.claim, "request": e.request, "deviceClassName": e.device_class, "allocationMode": e.mode,
             "count": e.count, "pools": list(e.pools),
             "devices": [{"device": v.device, "eligible": v.eligible,
                          "checks": [{"check": c.name, "passed": c.passed, **({"detail": c.detail} if c.detail else {})}
                                     for c in v.checks]} for v in e.devices]} for e in items]
