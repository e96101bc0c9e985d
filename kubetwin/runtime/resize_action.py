"""What the kubelet's runtime manager does to actuate an allocated in-place resize.

``computePodResizeAction`` compares, per running container (sidecars first, then app containers),
the desired resources (memory limit, cpu limit, cpu request; the memory request is never
actuated) with the last actuated ones. Requests at or below the minimum shares (2m) count as
equal, as do cpu limits at or below the minimum effective limit (10m). A changed resource whose
``resizePolicy`` is ``RestartContainer`` restarts the container; otherwise the container is
queued for an update of that resource — memory for its limit, cpu for its limit or (limit
unchanged) its request — with decreases ahead of increases.

``doPodResizeAction`` then resizes memory, then cpu. For each resource the pod cgroup is
raised *before* the containers (limits first, then requests) and lowered *after* them
(requests first, then limits), so a child never exceeds its parent; each container gets one
``UpdateContainerResources`` with the resource of the pass at its new value and the other at
its last actuated value. The runtime manager finally tells the runtime the sandbox's new
resources (``UpdatePodSandboxResources``).

Upstream: ``pkg/kubelet/kuberuntime/kuberuntime_manager.go`` (``computePodResizeAction``,
``doPodResizeAction``, ``updatePodContainerResources``, ``SyncPod`` steps 3, 7 and 8).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from ..kubelet.cgroups import (
    MIN_MILLI_CPU_LIMIT,
    MIN_SHARES,
    CgroupSettings,
    ResourceConfig,
    pod_cgroup_files,
    resource_config_for_pod,
)
from ..model.pod import Container, Pod, is_sidecar
from ..model.quantity import Quantity

MEMORY, CPU = "memory", "cpu"


@dataclass(frozen=True)
class ContainerResources:
    """``containerResources``: the values the kubelet compares and actuates."""

    memory_limit: int
    memory_request: int
    cpu_limit: int
    cpu_request: int

    @staticmethod
    def of(c: Container) -> "ContainerResources":
        lim, req = c.resources.limits, c.resources.requests
        return ContainerResources(lim[MEMORY].value() if MEMORY in lim else 0,
                                  req[MEMORY].value() if MEMORY in req else 0,
                                  lim[CPU].milli_value() if CPU in lim else 0,
                                  req[CPU].milli_value() if CPU in req else 0)


@dataclass(frozen=True)
class ContainerUpdate:
    """``containerToUpdateInfo``: a running container to update, with what it should get."""

    name: str
    init: bool
    desired: ContainerResources


@dataclass
class PodResizeActions:
    """The resize part of ``podActions``."""

    #: ``ContainersToUpdate`` per resource, in the order the updates are sent
    to_update: dict[str, list[ContainerUpdate]] = field(default_factory=lambda: {MEMORY: [], CPU: []})
    #: containers the resize policy restarts (``ContainersToKill`` then ``ContainersToStart``)
    to_restart: list[tuple[str, bool]] = field(default_factory=list)
    #: ``UpdatePodResources``: set when a container restarts
    update_pod_resources: bool = False


def _determine(c: Container, resource: str, spec: int, status: int) -> tuple[bool, bool]:
    """``determineContainerResize``: (resize, restart); no policy means ``NotRequired``."""
    if spec == status:
        return False, False
    for p in c.resize_policy:
        if p.resource_name == resource:
            return True, p.restart_policy == "RestartContainer"
    return True, False


def _mark(actions: PodResizeActions, resource: str, update: ContainerUpdate, spec: int, status: int) -> None:
    """``markContainerForUpdate``: decreases are prepended, increases appended."""
    if spec > status:
        actions.to_update[resource].append(update)
    elif spec < status:
        actions.to_update[resource].insert(0, update)


def compute_pod_resize_actions(actuated: Pod, desired: Pod, running: set[str]) -> PodResizeActions:
    """``computePodResizeAction`` for every running container of the pod (``running``: names)."""
    actions = PodResizeActions()
    # pod-level resources (InPlacePodLevelResourcesVerticalScaling) resize the pod cgroup itself
    actions.update_pod_resources = actuated.spec.resources != desired.spec.resources
    current_of = {c.name: c for c, _ in actuated.all_containers()}
    order = [(c, True) for c in desired.spec.init_containers if is_sidecar(c)] + \
        [(c, False) for c in desired.spec.containers]
    for c, init in order:
        cur_c = current_of.get(c.name)
        if cur_c is None or c.name not in running:
            continue
        want = ContainerResources.of(c)
        cur = ContainerResources.of(cur_c)
        cur = ContainerResources(cur.memory_limit, want.memory_request, cur.cpu_limit, cur.cpu_request)
        if want.cpu_request <= MIN_SHARES and cur.cpu_request <= MIN_SHARES:
            want = ContainerResources(want.memory_limit, want.memory_request, want.cpu_limit, cur.cpu_request)
        if want.cpu_limit <= MIN_MILLI_CPU_LIMIT and cur.cpu_limit <= MIN_MILLI_CPU_LIMIT:
            want = ContainerResources(want.memory_limit, want.memory_request, cur.cpu_limit, want.cpu_request)
        if want == cur:
            continue
        mem, mem_restart = _determine(c, MEMORY, want.memory_limit, cur.memory_limit)
        lim, lim_restart = _determine(c, CPU, want.cpu_limit, cur.cpu_limit)
        req, req_restart = _determine(c, CPU, want.cpu_request, cur.cpu_request)
        if mem_restart or lim_restart or req_restart:
            actions.to_restart.append((c.name, init))
            actions.update_pod_resources = True
            continue
        update = ContainerUpdate(c.name, init, want)
        if mem:
            _mark(actions, MEMORY, update, want.memory_limit, cur.memory_limit)
        if lim:
            _mark(actions, CPU, update, want.cpu_limit, cur.cpu_limit)
        elif req:
            _mark(actions, CPU, update, want.cpu_request, cur.cpu_request)
    return actions


# --- doPodResizeAction --------------------------------------------------------------------------


@dataclass(frozen=True)
class ResizeStep:
    """One step of ``doPodResizeAction``: a pod cgroup write or a container update."""

    action: str  # "SetPodCgroupConfig" | "UpdateContainerResources"
    resource: str
    container: str = ""
    #: for a pod cgroup write: the files written and their values
    files: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"action": self.action, "resource": self.resource}
        if self.container:
            out["container"] = self.container
        if self.files:
            out["files"] = dict(self.files)
        return out


def _files(rc: ResourceConfig, settings: CgroupSettings, names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((f.file, str(f.content)) for f in pod_cgroup_files(rc, settings) if f.file in names)


_FILES = {(MEMORY, True): ("memory.max", "memory.limit_in_bytes"), (CPU, True): ("cpu.max", "cpu.cfs_quota_us",
                                                                                 "cpu.cfs_period_us"),
          (CPU, False): ("cpu.weight", "cpu.shares")}


def pod_resize_steps(actuated: Pod, desired: Pod, actions: PodResizeActions,
                     settings: CgroupSettings) -> list[ResizeStep]:
    """``doPodResizeAction``'s order of pod cgroup writes and container updates (memory, then cpu).
    ``settings`` carry ``cpuCFSQuota`` false when the pod holds exclusive CPUs and
    ``DisableCPUQuotaWithExclusiveCPUs`` is on (``enforceCPULimits``)."""
    new_rc = resource_config_for_pod(desired, settings)
    cur_rc = resource_config_for_pod(actuated, settings)
    steps: list[ResizeStep] = []

    def set_pod(resource: str, limit: bool) -> None:
        if resource == MEMORY and not limit:
            return  # memory requests are not written to cgroups
        files = _files(new_rc, settings, _FILES[(resource, limit)])
        steps.append(ResizeStep("SetPodCgroupConfig", resource, files=files))

    def resize(resource: str, cur_lim: int, new_lim: int, cur_req: int, new_req: int) -> None:
        if new_lim > cur_lim:
            set_pod(resource, True)
        if new_req > cur_req:
            set_pod(resource, False)
        for u in actions.to_update[resource]:
            steps.append(ResizeStep("UpdateContainerResources", resource, u.name))
        if new_req < cur_req:
            set_pod(resource, False)
        if new_lim < cur_lim:
            set_pod(resource, True)

    if actions.to_update[MEMORY] or actions.update_pod_resources:
        cur_mem = cur_rc.memory if cur_rc.memory is not None else _UNLIMITED
        new_mem = new_rc.memory if new_rc.memory is not None else cur_mem  # no limit: left as it is
        resize(MEMORY, cur_mem, new_mem, 0, 0)
    if actions.to_update[CPU] or actions.update_pod_resources:
        cur_quota = cur_rc.cpu_quota if cur_rc.cpu_quota is not None else -1
        new_quota = new_rc.cpu_quota if new_rc.cpu_quota is not None else cur_quota
        resize(CPU, cur_quota, new_quota, cur_rc.cpu_shares or 0, new_rc.cpu_shares or 0)
    return steps


#: what an unlimited pod memory cgroup reads back as (``max``)
_UNLIMITED = (1 << 63) - 1


def actuated_container(current: Container, desired: ContainerResources, resource: str) -> Container:
    """``updatePodContainerResources``: the container as sent for one pass — the pass's resource at
    its desired value, the other at its last actuated value (zero values left out)."""
    cur = ContainerResources.of(current)
    if resource == MEMORY:
        lim = {CPU: cur.cpu_limit, MEMORY: desired.memory_limit}
        req = {CPU: cur.cpu_request, MEMORY: desired.memory_request}
    else:
        lim = {CPU: desired.cpu_limit, MEMORY: cur.memory_limit}
        req = {CPU: desired.cpu_request, MEMORY: cur.memory_request}

    def q(values: dict[str, int]) -> dict[str, Quantity]:
        out = {}
        for name, v in values.items():
            if v:
                out[name] = Quantity.from_milli(v) if name == CPU else Quantity.from_int(v)
        return out

    others_req = {k: v for k, v in current.resources.requests.items() if k not in (CPU, MEMORY)}
    others_lim = {k: v for k, v in current.resources.limits.items() if k not in (CPU, MEMORY)}
    res = msgspec.structs.replace(current.resources, requests={**others_req, **q(req)},
                                  limits={**others_lim, **q(lim)})
    return msgspec.structs.replace(current, resources=res)


__all__ = ["ContainerResources", "ContainerUpdate", "PodResizeActions", "ResizeStep", "actuated_container",
           "compute_pod_resize_actions", "pod_resize_steps"]
