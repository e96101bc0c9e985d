"""Why claims cannot be allocated on a node: per claim, which request cannot be met and why.

The allocator answers one bit for all claims of a pod together ("cannot allocate all claims"), as
upstream's does; the search keeps no record of why. This module finds the culprit afterwards,
only for a failed allocation and only for a reader (the CLI), never in the scheduling path:

1. a request whose device class does not exist (as the DynamicResources plugin's PreFilter
   refuses it: ``request R: device class C does not exist``), per claim, the other claims still
   diagnosed;
2. a request with fewer *eligible* devices than it asks for (each device checked on its own by
   :func:`kubetwin.dra.explain.device_checks`), with how many devices fail which check;
3. the claim alone on the node: if it cannot be allocated although each request has enough
   eligible devices, the claim's constraints are tried one by one (``matchAttribute`` /
   ``distinctAttribute`` that no set of eligible devices satisfies), then shared counters, then
   requests competing for the same devices;
4. the claims that can each be allocated alone, together.

Every verdict comes from the allocator itself (allocations of variants of the claim), so a claim
reported allocatable is one the allocator allocates.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

from .allocator import AllocationError, Allocator
from .api import Device, DeviceConstraint, DeviceSubRequest, Node, ResourceClaim
from .constraints import lookup_attribute
from .explain import Check, device_checks, subrequests
from .pools import PoolError, gather_pools


@dataclass(frozen=True, slots=True)
class RequestDiagnosis:
    """One request (or ``firstAvailable`` alternative) of a claim against the node's devices."""

    request: str                  # "gpus" or "gpus/big"
    device_class: str
    mode: str                     # ExactCount, All
    wanted: int                   # devices asked for (All: the eligible ones, at least one)
    eligible: int                 # devices passing every check for this request
    devices: int                  # devices on the node considered
    class_found: bool = True
    #: check name -> devices failing it (a device failing several checks counts for each)
    failed_checks: tuple[tuple[str, int], ...] = ()
    #: the eligible devices' ids (driver/pool/device)
    eligible_ids: tuple[str, ...] = ()
    uses_counters: bool = False

    @property
    def met(self) -> bool:
        return self.class_found and self.eligible >= max(self.wanted, 1)

    def problem(self) -> str:
        """Why the request cannot be met by the eligible devices, or ""."""
        if not self.class_found:
            return f"request {self.request}: device class {self.device_class} does not exist"
        if self.met:
            return ""
        what = (f"all devices of class {self.device_class} (at least one)" if self.mode == "All"
                else f"{self.wanted} device{'s' if self.wanted != 1 else ''} of class {self.device_class}")
        why = ", ".join(f"{n} fail{'s' if n == 1 else ''} {name}" for name, n in self.failed_checks)
        return (f"request {self.request}: needs {what}; {self.eligible} of {self.devices} device"
                f"{'s' if self.devices != 1 else ''} on the node eligible" + (f" ({why})" if why else ""))

    def to_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"request": self.request, "deviceClassName": self.device_class,
                               "allocationMode": self.mode, "wanted": self.wanted, "eligible": self.eligible,
                               "devices": self.devices, "met": self.met}
        if not self.class_found:
            out["deviceClassFound"] = False
        if self.failed_checks:
            out["failedChecks"] = dict(self.failed_checks)
        return out


@dataclass(frozen=True, slots=True)
class ClaimDiagnosis:
    claim: str
    allocatable: bool             # alone on the node, on top of the claims already allocated
    problems: tuple[str, ...] = ()
    requests: tuple[RequestDiagnosis, ...] = ()

    def to_data(self) -> dict[str, Any]:
        return {"claim": self.claim, "allocatable": self.allocatable, "problems": list(self.problems),
                "requests": [r.to_data() for r in self.requests]}


@dataclass(frozen=True, slots=True)
class Diagnosis:
    claims: tuple[ClaimDiagnosis, ...]
    #: why the claims cannot be allocated together although each can alone ("" otherwise)
    together: str = ""

    @property
    def allocatable(self) -> bool:
        return all(c.allocatable for c in self.claims) and not self.together

    def reason(self) -> str:
        """The first problem, in the words the scheduler would use for it."""
        for c in self.claims:
            if c.problems:
                return c.problems[0]
        return self.together

    def to_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"claims": [c.to_data() for c in self.claims]}
        if self.together:
            out["together"] = self.together
        return out


def missing_classes(allocator: Allocator, claims: Sequence[ResourceClaim]) -> list[tuple[ResourceClaim, str]]:
    """``(claim, message)`` for each request whose device class does not exist, in PreFilter's
    order and words (``request R: device class C does not exist``)."""
    out = []
    for claim in claims:
        for _, label, spec in subrequests(claim):
            if spec.device_class_name and spec.device_class_name not in allocator.classes:
                out.append((claim, f"request {label}: device class {spec.device_class_name} does not exist"))
    return out


def diagnose(allocator: Allocator, node: Node, claims: Sequence[ResourceClaim],
             timeout: float | None = 10.0) -> Diagnosis:
    """Why ``claims`` cannot be allocated on ``node`` (each alone, then together)."""
    try:
        pools = gather_pools(allocator.index, node, allocator.features)
    except PoolError as exc:
        return Diagnosis(tuple(ClaimDiagnosis(c.name, False, (f"gather pool information: {exc}",)) for c in claims))
    results = [_claim(allocator, node, pools, claim, timeout) for claim in claims]
    together = ""
    alone = [c for c, d in zip(claims, results) if d.allocatable]
    if len(alone) > 1:
        ok, err = _allocates(allocator, node, alone, timeout)
        if not ok:
            names = ", ".join(c.name for c in alone)
            together = err or (f"claims {names} can each be allocated alone, but not together: they compete for "
                               "the same devices (or shared counters)")
    return Diagnosis(tuple(results), together)


def _claim(allocator: Allocator, node: Node, pools: list, claim: ResourceClaim,
           timeout: float | None) -> ClaimDiagnosis:
    requests = [_request(allocator, node, pools, label, spec) for _, label, spec in subrequests(claim)]
    missing = [r.problem() for r in requests if not r.class_found]
    if missing:
        return ClaimDiagnosis(claim.name, False, tuple(missing), tuple(requests))
    # a request is met when one of its alternatives is
    unmet = []
    for name, alternatives in _by_request(claim, requests):
        if not any(r.met for r in alternatives):
            if len(alternatives) == 1:
                unmet.append(alternatives[0].problem())
            else:
                unmet.append(f"request {name}: none of its {len(alternatives)} alternatives can be met: "
                             + "; ".join(r.problem() for r in alternatives))
    if unmet:
        return ClaimDiagnosis(claim.name, False, tuple(unmet), tuple(requests))
    ok, err = _allocates(allocator, node, [claim], timeout)
    if ok:
        return ClaimDiagnosis(claim.name, True, (), tuple(requests))
    if err:
        return ClaimDiagnosis(claim.name, False, (err,), tuple(requests))
    devices = {f"{p.driver}/{p.name}/{d.name}": (d, p.driver) for p in pools for s in p.device_slices
               for d in s.devices}
    return ClaimDiagnosis(claim.name, False, tuple(_why_not(allocator, node, claim, requests, devices, timeout)),
                          tuple(requests))


def _by_request(claim: ResourceClaim, requests: list[RequestDiagnosis]) -> list[tuple[str, list[RequestDiagnosis]]]:
    out = []
    it = iter(requests)
    for request in claim.requests:
        n = 1 if request.exactly is not None else len(request.first_available)
        out.append((request.name, [next(it) for _ in range(n)]))
    return out


def _request(allocator: Allocator, node: Node, pools: list, label: str, spec: DeviceSubRequest) -> RequestDiagnosis:
    cls = allocator.classes.get(spec.device_class_name)
    if cls is None:
        return RequestDiagnosis(label, spec.device_class_name, spec.allocation_mode, spec.count, 0, 0, False)
    failed: dict[str, int] = {}
    eligible: list[str] = []
    counters = False
    devices = 0
    for pool in pools:
        for s in pool.device_slices:
            for d in s.devices:
                devices += 1
                checks: tuple[Check, ...] = device_checks(allocator, node, spec, cls, pool, s, d)
                bad = [c for c in checks if not c.passed]
                for c in bad:
                    key = _check_label(c)
                    failed[key] = failed.get(key, 0) + 1
                if not bad:
                    eligible.append(f"{pool.driver}/{pool.name}/{d.name}")
                    counters = counters or bool(d.consumes_counters)
    wanted = spec.count if spec.allocation_mode == "ExactCount" else len(eligible)
    return RequestDiagnosis(label, cls.name, spec.allocation_mode, wanted, len(eligible), devices, True,
                            tuple(failed.items()), tuple(eligible), counters)


def _check_label(c: Check) -> str:
    if c.name == "not in use":
        return "not in use (allocated to another claim)"
    if "selector" in c.name and c.detail:
        return f"{c.name} ({c.detail})"
    if c.name == "taints tolerated":
        return f"taints tolerated ({c.detail})" if c.detail else c.name
    if c.detail:
        return f"{c.name} ({c.detail})"
    return c.name


def _allocates(allocator: Allocator, node: Node, claims: list[ResourceClaim],
               timeout: float | None) -> tuple[bool, str]:
    """Whether the allocator allocates ``claims`` together; an allocator error as its text."""
    try:
        return allocator.allocate(node, claims, timeout=timeout).allocated, ""
    except AllocationError as exc:
        return False, str(exc)


def _why_not(allocator: Allocator, node: Node, claim: ResourceClaim, requests: list[RequestDiagnosis],
             devices: dict[str, tuple[Device, str]], timeout: float | None) -> list[str]:
    """The claim has enough eligible devices per request but cannot be allocated: which constraint,
    shared counters, or requests competing for the same devices."""
    problems = []
    if claim.constraints:
        free = dataclasses.replace(claim, constraints=())
        if _allocates(allocator, node, [free], timeout)[0]:
            for i, c in enumerate(claim.constraints):
                alone = dataclasses.replace(claim, constraints=(c,))
                if not _allocates(allocator, node, [alone], timeout)[0]:
                    problems.append(f"constraint #{i} " + _constraint_text(c, requests, devices))
            if not problems:
                problems.append("the claim's constraints cannot be met together by the eligible devices")
            return problems
    if any(r.uses_counters for r in requests):  # counters are checked as devices are picked
        names = ", ".join(r.request for r in requests if r.uses_counters)
        problems.append(f"shared counters: the eligible devices of {names} draw on counter sets that cannot "
                        "cover all the devices asked for")
        return problems
    wanted = sum(r.wanted for r in requests if r.met)
    distinct = len({d for r in requests if r.met for d in r.eligible_ids})
    if distinct < wanted:
        return [f"the claim's requests compete for the same devices: {wanted} devices asked for, "
                f"{distinct} distinct devices eligible for them"]
    return ["the allocator found no combination of eligible devices for all requests"]


def _constraint_text(c: DeviceConstraint, requests: list[RequestDiagnosis],
                     devices: dict[str, tuple[Device, str]]) -> str:
    """What a constraint asks and what the eligible devices offer (counted on scalar values)."""
    kind, attr = (("matchAttribute", c.match_attribute) if c.match_attribute
                  else ("distinctAttribute", c.distinct_attribute))
    attr = attr or ""
    scope = [r for r in requests if r.met and (not c.requests or r.request in c.requests
                                                 or r.request.split("/")[0] in c.requests)]
    wanted = sum(r.wanted for r in scope)
    values: dict[Any, int] = {}
    missing = 0
    for did in {d for r in scope for d in r.eligible_ids}:
        device, driver = devices[did]
        a = lookup_attribute(device, driver, attr)
        if a is None:
            missing += 1
            continue
        key = (a.kind, tuple(a.value) if a.is_list else a.value)
        values[key] = values.get(key, 0) + 1
    head = f"({kind} {attr} over {', '.join(c.requests) if c.requests else 'all requests'}) cannot be met: "
    lack = f"; {missing} eligible device{'s' if missing != 1 else ''} lack the attribute" if missing else ""
    if kind == "matchAttribute":
        if values:
            best_value, best = max(values.items(), key=lambda kv: kv[1])
            shown = best_value[1] if not isinstance(best_value[1], tuple) else list(best_value[1])
            return (head + f"needs {wanted} devices with one common value; at most {best} eligible device"
                    f"{'s' if best != 1 else ''} share one ({attr}={shown}){lack}")
        return head + f"no eligible device has the attribute{lack}"
    return (head + f"needs {wanted} devices with a different value each; the eligible devices have "
            f"{len(values)} distinct value{'s' if len(values) != 1 else ''}{lack}")
