"""A fast path for the messages of one creation on an untraced runtime node: forms per pod shape.

:meth:`.node.RuntimeNode.start_pod` describes each new pod and container to NRI as the runtime
sees them (:meth:`.node.RuntimeNode._sandbox`, :meth:`.node.RuntimeNode._container`). On the
nodes ``simulate`` runs (untraced, the kubelet's CRI resources given once per pod shape by the
table of node histories) most of that work repeats from one pod to the next:

* the sandbox's **cgroup parent**: the kubelet's QoS parent rendered once per (layout, QoS
  class); under the ``cgroupfs`` driver the pod's cgroup is that path and ``/pod<uid>`` (what
  :func:`..kubelet.cgroup_paths.to_cgroupfs` joins). The ``systemd`` driver takes the plain path;
* the container's **NRI resources** from the CRI ``LinuxContainerResources``: the values
  :func:`.node.nri_resources_from_cri` reads are read once per CRI dict (the table hands the same
  dict for every pod of a shape) and each creation builds the message from them directly;
* the resource manager's **copy of the container** (:func:`.nri.message_copy.resources_only_copy`
  of the container as the adaptation prepares it: empty hooks, ``linux`` and its resources
  present): built beside the runtime's container from the same values instead of copied from it
  — what it shares with the runtime's (labels, arguments, environment, mounts, devices,
  namespaces) and what it owns (annotations, hooks, rlimits, sysctls, network devices,
  resources) exactly as the copy would. The adaptation uses it only where it would have made
  that copy (:meth:`.nri.adaptation.Adaptation.create_container_updates`);
* the runtime **applying an update** (:func:`apply_update`): the fields of an update of the
  declared message types written through their dictionaries, the same writes as
  :func:`.nri.adaptation.apply_update` (which any other shape takes).

The ids stay the runtime's (sha256 of the pod UID and container name, as :mod:`.node` makes
them). :data:`ENABLED` off: :mod:`.node`'s plain builders and :func:`.nri.adaptation.apply_update`
(equivalence tests, ``--plain`` benchmark runs).

Not an upstream module: a kubetwin fast path for containerd ``internal/cri`` (the sandbox and
container NRI messages, ``pkg/cri/server/container_update_resources``) and containerd/nri v0.12.2
``pkg/adaptation`` as :mod:`.node` models them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from hashlib import sha256
from typing import TYPE_CHECKING, Any

from ..kubelet.cgroup_paths import CgroupLayout
from ..model.pod import Pod, standin_uid
from .nri import api
from .nri.adaptation import apply_update as plain_apply_update
from .nri.api import (
    Container,
    ContainerUpdate,
    Hooks,
    HugepageLimit,
    LinuxContainer,
    LinuxContainerUpdate,
    LinuxCPU,
    LinuxMemory,
    LinuxResources,
)

if TYPE_CHECKING:
    from .node import RuntimeNode

#: build the creation's messages from forms per pod shape (False: :mod:`.node`'s plain builders)
ENABLED = True

_NO_PARENT: Any = object()
_PARENTS: dict[tuple[CgroupLayout, str], Any] = {}


def cgroup_parent(layout: CgroupLayout, qos: str, uid: str) -> str:
    """``layout.path(layout.pod(qos, uid)) or ""`` with the QoS parent rendered once per layout
    and class (``cgroupfs``: the pod's cgroup is the parent's path and ``/pod<uid>``)."""
    if layout.driver != "cgroupfs":
        return layout.path(layout.pod(qos, uid)) or ""
    key = (layout, qos)
    base = _PARENTS.get(key, _NO_PARENT)
    if base is _NO_PARENT:
        if len(_PARENTS) >= 256:   # bounded: layouts and classes are few
            _PARENTS.clear()
        name = layout.qos(qos)
        base = _PARENTS[key] = None if name is None else layout.path(name)
    if base is None:
        return ""
    return f"{'' if base == '/' else base}/pod{uid}"


def sandbox(node: RuntimeNode, pod: Pod, qos: str) -> api.PodSandbox:
    """:meth:`.node.RuntimeNode._sandbox` of ``pod`` in QoS class ``qos``, built in one step."""
    meta = pod.metadata
    name, namespace = meta.name, meta.namespace
    uid = meta.uid or standin_uid(namespace, name)
    parent = cgroup_parent(node.layout, qos, uid)
    labels = {**meta.labels, "io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": namespace,
              "io.kubernetes.pod.uid": uid}
    sid = sha256(f"sandbox\x00{uid}".encode()).hexdigest()
    return api.PodSandbox(sid, name, uid, namespace, labels, {**meta.annotations}, "",
                          api.LinuxPodSandbox(None, None, parent, "", [], None), 0, [])


# --- the NRI resources of a CRI dict --------------------------------------------------------------
ResourcesMaker = Callable[[], LinuxResources]
_MAKERS: dict[int, tuple[dict[str, Any], ResourcesMaker]] = {}


def resources_maker(cri: dict[str, Any]) -> ResourcesMaker:
    """A builder of :func:`.node.nri_resources_from_cri` ``(cri)`` (a new message each call),
    kept per CRI dict (by identity, the dict held so its id stays its own; the dict is read
    once, so it must not change afterwards — the kubelet's CRI resources of a pod shape never do)."""
    got = _MAKERS.get(id(cri))
    if got is not None and got[0] is cri:
        return got[1]
    if len(_MAKERS) >= 4096:   # bounded: pod shapes are few, but nothing promises it
        _MAKERS.clear()
    maker = _maker(cri)
    _MAKERS[id(cri)] = (cri, maker)
    return maker


def _maker(cri: dict[str, Any]) -> ResourcesMaker:
    shares = cri["cpuShares"] if cri.get("cpuShares") else None
    quota = cri["cpuQuota"] if cri.get("cpuQuota") else None
    period = cri["cpuPeriod"] if cri.get("cpuPeriod") else None
    cpus = cri.get("cpusetCpus") or ""
    mems = cri.get("cpusetMems") or ""
    limit = cri["memoryLimitInBytes"] if cri.get("memoryLimitInBytes") else None
    swap = cri["memorySwapLimitInBytes"] if cri.get("memorySwapLimitInBytes") else None
    # one entry per page size, shared by every message made (an entry is replaced, never written:
    # what :mod:`..sim.runtime_copy` shares between copies for the same reason)
    limits = tuple(HugepageLimit(h["pageSize"], h["limit"]) for h in cri.get("hugepageLimits") or [])
    unified = dict(cri.get("unified") or {})

    def make() -> LinuxResources:
        return LinuxResources(LinuxMemory(limit, None, swap), LinuxCPU(shares, quota, period, None, None, cpus, mems),
                              [*limits], None, None, {**unified})

    return make


# --- the container and the resource manager's copy of it --------------------------------------------
def _identity(sandbox: api.PodSandbox, cname: str, cid: str, cri: dict[str, Any]
              ) -> tuple[Callable[[], Any], Any, str, dict[str, str], dict[str, str]]:
    """What every message of container ``cname`` (id ``cid``) of ``sandbox`` is built from: the
    maker of its resources, its OOM score adjustment, cgroup path, labels and annotations (as
    :meth:`.node.RuntimeNode._container` sets them)."""
    uid, name, namespace, sid = sandbox.uid, sandbox.name, sandbox.namespace, sandbox.id
    parent = sandbox.linux.cgroup_parent if sandbox.linux else ""
    labels = {"io.kubernetes.container.name": cname, "io.kubernetes.pod.name": name,
              "io.kubernetes.pod.namespace": namespace, "io.kubernetes.pod.uid": uid}
    annotations = {"io.kubernetes.cri.container-type": "container", "io.kubernetes.cri.container-name": cname,
                   "io.kubernetes.cri.sandbox-id": sid, "io.kubernetes.cri.sandbox-name": name,
                   "io.kubernetes.cri.sandbox-namespace": namespace,
                   "io.kubernetes.cri.sandbox-uid": uid}
    return resources_maker(cri), cri.get("oomScoreAdj"), f"{parent}/{cid}" if parent else "", labels, annotations


def container(sandbox: api.PodSandbox, cname: str, cid: str, cri: dict[str, Any]
              ) -> tuple[Container, Callable[[], Container | None]]:
    """:meth:`.node.RuntimeNode._container` for container ``cname`` (id ``cid``) of ``sandbox``,
    and a builder of its :func:`.nri.message_copy.resources_only_copy` once the adaptation has
    prepared it (:func:`.nri.fastmerge.prepare`: empty hooks, ``linux`` and resources present),
    made right after that (None when the container is no longer as built: make the copy)."""
    sid = sandbox.id
    make, oom, path, labels, annotations = _identity(sandbox, cname, cid, cri)
    lx = LinuxContainer([], [], make(), oom, path)
    ctr = Container(cid, sid, cname, "CONTAINER_UNKNOWN", labels, annotations, linux=lx)

    def twin() -> Container | None:
        # the resources-only copy of ``ctr`` as prepared: what it shares, what it owns
        d = ctr.__dict__
        hooks = d["hooks"]
        if (type(hooks) is not Hooks or hooks.prestart or hooks.create_runtime or hooks.create_container
                or hooks.start_container or hooks.poststart or hooks.poststop or d["linux"] is not lx or d["state"] != "CONTAINER_UNKNOWN"
                or len(d) != _N_CONTAINER or d["annotations"] is not annotations or d["rlimits"] or d["cdi_devices"]
                or d["pid"] or lx.resources is None or lx.sysctl or lx.net_devices or lx.io_priority is not None
                or lx.seccomp_policy is not None or lx.scheduler is not None or lx.rdt is not None
                or len(lx.__dict__) != _N_LINUX):
            return None
        return Container(cid, sid, cname, "CONTAINER_UNKNOWN", labels, {**annotations}, d["args"], d["env"],
                         d["mounts"], Hooks(), LinuxContainer(lx.namespaces, lx.devices, make(), oom, path))

    return ctr, twin


def prepared(sandbox: api.PodSandbox, cname: str, cid: str, cri: dict[str, Any]) -> tuple[Container, Container]:
    """:func:`container` as the adaptation prepares it (:func:`.nri.fastmerge.prepare`: empty hooks)
    and its resources-only copy, made at once (:mod:`.fastpod`: nothing comes between them)."""
    sid = sandbox.id
    make, oom, path, labels, annotations = _identity(sandbox, cname, cid, cri)
    namespaces: list[api.LinuxNamespace] = []
    devices: list[api.LinuxDevice] = []
    args: list[str] = []
    env: list[str] = []
    mounts: list[api.Mount] = []
    ctr = Container(cid, sid, cname, "CONTAINER_UNKNOWN", labels, annotations, args, env, mounts,
                    Hooks([], [], [], [], [], []), LinuxContainer(namespaces, devices, make(), oom, path))
    mine = Container(cid, sid, cname, "CONTAINER_UNKNOWN", labels, {**annotations}, args, env, mounts,
                     Hooks([], [], [], [], [], []), LinuxContainer(namespaces, devices, make(), oom, path))
    return ctr, mine


_N_CONTAINER = len(fields(Container))
_N_LINUX = len(fields(LinuxContainer))


# --- the runtime applying an update ---------------------------------------------------------------
def apply_update(ctr: Container, update: ContainerUpdate) -> None:
    """:func:`.nri.adaptation.apply_update`: an update whose messages are of their declared types
    written field by field through their dictionaries; any other through the plain function."""
    lx = update.linux
    if type(lx) is not LinuxContainerUpdate:
        plain_apply_update(ctr, update)
        return
    src = lx.resources
    if src is None:
        return
    if type(src) is not LinuxResources:
        plain_apply_update(ctr, update)
        return
    own = ctr.linux
    dst = own.resources if own is not None else None
    if dst is None or dst.memory is None or dst.cpu is None:   # else what ctr.resources() gives
        dst = ctr.resources()
    mem, cpu = src.memory, src.cpu
    if (mem is not None and type(mem) is not LinuxMemory) or (cpu is not None and type(cpu) is not LinuxCPU) \
            or type(dst.memory) is not LinuxMemory or type(dst.cpu) is not LinuxCPU:
        plain_apply_update(ctr, update)
        return
    if mem is not None:
        src_mem = mem.__dict__
        if src_mem != _NO_MEMORY:   # else nothing set (the resource manager's re-pinning)
            dm = dst.memory.__dict__
            for attr, v in src_mem.items():
                if v is not None and attr in _MEMORY_SCALARS:
                    dm[attr] = v
    if cpu is not None:
        dc = dst.cpu.__dict__
        for attr, v in cpu.__dict__.items():
            if v is not None and attr in _CPU_SCALARS:
                dc[attr] = v
        if cpu.cpus:
            dc["cpus"] = cpu.cpus
        if cpu.mems:
            dc["mems"] = cpu.mems
    for lim in src.hugepage_limits:
        dst.hugepage_limits = [h for h in dst.hugepage_limits if h.page_size != lim.page_size] + [lim]
    if src.unified:
        dst.unified.update(src.unified)
    if src.blockio_class is not None:
        dst.blockio_class = src.blockio_class
    if src.rdt_class is not None:
        dst.rdt_class = src.rdt_class
    if src.pids is not None:
        dst.pids = src.pids


_MEMORY_SCALARS = frozenset({"limit", "reservation", "swap", "kernel", "kernel_tcp", "swappiness", "disable_oom_killer",
                             "use_hierarchy"})
_CPU_SCALARS = frozenset({"shares", "quota", "period", "realtime_runtime", "realtime_period"})
#: the fields of an empty ``LinuxMemory``: an update's memory equal to them sets nothing (its loop
#: above skipped: the resource manager's updates of cpusets and shares carry an empty one)
_NO_MEMORY = LinuxMemory().__dict__.copy()
