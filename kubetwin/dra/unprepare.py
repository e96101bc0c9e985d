"""The kubelet side of DRA when a pod terminates: ``UnprepareResources``.

Models ``(*Manager).UnprepareResources`` / ``unprepareResources`` of the kubelet's DRA manager
(``pkg/kubelet/cm/dra/manager.go``), with the drivers' part played by the model driver of
:mod:`kubetwin.dra.prepare`:

1. The pod's claim names are resolved as at prepare time (``resourceclaim.Name``); a template
   entry whose claim was never generated (``resourceClaimName: null`` in the status) is skipped,
   a template entry with no status at all is an error (``unprepare resource claims: ...``).
2. A claim missing from the checkpoint is skipped (nothing to do: idempotent).
3. A claim still used by other pods (more than one pod UID recorded) only loses this pod's UID
   — the drivers are not called. Upstream drops the reference whatever the UIDs are, and calls
   the drivers when exactly one UID is left even when it is not this pod's; both kept.
4. Every other claim is unprepared by each of its drivers (``NodeUnprepareResources``, batched
   per driver): the model driver removes the claim's CDI spec file (one per claim and driver,
   named as ``prepare`` named it), and the claim's entry leaves the checkpoint, which is written
   back whole (``syncToCheckpoint``).

Giving the devices back to the pool is not the kubelet's part: the resourceclaim controller
removes the pod from ``status.reservedFor`` and deallocates a claim nobody uses
(:func:`kubetwin.dra.podclaims.release_for_pod`); :func:`release_claims` applies it to the
claims the caller holds so both halves are answered together.

Nothing here touches files: :func:`unprepare_pod` returns what to remove and write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..model.pod import Pod
from .api import ResourceClaim
from .checkpoint import ClaimInfoState
from .podclaims import PodClaimError, release_for_pod
from .prepare import PrepareError


class UnprepareError(PrepareError):
    """``UnprepareResources`` fails for the pod (its claim names cannot be resolved)."""


@dataclass(frozen=True, slots=True)
class UnpreparedPod:
    pod: Pod
    #: the whole checkpoint after unpreparing (remaining entries, in their order)
    state: tuple[ClaimInfoState, ...]
    #: entries the drivers unprepared (gone from the checkpoint)
    unprepared: tuple[ClaimInfoState, ...]
    #: entries that only lost this pod's UID (other pods still use them)
    released: tuple[ClaimInfoState, ...]
    #: claim names of the pod not found in the checkpoint (skipped)
    not_prepared: tuple[str, ...]
    #: NodeUnprepareResources calls: driver -> claims (namespace/name, uid), in call order
    driver_calls: Mapping[str, tuple[tuple[str, str], ...]]
    #: CDI spec files the model driver removes (file names, as prepare wrote them)
    cdi_specs_removed: tuple[str, ...]

    def to_data(self) -> dict[str, Any]:
        return {
            "pod": {"name": self.pod.name, "namespace": self.pod.namespace, "uid": self.pod.uid},
            "unprepared": [e.to_go() for e in self.unprepared],
            "podReferenceRemoved": [e.to_go() for e in self.released],
            "notPrepared": list(self.not_prepared),
            "nodeUnprepareResources": {d: [{"claim": c, "uid": u} for c, u in calls]
                                       for d, calls in self.driver_calls.items()},
            "cdiSpecsRemoved": list(self.cdi_specs_removed),
        }


def pod_claim_names(pod: Pod) -> list[str]:
    """``resourceclaim.Name`` for each of the pod's claims; None-named (not generated) skipped."""
    names: list[str] = []
    statuses = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
    for pc in pod.spec.resource_claims or ():
        if pc.resource_claim_name:
            names.append(pc.resource_claim_name)
            continue
        if pc.resource_claim_template_name:
            if pc.name not in statuses:
                raise UnprepareError(f'unprepare resource claims: pod "{pod.key}": ResourceClaim not created yet')
            generated = statuses[pc.name]
            if generated:
                names.append(generated)
            continue
        raise UnprepareError(f'unprepare resource claims: pod "{pod.key}", spec.resourceClaim {pc.name}: '
                             "unsupported")
    return names


def unprepare_pod(pod: Pod, state: Iterable[ClaimInfoState], cdi_class: str = "device") -> UnpreparedPod:
    """``UnprepareResources(pod)`` against the checkpoint entries ``state``."""
    entries = list(state)
    index = {(e.claim_name, e.namespace): i for i, e in enumerate(entries)}
    namespace = pod.namespace or "default"
    gone: dict[str, ClaimInfoState] = {}            # claim UID -> entry (claimNamesMap)
    released: list[ClaimInfoState] = []
    missing: list[str] = []
    calls: dict[str, list[tuple[str, str]]] = {}
    for name in pod_claim_names(pod):
        i = index.get((name, namespace))
        if i is None:
            missing.append(name)
            continue
        entry = entries[i]
        if len(entry.pod_uids) > 1:
            entry = ClaimInfoState(entry.claim_uid, entry.claim_name, entry.namespace,
                                   entry.pod_uids - {pod.uid}, entry.driver_state)
            entries[i] = entry
            released.append(entry)
            continue
        if entry.claim_uid in gone:
            continue
        gone[entry.claim_uid] = entry
        for driver in entry.driver_state:
            calls.setdefault(driver, []).append((f"{entry.namespace}/{entry.claim_name}", entry.claim_uid))
    remaining = tuple(e for e in entries if e.claim_uid not in gone)
    removed = []
    for uid, entry in gone.items():
        for driver in sorted(entry.driver_state):
            removed.append(f"{driver}-{cdi_class}_{uid}.json")   # CDISpec.file_name(uid), as prepare names it
    return UnpreparedPod(pod, remaining, tuple(gone.values()), tuple(released), tuple(missing),
                         {d: tuple(c) for d, c in calls.items()}, tuple(removed))


def release_claims(pod: Pod, claims: Iterable[ResourceClaim]) -> list[tuple[ResourceClaim, ResourceClaim | None]]:
    """The resourceclaim controller's half: each of the pod's claims before and after the pod is
    gone (``None``: generated for the pod, deleted with it). Claims of other pods are left out."""
    try:
        names = set(pod_claim_names(pod))
    except UnprepareError:
        names = set()
    out = []
    namespace = pod.namespace or "default"
    for claim in claims:
        if claim.name not in names or (claim.namespace or "default") != namespace:
            continue
        try:
            out.append((claim, release_for_pod(claim, pod)))
        except PodClaimError as exc:  # pragma: no cover - release_for_pod does not raise today
            raise UnprepareError(str(exc)) from None
    return out
