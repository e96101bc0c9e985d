"""Which class a container asks for, from annotations (goresctrl ``pkg/kubernetes/annotations.go``).

Both goresctrl class kinds (RDT and Block I/O) are chosen the same way: a CRI container
annotation first, then the pod annotation for that one container (``<prefix>container.NAME``),
then the pod-wide annotation. An annotation that is present wins even when its value is empty
(for RDT the empty name is the root class).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

#: Where a class came from (goresctrl's ``ClassOrigin``).
NOT_FOUND = "<not found>"
CONTAINER_ANNOTATION = "container annotations"
POD_ANNOTATION = "pod annotations"


@dataclass(frozen=True, slots=True)
class ClassChoice:
    """A container's class and where it was found; ``key`` is the annotation that gave it."""

    name: str | None
    origin: str
    key: str = ""

    @property
    def found(self) -> bool:
        return self.origin != NOT_FOUND


def class_from_annotations(container_key: str, pod_key: str, pod_container_prefix: str, container_name: str,
                           container_annotations: Mapping[str, str] | None,
                           pod_annotations: Mapping[str, str] | None) -> ClassChoice:
    """``ContainerClassFromAnnotations``: container annotation, per-container pod annotation, pod annotation."""
    ca = container_annotations or {}
    pa = pod_annotations or {}
    if container_key in ca:
        return ClassChoice(ca[container_key], CONTAINER_ANNOTATION, container_key)
    key = pod_container_prefix + container_name
    if key in pa:
        return ClassChoice(pa[key], POD_ANNOTATION, key)
    if pod_key in pa:
        return ClassChoice(pa[pod_key], POD_ANNOTATION, pod_key)
    return ClassChoice(None, NOT_FOUND)


def annotation_path(choice: ClassChoice) -> str:
    """The field path of the annotation that chose the class (for error messages)."""
    if choice.origin == POD_ANNOTATION:
        return f'metadata.annotations["{choice.key}"]'
    if choice.origin == CONTAINER_ANNOTATION:
        return f'containerConfig.annotations["{choice.key}"]'
    return ""


__all__ = ["ClassChoice", "class_from_annotations", "annotation_path", "NOT_FOUND", "CONTAINER_ANNOTATION",
           "POD_ANNOTATION"]
