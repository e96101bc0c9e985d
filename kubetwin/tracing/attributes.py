"""Span attribute names: the OpenTelemetry semantic conventions' Kubernetes resource attributes
(``k8s.pod.name``, ``k8s.pod.uid``, ``k8s.namespace.name``, ``k8s.node.name``: semantic-conventions
``docs/resource/k8s.md``) and kubetwin's own under ``kubetwin.``.

Not an upstream module: kubetwin's attribute vocabulary.
"""

from __future__ import annotations

from typing import Any

POD_NAME = "k8s.pod.name"
POD_UID = "k8s.pod.uid"
NAMESPACE = "k8s.namespace.name"
NODE_NAME = "k8s.node.name"
CONTAINER_NAME = "k8s.container.name"
PLUGIN = "kubetwin.scheduler.plugin"
EXTENSION_POINT = "kubetwin.scheduler.extension_point"
CODE = "kubetwin.status.code"
REASONS = "kubetwin.status.reasons"
#: how many nodes' values a span lists at most (scores per node, rejections as events)
MAX_NODES = 256


def pod_attributes(pod: Any) -> dict[str, Any]:
    """The pod's name, namespace and uid."""
    m = pod.metadata
    return {POD_NAME: m.name, NAMESPACE: m.namespace or "default", POD_UID: m.uid or None}
