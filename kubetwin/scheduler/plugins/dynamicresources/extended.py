"""Extended resources backed by DRA (gate DRAExtendedResource, KEP-5004).

A DeviceClass maps an extended resource name to its devices, explicitly
(``spec.extendedResourceName``) and always implicitly (``deviceclass.resource.kubernetes.io/<class>``).
Several classes may claim one explicit name (while migrating): the newest class wins, the
alphabetically lower name breaks ties, as the scheduler's ExtendedResourceCache arbitrates.

NodeResourcesFit leaves such a resource to DynamicResources in Filter when the node does not
advertise it. DynamicResources then builds, per node, one ResourceClaim for the pod with a
request per container and resource (``container-<i>-request-<j>``, init containers that run
before others reuse their devices), allocates it with the pod's other claims, and PreBind
records which container got which request in ``status.extendedResourceClaimStatus``.

Upstream: ``pkg/scheduler/framework/plugins/dynamicresources/extended``, ``pkg/scheduler/util/extendedresourcecache``."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any, Mapping

from ....model.pod import Pod, is_extended_resource
from ...framework.status import SUCCESS, Status, unresolvable

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
#: Key of the extended-resource claim among the pod's claims (upstream's in-memory claim name;
#: not a valid object name, so it never collides with a pod claim entry).
POD_CLAIM_NAME = "<extended-resources>"
ERR_CANNOT_FIT = "cannot fit resource"
ERR_STALE_CLAIM = "cannot schedule extended resource claim"

_RESOLVERS: dict[int, tuple[Any, dict[str, dict]]] = {}


def is_dra_extended_resource_name(name: str) -> bool:
    """``IsDRAExtendedResourceName``: an extended resource, or a class's implicit name."""
    return is_extended_resource(name) or name.startswith(IMPLICIT_PREFIX)


def _mapping(handle: Any) -> dict[str, dict]:
    """Extended resource name -> DeviceClass, built once per class list."""
    classes = handle.objects.get("DeviceClass", [])
    hit = _RESOLVERS.get(id(handle))
    if hit is not None and hit[0] is classes:
        return hit[1]
    out: dict[str, dict] = {}
    explicit: dict[str, dict] = {}
    for dc in classes:
        meta = dc.get("metadata") or {}
        name = str(meta.get("name", ""))
        out[IMPLICIT_PREFIX + name] = dc
        ern = (dc.get("spec") or {}).get("extendedResourceName")
        if ern:
            best = explicit.get(ern)
            if best is None or _better(dc, best):
                explicit[ern] = dc
    for ern, dc in explicit.items():
        out.setdefault(ern, dc)
    if len(_RESOLVERS) > 64:
        _RESOLVERS.clear()
    _RESOLVERS[id(handle)] = (classes, out)
    return out


def _better(a: dict, b: dict) -> bool:
    """``betterDeviceClass``: the newer class, then the lower name."""
    ta = str((a.get("metadata") or {}).get("creationTimestamp") or "")
    tb = str((b.get("metadata") or {}).get("creationTimestamp") or "")
    if ta != tb:
        return ta > tb   # RFC 3339 UTC timestamps sort as text
    return str((a.get("metadata") or {}).get("name", "")) < str((b.get("metadata") or {}).get("name", ""))


def device_class_for(handle: Any, resource: str) -> dict | None:
    """The DeviceClass that backs ``resource``, or None."""
    if not handle.objects.get("DeviceClass"):
        return None
    return _mapping(handle).get(resource)


def dra_extended_allocatable(handle: Any, node: Any, resource: str) -> tuple[int, int] | None:
    """``calculateDRAExtendedResourceAllocatableRequest``: (devices of the resource's class on
    the node, how many of them are allocated), or None when no DeviceClass backs ``resource``.

    Slices are matched to the node as NodeResourcesFit's scorer does (slice-level name, all
    nodes or selector; per-device selection device by device), every CEL selector of the class
    is evaluated with the DRA allocator's cached verdicts, and a device counts as allocated when
    a claim holds it whole or a share of it. A selector that fails to evaluate makes the
    resource unscorable on the node (0, 0), as upstream logs the error and bypasses it.
    """
    dc = device_class_for(handle, resource)
    if dc is None:
        return None
    plugin = dra_plugin(handle)
    ids = plugin.class_devices_on(str((dc.get("metadata") or {}).get("name", "")), node)
    if ids is None:
        return 0, 0
    state = plugin.allocator().state
    if state.shared:
        shared = {sh[:3] for sh in state.shared}
        used = sum(1 for did in ids if did in state.dedicated or did in shared)
    else:
        dedicated = state.dedicated
        used = sum(1 for did in ids if did in dedicated)
    return len(ids), used


def class_device_ids(alloc: Any, class_name: str, node: Any) -> tuple | None:
    """IDs of the devices of class ``class_name`` usable from ``node`` (``calculateDRAResourceTotals``'
    capacity), or None when a selector fails to evaluate on some device."""
    from ....dra.api import Node as DRANode
    from ....dra.cel import CELError
    from ....dra.nodeselector import NodeSelectorError

    cls = alloc.classes.get(class_name)
    selectors = [e for e in (cls.selectors if cls is not None else ()) if e is not None]
    dnode = DRANode(node.name, dict(node.labels))
    out = []
    try:
        for sl in alloc.index.for_node(dnode):   # slices naming another node never apply
            for d in _slice_devices_for(sl, dnode):
                if selectors and not all(alloc.selector_matches(e, d, sl.driver) for e in selectors):
                    continue
                out.append((sl.driver, sl.pool, d.name))
    except (CELError, NodeSelectorError):
        return None
    return tuple(out)


def _slice_devices_for(sl: Any, node: Any) -> Any:
    """``calculateDRAResourceTotals``' node filter: the slice's devices usable from ``node``."""
    from ....dra.nodeselector import node_matches

    if sl.per_device_node_selection:
        return [d for d in sl.devices
                if d.all_nodes or (d.node_name and d.node_name == node.name)
                or (d.node_selector is not None and node_matches(node, d.node_name, d.all_nodes, d.node_selector))]
    if not sl.all_nodes and sl.node_name != node.name and sl.node_selector is not None:
        if not node_matches(node, sl.node_name, sl.all_nodes, sl.node_selector):
            return ()
    elif not sl.all_nodes and sl.node_name and sl.node_name != node.name:
        return ()
    return sl.devices


def dra_plugin(handle: Any) -> Any:
    """The cluster's DynamicResources plugin, whose allocator keeps the devices in use in step
    with binds and removals; a stand-alone one over the input objects when the profile has none."""
    plugin = getattr(handle, "dynamic_resources", None)
    if plugin is None:
        from .dynamicresources import DynamicResources

        plugin = DynamicResources(None, handle)
    return plugin


# --------------------------------------------------------------------------------------------
# the pod's extended-resource claim
# --------------------------------------------------------------------------------------------
@dataclass
class PodExtendedResources:
    """PreFilter's view: the pod's scalar requests and its claim from an earlier cycle."""

    pod: Pod
    scalar: dict[str, int]
    existing: Any = None                                      # ResourceClaim owned by the pod, or None
    per_set: dict[frozenset[str], Any] | None = None          # requests set -> (claim, mappings)


def pod_extended_resources(handle: Any, pod: Pod, claims: Any = ()) -> PodExtendedResources | None:
    """``preFilterExtendedResources``: None unless some non-zero request maps to a DeviceClass."""
    mapping = _mapping(handle)
    if not _names_any_of(pod, mapping):
        return None
    from ....model.resources import PodResourcesOptions, pod_requests
    from ...framework.types import resource_amounts

    reqs = resource_amounts(pod_requests(pod, PodResourcesOptions()))
    if not any(v and is_dra_extended_resource_name(k) and k in mapping for k, v in reqs.items()):
        return None
    scalar = {k: v for k, v in reqs.items() if k not in ("cpu", "memory", "ephemeral-storage", "pods")}
    existing = None
    for c in claims:
        meta = c.raw.get("metadata") or {}
        if (meta.get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
            continue
        if any(r.get("name") == pod.name and r.get("controller") and r.get("uid") == pod.uid
               for r in meta.get("ownerReferences") or ()):
            existing = c
            break
    return PodExtendedResources(pod, scalar, existing, {})


def _names_any_of(pod: Pod, names: Mapping[str, Any]) -> bool:
    """Whether a request the pod writes names one of ``names``: the resources ``PodRequests``
    (default options) returns are among those of the containers' and init containers'
    requests, the pod-level requests and the overhead, so a pod naming none of ``names``
    needs no extended-resource claim, without summing its requests."""
    if not names:
        return False
    disjoint = names.keys().isdisjoint
    for c in pod.spec.init_containers:
        if not disjoint(c.resources.requests):
            return True
    for c in pod.spec.containers:
        if not disjoint(c.resources.requests):
            return True
    res = pod.spec.resources
    if res is not None and not disjoint(res.requests):
        return True
    return not disjoint(pod.spec.overhead or ())


def node_claim(handle: Any, ext: PodExtendedResources, node: Any) -> tuple[Status, Any, tuple[Mapping[str, str], ...]]:
    """``filterExtendedResources``: the claim this node needs (None: device plugins cover all).

    Returns (status, claim or None, container request mappings).
    """
    if ext.existing is not None and ext.existing.requests:
        return unresolvable(ERR_STALE_CLAIM), None, ()
    mapping = _mapping(handle)
    needed: list[str] = []
    for name, q in ext.scalar.items():
        if not is_dra_extended_resource_name(name) or q == 0:
            continue
        allocatable = node.allocatable.get(name, 0)
        if name in mapping and allocatable == 0:
            needed.append(name)
        elif name not in node.allocatable:
            return unresolvable(ERR_CANNOT_FIT), None, ()
    if not needed:
        return SUCCESS, None, ()
    key = frozenset(needed)
    assert ext.per_set is not None
    hit = ext.per_set.get(key)
    if hit is None:
        hit = _build_claim(handle, ext, sorted(needed), mapping)
        ext.per_set[key] = hit
    return SUCCESS, hit[0], hit[1]


def _build_claim(handle: Any, ext: PodExtendedResources, resources: list[str],
                 mapping: dict[str, dict]) -> tuple[Any, tuple[Mapping[str, str], ...]]:
    from ....dra.api import parse_resource_claim

    requests, mappings = requests_and_mappings(ext.pod, resources, mapping)
    pod = ext.pod
    if ext.existing is not None:
        meta = dict(ext.existing.raw.get("metadata") or {})
    else:
        meta = {"name": claim_name(pod, int(getattr(handle, "seed", 0) or 0)),
                "generateName": pod.name + "-extended-resources-", "namespace": pod.namespace or "default",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                                     "controller": True}],
                "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}}
    raw = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
           "spec": {"devices": {"requests": requests}}}
    return parse_resource_claim(raw), tuple(mappings)


def claim_name(pod: Pod, seed: int) -> str:
    """The API server's ``generateName`` completion, seeded like template claims' names."""
    from ....dra.podclaims import complete_generate_name

    rng = random.Random(f"{seed}/{pod.uid}/{POD_CLAIM_NAME}")
    return complete_generate_name(pod.name + "-extended-resources-", rng)


def _int_request(q: Any) -> int | None:
    """``Quantity.AsInt64``: whole numbers only."""
    if q is None:
        return None
    try:
        if q.milli_value() % 1000:
            return None
        return q.value()
    except (OverflowError, ValueError):
        return None


def _container_request(index: int, c: Any, resource: str, class_name: str,
                       reusable: list[dict | None]) -> tuple[dict | None, list[dict[str, str]]]:
    """``createResourceRequestAndMappings`` for one container and resource."""
    creqs = c.resources.requests or {}
    q = creqs.get(resource)
    want = _int_request(q)
    if not want:
        return None, []
    mappings: list[dict[str, str]] = []
    total = 0
    for r in reusable:
        if r is None:
            continue
        total += r["exactly"]["count"]
        mappings.append({"containerName": c.name, "resourceName": resource, "requestName": r["name"]})
        if total >= want:
            return None, mappings
    ridx = sorted(creqs).index(resource)
    name = f"container-{index}-request-{ridx}"
    mappings.append({"containerName": c.name, "resourceName": resource, "requestName": name})
    return {"name": name, "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount",
                                      "count": want - total}}, mappings


def requests_and_mappings(pod: Pod, resources: list[str],
                          mapping: Mapping[str, dict]) -> tuple[list[dict], list[dict[str, str]]]:
    """``createRequestsAndMappings``: device requests sorted by name, mappings long-lived first."""
    containers = list(pod.spec.init_containers) + list(pod.spec.containers)
    n_init = len(pod.spec.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= n_init or c.restart_policy == "Always"]
    short_lived = [i for i in range(n_init) if i not in set(long_lived)]
    requests: list[dict] = []
    mappings: list[dict[str, str]] = []
    for resource in sorted(resources):
        dc = mapping.get(resource)
        if dc is None:
            continue
        class_name = str((dc.get("metadata") or {}).get("name", ""))
        long_reqs: list[dict | None] = [None] * len(containers)
        long_maps: list[dict[str, str]] = []
        for i in long_lived:
            req, maps = _container_request(i, containers[i], resource, class_name, [])
            long_reqs[i] = req
            long_maps += maps
        best: dict | None = None
        short_names: set[str] = set()
        short_maps: list[dict[str, str]] = []
        for i in short_lived:
            req, maps = _container_request(i, containers[i], resource, class_name, long_reqs[i:])
            if req is not None:
                short_names.add(req["name"])
                if best is None or best["exactly"]["count"] < req["exactly"]["count"]:
                    best = req
            short_maps += maps
        if best is not None and len(short_names) > 1:
            short_names.discard(best["name"])
            for m in short_maps:
                if m["requestName"] in short_names:
                    m["requestName"] = best["name"]
        if best is not None:
            requests.append(best)
        requests += [r for r in long_reqs if r is not None]
        mappings += long_maps + short_maps
    requests.sort(key=lambda r: r["name"])
    return requests, mappings


def with_claim(pod_claims: Any, claim: Any) -> Any:
    """The pod's claims plus its extended-resource claim (allocated together)."""
    from ....dra.podclaims import PodClaim

    return replace(pod_claims, claims=pod_claims.claims + (PodClaim(POD_CLAIM_NAME, claim, generated=True),))
