"""The API server's defaulting of a pod's resources, applied once, when a pod is decoded.

Every pod the kubelet and kube-scheduler see went through the API server, whose ``SetDefaults_Pod``
(``pkg/apis/core/v1/defaults.go``) fills in what a manifest leaves out:

* a container (init containers included) with a limit and no request for a resource gets the
  limit as its request — so a container with only ``limits: {cpu: 2, memory: 1Gi}`` is
  Guaranteed, not Burstable;
* with gate PodLevelResources on (beta and on by default since 1.34), for a pod that states
  pod-level resources: hugepages limits the pod does not state default to the containers'
  aggregated limits, unless the pod states a request for that size (``defaultHugePagePodLimits``);
  then, with pod-level limits, each pod-level request not stated defaults to the containers'
  aggregated request for cpu and memory, else to the pod-level limit (``defaultPodRequests``).
  Pod-level limits are not defaulted from container limits (v1.36 has no such rule).

kubetwin decodes manifests as the API server would store them: :func:`pod_from_dict` applies
:func:`api_defaults` before validation, as the API server validates the defaulted object. The
gate is read at the release of ``--kubernetes-version`` (the API server's default; a component's
``--feature-gates`` does not change what the API server stored).

The upstream *unit tests* call kubelet functions on pods nobody defaulted; kubetwin's
conformance cases taken from them say "pods are evaluated exactly as written". The global
option ``--no-api-defaulting`` (:func:`set_api_defaulting`) takes pods that way.
"""

from __future__ import annotations

import functools

import msgspec

from .pod import Pod, ResourceRequirements, default_requests_from_limits, is_hugepage_resource, overcommit_allowed

_enabled = True


def set_api_defaulting(on: bool) -> None:
    """``--no-api-defaulting`` turns it off for the rest of the run (a new run turns it on again)."""
    global _enabled
    _enabled = on


def api_defaulting() -> bool:
    return _enabled


def api_defaults(pod: Pod) -> Pod:
    """The pod as the API server stores it (unchanged under ``--no-api-defaulting``)."""
    if not _enabled:
        return pod
    from .apischema import schema_version

    return default_pod(pod, pod_level=_pod_level_resources(schema_version()))


@functools.lru_cache(maxsize=32)
def _pod_level_resources(version: str | None) -> bool:
    """Gate PodLevelResources at a release: worked out once per release, not once per pod."""
    from .features import gates_for

    return gates_for(version).enabled("PodLevelResources")


def default_pod(pod: Pod, *, pod_level: bool = True) -> Pod:
    """``SetDefaults_Pod``'s resource part: container requests from limits, then (``pod_level``:
    gate PodLevelResources) pod-level hugepage limits and pod-level requests."""
    pod = default_requests_from_limits(pod)
    if pod_level:
        pod = default_pod_level_requests(default_pod_level_hugepage_limits(pod))
    return pod


def default_pod_level_hugepage_limits(pod: Pod) -> Pod:
    from .resources import PodResourcesOptions, aggregate_container_limits, is_supported_pod_level_resource

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
    from .resources import PodResourcesOptions, aggregate_container_requests, is_supported_pod_level_resource

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
