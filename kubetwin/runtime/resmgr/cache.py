"""The resource manager's cache of pods and containers, as a policy reads and changes them.

A policy never writes NRI messages itself: it calls setters on a cached container
(``set_cpuset_cpus``, ``set_cpuset_mems``, ``set_cpu_shares`` ...), which both update the
container's current Linux resources and record the change in the container's pending NRI
request — a :class:`ContainerAdjustment` while the container is being created, a
:class:`ContainerUpdate` afterwards. The resource manager collects the pending requests
after each event and returns them to the runtime.

A container's resource requirements are estimated from its CRI values
(:mod:`..kubernetes`); its QoS class comes from the pod's cgroup parent; annotations are read
"effectively": ``KEY/container.NAME`` before ``KEY/pod`` before ``KEY``.

Upstream: containers/nri-plugins v0.14.0 ``pkg/resmgr/cache/{cache,pod,container,affinity,utils}.go``.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any, Callable

from ..kubernetes import Requirements, estimate_resource_requirements
from ..nri.api import Container as NRIContainer
from ..nri.api import (
    ContainerAdjustment,
    ContainerUpdate,
    LinuxContainerAdjustment,
    LinuxContainerUpdate,
    LinuxCPU,
    LinuxIOPriority,
    LinuxMemory,
    LinuxResources,
    LinuxScheduler,
    Mount,
    PodSandbox,
)
from .expression import (
    EQUALS,
    IN,
    KEY_ID,
    KEY_LABELS,
    KEY_NAME,
    KEY_NAMESPACE,
    KEY_POD,
    KEY_QOS_CLASS,
    KEY_TAGS,
    KEY_UID,
    Expression,
    ExpressionError,
)

RESMGR_NS = "resource-policy.nri.io"
RDT_CLASS_KEY = "rdtclass." + RESMGR_NS
BLOCKIO_CLASS_KEY = "blockioclass." + RESMGR_NS
TOPOLOGY_HINTS_KEY = "topologyhints." + RESMGR_NS
STRICT_TOPOLOGY_HINTS_KEY = "strict." + TOPOLOGY_HINTS_KEY
PRESERVE_CPU_KEY = "cpu.preserve." + RESMGR_NS
PRESERVE_MEMORY_KEY = "memory.preserve." + RESMGR_NS
UNLIMITED_BURSTABLE_KEY = "unlimited-burstable." + RESMGR_NS
ANNOTATED_RESOURCES_KEY = "noderesource.dev/resources"
AFFINITY_KEY = RESMGR_NS + "/affinity"
ANTI_AFFINITY_KEY = RESMGR_NS + "/anti-affinity"

CONTAINER_SCOPED, POD_SCOPED, UNSCOPED = 0, 1, 2

# container states (the cache's own, on top of NRI's)
CREATING, CREATED, RUNNING, EXITED, STALE = "creating", "created", "running", "exited", "stale"

DEFAULT_WEIGHT = 1
USER_WEIGHT_CUTOFF = 1000

_ctime = itertools.count(1)

#: keep ``estimateResourceRequirements``' answers per argument tuple (a fast path: a pure function
#: of its arguments, answering an immutable value; False: computed for every container)
ESTIMATES_KEPT = True
#: the ``Set*`` calls reach the pending request's resources and the container's own in one step
#: (a fast path: the same messages made on the way; False: through NRI's ``SetLinux*`` helpers)
QUICK_REQUESTS = True
#: a CPU ``Set*`` call (cpuset CPUs, memory nodes, shares) whose value the container and the
#: runtime's own record of it hold already, nothing pending for it, is skipped while the runtime
#: lends its records (:attr:`Cache.runtime`; a fast path: the update it would make changes nothing
#: the runtime ends with. False: every call makes its request, as upstream)
SAME_SKIPPED = True
_ESTIMATES: dict[tuple[int, int, int, int, str, int, int], Requirements] = {}
#: a cached container's ``tags`` and ``topology_hints`` are made empty and only ever read (node
#: copies share them already, :mod:`...sim.runtime_copy`): one shared empty map each (a fast
#: path: two objects fewer made and kept per container; False: its own, as upstream makes them)
SHARED_EMPTIES = True
_NO_TAGS: dict[str, str] = {}
_NO_HINTS: dict[str, Any] = {}


class CacheError(ValueError):
    pass


@dataclass(eq=False)
class Affinity:
    scope: Expression
    match: Expression
    weight: int

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope.to_json(), "match": self.match.to_json(), "weight": self.weight}


class Pod:
    """A cached pod sandbox."""

    def __init__(self, cache: "Cache", sandbox: PodSandbox):
        self.cache = cache
        self.sandbox = sandbox
        # the sandbox's identity, read at every lookup (a sandbox message never changes once sent)
        self.id: str = sandbox.id
        self.uid: str = sandbox.uid
        self.name: str = sandbox.name
        self.namespace: str = sandbox.namespace
        parent = sandbox.linux.cgroup_parent if sandbox.linux is not None else ""
        if "besteffort" in parent:
            self.qos_class = "BestEffort"
        elif "burstable" in parent:
            self.qos_class = "Burstable"
        else:
            self.qos_class = "Guaranteed"
        self._affinity: dict[str, list[Affinity]] | None = None

    @property
    def annotations(self) -> dict[str, str]:
        return self.sandbox.annotations

    def pretty_name(self) -> str:
        return f"{self.namespace or '<unknown-namespace>'}/{self.name or '<unknown-pod>'}"

    def containers(self) -> list["CachedContainer"]:
        return [c for c in self.cache.containers.values() if c.pod_id == self.id]

    def query_effective_annotation(self, key: str, container: str) -> tuple[str, int, bool]:
        a = self.sandbox.annotations
        if not a:   # most pods: no keys to build
            return "", UNSCOPED, False
        if (v := a.get(f"{key}/container.{container}")) is not None:
            return v, CONTAINER_SCOPED, True
        if (v := a.get(f"{key}/pod")) is not None:
            return v, POD_SCOPED, True
        if key in a:
            return a[key], UNSCOPED, True
        return "", UNSCOPED, False

    def effective_annotation(self, key: str, container: str) -> tuple[str, bool]:
        v, _, ok = self.query_effective_annotation(key, container)
        return v, ok

    def scope_expression(self) -> Expression:
        return Expression(key="pod/name", op=EQUALS, values=[self.name])

    def eval_key(self, key: str) -> Any:
        if key == KEY_NAME:
            return self.name
        if key == KEY_NAMESPACE:
            return self.namespace
        if key == KEY_QOS_CLASS:
            return self.qos_class
        if key == KEY_LABELS:
            return self.sandbox.labels
        if key == KEY_ID:
            return self.id
        if key == KEY_UID:
            return self.uid
        return None

    def container_affinity(self, name: str) -> list[Affinity]:
        """``GetContainerAffinity``: the pod's (anti-)affinity annotations, parsed once."""
        if self._affinity is None:
            parsed: dict[str, list[Affinity]] = {}
            for key, weight in ((AFFINITY_KEY, DEFAULT_WEIGHT), (ANTI_AFFINITY_KEY, -DEFAULT_WEIGHT)):
                value = self.sandbox.annotations.get(key)
                if value is None:
                    continue
                if not _parse_simple_affinity(self, value, weight, parsed):
                    _parse_full_affinity(self, value, weight, parsed)
            self._affinity = parsed
        return self._affinity.get(name, [])


def _strict_yaml(value: str) -> Any:
    """``yaml.UnmarshalStrict`` of an annotation value (YAML or JSON)."""
    from ...model.loader import parse_documents

    docs = parse_documents(value, "<annotation>")
    if len(docs) != 1:
        raise ValueError("expected one document")
    return docs[0]


def _parse_simple_affinity(pod: Pod, value: str, weight: int, out: dict[str, list[Affinity]]) -> bool:
    """The simple notation ``{c1: [c2, c3]}``: symmetric affinities within the pod."""
    try:
        parsed = _strict_yaml(value)
    except Exception:  # noqa: BLE001 - not the simple notation: try the full one
        return False
    if not isinstance(parsed, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(x, str) for x in v)
            for k, v in parsed.items()):
        return False
    symmetric: dict[str, dict[str, None]] = {}
    for name, values in parsed.items():
        for v in values:
            symmetric.setdefault(name, {})[v] = None
            symmetric.setdefault(v, {})[name] = None
    for name, others in symmetric.items():
        lst = list(others)
        op = EQUALS if len(lst) == 1 else IN
        out.setdefault(name, []).append(
            Affinity(pod.scope_expression(), Expression(key="name", op=op, values=lst), weight))
    return True


def _parse_full_affinity(pod: Pod, value: str, weight: int, out: dict[str, list[Affinity]]) -> None:
    try:
        parsed = _strict_yaml(value)
    except Exception as exc:  # noqa: BLE001
        raise CacheError(f"failed to parse affinity annotation '{value}': {exc}") from None
    if not isinstance(parsed, dict):
        raise CacheError(f"failed to parse affinity annotation '{value}': not a map of container names")
    for name, lst in parsed.items():
        if not isinstance(lst, list):
            raise CacheError(f"failed to parse affinity annotation '{value}': {name} is not a list")
        for item in lst:
            if not isinstance(item, dict) or set(item) - {"scope", "match", "weight"}:
                raise CacheError(f"failed to parse affinity annotation '{value}': unknown field in {item}")
            scope = _expr(item.get("scope"), value) if item.get("scope") is not None else pod.scope_expression()
            if item.get("match") is None:
                raise CacheError("invalid affinity match: nil expression")
            match = _expr(item["match"], value)
            w = item.get("weight", 0) or 0
            if not isinstance(w, int) or isinstance(w, bool):
                raise CacheError(f"failed to parse affinity annotation '{value}': weight must be an integer")
            if w == 0:
                w = weight
            elif weight < 0:
                w = -w
            try:
                scope.validate()
            except ExpressionError as exc:
                raise CacheError(f"invalid affinity scope: {exc}") from None
            try:
                match.validate()
            except ExpressionError as exc:
                raise CacheError(f"invalid affinity match: {exc}") from None
            w = max(-USER_WEIGHT_CUTOFF, min(USER_WEIGHT_CUTOFF, w))
            out.setdefault(name, []).append(Affinity(scope, match, w))


def _expr(obj: Any, value: str) -> Expression:
    if not isinstance(obj, dict) or set(obj) - {"key", "operator", "values"}:
        raise CacheError(f"failed to parse affinity annotation '{value}': bad expression {obj}")
    vals = obj.get("values") or []
    if not isinstance(vals, list):
        raise CacheError(f"failed to parse affinity annotation '{value}': values must be a list")
    return Expression(key=str(obj.get("key", "")), op=str(obj.get("operator", "")), values=[str(v) for v in vals])


class CachedContainer:
    """A cached container: the NRI container, its estimated requirements, pending NRI request."""

    def __init__(self, cache: "Cache", ctr: NRIContainer, state: str):
        self.cache = cache
        self.ctr = ctr
        # the container's identity, read at every lookup (never written after the creation)
        self.id: str = ctr.id
        self.pod_id: str = ctr.pod_sandbox_id
        self.name: str = ctr.name
        self.state = state
        self.ctime = next(_ctime)
        # never written after this (only read): one shared empty pair with SHARED_EMPTIES
        self.tags: dict[str, str] = _NO_TAGS if SHARED_EMPTIES else {}
        self.topology_hints: dict[str, Any] = _NO_HINTS if SHARED_EMPTIES else {}
        self.request: ContainerAdjustment | ContainerUpdate | None = None
        self.pending = False
        self.resource_updates: Requirements | None = None
        self.scheduler: LinuxScheduler | None = None
        self.io_priority: LinuxIOPriority | None = None
        self.requirements = self._estimate()
        if cache.pods[self.pod_id].sandbox.annotations:   # most pods: no class annotated
            self._set_default_classes()

    # --- identity ------------------------------------------------------------------------------
    @property
    def pod(self) -> Pod:
        return self.cache.pods[self.pod_id]

    @property
    def namespace(self) -> str:
        return self.cache.pods[self.pod_id].namespace

    @property
    def qos_class(self) -> str:
        return self.cache.pods[self.pod_id].qos_class

    def pretty_name(self) -> str:
        return f"{self.pod.pretty_name()}/{self.name}"

    # --- annotations ---------------------------------------------------------------------------
    def effective_annotation(self, key: str) -> tuple[str, bool]:
        pod = self.cache.pods[self.pod_id]
        if not pod.sandbox.annotations:   # most pods: nothing to look up (the policies ask ~10 times a creation)
            return "", False
        return pod.effective_annotation(key, self.name)

    def query_effective_annotation(self, key: str) -> tuple[str, int, bool]:
        pod = self.cache.pods[self.pod_id]
        if not pod.sandbox.annotations:
            return "", UNSCOPED, False
        return pod.query_effective_annotation(key, self.name)

    def preserve_cpu_resources(self) -> bool:
        v, ok = self.effective_annotation(PRESERVE_CPU_KEY)
        return ok and v == "true"

    def preserve_memory_resources(self) -> bool:
        v, ok = self.effective_annotation(PRESERVE_MEMORY_KEY)
        return ok and v == "true"

    def strict_topology_hints(self) -> bool:
        v, ok = self.effective_annotation(STRICT_TOPOLOGY_HINTS_KEY)
        return ok and _parse_bool(v) is True

    def affinity(self) -> list[Affinity]:
        """``GetAffinity``: annotated (anti-)affinities, then the policy's implicit ones."""
        explicit = list(self.pod.container_affinity(self.name))
        implicit = []
        for _, gen in self.cache.implicit.items():
            a = gen(self, len(explicit) > 0)
            if a is not None:
                implicit.append(a)
        return explicit + implicit

    def eval_key(self, key: str) -> Any:
        if key == KEY_POD:
            return self.pod
        if key == KEY_NAME:
            return self.name
        if key == KEY_NAMESPACE:
            return self.namespace
        if key == KEY_QOS_CLASS:
            return self.qos_class
        if key == KEY_LABELS:
            return self.ctr.labels
        if key == KEY_TAGS:
            return self.tags
        if key == KEY_ID:
            return self.id
        return None

    # --- resources -----------------------------------------------------------------------------
    def _estimate(self) -> Requirements:
        pod = self.cache.pods[self.pod_id]
        if pod.sandbox.annotations:   # most pods: none, so no resources annotated
            annotated = self._annotated_resources()
            if annotated is not None:
                return annotated
        res = self.ctr.resources()   # memory and CPU present
        cpu, mem = res.cpu, res.memory
        assert cpu is not None and mem is not None
        oom = self.ctr.linux.oom_score_adj if self.ctr.linux is not None else None
        args = (cpu.shares or 0, cpu.quota or 0, cpu.period or 0, mem.limit or 0, pod.qos_class, oom or 0,
                self.cache.memory_capacity)
        if not ESTIMATES_KEPT:
            return estimate_resource_requirements(*args)
        got = _ESTIMATES.get(args)
        if got is None:
            if len(_ESTIMATES) >= 4096:   # bounded: pod shapes are few, but nothing promises it
                _ESTIMATES.clear()
            got = _ESTIMATES[args] = estimate_resource_requirements(*args)
        return got

    def _annotated_resources(self) -> Requirements | None:
        """``noderesource.dev/resources`` on the pod (set by nri-plugins' webhook): the pod spec's
        requirements, taking precedence over the estimate."""
        data = self.pod.annotations.get(ANNOTATED_RESOURCES_KEY)
        if data is None:
            return None
        return self.cache.annotated_requirements(self.pod, data, self.name)

    def resource_requirements(self) -> Requirements:
        return self.resource_updates if self.resource_updates is not None else self.requirements

    # --- the pending NRI request ---------------------------------------------------------------
    def _cpu(self) -> LinuxCPU:
        """The container's ``linux.resources.cpu`` (created empty when missing)."""
        return self.ctr.resources().ensure_cpu()

    def _memory(self) -> LinuxMemory:
        """The container's ``linux.resources.memory`` (created empty when missing)."""
        return self.ctr.resources().ensure_memory()

    def _pending(self) -> ContainerAdjustment | ContainerUpdate:
        if self.request is None:
            self.request = ContainerAdjustment() if self.state == CREATING else ContainerUpdate(self.id)
        self.pending = True
        self.cache.mark_pending(self)
        return self.request

    def _pending_cpu(self) -> LinuxCPU:
        """``_pending()._res().cpu``: the pending request's CPU resources, memory and CPU present.
        A container with nothing pending gets its request made in one step (:data:`QUICK_REQUESTS`:
        the five messages ``_pending`` and ``_res()`` make through as many calls and tests, the
        same ones — an adjustment while it is created, an update afterwards)."""
        if QUICK_REQUESTS and self.request is None:
            cpu = LinuxCPU()
            res = LinuxResources(LinuxMemory(), cpu)
            if self.state == CREATING:
                self.request = ContainerAdjustment(linux=LinuxContainerAdjustment(resources=res))
            else:
                self.request = ContainerUpdate(self.id, LinuxContainerUpdate(res))
            self.pending = True
            self.cache.pending[self.id] = self
            return cpu
        got = self._pending()._res().cpu
        assert got is not None   # _res() ensures it
        return got

    def add_mount(self, mount: Mount) -> None:
        """A mount for the container being created (only a creation's adjustment carries one)."""
        req = self._pending()
        if not isinstance(req, ContainerAdjustment):
            raise CacheError(f"container {self.id}: a mount can only be added while it is created")
        req.add_mount(mount)

    def take_pending_adjustment(self) -> ContainerAdjustment | None:
        req, self.request = self.request, None
        self.pending = False
        return req if isinstance(req, ContainerAdjustment) else None

    def take_pending_update(self) -> ContainerUpdate | None:
        req, self.request = self.request, None
        self.pending = False
        return req if isinstance(req, ContainerUpdate) else None

    def _fresh(self, attr: str, value: Any) -> None:
        """``Set*`` of ``linux.resources.cpu.<attr>`` on a container past its creation with
        nothing pending (:data:`QUICK_REQUESTS`): its update made at once, as ``_request_cpu``
        makes it (an update with memory and CPU resources, this field set), and its own field
        written. Skipped (:data:`SAME_SKIPPED`) when the runtime lends its records
        (:attr:`Cache.runtime`) and both the cached message and the runtime's record of the
        container have memory and CPU resources holding ``value`` already: the runtime writes an
        update's fields over its own, so that update would change nothing it ends with."""
        lx = self.ctr.linux
        res = lx.resources if lx is not None else None
        own = res.cpu if res is not None and res.memory is not None else None
        if own is None:
            own = self._own_cpu()
        elif getattr(own, attr) == value:
            records = self.cache.runtime
            record = records.get(self.id) if records is not None else None
            if record is not None:
                lx = record.ctr.linux
                res = lx.resources if lx is not None else None
                cpu = res.cpu if res is not None and res.memory is not None else None
                if cpu is not None and getattr(cpu, attr) == value:
                    return
        cpu = LinuxCPU()
        setattr(cpu, attr, value)
        self.request = ContainerUpdate(self.id, LinuxContainerUpdate(LinuxResources(LinuxMemory(), cpu)))
        self.pending = True
        self.cache.mark_pending(self)
        setattr(own, attr, value)

    def set_cpu_shares(self, value: int) -> None:
        if QUICK_REQUESTS:
            if self.request is None and self.state != CREATING:
                self._fresh("shares", value)
                return
            self._request_cpu().shares = self._own_cpu().shares = value
            return
        self._pending().set_linux_cpu_shares(value)
        self._cpu().shares = value

    def set_cpu_quota(self, value: int) -> None:
        if QUICK_REQUESTS:
            self._request_cpu().quota = self._own_cpu().quota = value
            return
        self._pending().set_linux_cpu_quota(value)
        self._cpu().quota = value

    def set_cpu_period(self, value: int) -> None:
        if QUICK_REQUESTS:
            self._request_cpu().period = self._own_cpu().period = value
            return
        self._pending().set_linux_cpu_period(value)
        self._cpu().period = value

    def set_cpuset_cpus(self, value: str) -> None:
        if QUICK_REQUESTS:
            if self.request is None and self.state != CREATING:
                self._fresh("cpus", value)
                return
            self._request_cpu().cpus = self._own_cpu().cpus = value
            return
        self._pending().set_linux_cpuset_cpus(value)
        self._cpu().cpus = value

    def set_cpuset_mems(self, value: str) -> None:
        if QUICK_REQUESTS:
            if self.request is None and self.state != CREATING:
                self._fresh("mems", value)
                return
            self._request_cpu().mems = self._own_cpu().mems = value
            return
        self._pending().set_linux_cpuset_mems(value)
        self._cpu().mems = value

    def set_memory_limit(self, value: int) -> None:
        if QUICK_REQUESTS:
            self._request_resources().ensure_memory().limit = self._own_resources().ensure_memory().limit = value
            return
        self._pending().set_linux_memory_limit(value)
        self._memory().limit = value

    def set_memory_swap(self, value: int) -> None:
        if QUICK_REQUESTS:
            self._request_resources().ensure_memory().swap = self._own_resources().ensure_memory().swap = value
            return
        self._pending().set_linux_memory_swap(value)
        self._memory().swap = value

    # the quick reach of both resources (:data:`QUICK_REQUESTS`): the same messages NRI's
    # ``SetLinux*`` helpers and ``linux.resources`` create on the way, made in one step
    def _request_resources(self) -> LinuxResources:
        """The pending request's ``linux.resources``, memory and CPU present (``_res()``)."""
        req = self._pending()
        if req.linux is None:
            res = LinuxResources(LinuxMemory(), LinuxCPU())
            if type(req) is ContainerUpdate:
                req.linux = LinuxContainerUpdate(res)
                return res
            if type(req) is ContainerAdjustment:
                req.linux = LinuxContainerAdjustment(resources=res)
                return res
        return req._res()

    def _request_cpu(self) -> LinuxCPU:
        cpu = self._request_resources().cpu
        assert cpu is not None   # _res() ensures it
        return cpu

    def _own_resources(self) -> LinuxResources:
        """The cached container's ``linux.resources``, memory and CPU present (``resources()``)."""
        lx = self.ctr.linux
        if lx is not None:
            res = lx.resources
            if res is not None and res.memory is not None and res.cpu is not None:
                return res
        return self.ctr.resources()

    def _own_cpu(self) -> LinuxCPU:
        cpu = self._own_resources().cpu
        assert cpu is not None   # resources() ensures it
        return cpu

    def set_rdt_class(self, value: str) -> None:
        req = self._pending()
        if self.cache.rdt_control:
            req.set_linux_rdt_class(value)
        self.ctr.resources().rdt_class = value

    def set_blockio_class(self, value: str) -> None:
        req = self._pending()
        if self.cache.blockio_control:
            req.set_linux_blockio_class(value)
        self.ctr.resources().blockio_class = value

    def set_scheduling(self, **values: Any) -> None:
        """Scheduling class fields (policy, nice, priority, flags, runtime, deadline, period):
        only while the container is being created, as upstream."""
        req = self._pending()
        if not isinstance(req, ContainerAdjustment):
            return
        if self.scheduler is None:
            self.scheduler = LinuxScheduler()
        for k, v in values.items():
            setattr(self.scheduler, k, v)
        req.set_linux_scheduler(self.scheduler)

    def set_io_priority(self, **values: Any) -> None:
        req = self._pending()
        if not isinstance(req, ContainerAdjustment):
            return
        if self.io_priority is None:
            self.io_priority = LinuxIOPriority()
        for k, v in values.items():
            setattr(self.io_priority, k, v)
        req.set_linux_io_priority(self.io_priority)

    def cpuset_cpus(self) -> str:
        return self._cpu().cpus

    def cpuset_mems(self) -> str:
        return self._cpu().mems

    def rdt_class(self) -> str:
        return self.ctr.resources().rdt_class or ""

    def blockio_class(self) -> str:
        return self.ctr.resources().blockio_class or ""

    def _set_default_classes(self) -> None:
        v, ok = self.effective_annotation(RDT_CLASS_KEY)
        if ok:
            self.set_rdt_class(v)
        v, ok = self.effective_annotation(BLOCKIO_CLASS_KEY)
        if ok:
            self.set_blockio_class(v)


ImplicitAffinity = Callable[[CachedContainer, bool], "Affinity | None"]


class Cache:
    """Pods and containers by id; implicit affinities the policy registers."""

    def __init__(self, memory_capacity: int):
        self.memory_capacity = memory_capacity
        self.pods: dict[str, Pod] = {}
        self.containers: dict[str, CachedContainer] = {}
        self.implicit: dict[str, ImplicitAffinity] = {}
        self.pending: dict[str, CachedContainer] = {}
        self.rdt_control = False
        self.blockio_control = False
        #: the runtime's records of its containers by id, lent for one creation
        #: (:meth:`.manager.ResourceManager.create_container_held`): :data:`SAME_SKIPPED`'s test
        self.runtime: dict[str, Any] | None = None

    def insert_pod(self, sandbox: PodSandbox) -> Pod:
        pod = Pod(self, sandbox)
        self.pods[sandbox.id] = pod
        return pod

    def delete_pod(self, pod_id: str) -> None:
        self.pods.pop(pod_id, None)

    def insert_container(self, ctr: NRIContainer, state: str = CREATING) -> CachedContainer:
        if ctr.pod_sandbox_id not in self.pods:
            raise CacheError(f"can't find cached pod {ctr.pod_sandbox_id} for container {ctr.id} ({ctr.name})")
        c = CachedContainer(self, ctr, state)
        self.containers[ctr.id] = c
        return c

    def delete_container(self, cid: str) -> None:
        self.containers.pop(cid, None)
        self.pending.pop(cid, None)

    def lookup_container(self, cid: str) -> CachedContainer | None:
        return self.containers.get(cid)

    def mark_pending(self, c: CachedContainer) -> None:
        self.pending[c.id] = c

    def pending_containers(self) -> list[CachedContainer]:
        out = list(self.pending.values())
        self.pending.clear()
        return out

    def evaluate_affinity(self, a: Affinity) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.containers.values():
            if a.scope.evaluate(c) and a.match.evaluate(c):
                out[c.id] = out.get(c.id, 0) + a.weight
        return out

    def annotated_requirements(self, pod: Pod, data: str, name: str) -> Requirements | None:
        from ...model.quantity import parse_quantity

        try:
            doc = json.loads(data)
            res = (doc.get("containers") or {}).get(name)
        except (ValueError, AttributeError):
            return None
        if not isinstance(res, dict):
            return None
        req, lim = res.get("requests") or {}, res.get("limits") or {}

        def q(d: dict, k: str, milli: bool) -> int | None:
            if k not in d:
                return None
            v = parse_quantity(d[k])
            return v.milli_value() if milli else v.value()

        return Requirements(q(req, "cpu", True), q(lim, "cpu", True), q(req, "memory", False), q(lim, "memory", False))


def _parse_bool(v: str) -> bool | None:
    """Go's ``strconv.ParseBool``."""
    if v in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if v in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


parse_bool = _parse_bool
