"""The nri-resource-policy plugin: NRI events in, a policy's decisions out as NRI replies.

One :class:`ResourceManager` wraps one policy backend (topology-aware, balloons). On
``CreateContainer`` it caches the container, asks the policy to allocate, bind-mounts the
container's data directory (``/.nri-resource-policy``, as the plugin does) and returns the
container's pending adjustment plus the updates the allocation caused for other containers
(shared pools shrinking); on ``StopContainer`` the policy releases and the updates of the
containers whose shared pool grew are returned. ``control.rdt`` / ``control.blockio`` with
``usePodQoSAsDefaultClass`` give unclassified containers their QoS class as RDT / Block I/O
class.

Registered by default as NRI plugin ``90-resource-manager`` (the Helm charts' index 90 and the
plugin's default name).

Upstream: containers/nri-plugins v0.14.0 ``pkg/resmgr/nri.go``, ``resource-manager.go``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..nri.api import (
    Container,
    ContainerAdjustment,
    ContainerUpdate,
    LinuxResources,
    Mount,
    PodSandbox,
    clone,
    event_mask,
)
from ..nri.stub import Plugin
from . import cache as _cache
from .cache import CREATED, CREATING, EXITED, RUNNING, STALE, Cache, CachedContainer, CacheError
from .policy import Backend, PolicyError

if TYPE_CHECKING:
    from ..sysfs import System

STATE_DIR = "/var/lib/nri-resource-policy"
CONTAINER_STARTED = "container-started"


class ResourceManager(Plugin):
    """``nriPlugin`` + ``resmgr``: the policy behind NRI."""

    name = "resource-manager"
    index = "90"
    #: the events whose messages it reads only by id (never kept, never changed): the runtime
    #: passes its own messages instead of copies (:class:`..nri.adaptation.Registered`)
    _nri_readonly_events = frozenset({"START_CONTAINER", "STOP_CONTAINER", "REMOVE_CONTAINER", "STOP_POD_SANDBOX",
                                      "REMOVE_POD_SANDBOX"})
    #: the events whose pod sandbox it reads, or keeps as sent (``RunPodSandbox``: its cache holds
    #: the sandbox; a sandbox message never changes once sent): passed uncopied
    _nri_readonly_pods = frozenset({"RUN_POD_SANDBOX", "CREATE_CONTAINER"})
    #: the events whose container its cache keeps, writing nothing in it but ``linux.resources``
    #: (the policy's cpusets, memory nodes, classes): a copy sharing the rest is enough
    _nri_resources_only = frozenset({"CREATE_CONTAINER"})

    def __init__(self, policy: Backend, system: System, config: Any, *, memory_capacity: int,
                 rdt: dict[str, Any] | None = None, blockio: dict[str, Any] | None = None, index: str = "90", name: str = "resource-manager"):
        self.index = index
        self.name = name
        self.policy = policy
        self.cache = Cache(memory_capacity)
        self.rdt = rdt or {}
        self.blockio = blockio or {}
        self.cache.rdt_control = bool(self.rdt.get("enable"))
        self.cache.blockio_control = bool(self.blockio.get("enable"))
        policy.setup(system, self.cache, config)
        policy.start()

    def configure(self, config: str, runtime: str, version: str) -> int:
        return event_mask("RunPodSandbox,StopPodSandbox,RemovePodSandbox",
                          "CreateContainer,StartContainer,UpdateContainer,StopContainer,RemoveContainer")

    # --- pods ----------------------------------------------------------------------------------
    def run_pod_sandbox(self, pod: PodSandbox) -> None:
        self.cache.insert_pod(pod)

    def stop_pod_sandbox(self, pod: PodSandbox) -> None:
        return None

    def remove_pod_sandbox(self, pod: PodSandbox) -> None:
        self.cache.delete_pod(pod.id)

    # --- containers ----------------------------------------------------------------------------
    def create_container(self, pod: PodSandbox, container: Container
                         ) -> tuple[ContainerAdjustment | None, list[ContainerUpdate]]:
        try:
            c = self.cache.insert_container(container, CREATING)
        except CacheError as exc:
            raise PolicyError(f"failed to cache container: {exc}") from None
        try:
            self.policy.allocate_resources(c)
        except (PolicyError, CacheError) as exc:
            c.state = STALE
            c.take_pending_adjustment()
            self.cache.pending_containers()
            self.cache.delete_container(c.id)
            raise PolicyError(f"failed to allocate resources: {exc}") from None
        c.add_mount(Mount("/.nri-resource-policy", "bind", f"{STATE_DIR}/containers/{c.id}", ["bind", "ro", "rslave"]))
        c.state = CREATED
        adjust = c.take_pending_adjustment()
        if adjust is not None:
            self._set_default_classes(c, adjust)
        updates = self._pending_updates(skip=c.id)
        return adjust, updates

    def create_container_held(self, pod: PodSandbox, container: Container, records: dict[str, Any]
                              ) -> tuple[ContainerAdjustment | None, list[ContainerUpdate]]:
        """:meth:`create_container` with the runtime's records of its containers by id lent to
        the cache (:data:`.cache.SAME_SKIPPED`): for a runtime that applies this plugin's reply as
        it is (the lone plugin, :mod:`..fastpod`). Not lent when the updates get default classes
        (an update of an unchanged value would still carry them)."""
        cache = self.cache
        if not _cache.SAME_SKIPPED or self._default_classes():
            return self.create_container(pod, container)
        cache.runtime = records
        try:
            return self.create_container(pod, container)
        finally:
            cache.runtime = None

    def start_container(self, pod: PodSandbox, container: Container) -> None:
        c = self.cache.lookup_container(container.id)
        if c is None:
            return
        c.state = RUNNING
        self.policy.handle_event(CONTAINER_STARTED, c)

    def update_container(self, pod: PodSandbox, container: Container,
                         resources: LinuxResources) -> list[ContainerUpdate]:
        c = self.cache.lookup_container(container.id)
        if c is None:
            return []
        if self._set_resource_updates(c, resources):
            self.policy.update_resources(c)
        else:
            # identical requirements: short-circuited, the container's current values re-sent
            r = c.ctr.resources()
            cpu, mem = r.ensure_cpu(), r.ensure_memory()
            if cpu.shares:
                c.set_cpu_shares(cpu.shares)
            if cpu.quota:
                c.set_cpu_quota(cpu.quota)
            if cpu.period:
                c.set_cpu_period(cpu.period)
            if cpu.cpus:
                c.set_cpuset_cpus(cpu.cpus)
            if cpu.mems:
                c.set_cpuset_mems(cpu.mems)
            if mem.limit:
                c.set_memory_limit(mem.limit)
            if mem.swap:
                c.set_memory_swap(mem.swap)
        return self._pending_updates()

    def stop_container(self, pod: PodSandbox, container: Container) -> list[ContainerUpdate]:
        c = self.cache.lookup_container(container.id)
        if c is None:
            return []
        self.policy.release_resources(c)
        c.state = EXITED
        return self._pending_updates(skip=container.id)

    def remove_container(self, pod: PodSandbox, container: Container) -> None:
        self.cache.delete_container(container.id)

    # --- helpers -------------------------------------------------------------------------------
    def _pending_updates(self, skip: str | None = None) -> list[ContainerUpdate]:
        pending = self.cache.pending
        if not pending:   # nothing pending (re-pinning changed no value): no update
            return []
        if skip is not None and len(pending) == 1 and skip in pending:   # the created container alone
            pending.clear()
            return []
        out = []
        classes = self._default_classes()
        for c in self.cache.pending_containers():
            if skip is not None and c.id == skip:
                continue
            u = c.take_pending_update()
            if u is not None:
                if classes:
                    self._set_default_classes(c, u)
                out.append(u)
        return out

    def _default_classes(self) -> bool:
        """Whether :meth:`_set_default_classes` may set anything (the pod's QoS class as default
        RDT or Block I/O class)."""
        return bool((self.rdt.get("enable") and self.rdt.get("usePodQoSAsDefaultClass"))
                    or (self.blockio.get("enable") and self.blockio.get("usePodQoSAsDefaultClass")))

    def _set_default_classes(self, c: CachedContainer, req: ContainerAdjustment | ContainerUpdate) -> None:
        if self.rdt.get("enable") and self.rdt.get("usePodQoSAsDefaultClass") and c.rdt_class() == "":
            req.set_linux_rdt_class(c.qos_class)
        if self.blockio.get("enable") and self.blockio.get("usePodQoSAsDefaultClass") and c.blockio_class() == "":
            req.set_linux_blockio_class(c.qos_class)

    @staticmethod
    def _set_resource_updates(c: CachedContainer, r: LinuxResources) -> bool:
        """``SetResourceUpdates``: the requirements estimated from the update (merged over the
        container's resources); True when a request or limit differs from the last known ones."""
        from ..kubernetes import estimate_resource_requirements

        u = clone(r).ensure()
        cpu, mem = u.ensure_cpu(), u.ensure_memory()
        current = c.ctr.resources()
        for attr in ("shares", "quota", "period"):
            if not getattr(cpu, attr):
                setattr(cpu, attr, getattr(current.ensure_cpu(), attr))
        if not mem.limit:
            mem.limit = current.ensure_memory().limit
        oom = c.ctr.linux.oom_score_adj if c.ctr.linux is not None else None
        updated = estimate_resource_requirements(cpu.shares or 0, cpu.quota or 0, cpu.period or 0,
                                                 mem.limit or 0, c.qos_class, oom or 0, c.cache.memory_capacity)
        orig = c.resource_updates if c.resource_updates is not None else c.requirements
        c.resource_updates = updated
        # only the resources the update names are compared (a missing one in orig differs)
        for attr in ("cpu_request", "memory_request", "cpu_limit", "memory_limit"):
            new = getattr(updated, attr)
            if new is not None and getattr(orig, attr) != new:
                return True
        return False

    def containers(self) -> list[CachedContainer]:
        return list(self.cache.containers.values())

