"""Admission controllers the API server runs when a pod is created, before any scheduler sees it.

The order is the API server's: defaulting (container requests from limits, pod-level
resources), mutating phase (LimitRanger's defaults, then Priority's class resolution), then
validating phase (LimitRanger's min/max/ratio, then ResourceQuota).
A rejection is an :class:`AdmissionRejected` worded as the API server's ``Forbidden`` error.

Upstream: ``plugin/pkg/admission`` (``limitranger``, ``resourcequota``, ``priority``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ...errors import KubetwinError
from ...model.features import FeatureGates
from ...model.pod import Pod


class AdmissionRejected(KubetwinError):
    """The API server refused the pod (HTTP 403 Forbidden)."""

    def __init__(self, plugin: str, pod: Pod, reason: str):
        self.plugin = plugin
        self.reason = reason
        super().__init__(forbidden(pod, reason))


def forbidden(pod: Pod, reason: str) -> str:
    """``admission.NewForbidden``: ``pods "<name>" is forbidden: <reason>``."""
    return f'pods "{pod.metadata.name}" is forbidden: {reason}'


def aggregate(errors: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message alone, several in brackets."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


@dataclass
class AdmissionResult:
    pod: Pod
    #: what each controller changed, in order (``kubernetes.io/limit-ranger`` annotation text etc.)
    changes: list[str] = field(default_factory=list)


def admit_pod(pod: Pod, *, limit_ranges: Sequence[Any] = (), quotas: Sequence[Any] = (),
              priority_classes: Sequence[Any] = (), running: Sequence[Pod] = (), gates: FeatureGates | None = None,
              webhook: Callable[[Pod], Pod] | None = None) -> AdmissionResult:
    """Run LimitRanger, Priority and ResourceQuota on a pod being created; raise if rejected.
    ``webhook`` is a mutating admission webhook (the VPA's): the API server calls webhooks after
    the built-in mutating plugins and before the validating ones (LimitRanger's checks, quota)."""
    from . import limitrange, priority, resourcequota
    from .defaults import default_pod

    result = AdmissionResult(default_pod(pod, gates))
    ns = pod.metadata.namespace
    ranges = [lr for lr in limit_ranges if lr.metadata.namespace == ns] if limit_ranges else ()
    if ranges:
        limitrange.admit(result, ranges)
    priority.admit(result, priority_classes)
    if webhook is not None:
        result.pod = webhook(result.pod)
    if ranges:
        limitrange.validate(result.pod, ranges, gates)
    if quotas:
        resourcequota.validate(result.pod, [q for q in quotas if q.metadata.namespace == ns], running, gates)
    return result


def admit_from_objects(pod: Pod, objects: Any, origins: Any, running: Sequence[Pod], gates: FeatureGates | None) -> AdmissionResult:
    """:func:`admit_pod` with LimitRanges, ResourceQuotas and PriorityClasses from raw ``-f`` objects."""
    from ...model.policy import (
        check_single_global_default,
        limit_range_from_dict,
        priority_class_from_dict,
        resource_quota_from_dict,
    )

    def typed(kind: str, parse: Any) -> list[Any]:
        where = origins.get(kind, [])
        return [parse(o, where[i] if i < len(where) else None) for i, o in enumerate(objects.get(kind, []))]

    classes = typed("PriorityClass", priority_class_from_dict)
    check_single_global_default(classes)
    return admit_pod(pod, limit_ranges=typed("LimitRange", limit_range_from_dict),
                     quotas=typed("ResourceQuota", resource_quota_from_dict), priority_classes=classes,
                     running=running, gates=gates)
