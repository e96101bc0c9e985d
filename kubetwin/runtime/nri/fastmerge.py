"""A fast path for the runtime's merge of one plugin's reply, when no one reads the merge itself.

The runtime adaptation (:mod:`.result`) folds every plugin's reply into one merged adjustment
and one update per other container, claiming each field it sets for the plugin that set it
(:mod:`.owners`) so that a second plugin setting the same field fails the request. ``simulate``
keeps neither the merged adjustment nor the owners (its runtime nodes are untraced): it needs
the container as adjusted and the updates to apply to the others. When a single plugin is
subscribed to the event, no other plugin's claims can conflict with its own, and a reply of a
plain shape cannot conflict with itself either; then the merge is only the writes it makes:

* ``CreateContainer``: the adjustment's mounts, Linux resources and the plain Linux fields
  (cgroups path, OOM score, I/O priority, seccomp policy, scheduler) written to the container
  exactly as :meth:`.result.Result._adjust` writes them;
* the updates of other containers passed on as the plugin made them, one per container: the
  merge of a first update of a container is a copy of its resources in the same shape (memory
  and CPU present, no devices, no pids limit — the update merge drops both); the runtime only
  applies it (:func:`.adaptation.apply_update`).

A reply of any other shape — annotations, environment, arguments, hooks, devices, namespaces,
sysctls, network devices, RDT, memory policy, rlimits, CDI devices, a repeated mount or
hugepage size, two updates of one container, an update of the container being created or
without resources — goes through the plain merge, with its owners and its errors, in the same
state it would have met there.

:data:`ENABLED` off: every reply goes through :mod:`.result` (equivalence tests, A/B runs).

Not an upstream module: a kubetwin fast path for containerd/nri v0.12.2 ``pkg/adaptation/
result.go`` (``adjust``, ``update``) with one plugin subscribed to the event.
"""

from __future__ import annotations

from .api import (
    Container,
    ContainerAdjustment,
    ContainerUpdate,
    Hooks,
    LinuxContainer,
    LinuxCPU,
    LinuxMemory,
    LinuxPids,
    LinuxResources,
)

#: merge a lone plugin's plain-shaped reply by its writes alone (False: always :mod:`.result`)
ENABLED = True


def plain_adjustment(adjust: ContainerAdjustment | None) -> bool:
    """Whether ``adjust`` (one plugin's) sets only what :func:`apply_adjustment` writes, and no
    key twice (mount destinations, hugepage sizes)."""
    if adjust is None:
        return True
    if type(adjust) is not ContainerAdjustment:
        return False
    if adjust.annotations or adjust.env or adjust.args or adjust.rlimits or adjust.cdi_devices:
        return False
    hooks = adjust.hooks
    if hooks is not None and (hooks.prestart or hooks.create_runtime or hooks.create_container
                              or hooks.start_container or hooks.poststart or hooks.poststop):
        return False
    mounts = adjust.mounts
    if mounts:
        if len(mounts) == 1:
            if mounts[0].destination.startswith("-"):
                return False
        else:
            seen = {m.destination for m in mounts}
            if len(seen) != len(mounts) or any(d.startswith("-") for d in seen):
                return False
    lx = adjust.linux
    if lx is None:
        return True
    if (lx.devices or lx.namespaces or lx.sysctl or lx.net_devices or lx.rdt is not None
            or lx.memory_policy is not None):
        return False
    res = lx.resources
    return res is None or _plain_resources(res)


def _plain_resources(res: LinuxResources) -> bool:
    if type(res) is not LinuxResources:
        return False
    if res.memory is not None and type(res.memory) is not LinuxMemory:
        return False
    if res.cpu is not None and type(res.cpu) is not LinuxCPU:
        return False
    limits = res.hugepage_limits
    return len(limits) < 2 or len({h.page_size for h in limits}) == len(limits)


def apply_adjustment(ctr: Container, adjust: ContainerAdjustment) -> None:
    """The container writes of :meth:`.result.Result._adjust` for a :func:`plain_adjustment`
    (the container prepared as :class:`.result.Result` prepares it: hooks, ``linux`` and its
    resources present)."""
    mounts = adjust.mounts
    if mounts:
        own_mounts = ctr.mounts
        if own_mounts:
            mod = {m.destination for m in mounts}
            kept = [m for m in own_mounts if m.destination not in mod]
            kept.extend(mounts)
        else:   # nothing to replace (a prepared container has no mounts of its own): a new list
            kept = [*mounts]
        ctr.mounts = kept
    lx = adjust.linux
    if lx is None:
        return
    linux = ctr.linux
    assert linux is not None
    res = lx.resources
    if res is not None:
        target = linux.resources
        if target is None or target.memory is None or target.cpu is None:   # else what ctr.resources() gives
            target = ctr.resources()
        # each scalar field set in the adjustment written by name (the merge's writes, without a loop of getattr)
        mem = res.memory
        if mem is not None:
            tm = target.ensure_memory()
            if (v := mem.limit) is not None:
                tm.limit = v
            if (v := mem.reservation) is not None:
                tm.reservation = v
            if (v := mem.swap) is not None:
                tm.swap = v
            if (v := mem.kernel) is not None:
                tm.kernel = v
            if (v := mem.kernel_tcp) is not None:
                tm.kernel_tcp = v
            if (v := mem.swappiness) is not None:
                tm.swappiness = v
            if (v := mem.disable_oom_killer) is not None:
                tm.disable_oom_killer = v
            if (v := mem.use_hierarchy) is not None:
                tm.use_hierarchy = v
        cpu = res.cpu
        if cpu is not None:
            tc = target.ensure_cpu()
            if (v := cpu.shares) is not None:
                tc.shares = v
            if (v := cpu.quota) is not None:
                tc.quota = v
            if (v := cpu.period) is not None:
                tc.period = v
            if (v := cpu.realtime_runtime) is not None:
                tc.realtime_runtime = v
            if (v := cpu.realtime_period) is not None:
                tc.realtime_period = v
            if cpu.cpus:
                tc.cpus = cpu.cpus
            if cpu.mems:
                tc.mems = cpu.mems
        # new lists, not extended in place: a container made by :func:`..fastcreate.prepared`
        # shares them with others of its CRI resources (:data:`..fastcreate.SHARED_EMPTIES`)
        if res.hugepage_limits:
            target.hugepage_limits = [*target.hugepage_limits, *res.hugepage_limits]
        if res.devices:
            target.devices = [*target.devices, *res.devices]
        if res.unified:
            target.unified.update(res.unified)
        if res.blockio_class is not None:
            target.blockio_class = res.blockio_class
        if res.rdt_class is not None:
            target.rdt_class = res.rdt_class
        if res.pids is not None:
            target.pids = LinuxPids(res.pids.limit)
    if lx.cgroups_path:
        linux.cgroups_path = lx.cgroups_path
    if lx.oom_score_adj is not None:
        linux.oom_score_adj = lx.oom_score_adj
    if lx.io_priority is not None:
        linux.io_priority = lx.io_priority
    if lx.seccomp_policy is not None:
        linux.seccomp_policy = lx.seccomp_policy
    if lx.scheduler is not None:
        linux.scheduler = lx.scheduler


def passable_updates(updates: list[ContainerUpdate], creating: str | None = None) -> bool:
    """Whether one plugin's ``updates`` are what their merge would give (one per container, none
    of ``creating``, each with memory and CPU resources, no devices, no pids limit, no hugepage
    size twice): the runtime may apply them as they are."""
    if not updates:
        return True
    if len(updates) > 1 and len({u.container_id for u in updates}) != len(updates):
        return False
    for u in updates:
        if type(u) is not ContainerUpdate or u.container_id == creating:
            return False
        lx = u.linux
        res = lx.resources if lx is not None else None
        if (res is None or type(res) is not LinuxResources or type(res.memory) is not LinuxMemory
                or type(res.cpu) is not LinuxCPU or res.devices or res.pids is not None
                or type(res.cpu.cpus) is not str or type(res.cpu.mems) is not str):
            return False
        limits = res.hugepage_limits
        if len(limits) > 1 and len({h.page_size for h in limits}) != len(limits):
            return False
    return True


def prepare(ctr: Container) -> None:
    """What :class:`.result.Result` does to the container being created before any plugin sees it."""
    if ctr.hooks is None:
        ctr.hooks = Hooks()
    if ctr.linux is None:
        ctr.linux = LinuxContainer()
    ctr.resources()
