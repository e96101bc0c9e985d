"""The CRI messages the kubelet sends the container runtime, in protobuf-JSON shape.

Message and field names are those of ``k8s.io/cri-api`` ``pkg/apis/runtime/v1/api.proto``
(``RunPodSandboxRequest``, ``PodSandboxConfig``, ``LinuxPodSandboxConfig``,
``CreateContainerRequest``, ``LinuxContainerResources``, ...), written as protobuf's JSON mapping
writes them: lowerCamelCase names, enums by name, fields at their proto3 default (0, ``""``,
false, empty lists and maps) left out — except that 64-bit integers are JSON numbers (which
every protobuf JSON parser accepts) rather than the canonical strings.

The values follow the kubelet (v1.36): ``generatePodSandboxConfig`` and
``generatePodSandboxLinuxConfig`` (``kuberuntime_sandbox.go``), ``calculateSandboxResources``,
``convertOverheadToLinuxResources`` and ``calculateLinuxResources``
(``kuberuntime_sandbox_linux.go``, ``kuberuntime_container_linux.go``), container labels
(``labels.go``). A container's ``LinuxContainerResources`` are computed by
:mod:`kubetwin.kubelet.cgroups` (with the CPU and memory managers' cpusets); this module wraps them.

Only fields that bear on resources, placement and identity are written: DNS, hostname, port
mappings, mounts, environment, image, command, seccomp/AppArmor/SELinux and the container
annotations (hash, restart count, termination message) are left out.

Sandbox and container ids are made up by the runtime; kubetwin derives stable 64-hex stand-ins
from the pod UID and container name (:func:`sandbox_id`, :func:`container_id`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Mapping

from ..kubelet.cgroups import QUOTA_PERIOD, CgroupSettings, milli_cpu_to_quota, milli_cpu_to_shares
from ..kubelet.oom import gate
from ..model.pod import Container, Pod
from ..model.resources import (
    CPU,
    MEMORY,
    PodResourcesOptions,
    pod_limits,
    pod_requests,
    quantity_milli_value,
    quantity_value,
)

# NamespaceMode
POD, CONTAINER, NODE = "POD", "CONTAINER", "NODE"
#: Map fields of the messages (left out when empty, like repeated fields).
_MAP_FIELDS = frozenset({"labels", "annotations", "unified", "sysctls"})
#: ``minimumGracePeriodInSeconds``: the kubelet never gives a container less to stop.
MINIMUM_GRACE_PERIOD_SECONDS = 2
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30

POD_NAME_LABEL = "io.kubernetes.pod.name"
POD_NAMESPACE_LABEL = "io.kubernetes.pod.namespace"
POD_UID_LABEL = "io.kubernetes.pod.uid"
CONTAINER_NAME_LABEL = "io.kubernetes.container.name"


def prune(msg: Any) -> Any:
    """Drop proto3-default scalars and empty repeated/map fields; keep set (even empty) messages."""
    if isinstance(msg, dict):
        out: dict[str, Any] = {}
        for k, v in msg.items():
            zero_number = isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0
            if v is None or v is False or v == "" or zero_number:
                continue
            if isinstance(v, list):
                if not v:
                    continue
                out[k] = [prune(x) for x in v]
                continue
            if isinstance(v, dict):
                if k in _MAP_FIELDS:
                    if v:
                        out[k] = dict(v)
                    continue
                out[k] = prune(v)
                continue
            out[k] = v
        return out
    return msg


def _hexid(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def sandbox_id(pod: Pod, attempt: int = 0) -> str:
    """A stable stand-in for the id the runtime gives the pod's sandbox."""
    return _hexid("sandbox", pod.uid or pod.key, str(attempt))


def container_id(pod: Pod, name: str, attempt: int = 0) -> str:
    """A stable stand-in for the id the runtime gives a container."""
    return _hexid("container", pod.uid or pod.key, name, str(attempt))


@dataclass(frozen=True, slots=True)
class CRICall:
    """One RPC of ``runtime.v1.RuntimeService``: the request, the response, and why it was made."""

    rpc: str
    request: Mapping[str, Any]
    response: Mapping[str, Any] | None = None
    error: str | None = None
    why: str = ""
    pod: str = ""
    container: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rpc": self.rpc}
        if self.pod:
            out["pod"] = self.pod
        if self.container:
            out["container"] = self.container
        if self.why:
            out["why"] = self.why
        out["request"] = self.request
        if self.error is not None:
            out["error"] = self.error
        elif self.response is not None:
            out["response"] = self.response
        return out


# --- resources ------------------------------------------------------------------------------


def calculate_linux_resources(cpu_request_milli: int | None, cpu_limit_milli: int | None, memory_limit: int,
                              settings: CgroupSettings, disable_cpu_quota: bool = False) -> dict[str, Any]:
    """``calculateLinuxResources``: shares (from the request, else the limit), quota, memory limit,
    and ``memory.oom.group`` on cgroup v2 unless ``singleProcessOOMKill``."""
    if cpu_request_milli is None and cpu_limit_milli is not None:
        shares = milli_cpu_to_shares(cpu_limit_milli)
    else:
        shares = milli_cpu_to_shares(cpu_request_milli or 0)
    res: dict[str, Any] = {"cpuShares": shares}
    if memory_limit:
        res["memoryLimitInBytes"] = memory_limit
    if settings.cpu_cfs_quota:
        period = settings.cpu_cfs_quota_period_us if settings.custom_period else QUOTA_PERIOD
        quota = milli_cpu_to_quota(cpu_limit_milli or 0, period)
        res["cpuQuota"] = -1 if disable_cpu_quota else quota
        res["cpuPeriod"] = period
    if settings.v2 and not settings.single_process_oom_kill:
        res["unified"] = {"memory.oom.group": "1"}
    return res


def sandbox_resources(pod: Pod, settings: CgroupSettings, pod_has_exclusive_cpus: bool = False) -> dict[str, Any]:
    """``calculateSandboxResources``: the pod's requests and limits without overhead (pod-level
    resources included under PodLevelResources, DRA node-allocatable claims under
    DRANodeAllocatableResources); no CFS quota when the pod has exclusive CPUs (gate
    DisableCPUQuotaWithExclusiveCPUs)."""
    g = settings.gates
    opts = PodResourcesOptions(exclude_overhead=True, skip_pod_level_resources=not gate(g, "PodLevelResources"),
                               use_dra_node_allocatable_resource_claim_status=gate(g, "DRANodeAllocatableResources"))
    req = pod_requests(pod, opts)
    lim = pod_limits(pod, opts)
    cpu_request = quantity_milli_value(req, CPU) if CPU in req else None
    disable = gate(settings.gates, "DisableCPUQuotaWithExclusiveCPUs") and pod_has_exclusive_cpus
    return calculate_linux_resources(cpu_request, quantity_milli_value(lim, CPU), quantity_value(lim, MEMORY),
                                     settings, disable)


def overhead_resources(pod: Pod, settings: CgroupSettings) -> dict[str, Any]:
    """``convertOverheadToLinuxResources``: the RuntimeClass overhead as Guaranteed resources
    (request = limit); an empty message without overhead."""
    if not pod.spec.overhead:
        return {}
    cpu = quantity_milli_value(pod.spec.overhead, CPU)
    return calculate_linux_resources(cpu, cpu, quantity_value(pod.spec.overhead, MEMORY), settings)


def pod_resources_without_overhead(rc: Any, pod: Pod) -> dict[str, Any]:
    """``subtractOverheadFromResourceConfig`` then ``convertResourceConfigToLinuxContainerResources``:
    the pod cgroup's values (a :class:`~kubetwin.kubelet.cgroups.ResourceConfig`) less the overhead."""
    from ..kubelet.cgroups import shares_to_milli_cpu

    quota, shares, memory = rc.cpu_quota, rc.cpu_shares, rc.memory
    overhead = pod.spec.overhead
    if overhead:
        if CPU in overhead:
            cpu = overhead[CPU].milli_value()
            if rc.cpu_period is not None:
                quota = (quota or 0) - milli_cpu_to_quota(cpu, rc.cpu_period)
            if shares is not None:
                shares = milli_cpu_to_shares(shares_to_milli_cpu(shares) - cpu)
        if MEMORY in overhead and memory is not None:
            memory -= overhead[MEMORY].value()
    out: dict[str, Any] = {}
    if rc.cpu_period is not None:
        out["cpuPeriod"] = rc.cpu_period
    if quota is not None:
        out["cpuQuota"] = quota
    if shares is not None:
        out["cpuShares"] = shares
    if memory is not None:
        out["memoryLimitInBytes"] = memory
    if rc.unified:
        out["unified"] = dict(rc.unified)
    return out


# --- configs --------------------------------------------------------------------------------


def pod_labels(pod: Pod) -> dict[str, str]:
    """``newPodLabels``: the pod's labels plus the kubelet's identity labels."""
    out = dict(pod.metadata.labels)
    out[POD_NAME_LABEL] = pod.name
    out[POD_NAMESPACE_LABEL] = pod.namespace
    out[POD_UID_LABEL] = pod.uid
    return out


def container_labels(pod: Pod, c: Container) -> dict[str, str]:
    """``newContainerLabels``."""
    return {CONTAINER_NAME_LABEL: c.name, POD_NAME_LABEL: pod.name, POD_NAMESPACE_LABEL: pod.namespace,
            POD_UID_LABEL: pod.uid}


def namespaces_for_pod(pod: Pod) -> dict[str, str]:
    """``namespacesForPod``: host network/PID/IPC, or the pod's; PID per container unless shared.
    ``POD`` is the enum's zero value, so protobuf JSON leaves it out."""
    spec = pod.spec
    pid = NODE if spec.host_pid else POD if spec.share_process_namespace else CONTAINER
    modes = {"network": NODE if spec.host_network else POD, "pid": pid, "ipc": NODE if spec.host_ipc else POD}
    return {k: v for k, v in modes.items() if v != POD}


def has_privileged_container(pod: Pod) -> bool:
    """``HasPrivilegedContainer``: any init, app or ephemeral container with ``privileged: true``."""
    return any(c.security_context is not None and c.security_context.privileged
               for c in (*pod.spec.init_containers, *pod.spec.containers, *pod.spec.ephemeral_containers))


def pod_log_directory(pod: Pod) -> str:
    """``BuildPodLogsDirectory``."""
    return f"/var/log/pods/{pod.namespace}_{pod.name}_{pod.uid}"


def pod_sandbox_config(pod: Pod, settings: CgroupSettings, *, cgroup_parent: str | None,
                       pod_has_exclusive_cpus: bool = False, attempt: int = 0) -> dict[str, Any]:
    """``PodSandboxConfig`` (the resource-relevant part): metadata, labels, annotations, log
    directory and ``linux`` (cgroup parent, security context, sysctls, overhead, resources)."""
    sysctls = {}
    if pod.spec.security_context is not None:
        sysctls = {s.name: s.value for s in pod.spec.security_context.sysctls}
    linux: dict[str, Any] = {
        "cgroupParent": cgroup_parent or "",
        "securityContext": prune({"namespaceOptions": namespaces_for_pod(pod),
                                  "privileged": has_privileged_container(pod)}),
        "sysctls": sysctls,
        "overhead": prune(overhead_resources(pod, settings)),
        "resources": prune(sandbox_resources(pod, settings, pod_has_exclusive_cpus)),
    }
    return prune({
        "metadata": prune({"name": pod.name, "uid": pod.uid, "namespace": pod.namespace, "attempt": attempt}),
        "logDirectory": pod_log_directory(pod),
        "labels": pod_labels(pod),
        "annotations": dict(pod.metadata.annotations),
        "linux": prune(linux),
    })


def container_config(pod: Pod, c: Container, resources: Mapping[str, Any], *, attempt: int = 0) -> dict[str, Any]:
    """``ContainerConfig`` (the resource-relevant part): metadata, labels and ``linux``
    (``LinuxContainerResources`` and the security context's namespaces and privilege)."""
    sc = {"namespaceOptions": namespaces_for_pod(pod),
          "privileged": bool(c.security_context is not None and c.security_context.privileged)}
    return prune({
        "metadata": prune({"name": c.name, "attempt": attempt}),
        "labels": container_labels(pod, c),
        "linux": prune({"resources": prune(dict(resources)), "securityContext": prune(sc)}),
    })


# --- requests -------------------------------------------------------------------------------


def run_pod_sandbox(config: Mapping[str, Any], runtime_handler: str = "") -> dict[str, Any]:
    return prune({"config": config, "runtimeHandler": runtime_handler})


def create_container(pod_sandbox_id: str, config: Mapping[str, Any],
                     sandbox_config: Mapping[str, Any]) -> dict[str, Any]:
    return {"podSandboxId": pod_sandbox_id, "config": config, "sandboxConfig": sandbox_config}


def start_container(cid: str) -> dict[str, Any]:
    return {"containerId": cid}


def update_container_resources(cid: str, linux: Mapping[str, Any]) -> dict[str, Any]:
    return {"containerId": cid, "linux": prune(dict(linux))}


def update_pod_sandbox_resources(sid: str, overhead: Mapping[str, Any], resources: Mapping[str, Any]) -> dict[str, Any]:
    return {"podSandboxId": sid, "overhead": prune(dict(overhead)), "resources": prune(dict(resources))}


def stop_container(cid: str, timeout: int) -> dict[str, Any]:
    return prune({"containerId": cid, "timeout": timeout})


def remove_container(cid: str) -> dict[str, Any]:
    return {"containerId": cid}


def stop_pod_sandbox(sid: str) -> dict[str, Any]:
    return {"podSandboxId": sid}


def remove_pod_sandbox(sid: str) -> dict[str, Any]:
    return {"podSandboxId": sid}


def grace_period(pod: Pod) -> int:
    """The seconds the kubelet gives each container to stop (``killContainer``): the pod's
    ``terminationGracePeriodSeconds`` (default 30), at least ``minimumGracePeriodInSeconds``."""
    g = pod.spec.termination_grace_period_seconds
    g = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS if g is None else g
    return max(g, MINIMUM_GRACE_PERIOD_SECONDS)


__all__ = ["CRICall", "prune", "sandbox_id", "container_id", "calculate_linux_resources", "sandbox_resources",
           "overhead_resources", "pod_resources_without_overhead", "pod_labels", "container_labels",
           "namespaces_for_pod", "has_privileged_container",
           "pod_sandbox_config", "container_config", "run_pod_sandbox", "create_container", "start_container",
           "update_container_resources", "update_pod_sandbox_resources", "stop_container", "remove_container",
           "stop_pod_sandbox", "remove_pod_sandbox", "grace_period", "POD", "CONTAINER", "NODE"]
