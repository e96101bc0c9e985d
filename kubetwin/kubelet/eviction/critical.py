"""Critical pods (``pkg/kubelet/types``): admitted under any pressure, never evicted by the
kubelet. Static pods are included because the kubelet would not re-admit them after eviction."""

from __future__ import annotations

from typing import Final

from ...model.pod import Pod

CONFIG_SOURCE_ANNOTATION: Final = "kubernetes.io/config.source"
CONFIG_MIRROR_ANNOTATION: Final = "kubernetes.io/config.mirror"
API_SERVER_SOURCE: Final = "api"
#: ``scheduling.SystemCriticalPriority``: system-cluster-critical and above.
SYSTEM_CRITICAL_PRIORITY: Final = 2_000_000_000


def is_static_pod(pod: Pod) -> bool:
    source = pod.metadata.annotations.get(CONFIG_SOURCE_ANNOTATION)
    return source is not None and source != API_SERVER_SOURCE


def is_mirror_pod(pod: Pod) -> bool:
    return CONFIG_MIRROR_ANNOTATION in pod.metadata.annotations


def is_critical_pod(pod: Pod) -> bool:
    if is_static_pod(pod) or is_mirror_pod(pod):
        return True
    return pod.spec.priority is not None and pod.spec.priority >= SYSTEM_CRITICAL_PRIORITY
