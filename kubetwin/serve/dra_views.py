"""DRA over the served cluster: ``POST /api/v1/dra`` (``kubetwin dra allocate`` / ``explain``
on a served node) and the ``dra`` key of a pod's drill-down (its claims, the devices allocated
per request and every device passed over with the allocator's reason).

The cluster's DeviceClasses, ResourceSlices, ResourceClaims and templates were strictly checked
when the cluster was read; they are sorted into :class:`kubetwin.dra.objects.DRAObjects` once
per cluster generation. The answers are :mod:`kubetwin.dra.run`'s, the library the CLI calls.

Not an upstream module: kubetwin's own views (the allocator is
``k8s.io/dynamic-resource-allocation/structured``'s, :mod:`kubetwin.dra.allocator`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    from ..dra.api import Node as DRANode
    from ..dra.features import AllocatorFeatures
    from ..dra.objects import DRAObjects
    from ..model.pod import Pod
    from .cluster import ServedCluster

DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
#: the fields of ``POST /api/v1/dra``
FIELDS = ("node", "pod", "claims", "seed", "explain")

_CACHE: dict[int, tuple[int, Any]] = {}


def served_objects(cluster: ServedCluster) -> DRAObjects:
    """The cluster's DRA objects (checked when the cluster was read), once per generation."""
    from ..dra.objects import collect
    from ..model.loader import Document

    with cluster.lock:
        hit = _CACHE.get(id(cluster))
        if hit is not None and hit[0] == cluster.generation:
            return hit[1]
        docs = []
        for kind in DRA_KINDS:
            where = cluster.scenario.origins.get(kind, [])
            for i, obj in enumerate(cluster.scenario.objects.get(kind, [])):
                docs.append(Document(obj, where[i] if i < len(where) else kind, i))
        dra = collect(docs, checked=True)
        _CACHE.clear()  # one served cluster per process
        _CACHE[id(cluster)] = (cluster.generation, dra)
        return dra


def features(cluster: ServedCluster) -> AllocatorFeatures:
    from ..dra.features import AllocatorFeatures

    return AllocatorFeatures.from_gates(cluster.gates)


def dra_node(cluster: ServedCluster, name: str) -> DRANode:
    """The node the allocator sees (name and labels) of a served node; 404 for an unknown one."""
    from ..dra.api import Node
    from .views import _node

    n = _node(cluster, name)
    return Node(name, dict(n.node.metadata.labels))


def decode_claims(value: Any) -> list[Any]:
    """ResourceClaims of a request body (any resource.k8s.io version), strictly checked."""
    from ..dra.objects import collect
    from ..model.loader import Document

    if not isinstance(value, list):
        raise InputError("expected an array of ResourceClaims", path="claims")
    docs = []
    for i, obj in enumerate(value):
        if not isinstance(obj, dict):
            raise InputError("expected a ResourceClaim object", path=f"claims[{i}]")
        if obj.get("kind") != "ResourceClaim":
            raise InputError(f"expected kind ResourceClaim, got {obj.get('kind')!r}", path=f"claims[{i}].kind")
        docs.append(Document(obj, f"claims[{i}]", i))
    try:
        return collect(docs, strict=True).claims
    except InputError as exc:
        raise InputError(exc.message, path=exc.path, file=None, fix=exc.fix) from None


def what_if_dra(cluster: ServedCluster, body: dict[str, Any], pod: Pod | None) -> dict[str, Any]:
    """``kubetwin dra allocate -o json`` on a served node (with ``pod``: ``--pod``), plus every
    device passed over (``passedOver``); with ``explain``: ``kubetwin dra explain -o json``."""
    from ..dra.run import allocate_claims, allocate_pod, explain_claims, passed_over

    node = dra_node(cluster, body["node"])
    claims = decode_claims(body["claims"]) if body.get("claims") is not None else []
    dra = served_objects(cluster)
    feats = features(cluster)
    if body.get("explain"):
        if pod is not None:
            raise InputError("explain takes claims, not a pod", path="explain",
                             fix="send claims with explain, or the pod without it")
        return explain_claims(feats, dra, node, claims).data
    if pod is not None:
        a = allocate_pod(feats, dra, node, pod, claims, seed=body.get("seed") or 0, file=None)
    else:
        a = allocate_claims(feats, dra, node, claims)
    out = dict(a.data)
    out["passedOver"] = [{"claim": p.claim, "request": p.request, "device": p.device, "reason": p.reason,
                          "eligible": p.eligible} for p in passed_over(a)]
    return out


def pod_dra(cluster: ServedCluster, pod: Pod, node: str | None, *, seed: int = 0) -> dict[str, Any] | None:
    """The ``dra`` key of a pod's drill-down, None for a pod without claims. A running pod: its
    claims as allocated. A pending pod: the allocation on ``node`` (the scheduler's pick), or
    the claims unallocated when no node fits. ``seed``: of generated claim names, as the cycle's."""
    from ..dra.podclaims import PodClaimError
    from ..dra.run import allocate_pod, allocation_of_running_pod, devices_by_request

    if not pod.spec.resource_claims:
        return None
    dra = served_objects(cluster)
    feats = features(cluster)
    running = node is not None and pod.spec.node_name == node
    try:
        if node is None:  # no node fits: the claims as the pod would ask for them
            from ..dra.api import Node
            from ..dra.podclaims import claims_for_pod
            from ..dra.run import Allocation, _as_v1

            pcs = claims_for_pod(pod, dra.claims, dra.templates, seed=seed)
            a = Allocation({"claims": [_as_v1(pc.claim) for pc in pcs.claims]}, None, Node(""), pcs.to_allocate,
                           False)
            return {"node": None, "claims": devices_by_request(a)}
        n = dra_node(cluster, node)
        a = allocation_of_running_pod(feats, dra, n, pod) if running else allocate_pod(feats, dra, n, pod, seed=seed)
    except PodClaimError as exc:
        return {"node": node, "error": str(exc), "claims": []}
    out: dict[str, Any] = {"node": node, "claims": devices_by_request(a)}
    if not running:
        out.update(outcome=a.data["outcome"], reason=a.data["reason"])
    return out
