"""Read v1beta1, v1beta2 and v1alpha3 DRA manifests by converting them to the v1 shape.

v1beta2 already has the v1 shape. v1beta1 and v1alpha3 put the request fields directly on the
request (``deviceClassName`` beside ``name``) and nest device fields under ``basic``; v1alpha3
also writes capacities as bare quantities. The conversion is what the API server's
conversion functions do, so a manifest read here means what it meant to the cluster.

Upstream: ``pkg/apis/resource/v1beta1/conversion.go`` and the generated conversions of
``staging/src/k8s.io/dynamic-resource-allocation/api``.
"""

from __future__ import annotations

import copy
from typing import Any, Final, Mapping

from ..errors import InputError

GROUP: Final = "resource.k8s.io"
VERSIONS: Final = ("v1", "v1beta2", "v1beta1", "v1alpha3")
KINDS: Final = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")

_EXACT_FIELDS: Final = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations",
                        "capacity")


def api_version_of(obj: Mapping[str, Any]) -> tuple[str, str]:
    """``(group, version)`` of an object; refuses anything that is not resource.k8s.io."""
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str) or "/" not in api_version:
        raise InputError(f"apiVersion {api_version!r} is not a resource.k8s.io version", path="apiVersion",
                         fix=f"use {GROUP}/v1")
    group, _, version = api_version.partition("/")
    if group != GROUP or version not in VERSIONS:
        raise InputError(f"unsupported apiVersion {api_version!r}", path="apiVersion",
                         fix=f"use {GROUP}/ with one of {', '.join(VERSIONS)}")
    return group, version


def to_v1(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``obj`` in the resource.k8s.io/v1 shape (v1 objects are returned as they are)."""
    _, version = api_version_of(obj)
    if version in ("v1", "v1beta2"):
        if version == "v1":
            return obj if isinstance(obj, dict) else dict(obj)
        out = copy.deepcopy(dict(obj))
        out["apiVersion"] = f"{GROUP}/v1"
        return out
    out = copy.deepcopy(dict(obj))
    out["apiVersion"] = f"{GROUP}/v1"
    kind = out.get("kind")
    spec = out.get("spec")
    if not isinstance(spec, dict):
        return out
    if kind == "ResourceClaim":
        _claim_spec(spec, version)
        spec.pop("controller", None)
        status = out.get("status")
        if isinstance(status, dict):
            status.pop("deallocationRequested", None)
            alloc = status.get("allocation")
            if isinstance(alloc, dict):
                alloc.pop("controller", None)
    elif kind == "ResourceClaimTemplate":
        inner = spec.get("spec")
        if isinstance(inner, dict):
            _claim_spec(inner, version)
            inner.pop("controller", None)
    elif kind == "ResourceSlice":
        _slice_spec(spec, capacity_is_bare=(version == "v1alpha3"))
    elif kind == "DeviceClass":
        spec.pop("suitableNodes", None)
    return out


def split_counter_slices(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Split slices that carry both ``devices`` and ``sharedCounters`` (v1beta1/v1alpha3 allowed
    it; v1 does not) into a device slice and a counter slice ``<name>-counters`` of the same
    pool, raising ``resourceSliceCount`` of every slice of that pool generation accordingly.

    ``objs`` are v1-shaped objects; others pass through unchanged, order is kept.
    """
    extra: dict[tuple[Any, Any, Any], int] = {}
    out: list[dict[str, Any]] = []
    for obj in objs:
        spec = obj.get("spec") if obj.get("kind") == "ResourceSlice" else None
        if not (isinstance(spec, dict) and spec.get("devices") and spec.get("sharedCounters")):
            out.append(obj)
            continue
        pool_field = spec.get("pool")
        pool = pool_field if isinstance(pool_field, dict) else {}
        key = (spec.get("driver"), pool.get("name"), pool.get("generation", 0))
        extra[key] = extra.get(key, 0) + 1
        devices = copy.deepcopy(obj)
        devices["spec"].pop("sharedCounters")
        counters = copy.deepcopy(obj)
        counters["spec"].pop("devices")
        meta = dict(counters.get("metadata") or {})
        meta["name"] = f"{meta.get('name', '')}-counters"
        counters["metadata"] = meta
        out += [devices, counters]
    if not extra:
        return out
    for obj in out:
        spec = obj.get("spec") if obj.get("kind") == "ResourceSlice" else None
        if not isinstance(spec, dict) or not isinstance(spec.get("pool"), dict):
            continue
        pool = spec["pool"]
        key = (spec.get("driver"), pool.get("name"), pool.get("generation", 0))
        if key in extra and isinstance(pool.get("resourceSliceCount"), int):
            obj["spec"] = {**spec, "pool": {**pool, "resourceSliceCount": pool["resourceSliceCount"] + extra[key]}}
    return out


def _claim_spec(spec: dict[str, Any], version: str) -> None:
    devices = spec.get("devices")
    if not isinstance(devices, dict):
        return
    for request in devices.get("requests") or []:
        if not isinstance(request, dict) or request.get("firstAvailable") is not None:
            continue
        exactly = {k: request.pop(k) for k in _EXACT_FIELDS if k in request}
        if version == "v1alpha3" and exactly.get("adminAccess") is False:
            # 1.31's v1alpha3 had a plain bool; false there meant "not requested".
            exactly.pop("adminAccess")
        request["exactly"] = exactly


def _slice_spec(spec: dict[str, Any], capacity_is_bare: bool) -> None:
    if spec.get("nodeName") == "":
        spec.pop("nodeName")
    if spec.get("allNodes") is False:
        spec.pop("allNodes")
    for device in spec.get("devices") or []:
        if not isinstance(device, dict):
            continue
        basic = device.pop("basic", None)
        if isinstance(basic, dict):
            for key, value in basic.items():
                device[key] = value
        caps = device.get("capacity")
        if capacity_is_bare and isinstance(caps, dict):
            device["capacity"] = {k: (v if isinstance(v, dict) else {"value": v}) for k, v in caps.items()}
