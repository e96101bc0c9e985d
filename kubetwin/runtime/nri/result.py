"""Merging the plugins' replies to one request, as the runtime adaptation does.

For ``CreateContainer`` each plugin's :class:`ContainerAdjustment` is folded into one reply
*and* into the request itself, so the next plugin (by index) sees the container as adjusted so
far; each field a plugin sets is claimed for it (:mod:`.owners`), and a field set by two
plugins fails the creation. ``ContainerUpdate``\\ s of other containers are merged per container
the same way; an update of the container being created is an error. ``UpdateContainer`` and
``StopContainer`` replies carry updates only.

Upstream: containerd/nri v0.12.2 ``pkg/adaptation/result.go``.
"""

from __future__ import annotations

from .api import (
    Container,
    ContainerAdjustment,
    ContainerUpdate,
    Hooks,
    LinuxContainer,
    LinuxContainerAdjustment,
    LinuxContainerUpdate,
    LinuxCPU,
    LinuxMemory,
    LinuxPids,
    LinuxRdt,
    LinuxResources,
    clone,
    is_marked_for_removal,
    mark_for_removal,
)
from .owners import ConflictError, OwningPlugins


class RequestError(Exception):
    """A plugin's reply the runtime refuses (conflict, update during creation)."""


def _empty_adjustment() -> ContainerAdjustment:
    return ContainerAdjustment(hooks=Hooks(), linux=LinuxContainerAdjustment(resources=LinuxResources().ensure()))


def _empty_update(cid: str, ignore_failure: bool) -> ContainerUpdate:
    return ContainerUpdate(cid, LinuxContainerUpdate(LinuxResources().ensure()), ignore_failure)


class Result:
    """``result``: the request being answered, the merged reply, the owners of each field."""

    def __init__(self, create: Container | None = None, update: Container | None = None,
                 update_resources: LinuxResources | None = None):
        self.create = create
        self.update = update
        self.update_resources = update_resources.ensure() if update_resources is not None else None
        if create is not None:
            if create.hooks is None:
                create.hooks = Hooks()
            if create.linux is None:
                create.linux = LinuxContainer()
            create.resources()
        self.adjust: ContainerAdjustment | None = _empty_adjustment() if create is not None else None
        self.reply_updates: list[ContainerUpdate] = []
        self.updates: dict[str, ContainerUpdate] = {}
        self.owners = OwningPlugins()

    # --- the container being created ----------------------------------------------------------
    @property
    def container(self) -> Container:
        """The container being created, as adjusted so far (adjustments come only with a creation)."""
        if self.create is None:
            raise RequestError("an adjustment without a container being created")
        return self.create

    @property
    def adjustment(self) -> ContainerAdjustment:
        """The merged adjustment of the container being created."""
        if self.adjust is None:
            raise RequestError("an adjustment without a container being created")
        return self.adjust

    @property
    def _container_linux(self) -> LinuxContainer:
        ctr = self.container
        if ctr.linux is None:
            ctr.linux = LinuxContainer()
        return ctr.linux

    @property
    def _adjustment_linux(self) -> LinuxContainerAdjustment:
        return self.adjustment.ensure_linux()

    # --- replies -------------------------------------------------------------------------------
    def apply_create(self, adjust: ContainerAdjustment | None, updates: list[ContainerUpdate], plugin: str) -> None:
        if adjust is not None:
            self._adjust(adjust, plugin)
        self._update(updates, plugin)

    def apply_updates(self, updates: list[ContainerUpdate], plugin: str) -> None:
        self._update(updates, plugin)

    def update_response(self) -> list[ContainerUpdate]:
        """``updateContainerResponse``: the other containers' updates, then the requested one."""
        out = list(self.reply_updates)
        if self.update is not None:
            requested = self.updates.get(self.update.id)
            if requested is not None:
                out.append(requested)
        return out

    # --- adjustments ---------------------------------------------------------------------------
    def _adjust(self, rpl: ContainerAdjustment, plugin: str) -> None:
        self._annotations(rpl.annotations, plugin)
        self._mounts(rpl.mounts, plugin)
        self._env(rpl.env, plugin)
        self._args(rpl.args, plugin)
        self._hooks(rpl.hooks, plugin)
        if rpl.linux is not None:
            lx = rpl.linux
            self._devices(lx.devices, plugin)
            self._resources(lx.resources, plugin)
            self._simple_linux("cgroups_path", lx.cgroups_path or None, "CgroupsPath", plugin)
            self._simple_linux("oom_score_adj", lx.oom_score_adj, "OomScoreAdj", plugin)
            self._simple_linux("io_priority", lx.io_priority, "IoPriority", plugin)
            self._simple_linux("seccomp_policy", lx.seccomp_policy, "SeccompPolicy", plugin)
            self._namespaces(lx.namespaces, plugin)
            self._keyed_map(lx.sysctl, "sysctl", "Sysctl", plugin)
            self._keyed_map(lx.net_devices, "net_devices", "LinuxNetDevices", plugin)
            self._simple_linux("scheduler", lx.scheduler, "LinuxSched", plugin)
            self._rdt(lx.rdt, plugin)
            if lx.memory_policy is not None:
                self.owners.claim(self.container.id, "MemoryPolicy", plugin)
                self._adjustment_linux.memory_policy = lx.memory_policy
        for rl in rpl.rlimits:
            self.owners.claim(self.container.id, "Rlimits", plugin, rl.type)
            self.container.rlimits.append(rl)
            self.adjustment.rlimits.append(rl)
        for d in rpl.cdi_devices:
            self.owners.claim(self.container.id, "CdiDevices", plugin, d.name)
            self.adjustment.cdi_devices.append(d)

    def _annotations(self, annotations: dict[str, str], plugin: str) -> None:
        if not annotations:
            return
        ctr, adj = self.container, self.adjustment
        cid = ctr.id
        delete: set[str] = set()
        kept: dict[str, str] = {}
        for k, v in annotations.items():
            key, marked = is_marked_for_removal(k)
            if marked:
                delete.add(key)
            else:
                kept[k] = v
        for k, v in kept.items():
            if k in delete:
                self.owners.clear(cid, "Annotations", plugin, k)
                ctr.annotations.pop(k, None)
                adj.annotations[mark_for_removal(k)] = ""
            self.owners.claim(cid, "Annotations", plugin, k)
            ctr.annotations[k] = v
            adj.annotations[k] = v
            delete.discard(k)
        for k in delete:
            adj.annotations[mark_for_removal(k)] = ""

    def _mounts(self, mounts: list, plugin: str) -> None:
        if not mounts:
            return
        ctr, adj = self.container, self.adjustment
        cid = ctr.id
        add, delete, mod = [], {}, {}
        for m in mounts:
            key, marked = is_marked_for_removal(m.destination)
            if marked:
                delete[key] = m
            else:
                add.append(m)
                mod[key] = m
        cleared = []
        for m in adj.mounts:
            if m.destination in delete:
                self.owners.clear(cid, "Mounts", plugin, m.destination)
                continue
            cleared.append(m)
        adj.mounts = cleared
        ctr.mounts = [m for m in ctr.mounts if m.destination not in delete and m.destination not in mod]
        for m in add:
            self.owners.claim(cid, "Mounts", plugin, m.destination)
            adj.mounts.append(m)
        for key, m in delete.items():
            if key not in mod:
                adj.mounts.append(m)
        ctr.mounts.extend(add)

    def _env(self, env: list, plugin: str) -> None:
        if not env:
            return
        ctr, adj = self.container, self.adjustment
        cid = ctr.id
        add, delete, mod = [], set(), set()
        for e in env:
            key, marked = is_marked_for_removal(e.key)
            if marked:
                delete.add(key)
            else:
                add.append(e)
                mod.add(key)
        cleared = []
        for e in adj.env:
            if e.key in delete:
                self.owners.clear(cid, "Env", plugin, e.key)
                continue
            cleared.append(e)
        adj.env = cleared
        ctr.env = [e for e in ctr.env if e.split("=", 1)[0] not in delete and e.split("=", 1)[0] not in mod]
        for e in add:
            self.owners.claim(cid, "Env", plugin, e.key)
            adj.env.append(e)
        for e in add:
            ctr.env.append(f"{e.key}={e.value}")

    def _args(self, args: list[str], plugin: str) -> None:
        if not args:
            return
        cid = self.container.id
        if args[0] == "":
            self.owners.clear(cid, "Args", plugin)
            args = args[1:]
        self.owners.claim(cid, "Args", plugin)
        self.adjustment.args = list(args)
        self.container.args = self.adjustment.args

    def _hooks(self, hooks: Hooks | None, plugin: str) -> None:
        if hooks is None:
            return
        claim = False
        for name in ("prestart", "poststart", "poststop", "create_runtime", "create_container", "start_container"):
            h = getattr(hooks, name)
            if h:
                getattr(self.adjustment.hooks, name).extend(h)
                getattr(self.container.hooks, name).extend(h)
                claim = True
        if claim:
            self.owners.of(self.container.id).accumulate_simple(3, plugin)  # OciHooks

    def _devices(self, devices: list, plugin: str) -> None:
        if not devices:
            return
        adj, lx = self._adjustment_linux, self._container_linux
        cid = self.container.id
        add, delete, mod = [], {}, {}
        for d in devices:
            key, marked = is_marked_for_removal(d.path)
            if marked:
                delete[key] = d
            else:
                add.append(d)
                mod[key] = d
        cleared = []
        for d in adj.devices:
            if d.path in delete:
                self.owners.clear(cid, "Devices", plugin, d.path)
                continue
            cleared.append(d)
        adj.devices = cleared
        lx.devices = [d for d in lx.devices if d.path not in delete and d.path not in mod]
        for d in add:
            self.owners.claim(cid, "Devices", plugin, d.path)
            adj.devices.append(d)
        lx.devices.extend(add)

    def _namespaces(self, namespaces: list, plugin: str) -> None:
        if not namespaces:
            return
        cid, lx = self.container.id, self._container_linux
        by_type = {n.type: n for n in lx.namespaces}
        for n in namespaces:
            key, marked = is_marked_for_removal(n.type)
            self.owners.claim(cid, "Namespace", plugin, key)
            if marked:
                by_type.pop(key, None)
            else:
                by_type[key] = n
            self._adjustment_linux.namespaces.append(n)
        lx.namespaces = list(by_type.values())

    def _keyed_map(self, values: dict, attr: str, field: str, plugin: str) -> None:
        if not values:
            return
        cid = self.container.id
        target, reply = getattr(self._container_linux, attr), getattr(self._adjustment_linux, attr)
        delete: set[str] = set()
        kept = {}
        for k, v in values.items():
            key, marked = is_marked_for_removal(k)
            if marked:
                delete.add(key)
            else:
                kept[k] = v
        for k, v in kept.items():
            if k in delete:
                self.owners.clear(cid, field, plugin, k)
                target.pop(k, None)
                reply[mark_for_removal(k)] = "" if attr == "sysctl" else None
            self.owners.claim(cid, field, plugin, k)
            target[k] = v
            reply[k] = v
            delete.discard(k)
        for k in delete:
            if attr == "sysctl":
                # upstream records a removed sysctl among the annotations (sic)
                self.adjustment.annotations[mark_for_removal(k)] = ""
            else:
                reply[mark_for_removal(k)] = None

    def _simple_linux(self, attr: str, value: object, field: str, plugin: str) -> None:
        if value is None:
            return
        self.owners.claim(self.container.id, field, plugin)
        setattr(self._container_linux, attr, value)
        setattr(self._adjustment_linux, attr, value)

    def _rdt(self, rdt: LinuxRdt | None, plugin: str) -> None:
        if rdt is None:
            return
        cid = self.container.id
        if self._adjustment_linux.rdt is None:
            self._adjustment_linux.rdt = LinuxRdt()
        out = self._adjustment_linux.rdt
        if rdt.remove:
            for f in ("RdtClosID", "RdtSchemata", "RdtEnableMonitoring"):
                self.owners.clear(cid, f, plugin)
            out = self._adjustment_linux.rdt = LinuxRdt(remove=True)
        if rdt.clos_id is not None:
            self.owners.claim(cid, "RdtClosID", plugin)
            out.clos_id, out.remove = rdt.clos_id, False
        if rdt.schemata is not None:
            self.owners.claim(cid, "RdtSchemata", plugin)
            out.schemata, out.remove = list(rdt.schemata), False
        if rdt.enable_monitoring is not None:
            self.owners.claim(cid, "RdtEnableMonitoring", plugin)
            out.enable_monitoring, out.remove = rdt.enable_monitoring, False

    # --- resources -----------------------------------------------------------------------------
    def _memory(self, mem: LinuxMemory | None, target: LinuxMemory, reply: LinuxMemory | None, cid: str,
                plugin: str) -> None:
        if mem is None:
            return
        for attr, field in (("limit", "MemLimit"), ("reservation", "MemReservation"), ("swap", "MemSwapLimit"),
                            ("kernel", "MemKernelLimit"), ("kernel_tcp", "MemTCPLimit"),
                            ("swappiness", "MemSwappiness"), ("disable_oom_killer", "MemDisableOomKiller"),
                            ("use_hierarchy", "MemUseHierarchy")):
            v = getattr(mem, attr)
            if v is not None:
                self.owners.claim(cid, field, plugin)
                setattr(target, attr, v)
                if reply is not None:
                    setattr(reply, attr, v)

    def _cpu(self, cpu: LinuxCPU | None, target: LinuxCPU, reply: LinuxCPU | None, cid: str, plugin: str) -> None:
        if cpu is None:
            return
        for attr, field in (("shares", "CPUShares"), ("quota", "CPUQuota"), ("period", "CPUPeriod"),
                            ("realtime_runtime", "CPURealtimeRuntime"), ("realtime_period", "CPURealtimePeriod")):
            v = getattr(cpu, attr)
            if v is not None:
                self.owners.claim(cid, field, plugin)
                setattr(target, attr, v)
                if reply is not None:
                    setattr(reply, attr, v)
        for attr, field in (("cpus", "CPUSetCPUs"), ("mems", "CPUSetMems")):
            v = getattr(cpu, attr)
            if v:
                self.owners.claim(cid, field, plugin)
                setattr(target, attr, v)
                if reply is not None:
                    setattr(reply, attr, v)

    def _resources(self, res: LinuxResources | None, plugin: str) -> None:
        if res is None:
            return
        adj_linux = self._adjustment_linux
        if adj_linux.resources is None:
            adj_linux.resources = LinuxResources().ensure()
        self._merge_resources(res, self.container.resources(), adj_linux.resources, self.container.id, plugin,
                              creating=True)

    def _merge_resources(self, src: LinuxResources, target: LinuxResources, reply: LinuxResources | None, cid: str,
                         plugin: str, *, creating: bool) -> None:
        """``adjustResources`` (``creating``) / ``updateResources``: each resource field ``src``
        sets is claimed for ``plugin`` and written to ``target`` (and to ``reply``). Only a
        creation carries device cgroup rules; an update re-reads the pids limit from ``target``."""
        self._memory(src.memory, target.ensure_memory(), reply.ensure_memory() if reply is not None else None,
                     cid, plugin)
        self._cpu(src.cpu, target.ensure_cpu(), reply.ensure_cpu() if reply is not None else None, cid, plugin)
        for lim in src.hugepage_limits:
            self.owners.claim(cid, "HugepageLimits", plugin, lim.page_size)
            target.hugepage_limits.append(lim)
            if reply is not None:
                reply.hugepage_limits.append(lim)
        if creating:
            for d in src.devices:
                target.devices.append(d)
                if reply is not None:
                    reply.devices.append(d)
        for k, v in src.unified.items():
            self.owners.claim(cid, "CgroupsUnified", plugin, k)
            target.unified[k] = v
            if reply is not None:
                reply.unified[k] = v
        if src.blockio_class is not None:
            self.owners.claim(cid, "BlockioClass", plugin)
            target.blockio_class = src.blockio_class
            if reply is not None:
                reply.blockio_class = src.blockio_class
        if src.rdt_class is not None:
            self.owners.claim(cid, "RdtClass", plugin)
            target.rdt_class = src.rdt_class
            if reply is not None:
                reply.rdt_class = src.rdt_class
        if creating:
            if src.pids is not None:
                self.owners.claim(cid, "PidsLimit", plugin)
                target.pids = LinuxPids(src.pids.limit)
                if reply is not None:
                    reply.pids = LinuxPids(src.pids.limit)
        elif target.pids is not None:  # upstream reads the pids limit from the copy, not from the update (sic)
            self.owners.claim(cid, "PidsLimit", plugin)
            target.pids = LinuxPids(target.pids.limit)

    # --- updates -------------------------------------------------------------------------------
    def _update(self, updates: list[ContainerUpdate], plugin: str) -> None:
        for u in updates or ():
            fresh = u.container_id not in self.updates
            reply = self._container_update(u, plugin)
            try:
                self._update_resources(reply, u, plugin, fresh)
            except RequestError:
                if not u.ignore_failure:
                    raise

    def _container_update(self, u: ContainerUpdate, plugin: str) -> ContainerUpdate:
        cid = u.container_id
        if self.create is not None and self.create.id == cid:
            raise RequestError(f'plugin "{plugin}" asked update of "{cid}" during creation')
        have = self.updates.get(cid)
        if have is not None:
            have.ignore_failure = have.ignore_failure and u.ignore_failure
            return have
        upd = _empty_update(cid, u.ignore_failure)
        self.updates[cid] = upd
        if self.update is None or self.update.id != cid:
            self.reply_updates.append(upd)
        return upd

    def _update_resources(self, reply: ContainerUpdate, u: ContainerUpdate, plugin: str, fresh: bool = False) -> None:
        if u.linux is None or u.linux.resources is None:
            return
        cid = u.container_id
        requested = self.update is not None and self.update.id == cid
        if fresh and not requested:   # the copy of a reply just made empty is a new empty one
            resources = LinuxResources().ensure()
        else:
            resources = clone(self.update_resources if requested else reply.ensure_linux().resources).ensure()
        src = u.linux.resources
        try:
            self._merge_resources(src, resources, None, cid, plugin, creating=False)
        except ConflictError as exc:  # a conflict: nothing applied
            raise RequestError(str(exc)) from None
        reply.ensure_linux().resources = resources   # already a copy, nothing else holds it
        if requested:
            self.update_resources = clone(resources)
