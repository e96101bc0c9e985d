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
    if SHARED_EMPTIES:   # a sandbox message never changes once sent: its empty parts shared
        annotations = meta.annotations
        return api.PodSandbox(sid, name, uid, namespace, labels, {**annotations} if annotations else _KEPT_ANNOTATIONS,
                              "", api.LinuxPodSandbox(None, None, parent, "", _KEPT_NAMESPACES, None), 0, _KEPT_IPS)
    return api.PodSandbox(sid, name, uid, namespace, labels, {**meta.annotations}, "",
                          api.LinuxPodSandbox(None, None, parent, "", [], None), 0, [])


# --- the NRI resources of a CRI dict --------------------------------------------------------------
ResourcesMaker = Callable[[], LinuxResources]
_MAKERS: dict[int, tuple[dict[str, Any], ResourcesMaker, ResourcesMaker, ResourcesMaker]] = {}


def resources_maker(cri: dict[str, Any]) -> ResourcesMaker:
    """A builder of :func:`.node.nri_resources_from_cri` ``(cri)`` (a new message each call),
    kept per CRI dict (by identity, the dict held so its id stays its own; the dict is read
    once, so it must not change afterwards — the kubelet's CRI resources of a pod shape never do)."""
    return _makers(cri)[1]


def _makers(cri: dict[str, Any]) -> tuple[dict[str, Any], ResourcesMaker, ResourcesMaker, ResourcesMaker]:
    """(``cri``, its :func:`resources_maker`, the same for the cache's copy and for the runtime's
    container made by :func:`prepared`: :func:`_kept_maker`)."""
    got = _MAKERS.get(id(cri))
    if got is not None and got[0] is cri:
        return got
    if len(_MAKERS) >= 4096:   # bounded: pod shapes are few, but nothing promises it
        _MAKERS.clear()
    got = _MAKERS[id(cri)] = (cri, _maker(cri), _kept_maker(cri, False), _kept_maker(cri, True))
    return got


def _kept_maker(cri: dict[str, Any], runtime: bool) -> ResourcesMaker:
    """:func:`_maker` for a container made by :func:`prepared` (:data:`SHARED_EMPTIES`): memory and
    CPU its own (setters and merges write them); the hugepage limits and device rules one list per
    CRI dict (written in place only by the plain merge, before which :func:`unshare` gives the
    runtime's container its own; the fast merge and updates replace them); the unified map one
    per CRI dict for the resource manager's copy (nobody writes it), its own for the ``runtime``'s
    container (an update writes it in place)."""
    plain = _maker(cri)
    proto = plain()
    limits, unified, devices = proto.hugepage_limits, proto.unified, proto.devices
    mem, cpu = proto.memory, proto.cpu
    assert mem is not None and cpu is not None
    limit, swap = mem.limit, mem.swap
    shares, quota, period, cpus, mems = cpu.shares, cpu.quota, cpu.period, cpu.cpus, cpu.mems
    if runtime:
        def make() -> LinuxResources:
            return LinuxResources(LinuxMemory(limit, None, swap),
                                  LinuxCPU(shares, quota, period, None, None, cpus, mems),
                                  limits, None, None, {**unified}, devices, None)
        return make

    def kept() -> LinuxResources:
        return LinuxResources(LinuxMemory(limit, None, swap), LinuxCPU(shares, quota, period, None, None, cpus, mems),
                              limits, None, None, unified, devices, None)

    return kept


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
              ) -> tuple[tuple[Any, ResourcesMaker, ResourcesMaker, ResourcesMaker], Any, str, dict[str, str], dict[str, str]]:
    """What every message of container ``cname`` (id ``cid``) of ``sandbox`` is built from: the
    makers of its resources (:func:`_makers`), its OOM score adjustment, cgroup path, labels and
    annotations (as :meth:`.node.RuntimeNode._container` sets them)."""
    uid, name, namespace, sid = sandbox.uid, sandbox.name, sandbox.namespace, sandbox.id
    parent = sandbox.linux.cgroup_parent if sandbox.linux else ""
    labels = {"io.kubernetes.container.name": cname, "io.kubernetes.pod.name": name,
              "io.kubernetes.pod.namespace": namespace, "io.kubernetes.pod.uid": uid}
    annotations = {"io.kubernetes.cri.container-type": "container", "io.kubernetes.cri.container-name": cname,
                   "io.kubernetes.cri.sandbox-id": sid, "io.kubernetes.cri.sandbox-name": name,
                   "io.kubernetes.cri.sandbox-namespace": namespace,
                   "io.kubernetes.cri.sandbox-uid": uid}
    return _makers(cri), cri.get("oomScoreAdj"), f"{parent}/{cid}" if parent else "", labels, annotations


def container(sandbox: api.PodSandbox, cname: str, cid: str, cri: dict[str, Any]
              ) -> tuple[Container, Callable[[], Container | None]]:
    """:meth:`.node.RuntimeNode._container` for container ``cname`` (id ``cid``) of ``sandbox``,
    and a builder of its :func:`.nri.message_copy.resources_only_copy` once the adaptation has
    prepared it (:func:`.nri.fastmerge.prepare`: empty hooks, ``linux`` and resources present),
    made right after that (None when the container is no longer as built: make the copy)."""
    sid = sandbox.id
    makers, oom, path, labels, annotations = _identity(sandbox, cname, cid, cri)
    make = makers[1]
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
    and its resources-only copy, made at once (:mod:`.fastpod`: nothing comes between them). With
    :data:`SHARED_EMPTIES` the copy's parts nobody writes are shared (see there)."""
    sid = sandbox.id
    makers, oom, path, labels, annotations = _identity(sandbox, cname, cid, cri)
    if SHARED_EMPTIES:
        # every field given (no factory runs): both containers' empty lists and maps the shared
        # ones below, their labels shared (as the plain copy shares them), the copy's own
        # annotations, each one's own resources
        ctr = Container(cid, sid, cname, "CONTAINER_UNKNOWN", labels, annotations, _KEPT_ARGS, _KEPT_ENV, _KEPT_MOUNTS,
                        _KEPT_HOOKS, LinuxContainer(_KEPT_NAMESPACES, _KEPT_DEVICES, makers[3](), oom, path, None, None,
                                                    _KEPT_SYSCTL, _KEPT_NET_DEVICES, None, None),
                        0, _KEPT_RLIMITS, 0, 0, 0, 0, "", "", _KEPT_CDI_DEVICES)
        mine = Container(cid, sid, cname, "CONTAINER_UNKNOWN", labels, {**annotations}, _KEPT_ARGS, _KEPT_ENV,
                         _KEPT_MOUNTS, _KEPT_HOOKS,
                         LinuxContainer(_KEPT_NAMESPACES, _KEPT_DEVICES, makers[2](), oom, path, None, None,
                                        _KEPT_SYSCTL, _KEPT_NET_DEVICES, None, None),
                         0, _KEPT_RLIMITS, 0, 0, 0, 0, "", "", _KEPT_CDI_DEVICES)
        return ctr, mine
    make = makers[1]
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


def unshare(ctr: Container) -> None:
    """Give the runtime's container made by :func:`prepared` its own hooks, rlimits, sysctls,
    network devices, hugepage limits and device rules in place of the shared ones
    (:data:`SHARED_EMPTIES`): before the plain merge of a reply (:class:`.nri.result.Result`),
    which writes them in place."""
    if ctr.hooks is _KEPT_HOOKS:
        ctr.hooks = Hooks([], [], [], [], [], [])
    if ctr.rlimits is _KEPT_RLIMITS:
        ctr.rlimits = []
    lx = ctr.linux
    if lx is not None:
        if lx.sysctl is _KEPT_SYSCTL:
            lx.sysctl = {}
        if lx.net_devices is _KEPT_NET_DEVICES:
            lx.net_devices = {}
        res = lx.resources
        if res is not None:   # shared per CRI dict: a copy of each
            res.hugepage_limits = [*res.hugepage_limits]
            res.devices = [*res.devices]


#: a sandbox made here (:func:`sandbox`: a message never changed once sent, shared by node copies,
#: :mod:`..sim.runtime_copy`) holds one shared empty map of annotations (a pod without any), list
#: of namespaces and list of IPs; a container created on :mod:`.fastpod`'s path (:func:`prepared`)
#: and the resource manager's copy of it hold one shared object for each part nobody writes in
#: place: arguments, environment, mounts, namespaces, devices (the plain merge of a reply and the
#: fast one only ever replace those lists, as :func:`.nri.message_copy.resources_only_copy`
#: relies on), hooks, rlimits, CDI devices, sysctls, network devices, and their resources'
#: hugepage limits and device rules (one list per CRI dict; the copy's unified map too). Only the
#: plain merge (:class:`.nri.result.Result`) writes hooks, rlimits, sysctls, network devices,
#: hugepage limits or device rules of the runtime's container in place, during the creation:
#: :mod:`.fastpod` gives the container its own first (:func:`unshare`); the fast merge writes
#: none of the first four and replaces the last two (:func:`.nri.fastmerge.plain_adjustment`,
#: :func:`.nri.fastmerge.apply_adjustment`), updates replace the hugepage limits; after the
#: creation nothing writes any of them (node copies share them already, :mod:`..sim.runtime_copy`).
#: The copy is the cache's, which writes nothing in it but its resources' memory and CPU parts
#: and classes (:mod:`.resmgr.cache`); the plain copy makes those parts its own only because the
#: runtime's may be written. 3 objects fewer made and kept per pod, some 30 per container
#: (False: their own, as before)
SHARED_EMPTIES = True
_KEPT_HOOKS = Hooks([], [], [], [], [], [])
_KEPT_RLIMITS: list[api.POSIXRlimit] = []
_KEPT_CDI_DEVICES: list[api.CDIDevice] = []
_KEPT_SYSCTL: dict[str, str] = {}
_KEPT_NET_DEVICES: dict[str, api.LinuxNetDevice] = {}
_KEPT_ANNOTATIONS: dict[str, str] = {}
_KEPT_NAMESPACES: list[api.LinuxNamespace] = []
_KEPT_IPS: list[str] = []
_KEPT_ARGS: list[str] = []
_KEPT_ENV: list[str] = []
_KEPT_MOUNTS: list[api.Mount] = []
_KEPT_DEVICES: list[api.LinuxDevice] = []


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
