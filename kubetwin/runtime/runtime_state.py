"""The container runtime's side of a node: it takes CRI requests and keeps each container's end state.

:class:`RuntimeState` plays containerd (with runc) for a stream of CRI calls: ``RunPodSandbox``
creates the pause container, ``CreateContainer`` builds the container's OCI spec
(:mod:`.containerd`) with its Block I/O and RDT classes, ``UpdateContainerResources`` merges new
resources into the spec, and every change is written out as runc writes it (:mod:`.cgroupv2`).
What a container ends up with — cgroup directory, files, ``oom_score_adj``, resctrl group and its
schemata — is :meth:`RuntimeState.container_view`.

A hook, ``adjust``, sees each OCI spec after the runtime built it and before runc applies it: the
place where NRI plugins' adjustments go (the NRI model composes it; this module does not know NRI).

Upstream: containerd's CRI plugin (internal/cri/server/container_create.go, sandbox_run.go) container and sandbox state, as kubetwin keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..errors import InputError
from .blockio import BlockIOClassError, BlockIOConfig, bfq_loaded, block_devices, container_blockio_class
from .cgroupv2 import CgroupState, cgroup_writes
from .containerd import RuntimeConfig, cgroup_dir, container_spec, resctrl_group, sandbox_spec, with_resources
from .rdt import RdtClassError, RdtConfig, container_rdt_class, unalias_class_name
from .resctrl import machine_resctrl

#: ``adjust(kind, request, spec) -> spec``: kind is "sandbox" (request: ``RunPodSandboxRequest``) or
#: "container" (request: ``CreateContainerRequest``); spec is the OCI spec the runtime built.
AdjustFn = Callable[[str, Mapping[str, Any], dict[str, Any]], dict[str, Any]]


@dataclass
class SandboxRecord:
    id: str
    config: Mapping[str, Any]
    spec: dict[str, Any]
    cgroup: CgroupState
    state: str = "SANDBOX_READY"


@dataclass
class ContainerRecord:
    id: str
    sandbox_id: str
    name: str
    config: Mapping[str, Any]
    spec: dict[str, Any]
    cgroup: CgroupState
    rdt_class: str | None = None
    blockio_class: str | None = None
    state: str = "CONTAINER_CREATED"


@dataclass
class RuntimeState:
    """containerd + runc on one machine, driven by CRI requests."""

    machine: Any
    runtime: RuntimeConfig = RuntimeConfig()
    rdt: RdtConfig | None = None
    blockio: BlockIOConfig | None = None
    adjust: AdjustFn | None = None
    sandboxes: dict[str, SandboxRecord] = field(default_factory=dict)
    containers: dict[str, ContainerRecord] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.devices = block_devices(self.machine)
        self.bfq = bfq_loaded(self.devices)
        self.resctrl = machine_resctrl(self.machine)
        if self.rdt is not None:
            self.rdt.resolve(self.machine)  # refuse a configuration the machine cannot take, up front

    def _apply(self, resources: Mapping[str, Any]) -> CgroupState:
        return cgroup_writes(resources, weight_curve=self.runtime.cpu_weight_curve, bfq=self.bfq,
                             hugetlb_rsvd=self.runtime.hugetlb_rsvd, swap_controller=self.runtime.swap_controller)

    # --- RuntimeService ------------------------------------------------------------------------
    def run_pod_sandbox(self, request: Mapping[str, Any], sid: str) -> dict[str, Any]:
        config = request.get("config") or {}
        spec = sandbox_spec(config, sid)
        if self.adjust is not None:
            spec = self.adjust("sandbox", request, spec)
        self.sandboxes[sid] = SandboxRecord(sid, config, spec, self._apply(spec["linux"]["resources"]))
        return {"podSandboxId": sid}

    def create_container(self, request: Mapping[str, Any], cid: str) -> dict[str, Any]:
        """``CreateContainer``; raises ``RdtClassError`` / ``BlockIOClassError`` when the runtime refuses."""
        sid = request["podSandboxId"]
        config = request.get("config") or {}
        sandbox_config = request.get("sandboxConfig") or {}
        name = (config.get("metadata") or {}).get("name", "")
        pod_ann = sandbox_config.get("annotations") or {}
        ctr_ann = config.get("annotations") or {}
        try:
            blockio_class = container_blockio_class(self.blockio, name, pod_ann, ctr_ann,
                                                    ignore_not_enabled=self.runtime.ignore_blockio_not_enabled_errors)
        except BlockIOClassError as exc:
            if exc.message.startswith("blockio disabled"):
                exc.message = f"failed to set blockio class: {exc.message}"
            raise
        block_io = self.blockio.oci(blockio_class, self.devices) if (self.blockio and blockio_class) else None
        try:
            rdt_class = container_rdt_class(self.rdt, self.resctrl, name, pod_ann, ctr_ann,
                                            ignore_not_enabled=self.runtime.ignore_rdt_not_enabled_errors)
        except RdtClassError as exc:
            exc.message = f"failed to set RDT class: {exc.message}"
            raise
        spec = container_spec(request, cid, self.runtime, block_io=block_io, rdt_class=rdt_class)
        if self.adjust is not None:
            spec = self.adjust("container", request, spec)
        self.containers[cid] = ContainerRecord(cid, sid, name, config, spec, self._apply(spec["linux"]["resources"]),
                                               rdt_class, blockio_class)
        return {"containerId": cid}

    def start_container(self, cid: str) -> dict[str, Any]:
        self._container(cid).state = "CONTAINER_RUNNING"
        return {}

    def update_container_resources(self, cid: str, linux: Mapping[str, Any]) -> dict[str, Any]:
        """``UpdateContainerResources``: merged into the spec (zero fields keep their value), rewritten."""
        rec = self._container(cid)
        resources = with_resources(linux, self.runtime, rec.spec["linux"]["resources"])
        rec.spec["linux"]["resources"] = resources
        rec.cgroup = self._apply(resources)
        return {}

    def stop_container(self, cid: str) -> dict[str, Any]:
        self._container(cid).state = "CONTAINER_EXITED"
        return {}

    def remove_container(self, cid: str) -> dict[str, Any]:
        self.containers.pop(cid, None)
        return {}

    def stop_pod_sandbox(self, sid: str) -> dict[str, Any]:
        if sid in self.sandboxes:
            self.sandboxes[sid].state = "SANDBOX_NOTREADY"
        for rec in self.containers.values():
            if rec.sandbox_id == sid:
                rec.state = "CONTAINER_EXITED"
        return {}

    def remove_pod_sandbox(self, sid: str) -> dict[str, Any]:
        self.sandboxes.pop(sid, None)
        for cid in [c for c, rec in self.containers.items() if rec.sandbox_id == sid]:
            del self.containers[cid]
        return {}

    def _container(self, cid: str) -> ContainerRecord:
        rec = self.containers.get(cid)
        if rec is None:
            raise InputError(f"container {cid!r} not found", path="containerId")
        return rec

    # --- what the containers end up with ---------------------------------------------------------
    def container_view(self, cid: str) -> dict[str, Any]:
        """A container's end state: cgroup directory and files, oom_score_adj, classes, resctrl group."""
        rec = self._container(cid)
        out: dict[str, Any] = {"containerId": cid, "state": rec.state}
        path = rec.spec["linux"].get("cgroupsPath")
        if path:
            out["cgroup"] = cgroup_dir(path)
        out["files"] = dict(rec.cgroup.files)
        out["oomScoreAdj"] = rec.spec["process"]["oomScoreAdj"]
        out["blockioClass"] = rec.blockio_class
        out["rdtClass"] = rec.rdt_class
        if rec.rdt_class is not None and self.rdt is not None:
            out["resctrlGroup"] = resctrl_group(rec.rdt_class)
            out["schemata"] = self.rdt.schemata(unalias_class_name(rec.rdt_class), self.machine)
        if rec.cgroup.notes:
            out["notes"] = list(rec.cgroup.notes)
        out["writes"] = [{"file": w.file, "content": w.content, "from": w.source} for w in rec.cgroup.writes]
        return out

    def sandbox_view(self, sid: str) -> dict[str, Any]:
        rec = self.sandboxes[sid]
        out: dict[str, Any] = {"podSandboxId": sid, "state": rec.state}
        path = rec.spec["linux"].get("cgroupsPath")
        if path:
            out["cgroup"] = cgroup_dir(path)
        out["files"] = dict(rec.cgroup.files)
        out["oomScoreAdj"] = rec.spec["process"]["oomScoreAdj"]
        if rec.spec.get("annotations"):
            out["annotations"] = dict(rec.spec["annotations"])
        return out


__all__ = ["RuntimeState", "SandboxRecord", "ContainerRecord", "AdjustFn", "RdtClassError", "BlockIOClassError"]
