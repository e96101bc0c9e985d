"""The event loop: a heap clock over arrivals, completions, controller re-creation, retries and samples.

At each instant, events are applied first (pods arrive, finish, controllers create pods), then the
scheduler drains its active queue in PrioritySort order (higher priority first, then earlier
arrival). A bound pod goes through its node's kubelet admission; a kubelet rejection fails the
pod as Kubernetes does (phase Failed, the admission reason), which its controller answers by
creating a replacement — the "scheduled but rejected" loop of Kubernetes issue 84869, capped by
``maxRecreations``. Unschedulable pods keep kube-scheduler's message and wait for a cluster event
that may help them (a pod leaving a node), with kube-scheduler's backoff, or for the
5-minute flush of the unschedulable queue.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable

import msgspec

from ..model.pod import Pod
from .results import PodRecord, SimResult, Sample
from .scenario import Scenario, SimNode
from .scheduling import ClusterScheduler, PodShape
from .workload import Controller

ARRIVE, COMPLETE, CONTROLLER, RETRY, FLUSH, SAMPLE = range(6)
#: ``podMaxInUnschedulablePodsDuration``
UNSCHEDULABLE_FLUSH = 300.0
#: plugins whose rejection a pod leaving a node may resolve (their QueueingHints on Pod/Delete)
#: plugins whose rejection a pod arriving on a node may resolve (affinity to existing pods)
_HELPED_BY_POD_ADD = frozenset({"InterPodAffinity", "PodTopologySpread"})
_HELPED_BY_POD_DELETE = frozenset({"NodeResourcesFit", "GPUShare", "InterPodAffinity", "PodTopologySpread",
                                   "NodePorts", "NodeResourceTopologyMatch", "DynamicResources"})


class SimPod:
    """The simulation's record of one pod (mutable: it moves through phases)."""

    __slots__ = ("i", "pod", "shape", "arrival", "duration", "owner", "priority", "phase", "node", "start", "end",
                 "reason", "message", "attempts", "gpus", "plugins", "last_try", "queued", "run", "cpus", "mems",
                 "version")

    def __init__(self, i: int, pod: Pod, arrival: float, duration: float | None, owner: str | None):
        self.i = i
        self.pod = pod
        self.shape: PodShape | None = None
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
        self.plugins: frozenset[str] = frozenset()
        self.last_try = 0.0
        self.queued = False
        self.run = 0
        self.cpus = ""
        self.mems = ""
        self.version = -1


@dataclass
class Counters:
    scheduled: int = 0
    bound: int = 0
    rejected_admission_control: dict[str, int] = field(default_factory=dict)
    rejected_kubelet: dict[str, int] = field(default_factory=dict)
    preempted: int = 0
    evicted: int = 0
    completed: int = 0
    recreated: int = 0
    attempts: int = 0
    unschedulable_attempts: int = 0


class Simulator:
    """Runs one scenario; ``progress(done, total)`` is called now and then."""

    def __init__(self, scenario: Scenario, *, progress: Callable[[int, int], None] | None = None):
        from ..model.features import gates_for

        self.sc = scenario
        st = scenario.settings
        self.gates = gates_for(st.kubernetes_version, st.feature_gates)
        self.progress = progress
        self.nodes: list[SimNode] = list(scenario.nodes)
        gpu = None
        if any(n.gpus for n in self.nodes):
            from .gpushare import GPUShare

            gpu = GPUShare([n.gpus for n in self.nodes], [n.gpu_model for n in self.nodes])
        objects = {k: list(v) for k, v in scenario.objects.items()}
        for c in scenario.controllers:
            if c.kind in ("Deployment", "ReplicaSet"):
                objects.setdefault("ReplicaSet", []).append(
                    {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                     "metadata": {"name": _rs_name(c), "namespace": c.meta["namespace"]},
                     "spec": {"selector": c.meta["selector"] or {"matchLabels": dict(c.template.metadata.labels)}}})
        self.sched = ClusterScheduler([n.node for n in self.nodes], scenario.profile, self.gates, seed=st.seed,
                                      objects=objects, gpu=gpu)
        by_name = {n.node.metadata.name: n for n in self.nodes}
        self.sim_nodes = [by_name[name] for name in self.sched.names]   # scheduler's node order
        self.kubelets: list[Any] = [None] * len(self.sim_nodes)
        self.residents: list[dict[int, SimPod]] = [dict() for _ in self.sim_nodes]
        self.sched.residents = lambda i: [_Victim(p) for p in self.residents[i].values()]
        self.pods: list[SimPod] = []
        self.heap: list[tuple[float, int, int, Any]] = []
        self.seq = itertools.count()
        self.active: list[tuple[int, float, int, SimPod]] = []
        self.unschedulable: dict[int, SimPod] = {}
        self.counters = Counters()
        self.samples: list[Sample] = []
        self.now = 0.0
        #: events that can change the cluster (not flushes or samples): none left means nothing more happens
        self.live = 0
        #: bumped whenever a pod leaves a node: an unschedulable pod retried without a bump gets the same answer
        self.version = 0
        self.running = 0
        #: running pods per priority, so preemption knows at once when no pod has a lower priority
        self.priorities: dict[int, int] = {}
        self.sched.lowest_priority = lambda: min(self.priorities) if self.priorities else None
        self.controllers = {c.key: c for c in scenario.controllers}
        self.total_expected = len(scenario.arrivals) + sum(c.replicas for c in scenario.controllers)
        self._pc_default = _default_priority_class(scenario.priority_classes)

    # --- the clock ---------------------------------------------------------------------------------
    def push(self, t: float, kind: int, obj: Any) -> None:
        if kind != FLUSH and kind != SAMPLE:
            self.live += 1
        heapq.heappush(self.heap, (t, next(self.seq), kind, obj))

    def run(self) -> SimResult:
        import time

        wall = time.perf_counter()
        for a in self.sc.arrivals:
            sp = SimPod(len(self.pods), a.pod, a.time, a.duration, a.owner)
            self.pods.append(sp)
            self.push(a.time, ARRIVE, sp)
        for c in self.sc.controllers:
            self.push(c.start, CONTROLLER, c)
        self.push(0.0, SAMPLE, None)
        horizon = self.sc.settings.horizon
        done = 0
        while self.heap and (self.live > 0 or self.active):
            t, _, kind, obj = heapq.heappop(self.heap)
            if kind != FLUSH and kind != SAMPLE:
                self.live -= 1
            if horizon is not None and t > horizon:
                self.now = horizon
                break
            self.now = t
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
            elif kind == RETRY or kind == FLUSH:
                sp, attempts = obj
                if sp.phase == "Pending" and sp.attempts == attempts and sp.i in self.unschedulable:
                    if kind == FLUSH and sp.version == self.version and not (sp.plugins & _HELPED_BY_POD_ADD):
                        continue  # nothing changed since its last attempt: the same answer; it waits for an event
                    del self.unschedulable[sp.i]
                    self._enqueue(sp)
            elif kind == SAMPLE:
                self._sample()
                if self.live > 0 or self.active:
                    self.push(t + self.sc.settings.sample_interval, SAMPLE, None)
            if not self.heap or self.heap[0][0] > t:
                self._schedule_all()
        self._sample()
        if self.progress is not None:
            self.progress(self.total_expected, self.total_expected)
        return self._result(time.perf_counter() - wall)

    # --- events ---------------------------------------------------------------------------------------
    def _arrive(self, sp: SimPod) -> None:
        """The API server's admission (Priority), then the scheduling queue."""
        pod = sp.pod
        name = pod.spec.priority_class_name
        pc = self.sc.priority_classes.get(name) if name else self._pc_default
        if name and pc is None and name not in ("system-cluster-critical", "system-node-critical"):
            reason = "PriorityClassNotFound"
            sp.phase, sp.reason = "Rejected", reason
            sp.message = f'pods "{pod.name}" is forbidden: no PriorityClass with name {name} was found'
            c = self.counters.rejected_admission_control
            c[reason] = c.get(reason, 0) + 1
            self._owner_lost(sp, failed=True)
            return
        if pc is not None or name in ("system-cluster-critical", "system-node-critical"):
            value = pc.value if pc is not None else (2000000000 if name == "system-cluster-critical" else 2000001000)
            policy = pc.preemption_policy if pc is not None else "PreemptLowerPriority"
            spec = msgspec.structs.replace(pod.spec, priority=value, preemption_policy=pod.spec.preemption_policy or policy,
                                           priority_class_name=name or (pc.name if pc is not None else ""))
            sp.pod = pod = msgspec.structs.replace(pod, spec=spec)
            sp.priority = value
        sp.shape = self.sched.shape(pod)
        self._enqueue(sp)

    def _enqueue(self, sp: SimPod) -> None:
        if not sp.queued:
            sp.queued = True
            heapq.heappush(self.active, (-sp.priority, sp.arrival, sp.i, sp))

    def _backoff(self, sp: SimPod) -> float:
        prof = self.sc.profile
        d = prof.pod_initial_backoff_seconds * (2 ** max(sp.attempts - 1, 0))
        return min(d, prof.pod_max_backoff_seconds)

    def _cluster_event_pod_deleted(self) -> None:
        """Queueing hints for Pod/Delete: move pods a freed node may help, respecting backoff."""
        self.version += 1
        if not self.unschedulable:
            return
        moved = [sp for sp in self.unschedulable.values() if sp.plugins & _HELPED_BY_POD_DELETE]
        for sp in moved:
            del self.unschedulable[sp.i]
            ready = sp.last_try + self._backoff(sp)
            if ready <= self.now:
                self._enqueue(sp)
            else:
                self.unschedulable[sp.i] = sp
                self.push(ready, RETRY, (sp, sp.attempts))

    # --- scheduling ----------------------------------------------------------------------------------
    def _schedule_all(self) -> None:
        while self.active:
            _, _, _, sp = heapq.heappop(self.active)
            sp.queued = False
            if sp.phase != "Pending":
                continue
            self._schedule_one(sp)

    def _schedule_one(self, sp: SimPod) -> None:
        c = self.counters
        c.attempts += 1
        sp.attempts += 1
        sp.last_try = self.now
        sp.version = self.version
        d = self.sched.schedule(sp.pod, sp.shape)
        if d.node < 0:
            c.unschedulable_attempts += 1
            sp.reason, sp.message, sp.plugins = "Unschedulable", d.message, d.plugins
            if d.victims:
                for v in d.victims:
                    self._preempt(v.sp, sp)
                self._enqueue(sp)   # the victims' deletion is the event that requeues the preemptor
                return
            self.unschedulable[sp.i] = sp
            self.push(self.now + UNSCHEDULABLE_FLUSH, FLUSH, (sp, sp.attempts))
            return
        i = d.node
        sp.gpus = self.sched.assume(sp.pod, sp.shape, i)
        c.scheduled += 1
        sp.node = i
        if self.sc.settings.kubelet_admission:
            kubelet = self._kubelet(i)
            if kubelet is not None:
                decision = kubelet.admit(sp.pod)
                if not decision.admitted:
                    self.sched.forget(sp.pod, sp.shape, i, sp.gpus)
                    sp.gpus = None
                    sp.phase, sp.reason, sp.message, sp.end = "Failed", decision.reason, decision.message, self.now
                    sp.start = self.now
                    k = c.rejected_kubelet
                    k[decision.reason] = k.get(decision.reason, 0) + 1
                    self._cluster_event_pod_deleted()
                    self._owner_lost(sp, failed=True)
                    return
                self._record_allocation(sp, kubelet)
        c.bound += 1
        sp.phase, sp.start, sp.reason, sp.message = "Running", self.now, "", ""
        sp.run += 1
        self.residents[i][sp.i] = sp
        self.running += 1
        self.priorities[sp.priority] = self.priorities.get(sp.priority, 0) + 1
        if sp.duration is not None:
            self.push(self.now + sp.duration, COMPLETE, (sp, sp.run))

    def _kubelet(self, i: int) -> Any:
        k = self.kubelets[i]
        if k is None:
            n = self.sim_nodes[i]
            if n.machine is None or n.kubelet is None:
                self.kubelets[i] = False
                return None
            from ..kubelet.admission import NodeAdmission

            k = self.kubelets[i] = NodeAdmission(n.machine, n.kubelet)
        return k or None

    def _record_allocation(self, sp: SimPod, kubelet: Any) -> None:
        uid = sp.pod.uid
        cpus = kubelet.cpu.state.entries.get(uid) if kubelet.cpu.policy is not None else None
        if cpus:
            from ..model.cpuset import CPUSet

            total = CPUSet()
            for cs in cpus.values():
                total = total | cs
            sp.cpus = str(total)
        if kubelet.memory.policy is not None:
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
        left = self.priorities[sp.priority] - 1
        if left:
            self.priorities[sp.priority] = left
        else:
            del self.priorities[sp.priority]
        self.sched.forget(sp.pod, sp.shape, i, sp.gpus)
        sp.gpus = None
        k = self.kubelets[i]
        if k:
            k.remove(sp.pod)

    def _finish(self, sp: SimPod, phase: str, reason: str, message: str) -> None:
        self._release(sp)
        sp.phase, sp.reason, sp.message, sp.end = phase, reason, message, self.now
        self._cluster_event_pod_deleted()
        self._owner_lost(sp, failed=phase != "Succeeded")

    def _preempt(self, victim: SimPod, by: SimPod) -> None:
        self.counters.preempted += 1
        self._finish(victim, "Failed", "Preempted",
                     f"Preempted by pod {by.pod.uid} on node {self.sched.names[victim.node]}")

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
        self.push(self.now + self.sc.settings.controller_delay, CONTROLLER, c)

    def _reconcile(self, c: Controller) -> None:
        n = c.wanted()
        for _ in range(n):
            pod = _controller_pod(c, c.created)
            if c.created >= c.replicas and not c.is_job:
                self.counters.recreated += 1
            c.created += 1
            c.active += 1
            sp = SimPod(len(self.pods), pod, self.now, c.duration.sample(_rng(self.sc, c.key, c.created)), c.key)
            self.pods.append(sp)
            self._arrive(sp)
            if sp.phase == "Rejected":
                break

    # --- observations ----------------------------------------------------------------------------------
    def _sample(self) -> None:
        s = self.sched
        res = s.resources
        alloc = s.alloc.sum(axis=0)
        used = s.used.sum(axis=0)
        util = {r: (float(used[j]) / float(alloc[j]) if alloc[j] else 0.0) for j, r in enumerate(res)
                if r in ("cpu", "memory") or alloc[j]}
        gpu_alloc = gpu_frag = 0.0
        if s.gpu is not None:
            cap = s.gpu.capacity_milli()
            gpu_alloc = s.gpu.allocated_milli() / cap if cap else 0.0
            gpu_frag = s.gpu.fragmentation_milli() / cap if cap else 0.0
            util["gpu"] = gpu_alloc
        running = self.running
        pending = len(self.unschedulable) + len(self.active)
        self.samples.append(Sample(self.now, running, pending, util, gpu_frag))

    def _result(self, wall: float) -> SimResult:
        from .metrics import node_reports

        records = [PodRecord(sp.pod.name, sp.pod.namespace, sp.phase if sp.phase != "Pending" else "Pending",
                             self.sched.names[sp.node] if sp.node >= 0 else "", sp.arrival,
                             sp.start if sp.node >= 0 else None, sp.end, sp.reason, sp.message, sp.attempts,
                             sp.cpus, sp.mems, sp.priority, sp.owner or "",
                             [list(g) for g in sp.gpus] if sp.gpus else None)
                   for sp in self.pods]
        pending_reasons: dict[str, int] = {}
        for sp in self.pods:
            if sp.phase == "Pending":
                key = _reason_key(sp.message) if sp.message else "not yet attempted"
                pending_reasons[key] = pending_reasons.get(key, 0) + 1
        return SimResult(self.sc.name, self.now, wall, len(self.sim_nodes), records, self.samples, self.counters,
                         pending_reasons, node_reports(self), self.sched.resources)


class _Victim:
    """A running pod as preemption sees it."""

    __slots__ = ("sp", "priority", "start", "shape")

    def __init__(self, sp: SimPod):
        self.sp, self.priority, self.start, self.shape = sp, sp.priority, sp.start, sp.shape


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


def _default_priority_class(classes: dict[str, Any]) -> Any:
    from ..model.policy import global_default_priority

    return global_default_priority(list(classes.values()))


def simulate(scenario: Scenario, progress: Callable[[int, int], None] | None = None) -> SimResult:
    return Simulator(scenario, progress=progress).run()
