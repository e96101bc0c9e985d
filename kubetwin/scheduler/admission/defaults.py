"""The API server's defaulting of pod-level resources (``SetDefaults_Pod`` with gate
PodLevelResources, as v1.36 has it), applied before any admission controller sees the pod.

Container requests are first defaulted from their limits (:func:`default_requests_from_limits`);
then, for a pod that states pod-level resources:

* hugepages limits the pod does not state default to the containers' aggregated limits
  (unless the pod states a request for that size) — ``defaultHugePagePodLimits``;
* with pod-level limits, each pod-level request not stated defaults to the containers'
  aggregated request for cpu and memory, else to the pod-level limit — ``defaultPodRequests``.

Pod-level limits are not defaulted from container limits in v1.36 (that came after it).

Upstream: ``pkg/apis/core/v1/defaults.go``."""

from __future__ import annotations

import msgspec

from ...model.features import FeatureGates
from ...model.pod import (
    Pod,
    ResourceRequirements,
    default_requests_from_limits,
    is_hugepage_resource,
    overcommit_allowed,
)
from ...model.resources import (
    PodResourcesOptions,
    aggregate_container_limits,
    aggregate_container_requests,
    is_supported_pod_level_resource,
)


def default_pod_level_hugepage_limits(pod: Pod) -> Pod:
    res = pod.spec.resources
    if res is None or (not res.limits and not res.requests):
        return pod
    limits = dict(res.limits)
    for name, q in aggregate_container_limits(pod, PodResourcesOptions()).items():
        if not is_supported_pod_level_resource(name) or not is_hugepage_resource(name):
            continue
        if name in res.requests:
            continue
        limits.setdefault(name, q)
    if limits == dict(res.limits):
        return pod
    return _with_resources(pod, msgspec.structs.replace(res, limits=limits))


def default_pod_level_requests(pod: Pod) -> Pod:
    res = pod.spec.resources
    if res is None or not res.limits:
        return pod
    requests = dict(res.requests)
    for name, q in aggregate_container_requests(pod, PodResourcesOptions()).items():
        if name not in requests and is_supported_pod_level_resource(name) and overcommit_allowed(name):
            requests[name] = q
    for name, q in res.limits.items():
        if name not in requests and is_supported_pod_level_resource(name):
            requests[name] = q
    if requests == dict(res.requests):
        return pod
    return _with_resources(pod, msgspec.structs.replace(res, requests=requests))


def _with_resources(pod: Pod, res: ResourceRequirements) -> Pod:
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, resources=res))


def default_pod(pod: Pod, gates: FeatureGates | None = None) -> Pod:
    """``SetDefaults_Pod``'s resource part: container requests from limits, then pod-level
    hugepage limits and pod-level requests when PodLevelResources is on."""
    pod = default_requests_from_limits(pod)
    if gates is None or gates.enabled("PodLevelResources"):
        pod = default_pod_level_requests(default_pod_level_hugepage_limits(pod))
    return pod
