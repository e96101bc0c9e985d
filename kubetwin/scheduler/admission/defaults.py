"""The API server's defaulting of pod-level resources (``SetDefaults_Pod`` with gate
PodLevelResources, as v1.36 has it), applied before any admission controller sees the pod.

The rules live in :mod:`kubetwin.model.defaulting`, which also applies them when a pod is decoded;
admission applies them again (they are idempotent) with the gates of the component it models.

Upstream: ``pkg/apis/core/v1/defaults.go``."""

from __future__ import annotations

from ...model.defaulting import default_pod as _default_pod
from ...model.defaulting import default_pod_level_hugepage_limits, default_pod_level_requests
from ...model.features import FeatureGates
from ...model.pod import Pod

__all__ = ["default_pod", "default_pod_level_hugepage_limits", "default_pod_level_requests"]


def default_pod(pod: Pod, gates: FeatureGates | None = None) -> Pod:
    """``SetDefaults_Pod``'s resource part: container requests from limits, then pod-level
    hugepage limits and pod-level requests when PodLevelResources is on."""
    return _default_pod(pod, pod_level=gates is None or gates.enabled("PodLevelResources"))
