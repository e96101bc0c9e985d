"""One node below the kubelet: the kubelet's CRI calls, the runtime's NRI events, the result.

A pod is admitted by the kubelet (:class:`..kubelet.admission.NodeAdmission`, with its own
managers: typically ``cpuManagerPolicy: none`` under an NRI policy); the runtime then runs its
sandbox (``RunPodSandbox``), and creates and starts its containers in the kubelet's order —
each init container created, started and, unless it is a sidecar, run to completion
(``StopContainer``) before the next; then the app containers. Each container is described to
the NRI plugins as the runtime sees it: the CRI ``LinuxContainerResources`` the kubelet
computed (CPU shares, quota, memory limit, OOM score) turned into NRI's ``LinuxResources``. The
plugins' adjustment is applied to the container, their updates to the others.

An ``UpdateContainerResources`` (in-place resize) goes to the plugins as ``UpdateContainer``;
the runtime applies the other containers' updates, then the request as the plugins adjusted it.

Deleting a pod stops its running containers, removes all of them, then stops and removes the
sandbox. A pod the kubelet refuses, or whose sandbox or a container the plugins refuse, is
reported rejected (``CreateContainerError`` with the plugin's error): the runtime undoes the failed
creation (``StopContainer`` and ``RemoveContainer`` to the plugins, containerd's
``UndoCreateContainer``) and kubetwin then tears the pod down as if deleted — a real kubelet would
keep retrying the failed container.

Upstream: kubernetes ``pkg/kubelet/kuberuntime/kuberuntime_manager.go`` (SyncPod, killPod),
containerd ``internal/cri`` NRI hooks, containerd/nri v0.12.2 ``pkg/adaptation``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..kubelet.admission import NodeAdmission, container_resources_for
from ..kubelet.cgroup_paths import CgroupLayout
from ..machine.model import Machine
from ..model.cpuset import CPUSet
from ..model.kubelet_config import KubeletConfiguration
from ..model.pod import Pod, is_sidecar
from . import fastcreate, fastpod
from .config import PolicyResource
from .nri import api
from .nri.adaptation import Adaptation, PluginError, apply_update
from .nri.stub import Plugin
from .resmgr.manager import ResourceManager
from .resmgr.policy import PolicyError, new_policy
from .sysfs import System


def _hex_id(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


@dataclass(eq=False)
class ContainerRecord:
    name: str
    kind: str  # "init" | "sidecar" | "app"
    ctr: api.Container
    state: str = "created"  # created | running | exited
    adjustment: dict[str, Any] = field(default_factory=dict)
    replies: list[dict[str, Any]] = field(default_factory=list)
    cri: dict[str, Any] = field(default_factory=dict)
    qos: str = ""
    owners: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False)
class PodRecord:
    pod: Pod
    sandbox: api.PodSandbox
    containers: list[ContainerRecord] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.pod.key


@dataclass(frozen=True)
class Rejection:
    pod: str
    namespace: str
    reason: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"pod": self.pod, "namespace": self.namespace, "reason": self.reason, "message": self.message}


class RuntimeNode:
    """The kubelet, the container runtime and its NRI plugins of one node."""

    def __init__(self, machine: Machine, policy: PolicyResource | None, kubelet: KubeletConfiguration, *,
                 plugins: Sequence[Plugin] = (), isolated: CPUSet = CPUSet(), runtime: str = "containerd",
                 admission: NodeAdmission | None = None, traced: bool = True):
        self.machine = machine
        self.system = System(machine, isolated)
        #: the node's kubelet (``admission``: one the caller already runs, as ``simulate`` does)
        self.kubelet = admission if admission is not None else NodeAdmission(machine, kubelet)
        self.layout = CgroupLayout(kubelet.cgroup_driver, kubelet.cgroup_root, kubelet.cgroups_per_qos)
        #: ``traced``: keep each container's adjustments, replies and field owners as JSON and the
        #: adaptation's event trace (reports); ``simulate`` reads only the containers' resources
        self.traced = traced
        self.adaptation = Adaptation(runtime, traced=traced)
        self.policy_resource = policy
        self.resmgr: ResourceManager | None = None
        if policy is not None:
            control = policy.control
            try:
                backend = new_policy(policy.policy)
                if not traced:   # no pool scores kept for explain
                    from .policies.topologyaware.policy import TopologyAwarePolicy

                    if isinstance(backend, TopologyAwarePolicy):
                        backend.explaining = False
                self.resmgr = ResourceManager(backend, self.system, policy.config,
                                              memory_capacity=machine.memory_capacity,
                                              rdt=control.get("rdt"), blockio=control.get("blockio"),
                                              index=policy.plugin_index)
            except PolicyError as exc:
                raise PolicyError(f"failed to start the {policy.policy} policy: {exc}") from None
            self.adaptation.register(self.resmgr)
        for p in plugins:
            p.machine = machine
            self.adaptation.register(p)
        self.adaptation.synchronize([], [])
        self.pods: dict[str, PodRecord] = {}
        #: the records of :attr:`pods` by container id, as :meth:`_apply_updates` finds them (None:
        #: to be rebuilt, after a pod left)
        self.by_container: dict[str, ContainerRecord] | None = {}
        self.rejected: list[Rejection] = []

    # --- the kubelet's calls -------------------------------------------------------------------
    def create_pod(self, pod: Pod) -> Rejection | None:
        """Admit, run the sandbox, create and start the containers; None when it runs."""
        if pod.key in self.pods:
            return self._reject(pod, "AlreadyExists", f"pod {pod.key} already runs on the node")
        decision = self.kubelet.admit(pod)
        if not decision.admitted:
            return self._reject(pod, decision.reason, decision.message)
        return self.start_pod(pod)

    def start_pod(self, pod: Pod, cri: Sequence[tuple[dict[str, Any], str]] | None = None) -> Rejection | None:
        """What follows the kubelet's admission of ``pod``: its sandbox, then its containers
        created and started through NRI; None when it runs. A refusal releases the pod from the
        kubelet's managers. ``cri``: the kubelet's CRI resources and QoS class of each container
        (in :meth:`Pod.all_containers` order) when the caller has them already — ``simulate``'s
        table of node histories computes them once per pod shape, the kubelet's managers being off
        (:mod:`kubetwin.sim.runtime_memo`); by default the kubelet computes them now."""
        if cri is not None and fastpod.ENABLED:
            lone = fastpod.lone_plugin(self)
            if lone is not None:
                return fastpod.start_pod(self, lone, pod, cri)
        sandbox = self._sandbox(pod, cri[0][1] if cri else None)
        rec = PodRecord(pod, sandbox)
        try:
            self.adaptation.run_pod_sandbox(sandbox)
        except PluginError as exc:
            self.kubelet.remove(pod)
            return self._reject(pod, "CreatePodSandboxError", f"NRI RunPodSandbox failed: {exc}")
        self.pods[pod.key] = rec
        # forms per pod shape (a fast path) where the CRI resources come once per shape
        forms = fastcreate.ENABLED and cri is not None and not self.traced
        twin = None
        for j, (c, init) in enumerate(pod.all_containers()):
            kind = ("sidecar" if is_sidecar(c) else "init") if init else "app"
            resources, qos = container_resources_for(self.kubelet, pod, c) if cri is None else cri[j]
            if forms:
                ctr, twin = fastcreate.container(sandbox, c.name, _hex_id("container", sandbox.uid, c.name), resources)
            else:
                ctr = self._container(pod, rec, c, resources)
            record = ContainerRecord(c.name, kind, ctr, cri=resources, qos=qos)
            try:
                if self.traced:
                    adjust, updates, result = self.adaptation.create_container(sandbox, ctr)
                    record.adjustment = api.to_json(adjust)
                    record.replies = self.adaptation.trace[-1].replies
                    record.owners = result.owners.to_json().get(ctr.id, {})
                else:   # nothing reads the merged adjustment nor its owners
                    updates = self.adaptation.create_container_updates(sandbox, ctr, twin)
            except PluginError as exc:
                self._undo_create(sandbox, ctr)
                self._teardown(rec)
                return self._reject(pod, "CreateContainerError", str(exc))
            rec.containers.append(record)
            self.index(record)
            self._apply_updates(updates)
            ctr.state = "CONTAINER_CREATED"
            self.adaptation.post_create_container(sandbox, ctr)
            ctr.state = "CONTAINER_RUNNING"
            record.state = "running"
            self.adaptation.start_container(sandbox, ctr)
            self.adaptation.post_start_container(sandbox, ctr)
            if kind == "init":
                self._stop(rec, record)
        return None

    def update_container_resources(self, key: str, name: str, cri: dict[str, Any]) -> str | None:
        """CRI ``UpdateContainerResources`` (an in-place resize, a CPU manager reconcile): the NRI
        ``UpdateContainer`` request with the new ``LinuxContainerResources``; the updates the
        plugins made to other containers are applied first, then the container gets the request
        as the plugins adjusted it (or as sent, when no plugin touched it), as containerd does.
        Returns None, or the error the runtime returns to the kubelet."""
        rec = self.pods.get(key)
        record = None if rec is None else next(
            (r for r in rec.containers if r.name == name and r.state == "running"), None)
        if rec is None or record is None:
            return f"container {name!r} of pod {key} is not running on the node"
        request = nri_resources_from_cri(cri)
        try:
            updates = self.adaptation.update_container(rec.sandbox, record.ctr, request)
        except PluginError as exc:
            return f"NRI UpdateContainer failed: {exc}"
        own = [u for u in updates if u.container_id == record.ctr.id]
        self._apply_updates([u for u in updates if u.container_id != record.ctr.id])
        final = own[-1] if own else api.ContainerUpdate(record.ctr.id, api.LinuxContainerUpdate(request))
        apply_update(record.ctr, final)
        record.cri = {**record.cri, **cri}
        record.replies = record.replies + self.adaptation.trace[-1].replies
        self.adaptation.post_update_container(rec.sandbox, record.ctr)
        return None

    def _undo_create(self, sandbox: api.PodSandbox, ctr: api.Container) -> None:
        """containerd's ``UndoCreateContainer``: a failed creation is stopped and removed, so the
        plugins that allocated for it release."""
        try:
            updates = self.adaptation.stop_container(sandbox, ctr)
        except PluginError:
            updates = []
        self._apply_updates(updates)
        self.adaptation.remove_container(sandbox, ctr)

    def delete_pod(self, key: str) -> bool:
        rec = self.pods.get(key)
        if rec is None:
            return False
        self._teardown(rec)
        return True

    def _teardown(self, rec: PodRecord) -> None:
        for record in rec.containers:
            if record.state != "exited":
                self._stop(rec, record)
        for record in rec.containers:
            self.adaptation.remove_container(rec.sandbox, record.ctr)
        self.adaptation.stop_pod_sandbox(rec.sandbox)
        self.adaptation.remove_pod_sandbox(rec.sandbox)
        self.kubelet.remove(rec.pod)
        self.pods.pop(rec.key, None)
        self.by_container = None

    def _stop(self, rec: PodRecord, record: ContainerRecord) -> None:
        try:
            updates = self.adaptation.stop_container(rec.sandbox, record.ctr)
        except PluginError:
            updates = []  # the runtime logs a failed stop notification and goes on
        record.state = "exited"
        record.ctr.state = "CONTAINER_STOPPED"
        self._apply_updates(updates)

    def _reject(self, pod: Pod, reason: str, message: str) -> Rejection:
        r = Rejection(pod.name, pod.namespace, reason, message)
        self.rejected.append(r)
        return r

    def index(self, record: ContainerRecord) -> None:
        """``record`` joins :attr:`by_container` (the last of :attr:`pods`' records: it wins, as in
        the plain lookup)."""
        if self.by_container is not None:
            self.by_container[record.ctr.id] = record

    def _apply_updates(self, updates: list[api.ContainerUpdate]) -> None:
        if not updates:
            return
        if fastcreate.ENABLED:   # the records by id kept (a fast path): rebuilt only after a pod left
            by_id = self.by_container
            if by_id is None:
                by_id = self.by_container = {r.ctr.id: r for p in self.pods.values() for r in p.containers}
        else:
            by_id = {r.ctr.id: r for p in self.pods.values() for r in p.containers}
        apply = fastcreate.apply_update if fastcreate.ENABLED else apply_update
        for u in updates:
            record = by_id.get(u.container_id)
            if record is not None and record.state != "exited":
                apply(record.ctr, u)

    # --- what the runtime passes to NRI --------------------------------------------------------
    def _sandbox(self, pod: Pod, qos: str | None = None) -> api.PodSandbox:
        """``qos``: the pod's QoS class when the caller has it (the kubelet's, with its CRI resources)."""
        if qos is None:
            qos = _pod_qos(self.kubelet, pod)
        meta, uid = pod.metadata, pod.uid
        name, namespace = meta.name, meta.namespace
        parent = (fastcreate.cgroup_parent(self.layout, qos, uid) if fastcreate.ENABLED
                  else self.layout.path(self.layout.pod(qos, uid)) or "")
        labels = {**meta.labels, "io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": namespace,
                  "io.kubernetes.pod.uid": uid}
        return api.PodSandbox(id=_hex_id("sandbox", uid), name=name, uid=uid, namespace=namespace,
                              labels=labels, annotations=dict(meta.annotations),
                              linux=api.LinuxPodSandbox(cgroup_parent=parent))

    def _container(self, pod: Pod, rec: PodRecord, c: Any, cri: dict[str, Any]) -> api.Container:
        """The container as the runtime describes it to NRI, from the kubelet's CRI resources ``cri``."""
        sandbox = rec.sandbox
        uid, name, namespace, cname, sid = sandbox.uid, sandbox.name, sandbox.namespace, c.name, sandbox.id
        cid = _hex_id("container", uid, cname)
        res = nri_resources_from_cri(cri)
        parent = sandbox.linux.cgroup_parent if sandbox.linux else ""
        labels = {"io.kubernetes.container.name": cname, "io.kubernetes.pod.name": name,
                  "io.kubernetes.pod.namespace": namespace, "io.kubernetes.pod.uid": uid}
        annotations = {"io.kubernetes.cri.container-type": "container", "io.kubernetes.cri.container-name": cname,
                       "io.kubernetes.cri.sandbox-id": sid, "io.kubernetes.cri.sandbox-name": name,
                       "io.kubernetes.cri.sandbox-namespace": namespace,
                       "io.kubernetes.cri.sandbox-uid": uid}
        return api.Container(id=cid, pod_sandbox_id=sid, name=cname, state="CONTAINER_UNKNOWN",
                             labels=labels, annotations=annotations,
                             linux=api.LinuxContainer(resources=res, oom_score_adj=cri.get("oomScoreAdj"),
                                                      cgroups_path=f"{parent}/{cid}" if parent else ""))

    # --- results -------------------------------------------------------------------------------
    def running(self) -> list[tuple[PodRecord, ContainerRecord]]:
        return [(p, r) for p in self.pods.values() for r in p.containers if r.state != "exited"]


def nri_resources_from_cri(cri: dict[str, Any]) -> api.LinuxResources:
    """The runtime's NRI ``LinuxResources`` from the CRI ``LinuxContainerResources`` (its JSON
    names, as :func:`..kubelet.admission.container_resources_for` gives them)."""
    res = api.LinuxResources().ensure()
    cpu, mem = res.ensure_cpu(), res.ensure_memory()
    if cri.get("cpuShares"):
        cpu.shares = cri["cpuShares"]
    if cri.get("cpuQuota"):
        cpu.quota = cri["cpuQuota"]
    if cri.get("cpuPeriod"):
        cpu.period = cri["cpuPeriod"]
    cpu.cpus = cri.get("cpusetCpus") or ""
    cpu.mems = cri.get("cpusetMems") or ""
    if cri.get("memoryLimitInBytes"):
        mem.limit = cri["memoryLimitInBytes"]
    if cri.get("memorySwapLimitInBytes"):
        mem.swap = cri["memorySwapLimitInBytes"]
    for h in cri.get("hugepageLimits") or []:
        res.hugepage_limits.append(api.HugepageLimit(h["pageSize"], h["limit"]))
    res.unified = dict(cri.get("unified") or {})
    return res


def _pod_qos(node: NodeAdmission, pod: Pod) -> str:
    from ..kubelet.qos import get_pod_qos

    return get_pod_qos(pod, node.gates)
