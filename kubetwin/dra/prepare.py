"""The kubelet side of DRA: preparing a pod's claims on its node.

What the kubelet's DRA manager (``pkg/kubelet/cm/dra``) does at pod admission, with the
drivers' part played by a model driver:

1. Resolve the pod's claims (``resourceclaim.Name``; a template claim must be recorded in
   ``status.resourceClaimStatuses``). Each must be allocated and list the pod in
   ``reservedFor``.
2. A claim already in the checkpoint (prepared for another pod) only gains the pod's UID.
   Otherwise every driver named in the allocation is asked to prepare (``NodePrepareResources``).
   The model driver answers per allocated device with the *base* request name (so container
   ``resources.claims[].request`` matches), the pool, the device, the share ID and one CDI
   device ``<driver>/<class>=<claim UID>-<device>[-<share ID>]`` (claim UID in the name, as
   kubernetes-sigs/dra-example-driver does, so admin-access and shared devices never collide
   across claims), and writes one CDI spec file per claim and driver.
3. The checkpoint ``dra_manager_state`` records every prepared claim
   (:mod:`kubetwin.dra.checkpoint`).
4. Each container gets the CDI devices of the claims it references (CRI ``CDIDevices``): all
   of the claim's devices, or with ``request`` set only devices whose request names contain
   it (devices without request names belong to every request) — ``cdiDevicesAsList``.
5. PodResources ``List``/``Get`` report ``dynamic_resources`` per container: one entry per
   container claim reference with every device of the claim (``GetContainerClaimInfos``
   does not filter by request), drivers in name order (Go map order upstream), and — an
   upstream quirk kept on purpose — each ``ClaimResource`` carries the CDI devices of the
   driver's devices *up to and including* it (the slice is declared per driver, not per
   device, in ``GetDynamicResources``).

Nothing here writes files: :func:`prepare_pod` returns everything, the CLI writes it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..errors import KubetwinError
from ..model.pod import Pod
from .api import Node, ResourceClaim
from .cdi import CDIDevice, CDISpec, ContainerEdits, validate_device_name, validate_kind
from .checkpoint import CheckpointDevice, ClaimInfoState
from .nodeselector import NodeSelectorError, selector_matches
from .podclaims import PodClaimError, PodClaims, claims_for_pod, is_reserved_for


class PrepareError(KubetwinError):
    """The kubelet would fail admission (``PrepareResources`` error) for the pod."""


@dataclass(frozen=True, slots=True)
class ContainerDRA:
    """What one container gets: CRI CDI devices and its PodResources ``dynamic_resources``."""

    name: str
    cdi_devices: tuple[str, ...]
    dynamic_resources: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class PreparedPod:
    pod: Pod
    #: the whole checkpoint after preparing (earlier entries first, in their order)
    state: tuple[ClaimInfoState, ...]
    #: the pod's claims, as checkpoint entries (pod claim order)
    claims: tuple[ClaimInfoState, ...]
    #: CDI spec files the model driver writes: file name -> spec (new preparations only)
    cdi_specs: Mapping[str, CDISpec]
    containers: tuple[ContainerDRA, ...]

    def to_data(self) -> dict[str, Any]:
        return {
            "pod": {"name": self.pod.name, "namespace": self.pod.namespace, "uid": self.pod.uid},
            "claims": [e.to_go() for e in self.claims],
            "containers": [{"name": c.name, "cdiDevices": list(c.cdi_devices),
                            "dynamicResources": [dict(d) for d in c.dynamic_resources]} for c in self.containers],
            "cdiSpecs": {name: spec.to_json() for name, spec in self.cdi_specs.items()},
        }


def claim_uid(claim: ResourceClaim) -> str:
    """The claim's UID; a claim written without one gets a stable UUID from namespace/name."""
    return claim.uid or str(uuid.uuid5(uuid.NAMESPACE_URL, f"resourceclaim/{claim.namespace or 'default'}/"
                                                           f"{claim.name}"))


def _base_request(request: str) -> str:
    return request.split("/", 1)[0]


@dataclass(frozen=True, slots=True)
class PreparedClaims:
    """Steps 1 to 3 of the module doc for one pod: what the node's DRA manager keeps."""

    pod_claims: PodClaims
    #: the whole checkpoint after preparing (earlier entries first, in their order)
    state: tuple[ClaimInfoState, ...]
    #: pod claim name -> its checkpoint entry
    entries: Mapping[str, ClaimInfoState]
    #: CDI spec files the model driver writes: file name -> spec (new preparations only)
    cdi_specs: Mapping[str, CDISpec]


def prepare_claims(pod: Pod, claims: Iterable[ResourceClaim], node: Node | None = None, *,
                   state: Iterable[ClaimInfoState] = (), cdi_class: str = "device") -> PreparedClaims:
    """``PrepareResources`` for ``pod``'s claims (from ``claims``, the cluster's ResourceClaims)
    on ``node``: the checkpoint and CDI specs after it, without the containers' views
    (:func:`prepare_pod` adds those)."""
    try:
        pod_claims = claims_for_pod(pod, claims, (), generate=False)
    except PodClaimError as exc:
        raise PrepareError(str(exc)) from None
    entries = list(state)
    by_uid = {e.claim_uid: i for i, e in enumerate(entries)}
    mine: dict[str, ClaimInfoState] = {}   # pod claim name -> entry
    specs: dict[str, CDISpec] = {}
    for pc in pod_claims.claims:
        claim = pc.claim
        uid = claim_uid(claim)
        if claim.allocated is None:
            raise PrepareError(f"claim {claim.ref}: not allocated (the scheduler allocates claims before the pod is "
                               "bound)")
        if not is_reserved_for(claim, pod):
            raise PrepareError(f"pod {pod.name} ({pod.uid}) is not allowed to use resource claim {claim.name} ({uid})")
        if node is not None:
            check_node(claim, node)
        if uid in by_uid:
            entry = entries[by_uid[uid]].with_pod(pod.uid)
            entries[by_uid[uid]] = entry
            mine[pc.name] = entry
            continue
        entry, claim_specs = driver_prepare(claim, uid, pod.uid, cdi_class)
        by_uid[uid] = len(entries)
        entries.append(entry)
        mine[pc.name] = entry
        specs.update(claim_specs)
    return PreparedClaims(pod_claims, tuple(entries), mine, specs)


def prepare_pod(pod: Pod, claims: Iterable[ResourceClaim], node: Node | None = None, *,
                state: Iterable[ClaimInfoState] = (), cdi_class: str = "device") -> PreparedPod:
    """Prepare ``pod``'s claims (from ``claims``, the cluster's ResourceClaims) on ``node``."""
    done = prepare_claims(pod, claims, node, state=state, cdi_class=cdi_class)
    pod_claims, mine = done.pod_claims, done.entries
    containers = []
    for container, _ in pod.all_containers():
        cdi: list[str] = []
        dynamic: list[dict[str, Any]] = []
        for pc in pod_claims.claims:
            for ref in container.resources.claims:
                if ref.name != pc.name:
                    continue
                entry = mine[pc.name]
                cdi.extend(_cdi_devices(entry, ref.request))
                dynamic.append(dynamic_resource(entry))
        containers.append(ContainerDRA(container.name, tuple(cdi), tuple(dynamic)))
    return PreparedPod(pod, done.state, tuple(mine[pc.name] for pc in pod_claims.claims), done.cdi_specs,
                       tuple(containers))


def check_node(claim: ResourceClaim, node: Node) -> None:
    """The claim's allocation is for ``node`` (its ``nodeSelector``, if any, matches the node), else ``PrepareError``."""
    selector = claim.node_selector   # ``status.allocation.nodeSelector``, decoded
    if not selector:
        return
    try:
        ok = selector_matches(selector, node)
    except NodeSelectorError as exc:
        raise PrepareError(f"claim {claim.ref}: allocation node selector: {exc}") from None
    if not ok:
        raise PrepareError(f"claim {claim.ref} is allocated for other nodes: its node selector does not match node "
                           f"{node.name}")


def driver_prepare(claim: ResourceClaim, uid: str, pod_uid: str, cdi_class: str
                    ) -> tuple[ClaimInfoState, dict[str, CDISpec]]:
    """The model driver's ``NodePrepareResources`` for one claim, every driver of it."""
    per_driver: dict[str, list[CheckpointDevice]] = {}
    cdi_devices: dict[str, list[CDIDevice]] = {}
    for index, r in enumerate(claim.allocated or ()):
        validate_kind(r.driver, cdi_class, path=f"status.allocation.devices.results[{index}].driver")
        name = f"{uid}-{r.device}" + (f"-{r.share_id}" if r.share_id else "")
        validate_device_name(name, path=f"status.allocation.devices.results[{index}].device")
        qualified = f"{r.driver}/{cdi_class}={name}"
        per_driver.setdefault(r.driver, []).append(CheckpointDevice(
            r.pool, r.device, (_base_request(r.request),), (qualified,), r.share_id))
        env_key = f"DRA_DEVICE_{len(cdi_devices.get(r.driver, ()))}"   # letters, digits and '_' only
        cdi_devices.setdefault(r.driver, []).append(CDIDevice(name, ContainerEdits(
            env=(f"{env_key}={r.pool}/{r.device}",))))
    specs = {}
    for driver, devices in cdi_devices.items():
        spec = CDISpec(driver, cdi_class, tuple(devices), ContainerEdits(
            env=(f"DRA_RESOURCE_CLAIM={claim.namespace or 'default'}/{claim.name}",)))
        spec.validate()
        specs[spec.file_name(uid)] = spec
    entry = ClaimInfoState(uid, claim.name, claim.namespace or "default", frozenset({pod_uid}),
                           {d: tuple(v) for d, v in per_driver.items()})
    return entry, specs


def _cdi_devices(entry: ClaimInfoState, request: str) -> list[str]:
    out: list[str] = []
    for driver in sorted(entry.driver_state):
        for d in entry.driver_state[driver]:
            if not request or not d.request_names or request in d.request_names:
                out.extend(d.cdi_device_ids or ())
    return out


def dynamic_resource(entry: ClaimInfoState) -> dict[str, Any]:
    """A prepared claim as a PodResources ``DynamicResource`` (protojson; see the module doc, step 5)."""
    resources = []
    for driver in sorted(entry.driver_state):
        cdi: list[dict[str, str]] = []   # per driver, growing: the upstream quirk (see module doc)
        for d in entry.driver_state[driver]:
            cdi.extend({"name": i} for i in d.cdi_device_ids or ())
            item: dict[str, Any] = {"cdiDevices": list(cdi), "driverName": driver, "poolName": d.pool_name,
                                    "deviceName": d.device_name}
            if d.share_id:
                item["shareId"] = d.share_id
            resources.append(item)
    return {"claimName": entry.claim_name, "claimNamespace": entry.namespace, "claimResources": resources}
