"""In-place pod resize on one node: the kubelet's allocation manager (``InPlacePodVerticalScaling``).

A resize the API server accepted (:mod:`kubetwin.model.pod_resize`) reaches the kubelet as a pod
update whose desired resources differ from the allocated ones. The kubelet queues it
(``PushPendingResize``, kept sorted by ``sortPendingResizes``) and retries every pending resize
(``RetryPendingResizes``) when a pod is updated, removed or resized and every 3 minutes.
``handlePodResourcesResize`` asks the admit handlers with ``Operation: Resize``:

1. the resize handler (``podResizesAdmitHandler``) — ``Infeasible``: static pods, containers with
   swap, pod-level resources without ``InPlacePodLevelResourcesVerticalScaling``, a Guaranteed
   pod's cpu under the static CPU Manager policy (unless ``InPlacePodVerticalScalingExclusiveCPUs``),
   its memory under the Static Memory Manager policy (unless
   ``InPlacePodVerticalScalingExclusiveMemory``), requests above the node's absolute allocatable
   (capacity − system/kube reserved);
2. the resource managers (the Topology Manager's admit handler over the CPU, Memory and Device
   Managers, which find the containers already allocated and keep their CPUs and NUMA nodes);
3. the predicate handler (node allocatable minus the other pods' *allocated* requests).

A refusal by 1 is ``Infeasible``; one by 2 or 3 is ``Deferred`` (retried later). A resize that fits
is allocated (the checkpoint now holds the new resources), ``PodResizePending`` is cleared and
``PodResizeInProgress`` set until the runtime has actuated it.

With ``InPlacePodVerticalScalingExclusiveCPUs`` on, v1.36's static policy lets the resize through
but ``Allocate`` finds the container in its state and keeps its CPUs: the exclusive cpuset neither
grows nor shrinks (``GetTopologyHints`` answers an empty, unsatisfiable hint for a size mismatch,
which the ``restricted`` and ``single-numa-node`` Topology Manager policies turn into a deferral).
:attr:`ResizeResult.notes` says so when it happens.

Upstream: ``pkg/kubelet/allocation/allocation_manager.go`` (``handlePodResourcesResize``,
``retryPendingResizes``, ``sortPendingResizes``, ``isResizeIncreasingRequests``),
``pkg/kubelet/allocation/handlers.go``, ``features_linux.go``, ``pkg/kubelet/status/status_manager.go``
(resize conditions), ``pkg/kubelet/lifecycle/predicate.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

import msgspec

from ..model.pod import Container, Pod, is_sidecar
from ..model.resources import pod_requests, quantity_milli_value, quantity_value
from .admission_errors import AdmissionError, KubeletHang, admit_result
from .checkpoint.actuated_pods_state import is_pod_resize_in_progress, set_actuated_resources
from .checkpoint.allocation_state import StateCheckpoint
from .oom import is_critical_pod, is_static_pod
from .qos import GUARANTEED, get_pod_qos

if TYPE_CHECKING:
    from .admission import NodeAdmission

PENDING, IN_PROGRESS = "PodResizePending", "PodResizeInProgress"
DEFERRED, INFEASIBLE = "Deferred", "Infeasible"
#: What a resize request came to (``ResizeResult.status``).
ALLOCATED, UNCHANGED = "InProgress", "Unchanged"

TRIGGER_POD_UPDATED, TRIGGER_PODS_REMOVED, TRIGGER_POD_RESIZED = "pod_updated", "pods_removed", "pod_resized"
TRIGGER_PERIODIC = "periodic_retry"
#: ``TriggerReasonPodsAdded``: pods admitted (after a restart, those whose spec differs from their allocation)
TRIGGER_PODS_ADDED = "pods_added"
#: ``retryDelay``: the periodic retry of pending resizes (after the first 30 s).
RETRY_PERIOD_SECONDS = 180.0


@dataclass(frozen=True)
class ResizeCondition:
    """A ``PodResizePending`` / ``PodResizeInProgress`` condition as the status manager keeps it."""

    type: str
    reason: str = ""
    message: str = ""
    observed_generation: int = 0
    last_transition_time: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "status": "True"}
        if self.reason:
            out["reason"] = self.reason
        if self.message:
            out["message"] = self.message
        if self.observed_generation:
            out["observedGeneration"] = self.observed_generation
        return out


@dataclass(frozen=True)
class ResizeResult:
    """One evaluation of a pod's pending resize (``handlePodResourcesResize``)."""

    pod: Pod  #: the desired pod
    status: str  #: ``InProgress`` (allocated), ``Deferred``, ``Infeasible``, ``Unchanged`` or ``Refused`` (API server)
    reason: str = ""
    message: str = ""
    #: the pod's resize conditions after this evaluation
    conditions: tuple[ResizeCondition, ...] = ()
    #: the pod as allocated before and after (the same pod unless the resize was allocated)
    before: Pod | None = None
    after: Pod | None = None
    trigger: str = TRIGGER_POD_UPDATED
    #: modelling notes (e.g. exclusive CPUs kept by v1.36's static policy)
    notes: tuple[str, ...] = ()

    @property
    def allocated(self) -> bool:
        return self.status == ALLOCATED


# --- the resize admit handler ---------------------------------------------------------------------


def _resizable_containers(pod: Pod, gates: Any) -> Iterable[Container]:
    """``IsResizableContainer``: app containers and sidecars (all init containers with
    ``InPlacePodVerticalScalingInitContainers``)."""
    init_resizable = _known(gates, "InPlacePodVerticalScalingInitContainers") and \
        gates.enabled("InPlacePodVerticalScalingInitContainers")
    for c, init in pod.all_containers():
        if not init or init_resizable or is_sidecar(c):
            yield c


def _known(gates: Any, name: str) -> bool:
    try:
        gates.enabled(name)
    except KeyError:
        return False
    return True


def _container(pod: Pod, name: str) -> Container | None:
    for c, _ in pod.all_containers():
        if c.name == name:
            return c
    return None


def _request_changed(desired: Pod, allocated: Pod, resource: str, gates: Any) -> bool:
    """``guaranteedPodResourceResizeRequired``: some resizable container's request changes."""
    for c in _resizable_containers(desired, gates):
        a = _container(allocated, c.name)
        old = a.resources.requests.get(resource) if a is not None else None
        new = c.resources.requests.get(resource)
        if (old is None) != (new is None) or (old is not None and new is not None and old.cmp(new) != 0):
            return True
    return False


def container_swap_behavior(node: "NodeAdmission", pod: Pod, c: Container) -> str:
    """``GetContainerSwapBehavior``: ``LimitedSwap`` for a Burstable, non-critical pod's container
    whose memory request differs from its limit, when the node is configured for it."""
    cfg = node.config
    if (cfg.memory_swap.swap_behavior or "NoSwap") != "LimitedSwap" or not node.gates.enabled("NodeSwap"):
        return "NoSwap"
    if is_critical_pod(pod) or get_pod_qos(pod, node.gates) != "Burstable":
        return "NoSwap"
    req, lim = c.resources.requests.get("memory"), c.resources.limits.get("memory")
    if (req is None or req.is_zero()) and (lim is None or lim.is_zero()):
        return "NoSwap"
    if (req.value() if req is not None else 0) == (lim.value() if lim is not None else 0):
        return "NoSwap"
    return "LimitedSwap"


def _swap_blocks(node: "NodeAdmission", desired: Pod, allocated: Pod) -> bool:
    """``disallowResizeForSwappableContainers``."""
    for d, _ in desired.all_containers():
        a = _container(allocated, d.name)
        if a is None:
            continue
        new, old = d.resources.requests.get("memory"), a.resources.requests.get("memory")
        same = (new is None and old is None) or (new is not None and old is not None and new.cmp(old) == 0)
        restart = next((p.restart_policy == "RestartContainer" for p in a.resize_policy if p.resource_name == "memory"),
                       False)
        if not same and not restart:
            if container_swap_behavior(node, desired, d) != "NoSwap" or \
                    container_swap_behavior(node, allocated, a) != "NoSwap":
                return True
    return False


def allocatable_absolute(node: "NodeAdmission") -> tuple[int, int]:
    """``GetNodeAllocatableAbsolute``: capacity − systemReserved − kubeReserved (no eviction
    threshold), floored at 0: (cpu millicores, memory bytes)."""
    cfg = node.config
    cpu = node.capacity["cpu"].milli_value()
    mem = node.capacity["memory"].value()
    for reserved in (cfg.system_reserved, cfg.kube_reserved):
        if "cpu" in reserved:
            cpu -= reserved["cpu"].milli_value()
        if "memory" in reserved:
            mem -= reserved["memory"].value()
    return max(cpu, 0), max(mem, 0)


def resize_handler(node: "NodeAdmission", desired: Pod, allocated: Pod) -> tuple[str, str, str] | None:
    """``podResizesAdmitHandler.Admit`` for a resize: (``Infeasible``, message, the
    ``kubelet_pod_infeasible_resizes_total`` reason detail), or None."""
    g = node.gates
    if not g.enabled("InPlacePodVerticalScaling"):  # IsInPlacePodVerticalScalingAllowed
        return INFEASIBLE, "InPlacePodVerticalScaling is disabled", "feature_gate_off"
    if is_static_pod(desired):
        return INFEASIBLE, "In-place resize of static-pods is not supported", "static_pod"
    if _swap_blocks(node, desired, allocated):
        return INFEASIBLE, "In-place resize of containers with swap is not supported.", "swap_limitation"
    if desired.spec.resources != allocated.spec.resources and \
            not g.enabled("InPlacePodLevelResourcesVerticalScaling"):
        return INFEASIBLE, "InPlacePodLevelResourcesVerticalScaling is disabled", "feature_gate_off"
    if get_pod_qos(desired, g) == GUARANTEED:
        if not g.enabled("InPlacePodVerticalScalingExclusiveCPUs") and node.config.cpu_manager_policy == "static" \
                and _request_changed(desired, allocated, "cpu", g):
            return (INFEASIBLE, 'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"',
                    "guaranteed_pod_cpu_manager_static_policy")
        if not g.enabled("InPlacePodVerticalScalingExclusiveMemory") and \
                node.config.memory_manager_policy == "Static" and _request_changed(desired, allocated, "memory", g):
            return (INFEASIBLE, 'Resize is infeasible for Guaranteed Pods alongside Memory Manager policy "Static"',
                    "guaranteed_pod_memory_manager_static_policy")
    cpu_avail, mem_avail = allocatable_absolute(node)
    reqs = pod_requests(desired)
    cpu_req, mem_req = quantity_milli_value(reqs, "cpu"), quantity_value(reqs, "memory")
    if cpu_req > cpu_avail or mem_req > mem_avail:
        if mem_req > mem_avail:
            detail = f"memory, requested: {mem_req}, capacity: {mem_avail}"
        else:
            detail = f"cpu, requested: {cpu_req}, capacity: {cpu_avail}"
        return INFEASIBLE, "Node didn't have enough capacity: " + detail, "insufficient_node_allocatable"
    return None


# --- the allocation manager's resize part ---------------------------------------------------------


@dataclass
class ResizeManager:
    """The pending resizes of one node's kubelet and their conditions (status manager)."""

    node: "NodeAdmission"
    #: UIDs of pods with a pending resize, in ``sortPendingResizes`` order
    pending: list[str] = field(default_factory=list)
    #: the desired pod of each pod with a resize not yet allocated
    desired: dict[str, Pod] = field(default_factory=dict)
    conditions: dict[str, dict[str, ResizeCondition]] = field(default_factory=dict)
    #: the time of the next periodic retry (simulation seconds; the ticker starts at 30 s)
    next_retry: float = 30.0
    #: ``kubelet_pod_infeasible_resizes_total`` by reason detail
    infeasible: dict[str, int] = field(default_factory=dict)
    #: ``kubelet_pod_deferred_accepted_resizes_total`` by retry trigger
    deferred_accepted: dict[str, int] = field(default_factory=dict)
    #: ``actuated_pods_state``: what the runtime was last told per container
    actuated_state: StateCheckpoint = field(default_factory=StateCheckpoint)

    # --- state -------------------------------------------------------------------------------
    def allocated(self, uid: str) -> Pod | None:
        for p in self.node.admitted:
            if p.uid == uid:
                return p
        return None

    def conditions_of(self, uid: str) -> tuple[ResizeCondition, ...]:
        conds = self.conditions.get(uid, {})
        return tuple(conds[t] for t in (PENDING, IN_PROGRESS) if t in conds)

    def set_condition(self, uid: str, type_: str, reason: str, message: str, generation: int = 0,
                      now: float = 0.0) -> bool:
        """``updatedPodResizeCondition``: the transition time moves only when the reason or message does."""
        conds = self.conditions.setdefault(uid, {})
        old = conds.get(type_)
        if old is not None and old.reason == reason and old.message == message and \
                old.observed_generation == generation:
            return False
        when = old.last_transition_time if old is not None and old.reason == reason and \
            old.message == message else now
        conds[type_] = ResizeCondition(type_, reason, message, generation, when)
        return True

    def _clear(self, uid: str, type_: str) -> None:
        conds = self.conditions.get(uid)
        if conds is not None:
            conds.pop(type_, None)
            if not conds:
                del self.conditions[uid]

    def actuated(self, uid: str) -> None:
        """The runtime took the allocated resources (``SetActuatedResources``); then
        ``CheckPodResizeInProgress``: ``PodResizeInProgress`` is cleared once no running
        container's actuated resources differ from its allocation."""
        pod = self.allocated(uid)
        if pod is not None:
            resizable = list(_resizable_containers(pod, self.node.gates))
            for c in resizable:   # each container's UpdateContainerResources succeeded
                set_actuated_resources(self.actuated_state, pod, self.node.gates, c)
            if is_pod_resize_in_progress(pod, self.actuated_state, resizable=resizable):
                return
        self._clear(uid, IN_PROGRESS)

    def remove_pod(self, uid: str) -> None:
        """``RemovePod``: the pod's actuated entry goes (the file keeps it until the next set)."""
        self.actuated_state.remove_pod(uid)

    def remove_orphaned_pods(self, remaining: Iterable[str]) -> list[str]:
        """``RemoveOrphanedPods`` (housekeeping): entries of pods the kubelet no longer knows go."""
        return self.actuated_state.remove_orphaned_pods(remaining)

    # --- requests ----------------------------------------------------------------------------
    def request(self, desired: Pod, now: float = 0.0) -> list[ResizeResult]:
        """``HandlePodUpdates`` for a pod whose resources changed: queue it (``PushPendingResize``)
        and retry every pending resize in order (``RetryPendingResizes(pod_updated)``); then,
        while resizes got allocated and others still wait, retry again (``pod_resized``)."""
        self.push(desired)
        return self.retry(TRIGGER_POD_UPDATED, now)

    def push(self, desired: Pod) -> None:
        """``PushPendingResize``: remember the desired pod and queue it, keeping the queue sorted."""
        uid = desired.uid
        if self.allocated(uid) is None:
            raise KeyError(f"pod {desired.key} is not running on this node")
        self.desired[uid] = desired
        if uid not in self.pending:
            self.pending.append(uid)
            self._sort()

    def pod_removed(self, uid: str, now: float = 0.0) -> list[ResizeResult]:
        """``HandlePodRemoves``: the pod's resize state goes; pending resizes are retried."""
        self.remove_pod(uid)
        self.desired.pop(uid, None)
        self.conditions.pop(uid, None)
        if uid in self.pending:
            self.pending.remove(uid)
        return self.retry(TRIGGER_PODS_REMOVED, now) if self.pending else []

    def periodic(self, now: float) -> list[ResizeResult]:
        """The allocation manager's ticker (``Run``): retries every ``retryDelay``."""
        if now < self.next_retry:
            return []
        return self.retry(TRIGGER_PERIODIC, now)

    def retry(self, trigger: str, now: float = 0.0) -> list[ResizeResult]:
        """``retryPendingResizes``: every pending resize in queue order (the ticker restarts: the
        next periodic retry is ``retryDelay`` from now)."""
        self.next_retry = now + RETRY_PERIOD_SECONDS
        results: list[ResizeResult] = []
        while True:
            allocated_any = False
            still: list[str] = []
            for uid in list(self.pending):
                if self.allocated(uid) is None:
                    continue  # the pod is gone
                pending = self.conditions.get(uid, {}).get(PENDING)
                was_deferred = pending is not None and pending.reason == DEFERRED
                r = self.handle(self.desired.get(uid) or self.allocated(uid), trigger, now)  # type: ignore[arg-type]
                results.append(r)
                if r.status == ALLOCATED and was_deferred:
                    self.deferred_accepted[trigger] = self.deferred_accepted.get(trigger, 0) + 1
                if r.status == DEFERRED:
                    still.append(uid)
                elif r.status == ALLOCATED:
                    allocated_any = True
            self.pending = still
            if not (allocated_any and self.pending):
                break
            trigger = TRIGGER_POD_RESIZED
        return results

    # --- handlePodResourcesResize ------------------------------------------------------------
    def handle(self, desired: Pod, trigger: str = TRIGGER_POD_UPDATED, now: float = 0.0) -> ResizeResult:
        uid = desired.uid
        before = self.allocated(uid)
        assert before is not None
        generation = desired.metadata.generation
        if _same_resources(desired, before):
            self._clear(uid, PENDING)
            self.desired.pop(uid, None)
            return ResizeResult(desired, UNCHANGED, conditions=self.conditions_of(uid), before=before, after=before,
                                trigger=trigger)
        ok, reason, message, notes = self.can_resize(desired, before)
        if ok:
            self.node.set_allocation(before, desired)
            self.desired.pop(uid, None)
            self._clear(uid, PENDING)
            self._clear(uid, IN_PROGRESS)
            self.set_condition(uid, IN_PROGRESS, "", "", generation, now)
            return ResizeResult(desired, ALLOCATED, conditions=self.conditions_of(uid), before=before,
                                after=desired, trigger=trigger, notes=notes)
        if reason:
            self.set_condition(uid, PENDING, reason, message, generation, now)
        return ResizeResult(desired, reason, reason, message, self.conditions_of(uid), before, before, trigger, notes)

    def can_resize(self, desired: Pod, allocated: Pod) -> tuple[bool, str, str, tuple[str, ...]]:
        """``canAdmitPod(..., ResizeOperation)``: the resize handler, the resource managers, the predicate."""
        node = self.node
        refused = resize_handler(node, desired, allocated)
        if refused is not None:
            self.infeasible[refused[2]] = self.infeasible.get(refused[2], 0) + 1
            return False, refused[0], refused[1], ()
        if node.hung is not None:
            return False, DEFERRED, f"the kubelet hung earlier ({node.hung})", ()
        self._check_modelled(desired, allocated)
        saved = dict(node.topology.affinities)
        try:
            node.topology.admit(desired)
        except AdmissionError as exc:
            node.topology.affinities.clear()
            node.topology.affinities.update(saved)
            _, message = admit_result(exc)
            return False, DEFERRED, message, ()
        except KubeletHang as exc:
            node.hung = f"resize of pod {desired.key}: {exc}"
            return False, DEFERRED, str(exc), ()
        rejected = node.resize_predicate(allocated, desired)
        if rejected is not None:
            return False, DEFERRED, rejected[1], ()
        return True, "", "", self._kept_cpus(desired, allocated)

    def _check_modelled(self, desired: Pod, allocated: Pod) -> None:
        """From v1.37 the static policy resizes exclusive cpusets in place (KEP-5554): not modelled,
        so such a resize is an error rather than v1.36's answer passed off as v1.37's."""
        from ..errors import InputError
        from ..model.features import default_for
        from .podlevel import guaranteed_cpus

        node = self.node
        if not (node.gates.enabled("InPlacePodVerticalScalingExclusiveCPUs") and node.cpu.static is not None
                and default_for("cpuManagerResizesExclusiveCPUs", node.gates.version)):
            return
        for c, _ in desired.all_containers():
            held = node.cpu.exclusive_cpus(desired.uid, c.name)
            if held is not None and guaranteed_cpus(desired, c, node.gates) != held.size():
                raise InputError(f"pod {desired.key} container {c.name}: resizing exclusive CPUs in place "
                                 f"(InPlacePodVerticalScalingExclusiveCPUs, v{node.gates.version}) is not modelled "
                                 "by kubetwin", path="featureGates.InPlacePodVerticalScalingExclusiveCPUs",
                                 fix="use --kubernetes-version 1.36 or earlier, or leave the gate off")

    def _kept_cpus(self, desired: Pod, allocated: Pod) -> tuple[str, ...]:
        """Notes for exclusive CPUs the static policy kept at another size than the new request."""
        from .podlevel import guaranteed_cpus

        notes = []
        for c, _ in desired.all_containers():
            held = self.node.cpu.exclusive_cpus(desired.uid, c.name)
            if held is None or held.is_empty():
                continue
            want = guaranteed_cpus(desired, c, self.node.gates)
            if want != held.size():
                notes.append(f"container {c.name}: the static CPU Manager policy keeps its exclusive CPUs {held} "
                             f"({held.size()}) though it now asks for {want}: Allocate finds the container in its "
                             f"state (v1.36 does not resize exclusive cpusets)")
        static = self.node.memory.static
        if static is not None:
            for c, _ in desired.all_containers():
                blocks = static.state.entries.get(desired.uid, {}).get(c.name)
                req = c.resources.requests.get("memory")
                held_mem = sum(b.size for b in blocks or () if b.type == "memory")
                if blocks and req is not None and req.value() != held_mem:
                    notes.append(f"container {c.name}: the Static Memory Manager policy keeps its memory blocks "
                                 f"({held_mem} bytes on NUMA {list(blocks[0].numa_affinity)}) though it now asks for "
                                 f"{req.value()}: Allocate finds the container in its state")
        return tuple(notes)

    # --- sortPendingResizes ------------------------------------------------------------------
    def _increasing(self, uid: str) -> bool:
        """``isResizeIncreasingRequests``: the pod's cpu or memory request grows."""
        desired, allocated = self.desired.get(uid), self.allocated(uid)
        if desired is None or allocated is None or _same_resources(desired, allocated):
            return False
        new, old = pod_requests(desired), pod_requests(allocated)
        return (quantity_value(new, "memory") > quantity_value(old, "memory")
                or quantity_milli_value(new, "cpu") > quantity_milli_value(old, "cpu"))

    def _pending_since(self, uid: str) -> float | None:
        cond = self.conditions.get(uid, {}).get(PENDING)
        return cond.last_transition_time if cond is not None else None

    def _sort(self) -> None:
        """``slices.SortFunc`` with upstream's comparator (not a strict order: Go's pdqsort is run)."""
        from ..runtime.gosort import sort_func

        def cmp(a: str, b: str) -> int:
            if not self._increasing(a):
                return -1
            if not self._increasing(b):
                return 1
            pa = (self.desired[a].spec.priority or 0) if a in self.desired else 0
            pb = (self.desired[b].spec.priority or 0) if b in self.desired else 0
            if pa > pb:
                return -1
            if pb > pa:
                return 1
            qa = get_pod_qos(self.desired[a], self.node.gates) == GUARANTEED
            qb = get_pod_qos(self.desired[b], self.node.gates) == GUARANTEED
            if qa and not qb:
                return -1
            if qb and not qa:
                return 1
            ta, tb = self._pending_since(a), self._pending_since(b)
            if ta is None:
                return 1
            if tb is None:
                return -1
            return -1 if ta < tb else 1

        self.pending = [u for u in self.pending if self.allocated(u) is not None]
        sort_func(self.pending, cmp)


def _same_resources(a: Pod, b: Pod) -> bool:
    """``UpdatePodFromAllocation`` found nothing to overlay: pod-level and every container's
    resources (and resize policies, which are not gated on allocation) equal."""
    if a.spec.resources != b.spec.resources:
        return False
    cb = {c.name: c for c, _ in b.all_containers()}
    for c, _ in a.all_containers():
        other = cb.get(c.name)
        if other is None or other.resources != c.resources:
            return False
    return True


#: ``ResizeResult.status`` of a resize the API server refused (it never reaches the kubelet)
REFUSED = "Refused"


def request_resize(node: "NodeAdmission", desired: Pod, *, manager: ResizeManager | None = None,
                   now: float = 0.0, api_gates: Any = None) -> ResizeResult:
    """The one seam for callers (``kubetwin admit --resize``, simulate, the VPA updater's
    ``InPlaceOrRecreate``): resize a running pod to ``desired`` (same UID, new resources). With
    ``api_gates`` (the API server's feature gates) the API server's checks come first
    (:func:`kubetwin.model.pod_resize.validate_pod_resize`, against the pod's current spec): a
    refusal is ``Refused`` with its message. Returns the outcome for this pod; other pending
    resizes retried on the way are in ``manager``'s state."""
    mgr = manager if manager is not None else ResizeManager(node)
    if api_gates is not None:
        from ..model.pod_resize import refusal_message, validate_pod_resize

        current = mgr.desired.get(desired.uid) or mgr.allocated(desired.uid)
        if current is None:
            raise KeyError(f"pod {desired.key} is not running on this node")
        errors = validate_pod_resize(current, desired, api_gates)
        if errors:
            return ResizeResult(desired, REFUSED, REFUSED, refusal_message(current, errors),
                                mgr.conditions_of(desired.uid), current, current)
    results = mgr.request(desired, now)
    mine = [r for r in results if r.pod.uid == desired.uid]
    return mine[-1] if mine else ResizeResult(desired, DEFERRED, conditions=mgr.conditions_of(desired.uid))


def with_resources(pod: Pod, resources_from: Pod) -> Pod:
    """``pod`` with the containers' resources (and pod-level resources) of ``resources_from``."""
    by_name = {c.name: c for c, _ in resources_from.all_containers()}

    def take(c: Container) -> Container:
        src = by_name.get(c.name)
        return c if src is None else msgspec.structs.replace(c, resources=src.resources)

    spec = msgspec.structs.replace(pod.spec, containers=[take(c) for c in pod.spec.containers],
                                   init_containers=[take(c) for c in pod.spec.init_containers],
                                   resources=resources_from.spec.resources)
    return msgspec.structs.replace(pod, spec=spec)


__all__ = ["ALLOCATED", "DEFERRED", "INFEASIBLE", "IN_PROGRESS", "PENDING", "REFUSED", "RETRY_PERIOD_SECONDS", "UNCHANGED",
           "ResizeCondition", "ResizeManager", "ResizeResult", "allocatable_absolute", "container_swap_behavior",
           "request_resize", "resize_handler", "with_resources"]
