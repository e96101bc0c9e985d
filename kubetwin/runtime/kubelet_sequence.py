"""The order of the kubelet's CRI calls for a node: pods started, cpusets reconciled, pods stopped.

For each pod the kubelet admits, ``SyncPod`` (``kuberuntime_manager.go``) creates the sandbox
(``RunPodSandbox``), then runs the init containers one after the other (a sidecar — restartable
init container — is started and stays up; the next init container starts once the previous one
exited or, for a sidecar, started), then creates and starts the app containers in order. Each
``CreateContainer`` carries the container's ``LinuxContainerResources`` with the cpuset the CPU
Manager (``GetCPUAffinity``: the container's exclusive CPUs or the shared pool at that moment)
and the Memory Manager give it (``PreCreateContainer``). ``PreStartContainer`` records the
exclusive CPUs in the CPU Manager's ``lastUpdateState`` (``AddContainer``).

The static CPU Manager's ``reconcileState`` (every ``cpuManagerReconcilePeriod``) then sends
``UpdateContainerResources`` with just ``cpusetCpus`` to every running container whose cpuset
differs from the last one it sent — each shared-pool container once at least (nothing was sent
for it before), and again whenever the shared pool shrinks or grows. Init containers that ran to
completion are skipped.

kubetwin takes the calls in one deterministic order: each pod is started right after its
admission, before the next pod is admitted; one reconcile pass follows the last pod (pods in
admission order, where the kubelet walks its pod map). Stopping a pod (:meth:`stop_pod`) stops
the app containers, then the sidecars in reverse order (``StopContainer`` with the grace period),
the sandbox (``StopPodSandbox``), and removes them (``RemoveContainer``, ``RemovePodSandbox``);
the managers free the pod's CPUs and memory, which the next reconcile hands to the shared pool.

In-place resize (:meth:`resize_pod`) follows ``SyncPod``: containers whose resize policy asks for
a restart are stopped, ``doPodResizeAction`` (:mod:`kubetwin.runtime.resize_action`) resizes the
pod cgroup and the other containers — memory, then cpu, the pod cgroup raised before and lowered
after its containers, one ``UpdateContainerResources`` per container and resource — then
``UpdatePodSandboxResources``; the restarted containers are created and started again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ..kubelet.cgroup_paths import CgroupLayout
from ..kubelet.cgroups import CgroupSettings
from ..kubelet.qos import get_pod_qos
from ..model.cpuset import EMPTY, CPUSet
from ..model.pod import Container, Pod, is_sidecar
from . import cri
from .blockio import BlockIOClassError
from .cri import CRICall
from .rdt import RdtClassError
from .runtime_state import RuntimeState

if TYPE_CHECKING:
    from ..kubelet.admission import NodeAdmission

HOST, POD_LEVEL, CONTAINER_LEVEL = "host", "pod", "container"


def resource_isolation_level(node: NodeAdmission, pod: Pod, c: Container) -> str:
    """``GetResourceIsolationLevel``: ``host`` without a CPU Manager entry; ``pod`` for a container
    of a pod-level-resources pod that does not qualify for exclusive CPUs (PodLevelResourceManagers);
    else ``container``."""
    from ..kubelet.podlevel import guaranteed_cpus, pod_level_managers_enabled
    from ..model.resources import is_pod_level_resources_set

    if node.cpu.exclusive_cpus(pod.uid, c.name) is None:
        return HOST
    if pod_level_managers_enabled(node.gates) and is_pod_level_resources_set(pod) and \
            guaranteed_cpus(pod, c, node.gates) == 0:
        return POD_LEVEL
    return CONTAINER_LEVEL


def pod_has_exclusive_cpus(node: NodeAdmission, pod: Pod) -> bool:
    """``PodHasExclusiveCPUs``: some container holds CPUs of its own, and none shares the pod's
    pool (a mixed pod-level pod keeps its sandbox quota)."""
    levels = {resource_isolation_level(node, pod, c) for c, _ in pod.all_containers()}
    return CONTAINER_LEVEL in levels and POD_LEVEL not in levels


def layout_of(node: NodeAdmission) -> CgroupLayout:
    cfg = node.config
    return CgroupLayout(cfg.cgroup_driver, cfg.cgroup_root, cfg.cgroups_per_qos)


@dataclass
class KubeletSequence:
    """The CRI calls of one kubelet and the runtime below it, built as pods come and go."""

    node: NodeAdmission
    runtime: RuntimeState
    calls: list[CRICall] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    pods: dict[str, Pod] = field(default_factory=dict)  # uid -> running pod, in start order
    sandbox_ids: dict[str, str] = field(default_factory=dict)
    container_ids: dict[tuple[str, str], str] = field(default_factory=dict)
    failed: dict[tuple[str, str], str] = field(default_factory=dict)
    last_update: dict[tuple[str, str], CPUSet] = field(default_factory=dict)
    restarts: dict[tuple[str, str], int] = field(default_factory=dict)  # container restarts (resize)
    resizes: list[dict[str, Any]] = field(default_factory=list)  # each actuated resize's steps

    def __post_init__(self) -> None:
        from ..kubelet.admission import cgroup_settings

        self.settings: CgroupSettings = cgroup_settings(self.node)
        self.layout = layout_of(self.node)

    # --- admission ------------------------------------------------------------------------------
    def admitted(self, decision: Any) -> None:
        """After ``NodeAdmission.admit``: a rejected pod gets no CRI call; an admitted one is started."""
        pod = decision.pod
        if not decision.admitted:
            self.rejected.append({"pod": pod.name, "namespace": pod.namespace, "reason": decision.reason,
                                  "message": decision.message})
            return
        self.start_pod(pod)

    def _call(self, rpc: str, request: dict[str, Any], fn: Callable[[], Any], *, pod: Pod, container: str = "",
              why: str = "") -> bool:
        try:
            response = fn()
        except (RdtClassError, BlockIOClassError) as exc:
            self.calls.append(CRICall(rpc, request, error=exc.message, why=why, pod=pod.key, container=container))
            return False
        self.calls.append(CRICall(rpc, request, response, why=why, pod=pod.key, container=container))
        return True

    def start_pod(self, pod: Pod) -> None:
        """``SyncPod`` for a new pod: sandbox, init containers in turn, app containers."""
        from ..kubelet.admission import container_resources_for

        node = self.node
        qos = get_pod_qos(pod, node.gates)
        parent = self.layout.path(self.layout.pod(qos, pod.uid))
        sandbox_config = cri.pod_sandbox_config(pod, self.settings, cgroup_parent=parent,
                                                pod_has_exclusive_cpus=pod_has_exclusive_cpus(node, pod))
        sid = cri.sandbox_id(pod)
        request = cri.run_pod_sandbox(sandbox_config, pod.spec.runtime_class_name or "")
        self._call("RunPodSandbox", request, partial(self.runtime.run_pod_sandbox, request, sid), pod=pod)
        self.sandbox_ids[pod.uid] = sid
        self.pods[pod.uid] = pod
        for c, init in pod.all_containers():
            resources, _ = container_resources_for(node, pod, c)
            config = cri.container_config(pod, c, resources)
            cid = cri.container_id(pod, c.name)
            req = cri.create_container(sid, config, sandbox_config)
            ok = self._call("CreateContainer", req, partial(self.runtime.create_container, req, cid), pod=pod,
                            container=c.name)
            if not ok:
                self.failed[(pod.uid, c.name)] = self.calls[-1].error or ""
                if init:
                    break  # an init container that cannot be created blocks the pod's other containers
                continue
            self.container_ids[(pod.uid, c.name)] = cid
            self._call("StartContainer", cri.start_container(cid), partial(self.runtime.start_container, cid),
                       pod=pod, container=c.name)
            exclusive = node.cpu.exclusive_cpus(pod.uid, c.name)
            if exclusive is not None:  # AddContainer
                self.last_update[(pod.uid, c.name)] = exclusive
            if init and not is_sidecar(c):
                self.runtime.stop_container(cid)  # ran to completion: the kubelet sends nothing

    # --- the CPU Manager's reconcile loop ----------------------------------------------------------
    def reconcile(self) -> None:
        """One ``reconcileState`` pass of the static CPU Manager (none under the ``none`` policy)."""
        cpu = self.node.cpu
        if cpu.policy is None:
            return
        for uid, pod in self.pods.items():
            for c, init in pod.all_containers():
                cid = self.container_ids.get((uid, c.name))
                if cid is None or (init and not is_sidecar(c)):
                    continue  # not created, or terminated
                cset = cpu.cpuset_for(uid, c.name) or EMPTY
                if cset.is_empty():
                    continue
                if cset != self.last_update.get((uid, c.name), EMPTY):
                    linux = {"cpusetCpus": str(cset)}
                    req = cri.update_container_resources(cid, linux)
                    self._call("UpdateContainerResources", req,
                               partial(self.runtime.update_container_resources, cid, linux), pod=pod,
                               container=c.name, why="CPU Manager reconcileState")
                    self.last_update[(uid, c.name)] = cset

    # --- stopping ----------------------------------------------------------------------------------
    def stop_pod(self, pod: Pod) -> None:
        """``killPodWithSyncResult`` then garbage collection: containers, sandbox, removal; the
        managers release the pod (``NodeAdmission.remove``)."""
        uid = pod.uid
        running = self.pods.pop(uid, pod)
        timeout = cri.grace_period(running)
        apps = [c for c in running.spec.containers if (uid, c.name) in self.container_ids]
        sidecars = [c for c in running.spec.init_containers if is_sidecar(c) and (uid, c.name) in self.container_ids]
        for c in apps + list(reversed(sidecars)):
            cid = self.container_ids[(uid, c.name)]
            self._call("StopContainer", cri.stop_container(cid, timeout), partial(self.runtime.stop_container, cid),
                       pod=running, container=c.name)
        sid = self.sandbox_ids.get(uid)
        if sid is not None:
            self._call("StopPodSandbox", cri.stop_pod_sandbox(sid), partial(self.runtime.stop_pod_sandbox, sid),
                       pod=running)
        self.node.remove(running)
        for c, _ in running.all_containers():
            removed = self.container_ids.pop((uid, c.name), None)
            self.last_update.pop((uid, c.name), None)
            if removed is not None:
                self._call("RemoveContainer", cri.remove_container(removed),
                           partial(self.runtime.remove_container, removed), pod=running, container=c.name)
        if sid is not None:
            self._call("RemovePodSandbox", cri.remove_pod_sandbox(sid), partial(self.runtime.remove_pod_sandbox, sid),
                       pod=running)
            del self.sandbox_ids[uid]

    # --- in-place resize ---------------------------------------------------------------------------
    def resize_pod(self, new: Pod) -> list[dict[str, Any]]:
        """``SyncPod`` for a running pod whose allocated resources changed (same UID): containers the
        resize policy restarts are stopped (step 3), ``doPodResizeAction`` resizes the others and the
        pod cgroup (step 7, :mod:`kubetwin.runtime.resize_action`), the restarted containers are
        created and started again (step 8). Returns the steps, pod cgroup writes included."""
        import dataclasses

        from ..kubelet.admission import container_resources_for
        from ..kubelet.cgroups import resource_config_for_pod
        from .resize_action import actuated_container, compute_pod_resize_actions, pod_resize_steps

        old = self.pods[new.uid]
        running = {name for (uid, name) in self.container_ids if uid == new.uid}
        for c, init in old.all_containers():
            if init and not is_sidecar(c):
                running.discard(c.name)  # ran to completion
        actions = compute_pod_resize_actions(old, new, running)
        steps: list[dict[str, Any]] = []
        for name, _ in actions.to_restart:  # step 3: kill
            cid = self.container_ids[(new.uid, name)]
            self._call("StopContainer", cri.stop_container(cid, cri.grace_period(old)),
                       partial(self.runtime.stop_container, cid), pod=new, container=name,
                       why="in-place resize: resizePolicy RestartContainer")
            steps.append({"action": "StopContainer", "container": name})
        settings = self.settings
        if self.node.gates.enabled("DisableCPUQuotaWithExclusiveCPUs") and pod_has_exclusive_cpus(self.node, new):
            settings = dataclasses.replace(settings, cpu_cfs_quota=False)  # enforceCPULimits
        current = {c.name: c for c, _ in old.all_containers()}
        desired_by_name = {c.name: c for c, _ in new.all_containers()}
        view = old
        for step in pod_resize_steps(old, new, actions, settings):  # step 7
            if step.action == "UpdateContainerResources":
                u = next(u for u in actions.to_update[step.resource] if u.name == step.container)
                sent = actuated_container(current[u.name], u.desired, step.resource)
                view = _pod_with(view, sent)
                resources, _q = container_resources_for(self.node, view, sent)
                resources = {k: v for k, v in resources.items() if k not in ("cpusetCpus", "cpusetMems")}
                cid = self.container_ids[(new.uid, u.name)]
                req = cri.update_container_resources(cid, resources)
                self._call("UpdateContainerResources", req,
                           partial(self.runtime.update_container_resources, cid, resources), pod=new,
                           container=u.name, why=f"in-place resize ({step.resource})")
                current[u.name] = sent
            steps.append(step.to_dict())
        if actions.to_update["memory"] or actions.to_update["cpu"] or actions.update_pod_resources:
            rc = resource_config_for_pod(new, settings)
            overhead = cri.overhead_resources(new, settings)
            resources = cri.pod_resources_without_overhead(rc, new)
            sid = self.sandbox_ids[new.uid]
            self._call("UpdatePodSandboxResources", cri.update_pod_sandbox_resources(sid, overhead, resources),
                       lambda: {}, pod=new, why="in-place resize")
            steps.append({"action": "UpdatePodSandboxResources"})
        self.pods[new.uid] = new
        for name, _ in actions.to_restart:  # step 8: start again with the new resources
            self._restart_container(new, desired_by_name[name])
            steps.append({"action": "StartContainer", "container": name})
        self.resizes.append({"pod": new.name, "namespace": new.namespace, "actions": steps})
        return steps

    def _restart_container(self, pod: Pod, c: Container) -> None:
        from ..kubelet.admission import container_resources_for

        key = (pod.uid, c.name)
        attempt = self.restarts.get(key, 0) + 1
        self.restarts[key] = attempt
        sid = self.sandbox_ids[pod.uid]
        qos = get_pod_qos(pod, self.node.gates)
        parent = self.layout.path(self.layout.pod(qos, pod.uid))
        sandbox_config = cri.pod_sandbox_config(pod, self.settings, cgroup_parent=parent,
                                                pod_has_exclusive_cpus=pod_has_exclusive_cpus(self.node, pod))
        resources, _ = container_resources_for(self.node, pod, c)
        config = cri.container_config(pod, c, resources)
        cid = cri.container_id(pod, c.name, attempt)
        req = cri.create_container(sid, config, sandbox_config)
        if not self._call("CreateContainer", req, partial(self.runtime.create_container, req, cid), pod=pod,
                          container=c.name, why="in-place resize: resizePolicy RestartContainer"):
            self.failed[key] = self.calls[-1].error or ""
            return
        self.container_ids[key] = cid
        self._call("StartContainer", cri.start_container(cid), partial(self.runtime.start_container, cid),
                   pod=pod, container=c.name, why="in-place resize: resizePolicy RestartContainer")

    def pod_cgroup(self, pod: Pod) -> dict[str, Any] | None:
        """The pod cgroup the kubelet itself writes (``ResourceConfigForPod``), as kubetwin models it."""
        from ..kubelet.cgroups import pod_cgroup_files, resource_config_for_pod

        name = self.layout.pod(get_pod_qos(pod, self.node.gates), pod.uid)
        if name is None:
            return None
        files = pod_cgroup_files(resource_config_for_pod(pod, self.settings), self.settings)
        return {"path": "/sys/fs/cgroup" + (self.layout.path(name) or ""),
                "files": {f.file: str(f.content) for f in files if f.written}}

    # --- output ------------------------------------------------------------------------------------
    def report(self) -> dict[str, Any]:
        """The calls, and what each running pod's sandbox and containers end up with."""
        pods = []
        for uid, pod in self.pods.items():
            sid = self.sandbox_ids.get(uid)
            entry: dict[str, Any] = {"pod": pod.name, "namespace": pod.namespace, "uid": uid,
                                     "podCgroup": self.pod_cgroup(pod)}
            if sid is not None and sid in self.runtime.sandboxes:
                entry["sandbox"] = self.runtime.sandbox_view(sid)
            containers = []
            for c, init in pod.all_containers():
                key = (uid, c.name)
                view: dict[str, Any] = {"name": c.name,
                                        "type": ("sidecar" if is_sidecar(c) else "init") if init else "app"}
                if key in self.failed:
                    view["error"] = self.failed[key]
                cid = self.container_ids.get(key)
                if cid is not None and cid in self.runtime.containers:
                    view.update(self.runtime.container_view(cid))
                containers.append(view)
            entry["containers"] = containers
            pods.append(entry)
        out = {"runtime": self.runtime.runtime.to_dict(), "calls": [c.to_dict() for c in self.calls],
               "pods": pods, "rejected": self.rejected}
        if self.resizes:
            out["resizes"] = self.resizes
        return out


def _pod_with(pod: Pod, c: Container) -> Pod:
    import msgspec

    containers = [c if x.name == c.name else x for x in pod.spec.containers]
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, containers=containers))


__all__ = ["KubeletSequence", "pod_has_exclusive_cpus", "resource_isolation_level", "layout_of"]
