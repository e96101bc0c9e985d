"""A pod's QoS class, as ``pkg/apis/core/v1/helper/qos`` computes it.

The class decides OOM scores, the cgroup parent, eviction order and what the kubelet
protects, so every component asks here. Only ``cpu`` and ``memory`` count, quantities
that are not positive are ignored, and the comparison is on *sums* over all containers
(init containers and sidecars included): two containers 1/2 and 2/1 CPU are Guaranteed
together. Pod-level resources, when they apply, decide alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping

from ..model.features import FeatureGates, gates_for
from ..model.pod import Pod
from ..model.quantity import Quantity
from ..model.resources import add_resource_list, is_pod_level_resources_set

GUARANTEED = "Guaranteed"
BURSTABLE = "Burstable"
BEST_EFFORT = "BestEffort"

QOS_COMPUTE_RESOURCES = ("cpu", "memory")


@lru_cache(maxsize=1)
def default_gates() -> FeatureGates:
    return gates_for(None)


@dataclass(frozen=True, slots=True)
class QOSDecision:
    """The class and, in words, the rule that produced it (for ``kubetwin explain``)."""

    qos_class: str
    rule: str
    #: True when ``spec.resources`` (pod level) decided instead of the containers.
    pod_level: bool = False


def _positive_qos(values: Mapping[str, Quantity]) -> dict[str, Quantity]:
    return {n: q for n, q in values.items() if n in QOS_COMPUTE_RESOURCES and q.sign() > 0}


def uses_pod_level_qos(pod: Pod, gates: FeatureGates | None = None) -> bool:
    """Whether ``spec.resources`` decides the class.

    Without PodLevelResourcesFixKubeletQOSClass an empty ``spec.resources: {}`` already
    counts as pod-level (and makes the pod BestEffort whatever its containers say).
    """
    g = gates or default_gates()
    if not g.enabled("PodLevelResources") or pod.spec.resources is None:
        return False
    return not _fix_enabled(g) or is_pod_level_resources_set(pod)


def _fix_enabled(g: FeatureGates) -> bool:
    try:
        return g.enabled("PodLevelResourcesFixKubeletQOSClass")
    except KeyError:  # a version before the gate existed: the old behaviour
        return False


def compute_pod_qos(pod: Pod, gates: FeatureGates | None = None) -> QOSDecision:
    """``ComputePodQOS``, ignoring ``status.qosClass``.

    The kubelet asks it once per container (``GetContainerOOMScoreAdjust``, the container's
    cgroup values) and it walks every container: a pod with many containers is answered once
    (by the pod object, which is immutable), not once per container."""
    pod_level = uses_pod_level_qos(pod, gates)
    if len(pod.spec.containers) + len(pod.spec.init_containers) < _MEMO_FROM:
        return _compute_pod_qos(pod, pod_level)
    hit = _MEMO.get(id(pod))
    if hit is not None and hit[0] is pod and hit[1] == pod_level:
        return hit[2]
    decision = _compute_pod_qos(pod, pod_level)
    if len(_MEMO) >= 64:
        _MEMO.clear()
    _MEMO[id(pod)] = (pod, pod_level, decision)   # the pod held: its id is not reused while kept
    return decision


#: pods with at least this many containers have their class kept (see compute_pod_qos)
_MEMO_FROM = 16
_MEMO: dict[int, tuple[Pod, bool, QOSDecision]] = {}


def _compute_pod_qos(pod: Pod, pod_level: bool) -> QOSDecision:
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    guaranteed = True
    lacking = ""
    if pod_level:
        res = pod.spec.resources
        assert res is not None
        add_resource_list(requests, _positive_qos(res.requests))
        if res.limits:
            found = _positive_qos(res.limits)
            add_resource_list(limits, found)
            if not all(n in found for n in QOS_COMPUTE_RESOURCES):
                guaranteed = False
                lacking = "the pod-level limits lack a positive cpu or memory limit"
    else:
        for c in list(pod.spec.containers) + list(pod.spec.init_containers):
            add_resource_list(requests, _positive_qos(c.resources.requests))
            found = _positive_qos(c.resources.limits)
            add_resource_list(limits, found)
            if not all(n in found for n in QOS_COMPUTE_RESOURCES) and guaranteed:
                guaranteed = False
                lacking = f"container {c.name} lacks a positive cpu or memory limit"
    where = "pod-level resources" if pod_level else "containers"
    if not requests and not limits:
        return QOSDecision(BEST_EFFORT, f"no positive cpu or memory request or limit in the {where}", pod_level)
    if guaranteed:
        for name, req in requests.items():
            lim = limits.get(name)
            if lim is None or lim.cmp(req) != 0:
                guaranteed = False
                lacking = f"summed {name} request {req} differs from the summed limit {lim if lim is not None else 'none'}"
                break
    if guaranteed and len(requests) == len(limits):
        return QOSDecision(GUARANTEED, f"the {where} set cpu and memory limits equal to the requests", pod_level)
    if guaranteed:
        missing = sorted(set(limits) - set(requests))
        lacking = f"no {' or '.join(missing)} request to match the limit"
    return QOSDecision(BURSTABLE, f"{lacking} ({where} decide)", pod_level)


def get_pod_qos(pod: Pod, gates: FeatureGates | None = None) -> str:
    """``GetPodQOS``: ``status.qosClass`` when the pod already has one, else computed."""
    if pod.status.qos_class:
        return pod.status.qos_class
    return compute_pod_qos(pod, gates).qos_class


def explain_pod_qos(pod: Pod, gates: FeatureGates | None = None) -> QOSDecision:
    if pod.status.qos_class:
        return QOSDecision(pod.status.qos_class, "taken from status.qosClass")
    return compute_pod_qos(pod, gates)


__all__ = ["GUARANTEED", "BURSTABLE", "BEST_EFFORT", "QOSDecision", "compute_pod_qos", "get_pod_qos",
           "explain_pod_qos", "uses_pod_level_qos"]
