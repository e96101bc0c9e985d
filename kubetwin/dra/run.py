"""``kubetwin dra allocate`` and ``kubetwin dra explain`` as library calls: claims (or a pod's
claims) allocated on one node as kube-scheduler's DynamicResources plugin allocates them, the
verdict per claim when they cannot be, and every device passed over with the allocator's own
check that refused it.

The command line (:mod:`kubetwin.cli.dra`) reads files and renders these results; ``kubetwin
serve`` calls the same functions over its served cluster (``POST /api/v1/dra``, and the ``dra``
key of a pod's drill-down). Nothing here prints or exits: a rejection is returned as data with
the messages the CLI reports (``rejections``).

Not an upstream module: kubetwin's driver of the structured allocator
(``k8s.io/dynamic-resource-allocation/structured``, ``pkg/scheduler/framework/plugins/dynamicresources``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..errors import InputError
from .allocator import AllocationError, Allocator, Outcome
from .api import Node, ResourceClaim
from .diagnose import Diagnosis, diagnose, missing_classes
from .features import AllocatorFeatures
from .objects import DRAObjects


def allocator_features(version: str | None, gates_flag: str | None = None, *,
                       path: str = "--feature-gates") -> AllocatorFeatures:
    """The allocator's switches for a release, with ``A=true,B=false`` overrides on top."""
    from ..model.features import (
        FEATURE_GATES,
        gates_for,
        normalize_version,
        parse_feature_gates_flag,
        unknown_gate_error,
    )
    from .features import ALLOCATOR_GATES

    overrides = parse_feature_gates_flag(gates_flag) if gates_flag else {}
    for name in overrides:
        if name not in FEATURE_GATES and name not in ALLOCATOR_GATES:
            raise unknown_gate_error(name, normalize_version(version), path=path)
    # The allocator takes the gates as plain switches, also where a release locks them (as
    # the upstream allocator tests do), so the overrides are applied on top, not validated.
    return AllocatorFeatures.from_gates(gates_for(version), overrides)


def run_allocation(allocator: Allocator, node: Node, claims: Sequence[ResourceClaim], timeout: float | None,
                   errors_as_verdicts: bool = False, file: str | None = None) -> tuple[Outcome, Diagnosis | None]:
    """Allocate ``claims`` together on ``node``; when that fails, why — per claim. A request whose
    device class does not exist makes its claim unsatisfiable (the DynamicResources plugin's
    PreFilter words), and the other claims are still diagnosed. An allocator error (which aborts
    scheduling upstream) is an :class:`InputError`, or with ``errors_as_verdicts`` part of the verdicts."""
    missing = missing_classes(allocator, list(claims))
    if missing:
        outcome = Outcome(False, reason=missing[0][1])
    else:
        try:
            outcome = allocator.allocate(node, list(claims), timeout=timeout)
        except AllocationError as exc:
            if not errors_as_verdicts:  # the claims ask for what no allocation can give: name their files
                raise InputError(f"allocation on node {node.name} failed: {exc}", file=file) from None
            outcome = Outcome(False, reason=str(exc))
    diagnosis = None if outcome.allocated else diagnose(allocator, node, list(claims))
    return outcome, diagnosis


def unsatisfiable(data: dict[str, Any], diagnosis: Diagnosis | None) -> list[str]:
    """Add the diagnosis to ``data``; the rejection messages (``--fail-on-reject``) it gives."""
    if diagnosis is None:
        return []
    data["diagnosis"] = diagnosis.to_data()
    out = [f"claim {c.claim}: {c.problems[0]}" for c in diagnosis.claims if c.problems]
    if diagnosis.together:
        out.append(diagnosis.together)
    if not any(c.problems for c in diagnosis.claims) and not diagnosis.together:
        out.append(f"node {data['node']}: {data['reason'] or 'unsatisfiable'}")
    return out


@dataclass
class Allocation:
    """One ``dra allocate``: the JSON answer and what the table and the passed-over list need."""

    data: dict[str, Any]
    allocator: Allocator | None
    node: Node
    #: the claims the allocator solved together (those without an allocation before)
    todo: list[ResourceClaim]
    allocated: bool
    diagnosis: Diagnosis | None = None
    rejections: list[str] = field(default_factory=list)
    #: with a pod: (pod claim name, ResourceClaim ref, generated) of each of its claims
    pod_claims: list[tuple[str, str, bool]] = field(default_factory=list)


def _as_v1(claim: ResourceClaim) -> dict[str, Any]:
    raw = copy.deepcopy(dict(claim.raw))
    raw["apiVersion"] = "resource.k8s.io/v1"
    return raw


def allocate_claims(features: AllocatorFeatures, cluster: DRAObjects, node: Node, claims: Sequence[ResourceClaim],
                    *, timeout: float | None = None, file: str | None = None) -> Allocation:
    """The claims without an allocation allocated together on ``node``, the cluster's allocated
    claims holding their devices; every claim given comes back (allocated ones as they were)."""
    allocated_claims = [c for c in cluster.claims if c.allocated is not None]
    allocator = Allocator(features, cluster.classes, cluster.slices, allocated_claims)
    todo = [c for c in claims if c.allocated is None]
    outcome, diagnosis = run_allocation(allocator, node, todo, timeout, file=file)
    out_claims = []
    by_claim = dict(zip((id(c) for c in todo), outcome.results)) if outcome.allocated else {}
    for claim in claims:
        raw = _as_v1(claim)
        result = by_claim.get(id(claim))
        if result is not None:
            raw.setdefault("status", {})
            raw["status"] = dict(raw["status"] or {})
            raw["status"]["allocation"] = result.to_api()
        out_claims.append(raw)
    data: dict[str, Any] = {
        "outcome": "allocated" if outcome.allocated else "unsatisfiable",
        "reason": outcome.reason,
        "node": node.name,
        "claims": out_claims,
    }
    rejections = unsatisfiable(data, diagnosis)
    return Allocation(data, allocator, node, todo, outcome.allocated, diagnosis, rejections)


def allocate_pod(features: AllocatorFeatures, cluster: DRAObjects, node: Node, pod: Any,
                 extra_claims: Sequence[ResourceClaim] = (), *, seed: int = 0, timeout: float | None = None,
                 file: str | None = None) -> Allocation:
    """The pod's ``spec.resourceClaims`` (templates instantiated as the resourceclaim controller
    names them, claims reserved for the pod) allocated on ``node`` as Filter + Reserve + PreBind."""
    from .podclaims import PodAllocation, PodClaimError, allocate_for_pod, claims_for_pod

    existing = list(cluster.claims) + list(extra_claims)
    try:
        pod_claims = claims_for_pod(pod, existing, cluster.templates, seed=seed)
    except PodClaimError as exc:
        if not exc.unschedulable:
            raise InputError(str(exc), file=file) from None
        refused = {"outcome": "unsatisfiable", "reason": str(exc), "node": node.name,
                   "pod": {"name": pod.name, "namespace": pod.namespace}, "claims": []}
        return Allocation(refused, None, node, [], False, rejections=[f"pod {pod.key}: {exc}"])
    mine = {id(pc.claim) for pc in pod_claims.claims}
    allocated_claims = [c for c in existing if c.allocated is not None and id(c) not in mine]
    allocated_claims += pod_claims.allocated
    allocator = Allocator(features, cluster.classes, cluster.slices, allocated_claims)
    missing = missing_classes(allocator, pod_claims.to_allocate)
    if missing:  # PreFilter: the pod is unschedulable until the class exists
        result = PodAllocation(Outcome(False, reason=missing[0][1]), node.name,
                               tuple(_as_v1(pc.claim) for pc in pod_claims.claims),
                               pod_claims.resource_claim_statuses)
    else:
        try:
            result = allocate_for_pod(allocator, node, pod_claims, timeout=timeout)
        except AllocationError as exc:
            raise InputError(f"allocation on node {node.name} failed: {exc}", file=file) from None
    diagnosis = None if result.allocated else diagnose(allocator, node, pod_claims.to_allocate)
    data: dict[str, Any] = {
        "outcome": "allocated" if result.allocated else "unsatisfiable",
        "reason": result.outcome.reason,
        "node": node.name,
        "pod": {"name": pod.name, "namespace": pod.namespace,
                "resourceClaimStatuses": [dict(s) for s in result.resource_claim_statuses]},
        "claims": list(result.claims),
    }
    rejections = unsatisfiable(data, diagnosis)
    return Allocation(data, allocator, node, pod_claims.to_allocate, result.allocated, diagnosis, rejections,
                      [(pc.name, pc.claim.ref, pc.generated) for pc in pod_claims.claims])


@dataclass(frozen=True)
class PassedOver:
    """A device the allocation did not take for a request, and the allocator's reason."""

    claim: str
    request: str
    device: str  # driver/pool/device
    reason: str
    #: it passed every check on its own (the search, constraints or counters decided)
    eligible: bool


def passed_over(a: Allocation) -> list[PassedOver]:
    """Every device of the node's pools not chosen for each request, with the checks it failed
    (each evaluated by :mod:`.explain` as the allocator evaluates it), in the pools' order."""
    from .explain import explain

    if a.allocator is None:
        return []
    chosen = {(str((c.get("metadata") or {}).get("name")), r["request"], f"{r['driver']}/{r['pool']}/{r['device']}")
              for c in a.data["claims"] for r in ((c.get("status") or {}).get("allocation") or {}).get(
                  "devices", {}).get("results", [])}
    out = []
    for e in explain(a.allocator, a.node, a.todo):
        for v in e.devices:
            if (e.claim, e.request, v.device) in chosen:
                continue
            failed = [c for c in v.checks if not c.passed]
            reason = "; ".join(f"{c.name} failed" + (f" ({c.detail})" if c.detail else "") for c in failed) \
                or ("eligible, but the search chose other devices (search order, constraints or counters)"
                    if a.allocated else "eligible on its own (the claim still cannot be allocated: see above)")
            out.append(PassedOver(e.claim, e.request, v.device, reason, not failed))
    return out


@dataclass
class Explanation:
    """One ``dra explain``: the JSON answer, and the per-request explanations the table shows."""

    data: dict[str, Any]
    items: list[Any]
    verdicts: list[dict[str, Any]]
    allocated: bool
    diagnosis: Diagnosis | None
    rejections: list[str]


def claim_verdicts(claims: Sequence[ResourceClaim], outcome: Outcome,
                   diagnosis: Diagnosis | None) -> list[dict[str, Any]]:
    """Per claim: allocatable (together with the others when all are), and the problems."""
    if outcome.allocated or diagnosis is None:
        return [{"claim": c.name, "allocatable": True, "problems": []} for c in claims]
    out = []
    for d in diagnosis.claims:
        problems = list(d.problems)
        allocatable = d.allocatable and not diagnosis.together
        if d.allocatable and diagnosis.together:
            problems = [diagnosis.together]
        out.append({"claim": d.claim, "allocatable": allocatable, "problems": problems,
                    "requests": [r.to_data() for r in d.requests]})
    return out


def explain_claims(features: AllocatorFeatures, cluster: DRAObjects, node: Node,
                   claims: Sequence[ResourceClaim]) -> Explanation:
    """Whether each claim can be allocated on ``node`` and why not: each request, device, check."""
    from .explain import explain, to_data

    allocator = Allocator(features, cluster.classes, cluster.slices,
                          [c for c in cluster.claims if c.allocated is not None])
    todo = [c for c in claims if c.allocated is None]
    outcome, diagnosis = run_allocation(allocator, node, todo, None, errors_as_verdicts=True)
    items = explain(allocator, node, todo)
    verdicts = claim_verdicts(todo, outcome, diagnosis)
    data: dict[str, Any] = {"node": node.name, "outcome": "allocated" if outcome.allocated else "unsatisfiable",
                            "reason": outcome.reason, "claims": verdicts, "requests": to_data(items)}
    rejections = unsatisfiable(data, diagnosis)
    data.pop("diagnosis", None)  # the same verdicts are in "claims"
    return Explanation(data, items, verdicts, outcome.allocated, diagnosis, rejections)


def _device(text: str) -> dict[str, str]:
    driver, pool, device = text.split("/", 2)
    return {"driver": driver, "pool": pool, "device": device}


def devices_by_request(a: Allocation) -> list[dict[str, Any]]:
    """Per claim and request (or ``firstAvailable`` alternative, ``request/sub``): the devices
    allocated and every device passed over with the allocator's reason — the ``dra`` key of
    ``kubetwin serve``'s pod drill-down (docs/serve.md)."""
    from .explain import subrequests

    passed: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in passed_over(a):
        passed.setdefault((p.claim, p.request), []).append({**_device(p.device), "reason": p.reason,
                                                            "eligible": p.eligible})
    todo = {c.name: c for c in a.todo}
    out = []
    for raw in a.data["claims"]:
        meta = raw.get("metadata") or {}
        name = str(meta.get("name"))
        results = (((raw.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        claim = todo.get(name)
        if claim is not None:
            labels = [(label, spec.device_class_name) for _, label, spec in subrequests(claim)]
        else:
            labels = [(r, "") for r in dict.fromkeys(str(x["request"]) for x in results)]
        requests = [{"name": label, "deviceClass": cls,
                     "allocated": [{"driver": r["driver"], "pool": r["pool"], "device": r["device"]}
                                   for r in results if r["request"] == label],
                     "passedOver": passed.get((name, label), [])} for label, cls in labels]
        out.append({"name": name, "namespace": meta.get("namespace") or "", "requests": requests})
    return out


def allocation_of_running_pod(features: AllocatorFeatures, cluster: DRAObjects, node: Node, pod: Any) -> Allocation:
    """A running pod's claims as allocated, with the devices the allocator would pass over for
    them on ``node`` today: its own claims counted free, every other allocated claim holding its
    devices (the state its allocation was searched in, less the claims that came after)."""
    import dataclasses

    from .podclaims import claims_for_pod

    pod_claims = claims_for_pod(pod, cluster.claims, cluster.templates, generate=False)
    mine = {id(pc.claim) for pc in pod_claims.claims}
    others = [c for c in cluster.claims if c.allocated is not None and id(c) not in mine]
    allocator = Allocator(features, cluster.classes, cluster.slices, others)
    todo = [dataclasses.replace(pc.claim, allocated=None, node_selector=None) for pc in pod_claims.claims]
    data = {"outcome": "allocated", "reason": "", "node": node.name,
            "claims": [_as_v1(pc.claim) for pc in pod_claims.claims]}
    return Allocation(data, allocator, node, todo, True,
                      pod_claims=[(pc.name, pc.claim.ref, pc.generated) for pc in pod_claims.claims])
