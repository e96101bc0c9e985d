"""Priority admission: ``priorityClassName`` → ``spec.priority`` and ``spec.preemptionPolicy``.

A pod without a class gets the global default class (the lowest-valued one if several claim
it) or priority 0; the two system classes exist even when not given. A pod may not state a
priority or preemption policy that differs from what its class resolves to.

Upstream: ``plugin/pkg/admission/priority/admission.go``."""

from __future__ import annotations

from typing import Any, Sequence

import msgspec

from ...model.meta import ObjectMeta
from ...model.policy import SYSTEM_PRIORITY_CLASSES, PriorityClass, global_default_priority
from . import AdmissionRejected, AdmissionResult

PLUGIN = "Priority"
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS = 0


def system_classes() -> list[PriorityClass]:
    return [PriorityClass(metadata=ObjectMeta(name=n, namespace=""), value=v) for n, v in SYSTEM_PRIORITY_CLASSES.items()]


def resolve(name: str, classes: Sequence[PriorityClass]) -> PriorityClass | None:
    for pc in list(classes) + system_classes():
        if pc.metadata.name == name:
            return pc
    return None


def admit(result: AdmissionResult, classes: Sequence[Any]) -> None:
    pod = result.pod
    spec = pod.spec
    if not spec.priority_class_name:
        dpc = global_default_priority(list(classes))
        name = dpc.metadata.name if dpc else ""
        value = dpc.value if dpc else DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS
        policy = dpc.preemption_policy if dpc else "PreemptLowerPriority"
    else:
        pc = resolve(spec.priority_class_name, classes)
        if pc is None:
            raise AdmissionRejected(PLUGIN, pod, f"no PriorityClass with name {spec.priority_class_name} was found")
        name, value, policy = pc.metadata.name, pc.value, pc.preemption_policy
    if spec.priority is not None and spec.priority != value:
        raise AdmissionRejected(PLUGIN, pod, f"the integer value of priority ({spec.priority}) must not be provided "
                                f"in pod spec; priority admission controller computed {value} from the given "
                                "PriorityClass name")
    if spec.preemption_policy is not None and spec.preemption_policy != policy:
        raise AdmissionRejected(PLUGIN, pod, f"the string value of PreemptionPolicy ({spec.preemption_policy}) must "
                                f"not be provided in pod spec; priority admission controller computed {policy} "
                                "from the given PriorityClass name")
    new_spec = msgspec.structs.replace(spec, priority_class_name=name, priority=value, preemption_policy=policy)
    result.pod = msgspec.structs.replace(pod, spec=new_spec)
    result.changes.append(f"Priority: priorityClassName={name or '(none)'} priority={value} "
                          f"preemptionPolicy={policy}")
