"""The event loop: a heap clock over arrivals, completions, controller re-creation and samples,
driving the project's one scheduler (:class:`kubetwin.scheduler.Scheduler`) and every node's kubelet.

At each instant, events are applied first (pods arrive through the API server's admission
controllers — LimitRanger, Priority, ResourceQuota — finish, controllers create pods), then the
scheduler drains its :class:`~kubetwin.scheduler.SchedulingQueue` (queue-sort order; an idle
scheduler takes pods out of backoff at once, as ``SchedulerPopFromBackoffQ`` does). A bound pod
goes through its node's kubelet: the eviction manager's admit handler (node conditions), then the
admission pipeline (Topology, CPU, Memory, Device Managers, node allocatable). A kubelet rejection
fails the pod as Kubernetes does (phase Failed, the admission reason), which its controller
answers by creating a replacement — the "scheduled but rejected" loop of Kubernetes issue 84869,
capped by ``maxRecreations``. Unschedulable pods keep kube-scheduler's message and wait for a
cluster event one of their rejecting plugins registered for (a pod leaving a node, ...).
Preemption evicts the preemption plugin's victims and nominates the preemptor. At sample times,
each node with usage curves reports a Summary to its eviction manager (:mod:`.pressure`).

Not an upstream module: kubetwin's own clock around ``pkg/scheduler/scheduler.go`` and the kubelet's admission."""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

import msgspec

from .. import limits
from .. import tracing as _tracing
from ..model.features import FeatureGates
from ..model.pod import Pod
from ..scheduler.admission import AdmissionRejected, admit_pod
from ..scheduler.backend.queue import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    RESOURCE_CLAIM_UPDATE,
    UNSCHEDULABLE_FLUSH_INTERVAL,
)
from ..scheduler.framework.events import ClusterEvent
from . import admission_memo
from .leftover import LeftoverFlushes
from .nrt_exporter import NRT_EVENT
from .results import PodRecord, Sample, SimResult
from .scenario import Scenario, SimNode
from .workload import Controller

ARRIVE, COMPLETE, CONTROLLER, SAMPLE, FLUSH, AUTOSCALE = range(6)
#: a sample at the cache generation of the one before reuses its utilisation figures (off: each
#: sample sums the columns again)
SAMPLE_MEMO = True
#: how long node pressure may keep the clock going after the last event (no horizon set)
PRESSURE_SETTLE = 3600.0
#: the simulated clock's zero, for ``status.startTime`` (preemption orders victims by it)
EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)


class SimPod:
    """The simulation's record of one pod (mutable: it moves through phases)."""

    __slots__ = ("i", "pod", "arrival", "duration", "owner", "priority", "phase", "node", "start", "end",
                 "reason", "message", "attempts", "gpus", "run", "cpus", "mems", "claims", "usage", "restarts", "origin")

    def __init__(self, i: int, pod: Pod, arrival: float, duration: float | None, owner: str | None,
                 usage: Any = None):
        self.i = i
        self.pod = pod
        self.arrival = arrival
        self.duration = duration
        self.owner = owner
        self.priority = pod.spec.priority or 0
        self.phase = "Pending"
        self.node = -1
        self.start = 0.0
        self.end: float | None = None
        self.reason = ""
        self.message = ""
        self.attempts = 0
        self.gpus: Any = None
        self.run = 0
        self.cpus = ""
        self.mems = ""
        self.claims: list[str] = []
        self.usage = usage
        self.restarts = 0
        self.origin = 0.0   # when its containers (last) started: usage curves count from here


@dataclass
class Counters:
    scheduled: int = 0
    bound: int = 0
    rejected_admission_control: dict[str, int] = field(default_factory=dict)
    rejected_kubelet: dict[str, int] = field(default_factory=dict)
    preempted: int = 0
    evicted: int = 0
    evicted_by_signal: dict[str, int] = field(default_factory=dict)
    oom_killed: int = 0
    completed: int = 0
    recreated: int = 0
    attempts: int = 0
    unschedulable_attempts: int = 0


def _bump(d: dict[str, int], key: str) -> None:
    d[key] = d.get(key, 0) + 1


class Simulator:
    """Runs one scenario; ``progress(done, total)`` is called now and then."""

    def __init__(self, scenario: Scenario, *, progress: Callable[[int, int], None] | None = None,
                 reuse_verdicts: bool = True):
        from ..model.features import gates_for
        from ..scheduler import Scheduler, SchedulingQueue

        self.sc = scenario
        #: :func:`simulate` manages the collector for the run (frozen before, unfrozen after): parts
        #: that make long-lived objects may freeze them as they go (``runtime_memo``)
        self.collector_managed = False
        st = scenario.settings
        self.gates = gates_for(st.kubernetes_version, st.feature_gates)
        self.progress = progress
        objects = {k: list(v) for k, v in scenario.objects.items()}
        for c in scenario.controllers:
            if c.kind in ("Deployment", "ReplicaSet"):
                objects.setdefault("ReplicaSet", []).append(
                    {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                     "metadata": {"name": _rs_name(c), "namespace": c.meta["namespace"]},
                     "spec": {"selector": c.meta["selector"] or {"matchLabels": dict(c.template.metadata.labels)}}})
        #: the StatefulSet controller (:mod:`.statefulset_loop`), None without StatefulSets
        self.statefulsets: Any = None
        if any(c.kind == "StatefulSet" for c in scenario.controllers):
            from .statefulset_loop import StatefulSetControl, statefulset_objects

            objects.setdefault("StatefulSet", []).extend(statefulset_objects(scenario.controllers))
            self.statefulsets = StatefulSetControl(self)
        from ..scheduler.profile import Profile

        profile = scenario.profile or Profile()
        if any(n.gpus for n in scenario.nodes):
            import dataclasses

            from . import gpushare  # registers the plugin

            if not any(name == gpushare.NAME for name, _ in profile.plugins):
                profile = dataclasses.replace(profile, plugins=profile.plugins + ((gpushare.NAME, 0),))
        self.sched = Scheduler(profile, [n.node for n in scenario.nodes], self.gates, st.seed, objects=objects,
                               namespaces=_namespaces(objects), pdbs=_pdbs(objects),
                               reuse_verdicts=reuse_verdicts)
        self.sched.handle.seed = st.seed
        self.sched.handle.origins = scenario.origins  # DRA objects' errors name their file
        self.cluster = cs = self.sched.cluster
        from ..scheduler.plugins.dynamicresources import NAME as DYNAMIC_RESOURCES
        from .gpushare import NAME as GPU_SHARE

        self.gpu = self.sched.framework.plugin(GPU_SHARE)
        self.dra = self.sched.framework.plugin(DYNAMIC_RESOURCES)
        #: devices the DRA drivers publish (partitions counted as devices of their own)
        self.dra_devices = sum(len((o.get("spec") or {}).get("devices") or ()) for o in objects.get("ResourceSlice", ()))
        by_name = {n.node.metadata.name: n for n in scenario.nodes}
        self.sim_nodes: list[SimNode] = [by_name[name] for name in cs.names]   # scheduler's node order
        self.kubelets: list[Any] = [None] * len(self.sim_nodes)
        self.residents: list[dict[int, SimPod]] = [dict() for _ in self.sim_nodes]
        self.queue = SchedulingQueue()
        self.queue.plugins = {p.name: p for p, _ in self.sched.plugins}
        self.queue.gates = self.gates
        self.sched.framework.configure_queue(self.queue)
        self.by_uid: dict[str, SimPod] = {}
        self.pods: list[SimPod] = []
        self.heap: list[tuple[float, int, int, Any]] = []
        #: times of the live events in ``heap`` (a heap too): when the cluster can next change
        self.live_times: list[float] = []
        self.seq = itertools.count()
        self.counters = Counters()
        self.samples: list[Sample] = []
        self.now = 0.0
        #: events that can change the cluster (not samples): none left means nothing more happens
        self.live = 0
        self.samples_taken = 0
        #: the last sample's cluster figures and the cache generation they were read at
        self._last_figures: tuple[Any, Any, int, dict[str, float], float] | None = None
        self.max_samples = limits.MAX_SIM_SAMPLES.value()
        self.running = 0
        self.pending = 0
        self.controllers = {c.key: c for c in scenario.controllers}
        self.total_expected = len(scenario.arrivals) + sum(c.replicas for c in scenario.controllers)
        self.admission = _AdmissionControl(scenario, objects, self.gates)
        self.pressure: Any = None
        if (any(a.usage is not None for a in scenario.arrivals) or any(c.usage is not None for c in scenario.controllers)
                or any(n.disk is not None for n in scenario.nodes)):
            from .pressure import NodePressure

            self.pressure = NodePressure(self)
        self.cpu: Any = None   # CPU usage, throttling and CPU pressure (:mod:`.cpu`), with CPU curves only
        if any(u is not None and u.cpu for u in [a.usage for a in scenario.arrivals] + [c.usage for c in scenario.controllers]):
            from .cpu import NodeCPU

            self.cpu = NodeCPU(self)
        self.psi_eviction: Any = None   # a what-if, not upstream (:mod:`.whatif_psi`)
        if self.cpu is not None and st.eviction_policy == "psi-aware":
            from .whatif_psi import PSIEviction

            self.psi_eviction = PSIEviction(self, self.cpu, st.psi_threshold)
        self.events: list[dict[str, Any]] = []
        self.last_event = 0.0
        self.flush_at: float | None = None   # the next leftover flush on the clock
        #: the leftover flushes answered in bulk from kept failed cycles (:mod:`.leftover`)
        self.leftover = LeftoverFlushes(self)
        #: timed in-place resizes (:mod:`.resize`), None without any
        self.resizes: Any = None
        #: the NRI path of nodes with a runtime policy (:mod:`.runtime_policies`)
        self.runtime: Any = None
        if any(n.runtime is not None for n in scenario.nodes):
            from .runtime_policies import RuntimePolicies

            self.runtime = RuntimePolicies(self)
        #: the runtime's Block I/O classes on nodes whose group has a configuration (:mod:`.blockio`)
        self.blockio: Any = None
        if any(n.blockio is not None for n in scenario.nodes):
            from .blockio import BlockIOClasses

            self.blockio = BlockIOClasses(self)
        #: the nodes' kubelet DRA managers: prepare at admission, unprepare at the end (:mod:`.dra_kubelet`)
        self.node_dra: Any = None
        if self.dra is not None and (objects.get("ResourceClaim") or objects.get("ResourceClaimTemplate")):
            from .dra_kubelet import NodeDRA

            self.node_dra = NodeDRA(self)
        #: live NodeResourceTopology: the nodes' topology agents and the NRT cache (:mod:`.nrt_exporter`)
        self.nrt: Any = None
        if st.node_resource_topology is not None:
            from .nrt_exporter import TopologyExporters

            self.nrt = TopologyExporters(self, st.node_resource_topology)
        #: the DaemonSet controller (:mod:`.daemonset_controller`), None without DaemonSets
        self.daemonsets: Any = None
        if objects.get("DaemonSet"):
            from .daemonset_controller import DaemonSetController

            self.daemonsets = DaemonSetController(self, objects["DaemonSet"])
        #: names of nodes the Cluster Autoscaler removed (pods that ran there keep them)
        self.retired: list[str] = []
        self.autoscalers: Any = None
        if scenario.autoscaling is not None and scenario.autoscaling.active:
            from .autoscalers import Autoscalers

            self.autoscalers = Autoscalers(self)

    # --- the clock ---------------------------------------------------------------------------------
    def push(self, t: float, kind: int, obj: Any) -> None:
        if kind < SAMPLE:
            self.live += 1
            heapq.heappush(self.live_times, t)
        heapq.heappush(self.heap, (t, next(self.seq), kind, obj))

    def run(self) -> SimResult:
        import time

        wall = time.perf_counter()
        if _tracing.ACTIVE is not None:   # spans stamped with the scenario's clock
            _tracing.ACTIVE.simulated_clock(lambda: self.now, {"kubetwin.scenario": self.sc.name},
                                            epoch_ns=int(EPOCH.timestamp()) * 1_000_000_000)
        for a in self.sc.arrivals:
            sp = SimPod(len(self.pods), a.pod, a.time, a.duration, a.owner, a.usage)
            self.pods.append(sp)
            self.push(a.time, ARRIVE, sp)
        for c in self.sc.controllers:
            self.push(c.start, CONTROLLER, c)
        if self.daemonsets is not None:
            self.daemonsets.manage(info.node for info in self.cluster.infos)
        if self.sc.resizes:
            from .resize import schedule as schedule_resizes

            self.resizes = schedule_resizes(self)
        if self.autoscalers is not None:
            for what, _ in self.autoscalers.periods():
                self.push(0.0, AUTOSCALE, what)
        self.push(0.0, SAMPLE, None)
        horizon = self.sc.settings.horizon
        done = 0
        heap = self.heap
        flush = False
        while heap and (self.live > 0 or self.pending or self._pressure_busy() or self.autoscalers is not None):
            t, _, kind, obj = heapq.heappop(heap)
            if kind < SAMPLE:
                self.live -= 1
                heapq.heappop(self.live_times)
            if horizon is not None and t > horizon:
                self.now = horizon
                break
            self.now = t
            if kind < SAMPLE:
                self.last_event = t
            if kind == ARRIVE:
                self._arrive(obj)
                done += 1
                if self.progress is not None and done % 512 == 0:
                    self.progress(done, self.total_expected)
            elif kind == COMPLETE:
                sp, run = obj
                if sp.run == run and sp.phase == "Running":
                    self._finish(sp, "Succeeded", "Completed", "")
                    self.counters.completed += 1
            elif kind == CONTROLLER:
                self._reconcile(obj)
            elif kind == NRT_EVENT:
                self.nrt.tick(t, obj)
            elif kind < 0:   # an in-place resize or a kubelet's retry ticker (:mod:`.resize`)
                self.resizes.apply(obj)
            elif kind == FLUSH:
                if t == self.flush_at:
                    self.flush_at = None
                    flush = True   # moved at the end of the instant, with the drain
            elif kind == SAMPLE:
                if self.cpu is not None:
                    self.cpu.step(t)
                    if self.psi_eviction is not None:
                        self.psi_eviction.step(t)
                if self.pressure is not None:
                    self.pressure.synchronize(t)
                self._sample()
                if self.live > 0 or self.pending or self._pressure_busy() or self.autoscalers is not None:
                    self.push(t + self.sc.settings.sample_interval, SAMPLE, None)
            elif kind == AUTOSCALE:
                self.autoscalers.tick(obj, t)
                period = dict(self.autoscalers.periods()).get(obj)
                if period is not None:
                    self.push(t + period, AUTOSCALE, obj)
            if not heap or heap[0][0] > t:
                if flush:
                    flush = False
                    if not self.leftover.retry(t):
                        self.queue.flush_unschedulable_leftover(t, self.sc.settings.pod_max_in_unschedulable)
                        self._schedule_all()
                    self._plan_flush(self.queue.oldest_unschedulable())
                else:
                    self._schedule_all()
                if self.pending and self.live == 0 and not self._pressure_busy() and self.autoscalers is None:
                    break
        if self.cpu is not None:
            self.cpu.step(self.now)   # the CPU used since the last sample
        self._sample()
        if self.progress is not None:
            self.progress(self.total_expected, self.total_expected)
        if _tracing.ACTIVE is not None:
            _tracing.ACTIVE.simulated_clock(None)
        return self._result(time.perf_counter() - wall)

    def _plan_flush(self, oldest: float | None) -> None:
        """kube-scheduler runs ``flushUnschedulablePodsLeftover`` every 30 s from its start;
        only the ticks that can move a pod are put on the clock: the first tick at which the
        oldest parked pod (parked at ``oldest``) has waited longer than
        ``podMaxInUnschedulablePodsDuration``."""
        if oldest is None:
            return
        due = self.flush_due(oldest)
        if self.flush_at is None or due < self.flush_at:
            self.flush_at = due
            self.push(due, FLUSH, None)

    @property
    def bulk_retries(self) -> int:
        """Retries answered in bulk from kept failed cycles (:mod:`.leftover`)."""
        return self.leftover.bulk_retries

    def flush_due(self, oldest: float) -> float:
        """The first ``flushUnschedulablePodsLeftover`` tick that moves a pod parked at ``oldest``."""
        every = UNSCHEDULABLE_FLUSH_INTERVAL
        return (math.floor((oldest + self.sc.settings.pod_max_in_unschedulable) / every) + 1) * every

    def _pressure_busy(self) -> bool:
        """With no events left, node pressure may still act while usage curves move (at most
        :data:`PRESSURE_SETTLE` of simulated time past the last event, when no horizon is set)."""
        if self.pressure is None or (self.running == 0 and not self.pressure.nodes_under_pressure()):
            return False   # (a condition still reported will clear and may let pending pods in)
        if self.live > 0:
            self.last_event = self.now
            return True
        if self.sc.settings.horizon is None and self.now - self.last_event > PRESSURE_SETTLE:
            return False
        return self.pressure.busy(self.now) or (self.cpu is not None and self.cpu.busy(self.now, self.psi_eviction))

    # --- events ---------------------------------------------------------------------------------------
    def _arrive(self, sp: SimPod, webhook: Callable[[Pod], Pod] | None = None) -> None:
        """The API server's admission controllers (``webhook``: a mutating webhook, the VPA's),
        then the scheduling queue."""
        try:
            sp.pod = self.admission.admit(sp.pod, self, webhook)
        except AdmissionRejected as exc:
            sp.phase, sp.reason, sp.message = "Rejected", exc.plugin, str(exc)
            _bump(self.counters.rejected_admission_control, exc.plugin)
            self._owner_lost(sp, failed=True)
            return
        sp.priority = sp.pod.spec.priority or 0
        self.by_uid[sp.pod.uid] = sp
        self.pending += 1
        self.queue.add(sp.pod, self.now)

    # --- scheduling ----------------------------------------------------------------------------------
    def _schedule_all(self) -> None:
        pop = self.queue.pop
        while True:
            pod = pop()
            if pod is None:
                if self.nrt is not None:
                    self.nrt.after_scheduling()
                return
            sp = self.by_uid.get(pod.uid)
            if sp is None or sp.phase != "Pending":
                continue
            self._schedule_one(sp, pod)

    def _schedule_one(self, sp: SimPod, pod: Pod) -> None:
        c = self.counters
        c.attempts += 1
        sp.attempts += 1
        r = self.sched.schedule(pod)
        if r.node is None:
            c.unschedulable_attempts += 1
            sp.reason, sp.message = "Unschedulable", r.message
            if r.nominated_node is not None:
                seen: list[tuple[ClusterEvent, Any, Any]] = []   # what the pod in flight sees happen
                self.queue.in_flight = seen
                for v in r.victims:
                    self._preempt(self.by_uid[v.uid], sp, r.nominated_node)
                self.queue.in_flight = None
                self.sched.nominate(pod, r.nominated_node)
                sp.pod = pod = msgspec.structs.replace(pod, status=msgspec.structs.replace(
                    pod.status, nominated_node_name=r.nominated_node))
                # back as any failed cycle; the victims' deletion, seen while the pod was in
                # flight, sends it to backoff at once when its plugins' hints say so
                self.queue.requeue_unschedulable(pod, r.unschedulable_plugins, self.now, in_flight=seen)
                self._plan_flush(self.now)
                return
            self.queue.requeue_unschedulable(pod, r.unschedulable_plugins, self.now)
            self._plan_flush(self.now)
            return
        node = r.node
        i = self.cluster.index[node]
        c.scheduled += 1
        bound = msgspec.structs.replace(pod, status=msgspec.structs.replace(
            pod.status, start_time=_rfc3339(self.now), nominated_node_name=None))
        sp.pod = bound
        self.sched.bind(bound, node)
        sp.node = i
        if self.gpu is not None:
            sp.gpus = self.gpu.gpus_of(bound)
        if self.sc.settings.kubelet_admission:
            rejected = self._kubelet_admit(sp, i)
            if rejected is not None:
                reason, message = rejected
                self.sched.remove(bound)
                sp.gpus = None
                sp.phase, sp.reason, sp.message, sp.start, sp.end = "Failed", reason, message, self.now, self.now
                self.pending -= 1
                _bump(c.rejected_kubelet, reason)
                self._deleted(bound)
                self._owner_lost(sp, failed=True)
                return
        if self.dra is not None and bound.spec.resource_claims:
            claims = self.dra.resource_claims_of(bound)   # decoded, in claims_of's order
            sp.claims = [f"{(cl.raw.get('metadata') or {}).get('namespace', 'default')}/"
                         f"{(cl.raw.get('metadata') or {}).get('name', '')}" for cl in claims]
            if self.node_dra is not None:
                self.node_dra.prepare(i, bound, claims)
        c.bound += 1
        self.pending -= 1
        sp.phase, sp.start, sp.reason, sp.message = "Running", self.now, "", ""
        sp.origin = self.now
        sp.run += 1
        self.residents[i][sp.i] = sp
        if self.pressure is not None:
            self.pressure.started(i, sp)
        if self.cpu is not None:
            self.cpu.started(i, sp)
        self.running += 1
        if sp.duration is not None:
            self.push(self.now + sp.duration, COMPLETE, (sp, sp.run))
        if self.statefulsets is not None and sp.owner is not None:
            self.statefulsets.pod_started(sp)
        self.queue.on_event(ASSIGNED_POD_ADD, self.now, bound,
                            self.cluster.snapshot.namespace_labels(bound.metadata.namespace))

    def _kubelet_admit(self, sp: SimPod, i: int) -> tuple[str, str] | None:
        """The kubelet's admit handlers in order: eviction (node conditions), then resources."""
        if self.pressure is not None:
            got = self.pressure.admit(i, sp.pod)
            if got is not None:
                return got
        kubelet = self._kubelet(i)
        if kubelet is None:
            return self.blockio.create_containers(i, sp, None) if self.blockio is not None else None
        decision = kubelet.admit(sp.pod)
        if self.nrt is not None:
            self.nrt.state_changed(i)
        if not decision.admitted:
            return decision.reason, decision.message
        if self.blockio is not None:   # containerd's Block I/O class, then the NRI plugins' (:mod:`.blockio`)
            return self.blockio.create_containers(i, sp, kubelet)
        if self.runtime is not None and self.sim_nodes[i].runtime is not None:
            return self.runtime.start(i, sp, kubelet)
        self._record_allocation(sp, kubelet)
        return None

    def _kubelet(self, i: int) -> Any:
        k = self.kubelets[i]
        if k is None:
            n = self.sim_nodes[i]
            if n.machine is None or n.kubelet is None:
                self.kubelets[i] = False
                return None
            from .kubelets import kubelet_for

            k = self.kubelets[i] = kubelet_for(n)
        return k or None

    def _record_allocation(self, sp: SimPod, kubelet: Any) -> None:
        uid = sp.pod.uid
        cpus = kubelet.cpu.state.entries.get(uid) if kubelet.cpu.static is not None else None
        if cpus:
            from ..model.cpuset import CPUSet

            total = CPUSet()
            for cs in cpus.values():
                total = total | cs
            sp.cpus = str(total)
        if kubelet.memory.static is not None:
            mems: set[int] = set()
            for c, _ in sp.pod.all_containers():
                m = kubelet.memory.numa_nodes_for(uid, c.name)
                if m:
                    mems.update(m)
            if mems:
                sp.mems = ",".join(str(m) for m in sorted(mems))

    # --- leaving ------------------------------------------------------------------------------------
    def _release(self, sp: SimPod) -> None:
        i = sp.node
        if i < 0 or sp.i not in self.residents[i]:
            return
        del self.residents[i][sp.i]
        self.running -= 1
        self.sched.remove(sp.pod)
        if self.node_dra is not None:
            self.node_dra.unprepare(i, sp.pod)
        k = self.kubelets[i]
        if self.runtime is not None:
            self.runtime.stop(i, sp)
        if k:
            k.remove(sp.pod)
            if self.nrt is not None:
                self.nrt.state_changed(i)
        if self.pressure is not None:
            self.pressure.forget(i, sp)
        if self.blockio is not None:
            self.blockio.forget(sp)
        if self.resizes is not None:
            self.resizes.pod_removed(i, sp)
        if self.cpu is not None:
            self.cpu.forget(i, sp)

    def _finish(self, sp: SimPod, phase: str, reason: str, message: str) -> None:
        pending = sp.phase == "Pending"
        if pending:
            self.pending -= 1
            self.sched.clear_nomination(sp.pod)
        bound = sp.node >= 0 and sp.i in self.residents[sp.node]
        self._release(sp)
        sp.phase, sp.reason, sp.message, sp.end = phase, reason, message, self.now
        self.by_uid.pop(sp.pod.uid, None)
        if bound:
            self._deleted(sp.pod)
        elif pending and sp.pod.status.nominated_node_name:
            # deletePodFromSchedulingQueue: a nominated pod's place is free again for pods of
            # lower or equal priority
            prio = sp.pod.spec.priority or 0
            self.queue.on_event(ASSIGNED_POD_DELETE, self.now, old=sp.pod,
                                pre_check=lambda p: (p.spec.priority or 0) <= prio)
        self._owner_lost(sp, failed=phase != "Succeeded")

    def _deleted(self, pod: Pod) -> None:
        """``deleteAssignedPodFromCache``: the assigned pod's deletion, then the ResourceClaims the
        resourceclaim controller deallocated with it (``ResourceClaim``/``Update``)."""
        self.queue.on_event(ASSIGNED_POD_DELETE, self.now, old=pod)
        for before, after in self.sched.take_claim_changes():
            self.queue.on_event(RESOURCE_CLAIM_UPDATE, self.now, old=before, new=after)

    def _preempt(self, victim: SimPod, by: SimPod, node: str) -> None:
        self.counters.preempted += 1
        self._finish(victim, "Failed", "Preempted", f"Preempted by pod {by.pod.uid} on node {node}")

    def evict(self, sp: SimPod, message: str, cause: str) -> None:
        """The eviction manager killed the pod: phase Failed, reason Evicted."""
        self.counters.evicted += 1
        _bump(self.counters.evicted_by_signal, cause)
        node = self.cluster.names[sp.node]
        self.events.append({"time": self.now, "type": "Evicted", "pod": sp.pod.key, "node": node, "cause": cause,
                            "message": message})
        self._finish(sp, "Failed", "Evicted", message)

    # --- controllers ----------------------------------------------------------------------------------
    def _owner_lost(self, sp: SimPod, *, failed: bool) -> None:
        c = self.controllers.get(sp.owner) if sp.owner else None
        if c is None:
            return
        c.active -= 1
        if c.is_job:
            if failed:
                c.failed += 1
            else:
                c.succeeded += 1
        if c.kind == "StatefulSet":
            self.statefulsets.pod_lost(c, sp)
            return
        self.push(self.now + self.sc.settings.controller_delay, CONTROLLER, c)

    def _reconcile(self, c: Controller) -> None:
        if c.kind == "StatefulSet":
            self.statefulsets.sync(c)
            return
        n = c.wanted()
        for _ in range(n):
            pod = _controller_pod(c, c.created)
            if c.created - c.retired >= c.replicas and not c.is_job:
                self.counters.recreated += 1
            c.created += 1
            c.active += 1
            sp = SimPod(len(self.pods), pod, self.now, c.duration.sample(_rng(self.sc, c.key, c.created)), c.key,
                        c.usage)
            self.pods.append(sp)
            self._arrive(sp, self.autoscalers.vpa_webhook(c) if self.autoscalers is not None else None)
            if sp.phase == "Rejected":
                break

    # --- observations ----------------------------------------------------------------------------------
    def _sample(self) -> None:
        self.samples_taken += 1
        if self.samples_taken > self.max_samples:
            # No horizon and pods that run (nearly) forever: the time series would not end.
            raise limits.MAX_SIM_SAMPLES.exceeded(self.samples_taken, file=self.sc.source, path="spec.sampleInterval",
                                                  what="the number of time-series samples (set spec.horizon, or a "
                                                       "larger spec.sampleInterval)")
        cs = self.cluster
        kept = self._last_figures
        if SAMPLE_MEMO and kept is not None and kept[0] is cs and kept[1] is self.gpu and kept[2] == cs.generation:
            # the same cache and GPU plugin (the Cluster Autoscaler replaces both), nothing bound,
            # removed or updated since the last sample: the same figures (each sample its own
            # dict); the DRA devices' figure is worked out each time
            util, gpu_frag = dict(kept[3]), kept[4]
        else:
            alloc = cs.alloc.sum(axis=0)
            used = cs.requested.sum(axis=0)
            util = {r: (float(used[j]) / float(alloc[j]) if alloc[j] else 0.0) for j, r in enumerate(cs.resources)
                    if (r in ("cpu", "memory") or alloc[j]) and r != "alibabacloud.com/gpu-count"}
            gpu_frag = 0.0
            if self.gpu is not None:
                cap = self.gpu.capacity_milli()
                util["gpu"] = self.gpu.allocated_milli() / cap if cap else 0.0
                gpu_frag = self.gpu.fragmentation_milli() / cap if cap else 0.0
            self._last_figures = (cs, self.gpu, cs.generation, dict(util), gpu_frag)
        if self.dra is not None and self.dra_devices:
            taken = self.dra.allocated_devices()
            util["devices"] = taken / self.dra_devices
        pressure = self.pressure.nodes_under_pressure() if self.pressure is not None else {}
        if self.autoscalers is not None:
            self.autoscalers.sample(self.now)
        self.samples.append(Sample(self.now, self.running, self.pending, util, gpu_frag, pressure,
                                   self.counters.evicted, self.counters.oom_killed))

    def _result(self, wall: float) -> SimResult:
        from .metrics import node_reports

        name = self.node_name
        names = self.cluster.names   # (``node_name`` of a current node, looked up inline for every pod)
        records = [PodRecord(sp.pod.metadata.name, sp.pod.metadata.namespace, sp.phase,
                             names[sp.node] if sp.node >= 0 else name(sp.node),
                             sp.arrival, sp.start if sp.node != -1 else None, sp.end, sp.reason, sp.message,
                             sp.attempts, sp.cpus, sp.mems, sp.priority, sp.owner or "",
                             [list(g) for g in sp.gpus] if sp.gpus else None, list(sp.claims), sp.restarts)
                   for sp in self.pods]
        pending_reasons: dict[str, int] = {}
        for sp in self.pods:
            if sp.phase == "Pending":
                key = _reason_key(sp.message) if sp.message else "not yet attempted"
                pending_reasons[key] = pending_reasons.get(key, 0) + 1
        result = SimResult(self.sc.name, self.now, wall, len(self.sim_nodes), records, self.samples, self.counters,
                           pending_reasons, node_reports(self), list(self.cluster.resources), self.events,
                           node_cpu=self.cpu.result() if self.cpu is not None else None,
                           node_disk=self.pressure.disk_result() if self.pressure is not None else None,
                           node_psi=self.pressure.psi_result() if self.pressure is not None else None)
        from .runtime_policies import placement_report

        result.placement = placement_report(self, result.node_reports)
        if self.blockio is not None:
            result.blockio = self.blockio.result()
        if self.autoscalers is not None:
            result.autoscaling = self.autoscalers.result()
        if self.sc.want_end_state:
            from .end_state import end_state

            result.end_state = end_state(self)
        return result

    # --- nodes that come and go (the Cluster Autoscaler, :mod:`.cluster_autoscaler`) ---------------
    def node_name(self, i: int) -> str:
        """A pod's node: current nodes by index, removed ones by ``-2 - k`` (``retired[k]``)."""
        if i >= 0:
            return self.cluster.names[i]
        return self.retired[-2 - i] if i <= -2 else ""

    def retire_node(self, name: str) -> None:
        self.retired.append(name)

    def retired_index(self, name: str) -> int:
        return -2 - self.retired.index(name)

    def delete_pod(self, sp: SimPod, reason: str, message: str) -> None:
        """A pod deleted through the API (scale-down, the VPA updater's and the Cluster Autoscaler's
        evictions): gone, its controller told."""
        self._finish(sp, "Deleted", reason, message)


class _AdmissionControl:
    """The API server's admission chain for pod creation: LimitRanger, Priority, ResourceQuota."""

    def __init__(self, sc: Scenario, objects: dict[str, list[Any]], gates: FeatureGates | None):
        from ..model.policy import limit_range_from_dict, resource_quota_from_dict

        self.gates = gates
        self.classes = list(sc.priority_classes.values())
        #: namespaces whose admission reads the spec alone: one chain per spec object (:mod:`.admission_memo`)
        self.by_spec = admission_memo.SpecAdmissions()
        self.limit_ranges: dict[str, list[Any]] = {}
        for obj in objects.get("LimitRange", []):
            lr = limit_range_from_dict(obj, checked=True)  # checked when the scenario was read
            self.limit_ranges.setdefault(lr.metadata.namespace or "default", []).append(lr)
        self.quotas: dict[str, list[Any]] = {}
        for obj in objects.get("ResourceQuota", []):
            q = resource_quota_from_dict(obj, checked=True)
            self.quotas.setdefault(q.metadata.namespace or "default", []).append(q)

    def admit(self, pod: Pod, sim: Simulator, webhook: Callable[[Pod], Pod] | None = None) -> Pod:
        ns = pod.metadata.namespace
        quotas = self.quotas.get(ns, ())
        if admission_memo.ENABLED and webhook is None and not quotas and ns not in self.limit_ranges:
            return self.by_spec.admit(pod, lambda p: admit_pod(p, priority_classes=self.classes, gates=self.gates).pod)
        running: list[Pod] = []
        if quotas:   # what the quota controller counts: the namespace's pods that are not terminal
            running = [sp.pod for sp in sim.by_uid.values() if sp.pod.metadata.namespace == ns]
        return admit_pod(pod, limit_ranges=self.limit_ranges.get(ns, ()), quotas=quotas,
                         priority_classes=self.classes, running=running, gates=self.gates, webhook=webhook).pod


def _namespaces(objects: dict[str, list[Any]]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for obj in objects.get("Namespace", []):
        meta = obj.get("metadata") or {}
        if meta.get("name"):
            out[str(meta["name"])] = dict(meta.get("labels") or {})
    return out


def _pdbs(objects: dict[str, list[Any]]) -> list[Any]:
    raw = objects.get("PodDisruptionBudget", [])
    if not raw:
        return []
    from ..scheduler.plugins.defaultpreemption.pdb import pdbs_from_objects

    return pdbs_from_objects(raw)


def _rfc3339(t: float) -> str:
    """``metav1.Time`` as the API serves it: whole seconds (``isoformat`` of a time without a
    fraction or zone is exactly that, and several times cheaper than ``strftime``). Pods bound
    within one second share the text: the last second's is kept."""
    s = int(t)
    if s == _LAST_TIME[0]:
        return _LAST_TIME[1]
    text = (_EPOCH_NAIVE + timedelta(seconds=s)).isoformat() + "Z"
    _LAST_TIME[0], _LAST_TIME[1] = s, text
    return text


#: the last whole second :func:`_rfc3339` wrote, and its text
_LAST_TIME: list[Any] = [None, ""]


_EPOCH_NAIVE = EPOCH.replace(tzinfo=None)


def _reason_key(message: str) -> str:
    """The per-node reasons of a FitError without counts: what the pods wait for."""
    body = message.split(": ", 1)[-1].split(". preemption:", 1)[0].rstrip(".")
    parts = []
    for p in body.split(", "):
        head, _, rest = p.partition(" ")
        parts.append(rest if head.isdigit() else p)
    return ", ".join(sorted(set(parts)))


def _rs_name(c: Controller) -> str:
    return c.meta["name"] if c.kind == "ReplicaSet" else f"{c.meta['name']}-5d8f7c9b6"


def _controller_pod(c: Controller, k: int) -> Pod:
    import hashlib

    owner_kind = "Job" if c.is_job else "ReplicaSet"
    owner_name = c.meta["name"] if c.is_job else _rs_name(c)
    suffix = hashlib.blake2s(f"{c.key}/{k}".encode(), digest_size=4).hexdigest()[:5]
    name = f"{owner_name}-{suffix}"
    from ..model.meta import OwnerReference

    ref = OwnerReference(api_version="batch/v1" if c.is_job else "apps/v1", kind=owner_kind, name=owner_name,
                         uid=f"{owner_kind}/{owner_name}", controller=True)
    meta = msgspec.structs.replace(c.template.metadata, name=name, uid=f"{c.meta['namespace']}/{name}",
                                   owner_references=[ref])
    return msgspec.structs.replace(c.template, metadata=meta)


def _rng(sc: Scenario, key: str, k: int) -> Any:
    import random

    return random.Random(f"{sc.settings.seed}/{key}/{k}")


def simulate(scenario: Scenario, progress: Callable[[int, int], None] | None = None) -> SimResult:
    """Run one scenario.

    The run allocates millions of small, long-lived objects (pods, cycle states, kubelet
    copies); Python's cyclic collector would rescan them again and again. The objects that
    exist before the run are frozen out of collection and the young-generation threshold is
    raised for its duration — memory is still freed by reference counting as usual. Building
    the simulator (the cluster's columns, node infos, plugins) runs with the collector off: it
    allocated enough to start a full collection of its own (about 15 ms on the Alibaba trace)
    just before the one here, which is kept (in a sweep it frees the previous run's simulator,
    whose cycles reference counting leaves behind, before this one is frozen).
    """
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        sim = Simulator(scenario, progress=progress)
    finally:
        if enabled:
            gc.enable()
    thresholds = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    sim.collector_managed = True
    try:
        return sim.run()
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
