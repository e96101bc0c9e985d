"""LimitRanger admission: container defaults, then min / max / maxLimitRequestRatio checks.

Pod items check the pod as a whole: containers summed (sidecars and init containers as the
pod's effective requests), and with PodLevelResources the pod-level cpu and memory in place
of the sum. Container defaults are applied to every container whether or not the pod states
pod-level resources (v1.36 LimitRanger has no Pod-item defaults).

The LimitRange object is first defaulted as the API server stores it (a Container item's
``default`` falls back to ``max``, its ``defaultRequest`` to ``default`` then ``min``).
Defaults fill only what a container leaves unset; the checks compare in milli-units when
no value overflows, as ``requestLimitEnforcedValues`` does, and all failures of one
LimitRange are reported together.

Upstream: ``plugin/pkg/admission/limitranger/admission.go``."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import msgspec

from ...model.features import FeatureGates
from ...model.pod import Container, Pod
from ...model.quantity import Quantity
from . import AdmissionRejected, AdmissionResult, aggregate

PLUGIN = "LimitRanger"
#: pod-level resources LimitRanger's Pod items read (its own ``supportedPodLevelResources``)
LIMIT_RANGER_POD_LEVEL = frozenset({"cpu", "memory"})
MAX_MILLI_VALUE = (2**63 - 1) // 1000


def defaulted_item(item: Any) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """``SetDefaults_LimitRangeItem`` for a Container item: (default limits, default requests)."""
    default = dict(item.default)
    request = dict(item.default_request)
    for k, v in item.max.items():
        default.setdefault(k, v)
    for k, v in default.items():
        request.setdefault(k, v)
    for k, v in item.min.items():
        request.setdefault(k, v)
    return default, request


def container_defaults(limit_range: Any) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """``defaultContainerResourceRequirements``: later Container items override earlier ones."""
    limits: dict[str, Quantity] = {}
    requests: dict[str, Quantity] = {}
    for item in limit_range.spec.limits:
        if item.type != "Container":
            continue
        d, r = defaulted_item(item)
        requests.update(r)
        limits.update(d)
    return limits, requests


def _merge(c: Container, limits: Mapping[str, Quantity], requests: Mapping[str, Quantity]) -> tuple[Container, str]:
    set_l = [k for k in limits if k not in c.resources.limits]
    set_r = [k for k in requests if k not in c.resources.requests]
    if not set_l and not set_r:
        return c, ""
    res = msgspec.structs.replace(c.resources, limits={**c.resources.limits, **{k: limits[k] for k in set_l}},
                                  requests={**c.resources.requests, **{k: requests[k] for k in set_r}})
    parts = []
    if set_r:
        parts.append(f"{', '.join(set_r)} request")
    if set_l:
        parts.append(f"{', '.join(set_l)} limit")
    return msgspec.structs.replace(c, resources=res), f"{'; '.join(parts)} for container {c.name}"


def admit(result: AdmissionResult, limit_ranges: Sequence[Any]) -> None:
    """Mutating phase: fill container defaults from each LimitRange of the namespace."""
    for lr in limit_ranges:
        limits, requests = container_defaults(lr)
        if not limits and not requests:
            continue
        pod = result.pod
        notes: list[str] = []
        init = []
        for c in pod.spec.init_containers:
            c2, note = _merge(c, limits, requests)
            init.append(c2)
            if note:
                notes.append("init " + note)
        apps = []
        for c in pod.spec.containers:
            c2, note = _merge(c, limits, requests)
            apps.append(c2)
            if note:
                notes.append(note)
        if notes:
            spec = msgspec.structs.replace(pod.spec, containers=apps, init_containers=init)
            result.pod = msgspec.structs.replace(pod, spec=spec)
            result.changes.append("LimitRanger plugin set: " + "; ".join(notes))


def _values(req: Quantity | None, lim: Quantity | None, enforced: Quantity) -> tuple[int, int, int]:
    r = req.value() if req is not None else 0
    lv = lim.value() if lim is not None else 0
    e = enforced.value()
    if r <= MAX_MILLI_VALUE and lv <= MAX_MILLI_VALUE and e <= MAX_MILLI_VALUE:
        r = req.milli_value() if req is not None else 0
        lv = lim.milli_value() if lim is not None else 0
        e = enforced.milli_value()
    return r, lv, e


def _s(q: Quantity) -> str:
    return q.canonical()


def min_constraint(kind: str, name: str, enforced: Quantity, requests: Mapping[str, Quantity],
                   limits: Mapping[str, Quantity]) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    r, lv, e = _values(req, lim, enforced)
    if req is None:
        return f"minimum {name} usage per {kind} is {_s(enforced)}.  No request is specified"
    if r < e:
        return f"minimum {name} usage per {kind} is {_s(enforced)}, but request is {_s(req)}"
    if lim is not None and lv < e:
        return f"minimum {name} usage per {kind} is {_s(enforced)}, but limit is {_s(lim)}"
    return None


def max_constraint(kind: str, name: str, enforced: Quantity, requests: Mapping[str, Quantity],
                   limits: Mapping[str, Quantity]) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    r, lv, e = _values(req, lim, enforced)
    if lim is None:
        return f"maximum {name} usage per {kind} is {_s(enforced)}.  No limit is specified"
    if lv > e:
        return f"maximum {name} usage per {kind} is {_s(enforced)}, but limit is {_s(lim)}"
    if req is not None and r > e:
        return f"maximum {name} usage per {kind} is {_s(enforced)}, but request is {_s(req)}"
    return None


def ratio_constraint(kind: str, name: str, enforced: Quantity, requests: Mapping[str, Quantity],
                     limits: Mapping[str, Quantity]) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    r, lv, _ = _values(req, lim, enforced)
    if req is None or r == 0:
        return (f"{name} max limit to request ratio per {kind} is {_s(enforced)}, but no request is specified or "
                "request is 0")
    if lim is None or lv == 0:
        return (f"{name} max limit to request ratio per {kind} is {_s(enforced)}, but no limit is specified or "
                "limit is 0")
    observed = float(lv) / float(r)
    shown = observed
    maximum = float(enforced.value())
    if enforced.value() <= MAX_MILLI_VALUE:
        observed *= 1000
        maximum = float(enforced.milli_value())
    if observed > maximum:
        return f"{name} max limit to request ratio per {kind} is {_s(enforced)}, but provided ratio is {shown:f}"
    return None


def _check(kind: str, item: Any, requests: Mapping[str, Quantity], limits: Mapping[str, Quantity],
           errors: list[str]) -> None:
    for name, q in item.min.items():
        e = min_constraint(kind, name, q, requests, limits)
        if e:
            errors.append(e)
    for name, q in item.max.items():
        e = max_constraint(kind, name, q, requests, limits)
        if e:
            errors.append(e)
    for name, q in item.max_limit_request_ratio.items():
        e = ratio_constraint(kind, name, q, requests, limits)
        if e:
            errors.append(e)


def _aggregate(pod: Pod, kind: str) -> dict[str, Quantity]:
    """Apps and sidecars add up; each init container peaks with the sidecars started before it."""
    from ...model.pod import is_sidecar
    from ...model.resources import add_resource_list, max_resource_list

    total: dict[str, Quantity] = {}
    for c in pod.spec.containers:
        add_resource_list(total, getattr(c.resources, kind))
    sidecars: dict[str, Quantity] = {}
    peak: dict[str, Quantity] = {}
    for c in pod.spec.init_containers:
        values = getattr(c.resources, kind)
        if is_sidecar(c):
            add_resource_list(total, values)
            add_resource_list(sidecars, values)
            candidate = sidecars
        else:
            candidate = dict(values)
            add_resource_list(candidate, sidecars)
        max_resource_list(peak, candidate)
    max_resource_list(total, peak)
    return total


def pod_requests(pod: Pod, pod_level: bool) -> dict[str, Quantity]:
    """LimitRanger's own ``podRequests``: the spec only (no status, no overhead); with
    PodLevelResources, pod-level cpu and memory requests replace the containers' sum — the
    only pod-level resources LimitRanger knows (not hugepages)."""
    return _with_pod_level(_aggregate(pod, "requests"), pod, "requests", pod_level)


def pod_limits(pod: Pod, pod_level: bool) -> dict[str, Quantity]:
    """LimitRanger's ``podLimits``: as :func:`pod_requests` over limits."""
    return _with_pod_level(_aggregate(pod, "limits"), pod, "limits", pod_level)


def _with_pod_level(total: dict[str, Quantity], pod: Pod, kind: str, pod_level: bool) -> dict[str, Quantity]:
    if pod_level and pod.spec.resources is not None:
        for name, q in getattr(pod.spec.resources, kind).items():
            if name in LIMIT_RANGER_POD_LEVEL:
                total[name] = q
    return total


def validate(pod: Pod, limit_ranges: Sequence[Any], gates: FeatureGates | None = None) -> None:
    """Validating phase (``PodValidateLimitFunc``): Container items per container, Pod items on the sums."""
    for lr in limit_ranges:
        errors: list[str] = []
        for item in lr.spec.limits:
            if item.type == "Container":
                for c in list(pod.spec.containers) + list(pod.spec.init_containers):
                    _check("Container", item, c.resources.requests, c.resources.limits, errors)
            elif item.type == "Pod":
                pod_level = gates is None or gates.enabled("PodLevelResources")
                _check("Pod", item, pod_requests(pod, pod_level), pod_limits(pod, pod_level), errors)
        if errors:
            raise AdmissionRejected(PLUGIN, pod, aggregate(errors))
