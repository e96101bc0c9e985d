"""Pod-level resource managers (KEP-5526, gates PodLevelResources + PodLevelResourceManagers).

What the CPU and memory managers share when a pod sets ``spec.resources``: which containers are
"equivalent Guaranteed" (and so may take an exclusive slice of the pod's budget), the pod's
integer CPU budget, and the validation that rejects a pod whose exclusive slices would leave
its shared containers nothing (``validatePodScopeResources``).

Upstream: the pod-level parts of ``pkg/kubelet/cm/cpumanager/policy_static.go`` and
``pkg/kubelet/cm/memorymanager/policy_static.go``.
"""

from __future__ import annotations

from ..model.features import FeatureGates
from ..model.pod import Container, Pod, is_sidecar
from ..model.resources import is_pod_level_resources_set
from .admission_errors import EmptyPodSharedPoolError
from .qos import GUARANTEED
from .qos import get_pod_qos as _get_pod_qos

#: The last pod whose QoS class was computed: every provider asks for it several times per
#: admission, and pods are immutable, so identity is a safe key.
_last_qos: list = [None, None, ""]


def get_pod_qos(pod: Pod, gates: FeatureGates) -> str:
    """``GetPodQOS``, remembered for the pod being admitted."""
    last = _last_qos
    if last[0] is pod and last[1] is gates:
        return last[2]
    qos = _get_pod_qos(pod, gates)
    last[0], last[1], last[2] = pod, gates, qos
    return qos


def pod_level_managers_enabled(gates: FeatureGates) -> bool:
    return gates.enabled("PodLevelResources") and gates.enabled("PodLevelResourceManagers")


def is_pod_level_pod(pod: Pod) -> bool:
    return is_pod_level_resources_set(pod)


def skipped_for_pod_level(pod: Pod, gates: FeatureGates) -> bool:
    """A pod with pod-level resources is never pinned while the pod-level gates are off."""
    return is_pod_level_resources_set(pod) and not pod_level_managers_enabled(gates)


def is_container_equivalent_guaranteed(c: Container) -> bool:
    """cpu and memory both requested and limited, request == limit (the container alone would be Guaranteed)."""
    for name in ("cpu", "memory"):
        req = c.resources.requests.get(name)
        lim = c.resources.limits.get(name)
        if req is None or lim is None or req.cmp(lim) != 0 or req.sign() <= 0:
            return False
    return True


def integer_cpus(q) -> int:
    """The whole CPUs of a quantity, or 0 when it is fractional (``value*1000 != milliValue``)."""
    if q is None:
        return 0
    v = q.value()
    return v if v * 1000 == q.milli_value() else 0


def guaranteed_cpus(pod: Pod, c: Container, gates: FeatureGates) -> int:
    """``guaranteedCPUs``: exclusive CPUs a container is entitled to (0 = shared pool)."""
    if get_pod_qos(pod, gates) != GUARANTEED:
        return 0
    if pod_level_managers_enabled(gates) and is_pod_level_resources_set(pod):
        if not is_container_equivalent_guaranteed(c):
            return 0
    return integer_cpus(c.resources.requests.get("cpu"))


def pod_guaranteed_cpus(pod: Pod, gates: FeatureGates) -> int:
    """``podGuaranteedCPUs``: the pod budget (pod level) or the sidecar-aware container sum."""
    if pod_level_managers_enabled(gates) and is_pod_level_resources_set(pod):
        if get_pod_qos(pod, gates) != GUARANTEED:
            return 0
        res = pod.spec.resources
        return integer_cpus(res.requests.get("cpu") if res is not None else None)
    restartable = 0
    init_max = 0
    for c in pod.spec.init_containers:
        if "cpu" not in c.resources.requests:
            continue
        n = guaranteed_cpus(pod, c, gates)
        if is_sidecar(c):
            restartable += n
        else:
            init_max = max(init_max, restartable + n)
    apps = sum(guaranteed_cpus(pod, c, gates) for c in pod.spec.containers)
    return max(init_max, apps + restartable)


def validate_pod_scope_resources(pod: Pod, total: int, gates: FeatureGates) -> None:
    """``validatePodScopeResources``: raise ``EmptyPodSharedPoolError`` when the budget cannot work."""
    long_running = 0
    has_shared_long_running = False
    for c in pod.spec.init_containers:
        n = guaranteed_cpus(pod, c, gates)
        if is_sidecar(c):
            if n > 0:
                long_running += n
            else:
                has_shared_long_running = True
            continue
        if n > 0:
            if n > total - long_running:
                raise EmptyPodSharedPoolError(f"pod rejected, largest exclusive init container requests {n} cpus, "
                                              f"but only {total - long_running} available")
        elif long_running >= total:
            raise EmptyPodSharedPoolError("pod rejected, pod has shared init containers but no cpus available for them")
    for c in pod.spec.containers:
        n = guaranteed_cpus(pod, c, gates)
        if n > 0:
            long_running += n
        else:
            has_shared_long_running = True
    if has_shared_long_running and long_running >= total:
        raise EmptyPodSharedPoolError("pod rejected, sum of exclusive container cpu requests equals pod budget, "
                                      "leaving no cpus for shared containers")
