"""The scheduler's questions to :mod:`kubetwin.model.resources`, with the options
kube-scheduler passes (``NodeInfo.calculateResource``, Fit's ``computePodResourceRequest``,
scoring's ``calculatePodResourceRequest``), turned into scheduler units; and which resource
names are scalar (``pkg/apis/core/v1/helper``: ``IsScalarResourceName``)."""

from __future__ import annotations

from typing import Any

from ...model.pod import Pod
from ...model.resources import PodResourcesOptions, pod_requests, scoring_non_missing_requests
from .types import resource_amounts


def options(gates: Any, *, status: bool = True, non_zero: bool = False) -> PodResourcesOptions:
    """Options as the scheduler sets them from its feature gates.

    ``status`` (in-place resize: the larger of spec, allocated and actuated) applies to pods
    already on a node; the incoming pod is taken by its spec.
    """
    return PodResourcesOptions(
        use_status_resources=status and gates.enabled("InPlacePodVerticalScaling"),
        skip_pod_level_resources=not gates.enabled("PodLevelResources"),
        non_missing_container_requests=scoring_non_missing_requests() if non_zero else {},
        use_dra_node_allocatable_resource_claim_status=gates.enabled("DRANodeAllocatableResources"),
    )


def pod_request_amounts(pod: Pod, gates: Any, *, status: bool = True) -> dict[str, int]:
    """Effective requests (``PodRequests``) in scheduler units."""
    return resource_amounts(pod_requests(pod, options(gates, status=status)))


def pod_non_zero_amounts(pod: Pod, gates: Any, *, status: bool = True) -> dict[str, int]:
    """Requests with 100m cpu / 200Mi memory for containers that request none (scoring)."""
    return resource_amounts(pod_requests(pod, options(gates, status=status, non_zero=True)))


def is_scalar_resource_name(name: str) -> bool:
    """``IsScalarResourceName``: extended, hugepages, prefixed native, attachable volumes."""
    from ...model.pod import is_extended_resource, is_hugepage_resource

    return (is_extended_resource(name) or is_hugepage_resource(name)
            or ("/" in name and "kubernetes.io/" in name) or name.startswith("attachable-volumes-"))
