"""A pod's ResourceClaims: resolve ``spec.resourceClaims``, instantiate templates, reserve.

Three upstream actors meet here, and each rule below is theirs:

* the **resourceclaim controller** (``pkg/controller/resourceclaim``) turns a
  ``resourceClaimTemplateName`` entry into a ResourceClaim: ``generateName`` is
  ``<pod>-<pod claim name>-`` (both parts shortened in proportion to fit 57 characters, and
  then *without* the trailing dash), the pod is the controlling owner, the annotation
  ``resource.kubernetes.io/pod-claim-name`` names the entry, the template's labels and
  annotations are copied, and the pod's ``status.resourceClaimStatuses`` records the name.
  An orphan (a claim already owned by the pod for that entry) is adopted instead.
* the **API server** completes ``generateName`` with five random characters from
  ``bcdfghjklmnpqrstvwxz2456789``. We draw them from a random generator seeded with
  ``(seed, pod UID, pod claim name)``: the same inputs always give the same name, different
  pods never collide by construction of the seed, and an accidental clash with an existing
  claim draws again (as the controller retries after ``AlreadyExists``).
* the **scheduler** (DynamicResources PreFilter/PreBind) resolves names through
  ``resourceclaim.Name``, requires template claims to be owned by the pod, allocates all
  unallocated claims of the pod together, checks allocated ones against the node, and at
  PreBind adds the finalizer and the pod to ``status.reservedFor`` (at most 256 entries:
  the API server rejects the 257th; there is no other sharing limit).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Container, ItemsView, Iterable, Iterator, Mapping, MutableMapping, ValuesView
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from ..errors import KubetwinError
from ..fastinit import fast_init
from ..model.pod import Pod
from .allocator import AllocationError, AllocationResult, Allocator, Outcome
from .api import (
    RESERVED_FOR_MAX,
    AllocatedDevice,
    DeviceClaimConfiguration,
    DeviceConstraint,
    DeviceRequest,
    Node,
    ResourceClaim,
    ResourceClaimTemplate,
    parse_claim_spec,
    parse_resource_claim,
)
from .nodeselector import NodeSelectorError, selector_matches

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"
#: ``k8s.io/apimachinery/pkg/util/rand``: consonants and digits that spell no words.
NAME_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
NAME_SUFFIX_LENGTH = 5
_MAX_BASE_LEN = 57           # 63 minus a dash and the five random characters
_MAX_GENERATED_BASE = 63 - NAME_SUFFIX_LENGTH


class PodClaimError(KubetwinError):
    """A pod's claims cannot be resolved. ``unschedulable``: the scheduler would wait (the pod
    stays pending) rather than fail; the message is the scheduler's."""

    def __init__(self, message: str, unschedulable: bool = True):
        super().__init__(message)
        self.unschedulable = unschedulable


@fast_init
@dataclass(frozen=True, slots=True)
class PodClaim:
    """One ``spec.resourceClaims`` entry and the ResourceClaim behind it."""

    name: str                    # the entry's name (what containers reference)
    claim: ResourceClaim
    generated: bool = False      # created from the template in this call
    template: str | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class PodClaims:
    """The claims of one pod, in ``spec.resourceClaims`` order (skipped entries left out)."""

    pod: Pod
    claims: tuple[PodClaim, ...]
    #: ``status.resourceClaimStatuses`` after the controller ran (entries for template claims).
    resource_claim_statuses: tuple[Mapping[str, Any], ...] = ()

    @property
    def to_allocate(self) -> list[ResourceClaim]:
        """Claims without an allocation: the ones the allocator must solve together."""
        return [pc.claim for pc in self.claims if pc.claim.allocated is None]

    @property
    def allocated(self) -> list[ResourceClaim]:
        return [pc.claim for pc in self.claims if pc.claim.allocated is not None]

    @property
    def generated(self) -> list[ResourceClaim]:
        return [pc.claim for pc in self.claims if pc.generated]

    def by_name(self) -> dict[str, ResourceClaim]:
        return {pc.name: pc.claim for pc in self.claims}


# --------------------------------------------------------------------------------------------
# names
# --------------------------------------------------------------------------------------------
def generate_name_base(pod_name: str, pod_claim_name: str) -> str:
    """The controller's ``generateName`` for a template claim (shortened as upstream does)."""
    base = f"{pod_name}-{pod_claim_name}-"
    if len(base) > _MAX_BASE_LEN:
        # Upstream cuts both parts in proportion and drops the final dash in this branch.
        total = len(base)
        base = pod_name[:len(pod_name) * _MAX_BASE_LEN // total] + "-" + \
            pod_claim_name[:len(pod_claim_name) * _MAX_BASE_LEN // total]
    return base


def random_suffix_plain(rng: random.Random) -> str:
    """``rand.String(5)``'s characters drawn one by one with ``Random.choice``."""
    return "".join(rng.choice(NAME_SUFFIX_ALPHABET) for _ in range(NAME_SUFFIX_LENGTH))


_SUFFIX_BITS = len(NAME_SUFFIX_ALPHABET).bit_length()


def random_suffix(rng: random.Random) -> str:
    """:func:`random_suffix_plain` with ``Random.choice`` unrolled: ``choice`` draws
    ``getrandbits(k)`` (``k`` the alphabet length's bit length) until the value falls inside the
    alphabet, so drawing the same way gives the same characters from the same generator state,
    without two method calls per character."""
    draw = rng.getrandbits
    size = len(NAME_SUFFIX_ALPHABET)
    out = ""
    for _ in range(NAME_SUFFIX_LENGTH):
        r = draw(_SUFFIX_BITS)
        while r >= size:
            r = draw(_SUFFIX_BITS)
        out += NAME_SUFFIX_ALPHABET[r]
    return out


def complete_generate_name(base: str, rng: random.Random) -> str:
    """``names.SimpleNameGenerator``: at most 58 characters of the base, then 5 random ones."""
    return base[:_MAX_GENERATED_BASE] + random_suffix(rng)


def _uuid4_text(bits: int) -> str:
    """``str(uuid.UUID(int=bits, version=4))`` without building the UUID: the variant and
    version bits set, then the 8-4-4-4-12 hex groups."""
    bits = (bits & ~(0xc000 << 48)) | (0x8000 << 48)
    bits = (bits & ~(0xf000 << 64)) | (4 << 76)
    h = "%032x" % bits
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _rng(seed: int, pod: Pod, pod_claim_name: str) -> random.Random:
    return random.Random(f"{seed}/{pod.uid}/{pod_claim_name}")


# --------------------------------------------------------------------------------------------
# resolution
# --------------------------------------------------------------------------------------------
def _namespace(obj_namespace: str) -> str:
    return obj_namespace or "default"


def _is_mapping(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, answered without the ABC check for the common dict."""
    return type(value) is dict or isinstance(value, Mapping)


def _meta(claim: ResourceClaim) -> Mapping[str, Any]:
    """The claim's ``metadata`` as far as owner references and annotations go (a claim PreBind
    wrote has its source claim's: only the finalizers differ, which nothing here reads)."""
    raw = claim.raw
    if type(raw) is PreBoundRaw:
        raw = raw.source
    meta = raw.get("metadata") if _is_mapping(raw) else None
    return meta if _is_mapping(meta) else {}


def is_controlled_by(claim: ResourceClaim, pod: Pod) -> bool:
    """``metav1.IsControlledBy``: a controller owner reference with the pod's UID."""
    uid = pod.uid
    for ref in _meta(claim).get("ownerReferences") or ():
        if _is_mapping(ref) and ref.get("controller") and ref.get("uid") == uid:
            return True
    return False


def is_reserved_for(claim: ResourceClaim, pod: Pod) -> bool:
    uid = pod.uid
    for r in claim.reserved_for:
        if _is_mapping(r) and r.get("uid") == uid:
            return True
    return False


class ClaimIndex(MutableMapping[str, ResourceClaim]):
    """The claims that exist, by ``namespace/name``, also indexed by namespace and by the pod
    that controls them: resolving one pod's claims then costs what the pod names, not what the
    cluster holds (a simulation keeps thousands of generated claims).

    Iteration order is insertion order, as a dict's; per namespace and per owner too, so
    :func:`claims_for_pod` picks the same claim from an index as from the plain list.
    """

    def __init__(self, claims: Iterable[ResourceClaim] = ()):
        self._all: dict[str, ResourceClaim] = {}
        self._by_ns: dict[str, dict[str, ResourceClaim]] = {}
        self._by_owner: dict[str, dict[str, ResourceClaim]] = {}
        #: key -> the controlling owner's UID of the claim held (read once per claim stored)
        self._owner: dict[str, str | None] = {}
        for c in claims:
            self.setdefault(claim_key(c), c)

    def __getitem__(self, key: str) -> ResourceClaim:
        return self._all[key]

    def __setitem__(self, key: str, claim: ResourceClaim) -> None:
        uid = _controller_uid(claim)
        if key in self._all and self._owner[key] != uid:
            del self[key]
        self._all[key] = claim
        self._owner[key] = uid
        self._by_ns.setdefault(claim.namespace or "default", {})[claim.name] = claim
        if uid is not None:
            self._by_owner.setdefault(uid, {})[key] = claim

    def __delitem__(self, key: str) -> None:
        claim = self._all.pop(key)
        ns = self._by_ns.get(_namespace(claim.namespace))
        if ns is not None:
            ns.pop(claim.name, None)
        uid = self._owner.pop(key)
        if uid is not None:
            owned = self._by_owner.get(uid)
            if owned is not None:
                owned.pop(key, None)
                if not owned:
                    del self._by_owner[uid]

    def __iter__(self):
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)

    def values(self) -> ValuesView[ResourceClaim]:
        """The claims in insertion order (the dict's own view: no lookup per key)."""
        return self._all.values()

    def items(self) -> ItemsView[str, ResourceClaim]:
        return self._all.items()

    def in_namespace(self, namespace: str) -> Mapping[str, ResourceClaim]:
        return self._by_ns.get(_namespace(namespace), {})

    def controlled_by(self, uid: str) -> Iterable[ResourceClaim]:
        return self._by_owner.get(uid, {}).values()


def claim_key(claim: ResourceClaim) -> str:
    return f"{_namespace(claim.namespace)}/{claim.name}"


def _controller_uid(claim: ResourceClaim) -> str | None:
    for ref in _meta(claim).get("ownerReferences") or ():
        if _is_mapping(ref) and ref.get("controller") and ref.get("uid"):
            return str(ref["uid"])
    return None


class _Taken:
    """Claim names in use in the pod's namespace: the existing ones and those drawn in this call."""

    def __init__(self, existing: Mapping[str, ResourceClaim]):
        self.existing = existing
        self.drawn: set[str] = set()

    def __contains__(self, name: object) -> bool:
        return name in self.existing or name in self.drawn

    def add(self, name: str) -> None:
        self.drawn.add(name)


def claims_for_pod(pod: Pod, claims: Iterable[ResourceClaim], templates: Iterable[ResourceClaimTemplate] = (),
                   *, seed: int = 0, generate: bool = True) -> PodClaims:
    """Resolve the pod's ``spec.resourceClaims`` to ResourceClaims, generating template claims.

    ``claims`` are the claims that exist (any namespace); ``templates`` the templates.
    ``generate=False`` resolves only (as the scheduler and kubelet do: a template entry
    without a ``status.resourceClaimStatuses`` entry is "ResourceClaim not created yet"). Raises
    :class:`PodClaimError` with the scheduler's or controller's wording when a claim is
    missing, a template claim is not the pod's, or a template does not exist.
    """
    ns = pod.namespace or "default"
    existing: Mapping[str, ResourceClaim]
    if type(claims) is ClaimIndex or isinstance(claims, ClaimIndex):
        existing = claims.in_namespace(ns)
        mine = claims.controlled_by(pod.uid)
        owned: Iterable[ResourceClaim] = [c for c in mine if _namespace(c.namespace) == ns] if mine else ()
    else:
        existing = {}
        for c in claims:
            if _namespace(c.namespace) == ns:
                existing.setdefault(c.name, c)
        owned = existing.values()
    tmpl_by_name = {t.name: t for t in templates if _namespace(t.namespace) == ns} if templates else {}
    recorded = pod.status.resource_claim_statuses
    statuses = {s.name: s.resource_claim_name for s in recorded} if recorded else {}
    out_statuses: list[dict[str, Any]] = [
        {"name": s.name, **({"resourceClaimName": s.resource_claim_name} if s.resource_claim_name else {})}
        for s in recorded] if recorded else []
    taken = _Taken(existing) if generate else None   # names drawn here: only when generating
    result: list[PodClaim] = []
    seen: set[str] = set()
    for i, entry in enumerate(pod.spec.resource_claims):
        if entry.name in seen:
            raise PodClaimError(f'pod {pod.key}: spec.resourceClaims[{i}].name: Duplicate value: "{entry.name}"',
                                unschedulable=False)
        seen.add(entry.name)
        by_name, by_template = entry.resource_claim_name, entry.resource_claim_template_name
        if bool(by_name) == bool(by_template):
            raise PodClaimError(f"pod {pod.key}: spec.resourceClaims[{i}]: Invalid value: exactly one of "
                                "resourceClaimName or resourceClaimTemplateName must be set", unschedulable=False)
        if by_name:
            claim = existing.get(by_name)
            if claim is None:
                raise PodClaimError(f'pod {pod.key}: resourceclaim "{by_name}" not found')
            result.append(PodClaim(entry.name, claim))
            continue
        assert by_template is not None
        if entry.name in statuses:
            name = statuses[entry.name]
            if not name:
                continue  # the controller decided no claim is needed
            claim = existing.get(name)
            if claim is None:
                raise PodClaimError(f'pod {pod.key}: resourceclaim "{name}" not found')
            if not is_controlled_by(claim, pod):
                raise PodClaimError(f"ResourceClaim {ns}/{name} was not created for pod {pod.key} (pod is not owner)")
            result.append(PodClaim(entry.name, claim, template=by_template))
            continue
        if taken is None:
            raise PodClaimError(f'pod "{pod.key}": ResourceClaim not created yet')
        orphan = _find_orphan(owned, pod, entry.name)
        if orphan is not None:
            claim, generated = orphan, False
        else:
            template = tmpl_by_name.get(by_template)
            if template is None:
                raise PodClaimError(f'pod {pod.key}: resource claim template "{by_template}": '
                                    f'resourceclaimtemplates.resource.k8s.io "{by_template}" not found')
            claim = instantiate_template(template, pod, entry.name, taken, seed=seed)
            generated = True
        taken.add(claim.name)
        if out_statuses:
            out_statuses = [s for s in out_statuses if s["name"] != entry.name]
        out_statuses.append({"name": entry.name, "resourceClaimName": claim.name})
        result.append(PodClaim(entry.name, claim, generated, by_template))
    return PodClaims(pod, tuple(result), tuple(out_statuses))


def _find_orphan(claims: Iterable[ResourceClaim], pod: Pod, entry: str) -> ResourceClaim | None:
    for c in claims:
        if is_controlled_by(c, pod) and (_meta(c).get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) == entry:
            return c
    return None


@dataclass(frozen=True, slots=True)
class _Prototype:
    """What every claim of one template shares: the claim spec (one copy, which nothing writes
    to) and its decoded requests, constraints and config. Claims from one template differ only
    in their metadata, so the spec is decoded once per template, not once per claim."""

    template: ResourceClaimTemplate
    spec: Mapping[str, Any]
    requests: tuple[DeviceRequest, ...]
    constraints: tuple[DeviceConstraint, ...]
    config: tuple[DeviceClaimConfiguration, ...]


_PROTOTYPES: dict[int, _Prototype] = {}


def _prototype(template: ResourceClaimTemplate) -> _Prototype:
    hit = _PROTOTYPES.get(id(template))
    if hit is not None and hit.template is template:
        return hit
    spec = copy.deepcopy(dict(template.spec))
    # as parse_resource_claim reads a claim's ``spec`` (the template's own parse checked it)
    requests, constraints, config = parse_claim_spec(spec if isinstance(spec, dict) else {})
    proto = _Prototype(template, spec, requests, constraints, config)
    if len(_PROTOTYPES) > 4096:
        _PROTOTYPES.clear()
    _PROTOTYPES[id(template)] = proto
    return proto


def instantiate_template(template: ResourceClaimTemplate, pod: Pod, pod_claim_name: str,
                         taken: Container[str] = frozenset(), *, seed: int = 0) -> ResourceClaim:
    """The ResourceClaim the controller creates for one template entry of ``pod`` — what
    ``parse_resource_claim`` reads from the object it creates, built without decoding the
    template's spec again (:class:`_Prototype`)."""
    rng = _rng(seed, pod, pod_claim_name)
    base = generate_name_base(pod.name, pod_claim_name)
    name = complete_generate_name(base, rng)
    while name in taken:
        name = complete_generate_name(base, rng)
    uid = _uuid4_text(rng.getrandbits(128))
    tmeta = template.metadata or {}
    annotations = dict(tmeta.get("annotations") or {})
    annotations[POD_CLAIM_NAME_ANNOTATION] = pod_claim_name
    meta: dict[str, Any] = {"name": name, "generateName": base, "namespace": pod.namespace or "default", "uid": uid,
                            "annotations": annotations}
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                                "controller": True, "blockOwnerDeletion": True}]
    proto = _prototype(template)
    raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta, "spec": proto.spec}
    return ResourceClaim(name=name, namespace=meta["namespace"], uid=uid, requests=proto.requests,
                         constraints=proto.constraints, config=proto.config, raw=raw)


# --------------------------------------------------------------------------------------------
# allocation for a pod
# --------------------------------------------------------------------------------------------
@fast_init
@dataclass(frozen=True, slots=True)
class PodAllocation:
    """What scheduling the pod's claims onto one node gives."""

    outcome: Outcome
    node: str
    #: every claim of the pod as the API would hold it after PreBind (allocated, reserved,
    #: finalizer) when allocated; unchanged otherwise. Generated claims included.
    claims: tuple[dict[str, Any], ...] = ()
    resource_claim_statuses: tuple[Mapping[str, Any], ...] = ()
    results: Mapping[str, AllocationResult] = field(default_factory=dict)  # pod claim name -> new allocation
    #: :attr:`claims` as ``parse_resource_claim`` reads them, built without decoding them again
    #: (after :func:`bind_claims`; empty otherwise)
    parsed: tuple[ResourceClaim, ...] = ()
    #: pod claim name -> the devices its new allocation takes (``AllocationResult.devices()``,
    #: worked out once for :attr:`parsed` and the caller that marks them in use)
    devices: Mapping[str, tuple[AllocatedDevice, ...]] = field(default_factory=dict)

    @property
    def allocated(self) -> bool:
        return self.outcome.allocated


def consumer_ref(pod: Pod) -> dict[str, Any]:
    """``resourceclaim.BindTo`` for a pod: ``ResourceClaimConsumerReference``."""
    return {"resource": "pods", "name": pod.name, "uid": pod.uid}


#: The scheduler's Filter message for an allocated claim whose node selector excludes the node.
CLAIM_NOT_AVAILABLE = "resourceclaim not available on the node"


def available_on(pod_claims: PodClaims, node: Node) -> bool:
    """Every already-allocated claim of the pod can be used from ``node`` (its allocation's
    ``nodeSelector``, as DynamicResources Filter checks it)."""
    for pc in pod_claims.claims:
        selector = pc.claim.node_selector
        if pc.claim.allocated is None or not selector:
            continue
        try:
            ok = selector_matches(selector, node)
        except NodeSelectorError as exc:
            raise AllocationError(f"claim {pc.claim.ref}: {exc}") from None
        if not ok:
            return False
    return True


def filter_on_node(allocator: Allocator, node: Node, pod_claims: PodClaims,
                   timeout: float | None = None) -> Outcome:
    """DynamicResources Filter for one node: allocated claims reachable, the others allocated
    together. ``Outcome.results`` follow :attr:`PodClaims.to_allocate`."""
    if not available_on(pod_claims, node):
        return Outcome(False, reason=CLAIM_NOT_AVAILABLE)
    todo = pod_claims.to_allocate
    if not todo:
        return Outcome(True)
    return allocator.allocate(node, todo, timeout=timeout)


def bind_claims(pod_claims: PodClaims, outcome: Outcome, node: str, *, lazy: bool = False) -> PodAllocation:
    """Reserve + PreBind after a successful Filter: each claim gets its new allocation, the
    delete-protection finalizer and the pod in ``status.reservedFor``.

    ``lazy``: the claims as the API holds them are not built (:attr:`PodAllocation.claims` is
    empty) and each parsed claim's ``raw`` is a :class:`PreBoundRaw`, which builds the written
    object's parts when read — for callers (the scheduler) that keep the typed claims and read
    the API objects only for an output."""
    pod = pod_claims.pod
    new: dict[int, AllocationResult] = {}
    for c, r in zip(pod_claims.to_allocate, outcome.results):
        new[id(c)] = r
    out: list[dict[str, Any]] = []
    parsed: list[ResourceClaim] = []
    results: dict[str, AllocationResult] = {}
    taken: dict[str, tuple[AllocatedDevice, ...]] = {}
    for pc in pod_claims.claims:
        result = new.get(id(pc.claim))
        if lazy:
            devices = None
            if result is not None:
                results[pc.name] = result
                devices = taken[pc.name] = result.devices()
            parsed.append(_bound_lazily(pc.claim, pod, result, devices))
            continue
        # copy on write: the containers written below (the object, status, reservedFor,
        # metadata, finalizers) are new; the rest (spec, annotations, owner references, an
        # earlier allocation) is shared with the claim as read, which nothing writes to
        raw = dict(pc.claim.raw)
        raw["apiVersion"] = "resource.k8s.io/v1"
        status = dict(raw.get("status") or {})
        devices = None
        if result is not None:
            status["allocation"] = result.to_api()
            results[pc.name] = result
            devices = taken[pc.name] = result.devices()
        reserved = list(status.get("reservedFor") or [])
        if not is_reserved_for(pc.claim, pod):
            _check_room(pc.claim, len(reserved))
            reserved.append(consumer_ref(pod))
        status["reservedFor"] = reserved
        raw["status"] = status
        meta = dict(raw.get("metadata") or {})
        meta["finalizers"] = _with_finalizer(meta)
        raw["metadata"] = meta
        out.append(raw)
        parsed.append(_read_back(pc.claim, raw, result, devices))
    return PodAllocation(outcome, node, tuple(out), pod_claims.resource_claim_statuses, results, tuple(parsed),
                         taken)


def _check_room(claim: ResourceClaim, reserved: int) -> None:
    if reserved >= RESERVED_FOR_MAX:
        raise AllocationError(
            f'ResourceClaim.resource.k8s.io "{claim.name}" is invalid: status.reservedFor: Too many: '
            f"{reserved + 1}: must have at most {RESERVED_FOR_MAX} items")


def _with_finalizer(meta: Mapping[str, Any]) -> list[str]:
    finalizers = list(meta.get("finalizers") or [])
    if DELETE_PROTECTION_FINALIZER not in finalizers:
        finalizers.append(DELETE_PROTECTION_FINALIZER)
    return finalizers


class PreBoundRaw(Mapping[str, Any]):
    """The object :func:`bind_claims` writes for one claim (``raw`` of the claim it reads back),
    built part by part when read: ``status`` (the allocation as the API holds it and
    ``reservedFor``) and ``metadata`` (the finalizer added) on first read, the rest the source
    claim's own. Keys in the order the plain ``bind_claims`` gives them; ``dict(raw)`` is the
    plain object. :func:`_meta` reads the source claim's metadata (owner references and
    annotations are unchanged; only the finalizers differ)."""

    __slots__ = ("source", "result", "reserved", "_keys", "_status", "_meta")

    def __init__(self, source: Mapping[str, Any], result: AllocationResult | None,
                 reserved: tuple[Mapping[str, Any], ...]):
        self.source = source
        self.result = result
        self.reserved = reserved
        keys = list(source)
        for k in ("apiVersion", "status", "metadata"):
            if k not in source:
                keys.append(k)
        self._keys = keys
        self._status: dict[str, Any] | None = None
        self._meta: dict[str, Any] | None = None

    def __getitem__(self, key: str) -> Any:
        if key == "status":
            if self._status is None:
                status = dict(self.source.get("status") or {})
                if self.result is not None:
                    status["allocation"] = self.result.to_api()
                status["reservedFor"] = list(self.reserved)
                self._status = status
            return self._status
        if key == "metadata":
            if self._meta is None:
                meta = dict(self.source.get("metadata") or {})
                meta["finalizers"] = _with_finalizer(meta)
                self._meta = meta
            return self._meta
        if key == "apiVersion":
            return "resource.k8s.io/v1"
        return self.source[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _bound_lazily(claim: ResourceClaim, pod: Pod, result: AllocationResult | None,
                  devices: tuple[AllocatedDevice, ...] | None) -> ResourceClaim:
    """:func:`_read_back` of what the plain :func:`bind_claims` writes for ``claim``, with ``raw``
    a :class:`PreBoundRaw`. Consumed capacity is decoded from its text, so such a result is
    decoded from the written object in full, as the plain path does."""
    source = claim.raw
    status = source.get("status") or {}
    reserved = tuple(status.get("reservedFor") or ())
    if not is_reserved_for(claim, pod):
        _check_room(claim, len(reserved))
        reserved = (*reserved, consumer_ref(pod))
    raw = PreBoundRaw(source, result, reserved)
    if result is None:
        return ResourceClaim(claim.name, claim.namespace, claim.uid, claim.requests, claim.constraints, claim.config,
                             claim.allocated, reserved, raw, claim.node_selector)
    for r in result.results:
        if r.consumed_capacity:
            return parse_resource_claim(_plain(raw))
    return ResourceClaim(claim.name, claim.namespace, claim.uid, claim.requests, claim.constraints, claim.config,
                         result.devices() if devices is None else devices, reserved, raw, result.node_selector)


def _plain(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {k: raw[k] for k in raw}


def _read_back(claim: ResourceClaim, raw: dict[str, Any], result: AllocationResult | None,
               devices: tuple[AllocatedDevice, ...] | None = None) -> ResourceClaim:
    """``parse_resource_claim(raw)`` for a claim :func:`bind_claims` just wrote from ``claim``:
    only its status changed (the new allocation, if any, and ``reservedFor``), and every value
    it holds is one the decoder would give back. Consumed capacity is decoded from its text
    (the decoder's quantities), so such a result is decoded in full."""
    if result is not None:
        for r in result.results:
            if r.consumed_capacity:
                return parse_resource_claim(raw)
    status = raw["status"]
    if result is None:
        allocated, selector = claim.allocated, claim.node_selector
    else:
        allocated, selector = (result.devices() if devices is None else devices), result.node_selector
    return ResourceClaim(claim.name, claim.namespace, claim.uid, claim.requests, claim.constraints, claim.config,
                         allocated, tuple(status["reservedFor"]), raw, selector)


def allocate_for_pod(allocator: Allocator, node: Node, pod_claims: PodClaims,
                     timeout: float | None = None) -> PodAllocation:
    """Filter + Reserve + PreBind of the DynamicResources plugin for one node.

    Allocated claims must be usable on ``node`` (their allocation's node selector); the
    unallocated ones are allocated together. On success each claim gets its allocation, the
    delete-protection finalizer and the pod in ``reservedFor``.
    """
    outcome = filter_on_node(allocator, node, pod_claims, timeout)
    if not outcome.allocated:
        return PodAllocation(outcome, node.name, _unchanged(pod_claims), pod_claims.resource_claim_statuses)
    return bind_claims(pod_claims, outcome, node.name)


def release_for_pod(claim: ResourceClaim, pod: Pod) -> ResourceClaim | None:
    """The claim once ``pod`` is gone, as the resourceclaim controller leaves it.

    None: the claim was generated for the pod and is deleted with it. Otherwise the pod leaves
    ``status.reservedFor``; with no consumer left the claim is deallocated (allocation and
    finalizer removed). The caller frees the devices of a claim that lost its allocation.
    """
    if is_controlled_by(claim, pod):
        return None
    raw = copy.deepcopy(dict(claim.raw))
    status = dict(raw.get("status") or {})
    reserved = [r for r in status.get("reservedFor") or () if not (isinstance(r, Mapping) and r.get("uid") == pod.uid)]
    if reserved:
        status["reservedFor"] = reserved
    else:
        status.pop("reservedFor", None)
        status.pop("allocation", None)
        status.pop("devices", None)
        meta = dict(raw.get("metadata") or {})
        finalizers = [f for f in meta.get("finalizers") or () if f != DELETE_PROTECTION_FINALIZER]
        if finalizers:
            meta["finalizers"] = finalizers
        else:
            meta.pop("finalizers", None)
        raw["metadata"] = meta
    raw["status"] = status
    return parse_resource_claim(raw)


def _unchanged(pod_claims: PodClaims) -> tuple[dict[str, Any], ...]:
    out = []
    for pc in pod_claims.claims:
        raw = copy.deepcopy(dict(pc.claim.raw))
        raw["apiVersion"] = "resource.k8s.io/v1"
        out.append(raw)
    return tuple(out)

