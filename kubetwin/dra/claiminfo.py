"""One node's prepared claims kept in place: the kubelet DRA manager's claim info cache.

Models the cache of ``pkg/kubelet/cm/dra/claiminfo.go`` (``claimInfoCache``: the prepared claims
and the pods using them, kept between calls, written to the checkpoint by
``syncToCheckpoint``). :func:`kubetwin.dra.prepare.prepare_claims` and
:func:`kubetwin.dra.unprepare.unprepare_pod` are the plain implementation: they take the whole
checkpoint and return it anew, with every entry and CDI spec as a frozen object. A simulation
prepares one pod at a time on a node and reads the checkpoint only when an output asks for it,
so :class:`NodeClaims` keeps the entries as a dict by claim UID, changed in place:

- ``prepare`` runs the same checks in the same order (the pod's claims resolved as
  ``claims_for_pod(..., generate=False)`` resolves them, allocated, reserved for the pod, the
  allocation's node selector, the model driver's CDI names) and records a new claim as the claim
  object itself; its ``ClaimInfoState`` and CDI specs are built (by the plain
  ``driver_prepare``) only when :meth:`NodeClaims.checkpoint` or :meth:`NodeClaims.cdi_specs` is
  read. Whenever a check would fail, the plain ``prepare_claims`` runs on the checkpoint as it
  stands and raises its own error: the errors are the plain ones by construction.
- ``unprepare`` is ``unprepare_pod``'s walk over the same entries (the last entry of a claim
  name wins, an entry used by several pods only loses the pod's UID, the others leave).

Entries keep their checkpoint order (insertion order, an entry that leaves and comes back goes
last), and the CDI spec files follow the entries (one per claim and driver, in the order the
claim's results name the drivers), which is the order of the plain run's spec files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..errors import InputError
from ..model.pod import Pod
from .api import Node, ResourceClaim
from .cdi import CDISpec, validate_device_name, validate_kind
from .checkpoint import ClaimInfoState
from .podclaims import is_controlled_by, is_reserved_for
from .prepare import PrepareError, check_node, claim_uid, driver_prepare, prepare_claims

#: (driver, CDI class) pairs whose CDI kind is valid (the check is a pure function of the pair)
_VALID_KINDS: set[tuple[str, str]] = set()


class _Entry:
    """One prepared claim: the claim as prepared, the pods using it, its built forms once read."""

    __slots__ = ("uid", "name", "namespace", "claim", "pod_uids", "first_pod", "built", "specs")

    def __init__(self, uid: str, claim: ResourceClaim, pod_uid: str):
        self.uid = uid
        self.name = claim.name
        self.namespace = claim.namespace or "default"
        self.claim = claim
        self.pod_uids = {pod_uid}
        self.first_pod = pod_uid
        self.built: ClaimInfoState | None = None
        self.specs: dict[str, CDISpec] | None = None

    def build(self, cdi_class: str) -> None:
        if self.built is None:
            self.built, self.specs = driver_prepare(self.claim, self.uid, self.first_pod, cdi_class)

    def state(self, cdi_class: str) -> ClaimInfoState:
        self.build(cdi_class)
        b = self.built
        assert b is not None
        return ClaimInfoState(b.claim_uid, b.claim_name, b.namespace, frozenset(self.pod_uids), b.driver_state)

    def drivers(self) -> list[str]:
        """The claim's drivers, sorted (``unprepare_pod`` names the removed spec files so)."""
        return sorted({r.driver for r in self.claim.allocated or ()})


@dataclass(frozen=True, slots=True)
class Unprepared:
    """What ``UnprepareResources`` did for one pod (the fields of ``UnpreparedPod`` a simulation reads)."""

    #: (namespace, claim name) of the entries the drivers unprepared, in ``unprepare_pod``'s order
    unprepared: tuple[tuple[str, str], ...]
    #: CDI spec files removed (as ``unprepare_pod`` names them)
    cdi_specs_removed: tuple[str, ...]


class NodeClaims:
    """The prepared claims of one node (see the module doc)."""

    __slots__ = ("cdi_class", "entries", "by_name")

    def __init__(self, cdi_class: str = "device"):
        self.cdi_class = cdi_class
        #: claim UID -> entry, in checkpoint order
        self.entries: dict[str, _Entry] = {}
        #: (claim name, namespace) -> the UIDs of the entries with that name, in checkpoint order
        self.by_name: dict[tuple[str, str], list[str]] = {}

    # --- what an output reads ---------------------------------------------------------------------
    def checkpoint(self) -> tuple[ClaimInfoState, ...]:
        """The ``dra_manager_state`` entries, as :func:`prepare_claims` would hold them."""
        return tuple(e.state(self.cdi_class) for e in self.entries.values())

    def cdi_specs(self) -> dict[str, CDISpec]:
        """The CDI spec files the model driver has written and not removed, by file name."""
        out: dict[str, CDISpec] = {}
        for e in self.entries.values():
            e.build(self.cdi_class)
            assert e.specs is not None
            out.update(e.specs)
        return out

    # --- NodePrepareResources / NodeUnprepareResources ---------------------------------------------
    def prepare(self, pod: Pod, statuses: Sequence[Mapping[str, Any]], claims: Sequence[ResourceClaim],
                node: Node | None = None) -> tuple[str, ...]:
        """``prepare_claims(pod + statuses, claims, node, state=self.checkpoint())`` applied in place.

        ``statuses`` are the pod's ``status.resourceClaimStatuses`` as the controller wrote them
        (``[{"name", "resourceClaimName"?}]``), ``claims`` the cluster's claims. Returns the pod's
        claim names as :func:`~kubetwin.dra.unprepare.pod_claim_names` resolves them (what
        :meth:`unprepare` needs). Raises what :func:`prepare_claims` raises, nothing changed then.
        """
        resolved = self._resolve(pod, statuses, claims)
        if resolved is None or not self._checks_pass(pod, resolved, node):
            # the plain implementation on the checkpoint as it stands: its error, word for word
            done = prepare_claims(_with_statuses(pod, statuses), claims, node,
                                  state=self.checkpoint(), cdi_class=self.cdi_class)
            pairs = [(pc.claim, claim_uid(pc.claim)) for pc in done.pod_claims.claims]
            names = _claim_names(pod, statuses)
        else:
            pairs, names = resolved
        pod_uid = pod.uid
        entries = self.entries
        for claim, uid in pairs:
            entry = entries.get(uid)
            if entry is not None:
                entry.pod_uids.add(pod_uid)
                continue
            entries[uid] = entry = _Entry(uid, claim, pod_uid)
            self.by_name.setdefault((entry.name, entry.namespace), []).append(uid)
        return names

    def unprepare(self, pod_uid: str, namespace: str, names: Iterable[str]) -> Unprepared:
        """``unprepare_pod`` for a pod whose claim names are ``names`` (from :meth:`prepare`)."""
        entries, by_name = self.entries, self.by_name
        gone: dict[str, _Entry] = {}
        for name in names:
            uids = by_name.get((name, namespace))
            if not uids:
                continue   # not prepared here: skipped
            entry = entries[uids[-1]]
            if len(entry.pod_uids) > 1:
                entry.pod_uids.discard(pod_uid)
                continue
            gone.setdefault(entry.uid, entry)
        removed: list[str] = []
        for uid, entry in gone.items():
            del entries[uid]
            key = (entry.name, entry.namespace)
            uids = by_name[key]
            uids.remove(uid)
            if not uids:
                del by_name[key]
            removed.extend(f"{driver}-{self.cdi_class}_{uid}.json" for driver in entry.drivers())
        return Unprepared(tuple((e.namespace, e.name) for e in gone.values()), tuple(removed))

    # --- the checks of prepare_claims, without building anything -------------------------------------
    def _resolve(self, pod: Pod, statuses: Sequence[Mapping[str, Any]], claims: Sequence[ResourceClaim]
                 ) -> tuple[list[tuple[ResourceClaim, str]], tuple[str, ...]] | None:
        """The pod's claims and claim names as ``claims_for_pod(generate=False)`` resolves them;
        None when it would raise (or for anything unusual: the plain path decides then)."""
        ns = pod.namespace or "default"
        existing: dict[str, ResourceClaim] = {}
        for c in claims:
            if (c.namespace or "default") == ns:
                existing.setdefault(c.name, c)
        written = ({s["name"]: s.get("resourceClaimName") for s in statuses} if statuses else
                   {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses})
        pairs: list[tuple[ResourceClaim, str]] = []
        names: list[str] = []
        seen: set[str] = set()
        for entry in pod.spec.resource_claims:
            if entry.name in seen:
                return None
            seen.add(entry.name)
            by_name, by_template = entry.resource_claim_name, entry.resource_claim_template_name
            if bool(by_name) == bool(by_template):
                return None
            if by_name:
                name = by_name
            elif entry.name in written:
                generated = written[entry.name]
                if not generated:
                    continue   # the controller decided no claim is needed
                name = generated
            else:
                return None    # ResourceClaim not created yet
            claim = existing.get(name)
            if claim is None or (by_template and not is_controlled_by(claim, pod)):
                return None
            pairs.append((claim, claim_uid(claim)))
            names.append(name)
        return pairs, tuple(names)

    def _checks_pass(self, pod: Pod, resolved: tuple[list[tuple[ResourceClaim, str]], tuple[str, ...]],
                     node: Node | None) -> bool:
        """Every check of ``prepare_claims`` passes for these claims (none raises)."""
        cdi_class = self.cdi_class
        new: set[str] = set()
        for claim, uid in resolved[0]:
            results = claim.allocated
            if results is None or not is_reserved_for(claim, pod):
                return False
            if node is not None:
                try:
                    check_node(claim, node)
                except PrepareError:
                    return False
            if uid in self.entries or uid in new:
                continue
            new.add(uid)
            names: set[tuple[str, str]] = set()
            for r in results:
                if (r.driver, cdi_class) not in _VALID_KINDS:
                    try:
                        validate_kind(r.driver, cdi_class)
                    except InputError:
                        return False
                    _VALID_KINDS.add((r.driver, cdi_class))
                name = f"{uid}-{r.device}" + (f"-{r.share_id}" if r.share_id else "")
                try:
                    validate_device_name(name)
                except InputError:
                    return False
                if (r.driver, name) in names:
                    return False   # a duplicate CDI device name in the driver's spec
                names.add((r.driver, name))
        return True


def _claim_names(pod: Pod, statuses: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    from .unprepare import pod_claim_names

    return tuple(pod_claim_names(_with_statuses(pod, statuses)))


def _with_statuses(pod: Pod, statuses: Sequence[Mapping[str, Any]]) -> Pod:
    """The pod with the ``resourceClaimStatuses`` the controller wrote (as the kubelet reads it)."""
    if not statuses:
        return pod
    import msgspec

    from ..model.pod import PodResourceClaimStatus

    written = [PodResourceClaimStatus(name=s["name"], resource_claim_name=s.get("resourceClaimName"))
               for s in statuses]
    return msgspec.structs.replace(pod, status=msgspec.structs.replace(pod.status, resource_claim_statuses=written))
