"""What a simulation returns: per-pod outcomes, counters, time series and per-node pictures.

Plain data (frozen where it is final), so reports, JSON and comparisons read the same thing.

Not an upstream module: kubetwin's own results.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class PodRecord:
    name: str
    namespace: str
    phase: str                   # Running, Succeeded, Failed, Pending, Rejected
    node: str
    arrival: float
    start: float | None
    end: float | None
    reason: str
    message: str
    attempts: int
    cpus: str                    # exclusive CPUs (static CPU manager), Linux list format
    mems: str                    # NUMA nodes of the memory (Static memory manager)
    priority: int = 0
    owner: str = ""
    gpus: list[list[int]] | None = None   # [[gpu index, milli], ...]
    claims: list[str] = field(default_factory=list)   # ResourceClaims allocated for it (namespace/name)
    restarts: int = 0                     # container restarts after OOM kills


@dataclass(frozen=True, slots=True)
class Sample:
    time: float
    running: int
    pending: int
    utilization: dict[str, float]       # requested / allocatable, cluster-wide
    gpu_fragmentation: float = 0.0
    pressure: dict[str, int] = field(default_factory=dict)   # node condition -> nodes reporting it
    evicted: int = 0                    # evictions so far
    oom_killed: int = 0                 # OOM kills so far


@dataclass
class NUMAReport:
    id: int
    cpus: int
    exclusive: int
    free: int
    memory_bytes: int = 0
    memory_reserved: int = 0
    #: the Static Memory Manager's table for ``memory`` on this NUMA node (None under ``None``):
    #: allocatable (capacity less reservedMemory and hugepages) and free (allocatable less what
    #: it assigned to containers; ``memory_reserved`` is that assigned amount)
    memory_allocatable: int | None = None
    memory_free: int | None = None


@dataclass
class NodeReport:
    name: str
    group: str
    pods: int
    requested: dict[str, int]
    allocatable: dict[str, int]
    numa: list[NUMAReport] = field(default_factory=list)
    stranded_cpus: int = 0
    gpus: list[int] = field(default_factory=list)       # used milli per GPU
    #: DRA devices published for this node (ResourceSlices with its nodeName) and allocated at the end,
    #: by device type ("gpu", "nic", ... from the device's ``type`` attribute, else the driver)
    dra_devices: dict[str, int] = field(default_factory=dict)
    dra_allocated: dict[str, int] = field(default_factory=dict)
    policies: dict[str, str] = field(default_factory=dict)
    conditions: list[str] = field(default_factory=list)  # node pressure conditions at the end
    evicted: int = 0                                     # pods its eviction manager evicted


@dataclass
class SimResult:
    scenario: str
    sim_time: float
    wall_seconds: float
    nodes: int
    pods: list[PodRecord]
    samples: list[Sample]
    counters: Any
    pending_reasons: dict[str, int]
    node_reports: list[NodeReport]
    resources: list[str]
    #: evictions and OOM kills with their messages, in time order
    events: list[dict[str, Any]] = field(default_factory=list)
    #: the ``--variant`` this run is (its name) and what it changed from the baseline run
    variant: str = ""
    changes: tuple[str, ...] = ()
    #: CPU usage, throttling and CPU pressure (:meth:`kubetwin.sim.cpu.NodeCPU.result`, a mapping built when
    #: read: :class:`kubetwin.sim.cpu_result.CPUResult`); None without CPU curves
    node_cpu: Mapping[str, Any] | None = None
    #: filesystems and processes per node over time (:meth:`kubetwin.sim.pressure.NodePressure.disk_result`)
    node_disk: dict[str, Any] | None = None
    #: memory and I/O pressure (PSI) per node and pod over time, by resource
    #: (:meth:`kubetwin.sim.pressure.NodePressure.psi_result`); None when nothing stalled
    node_psi: dict[str, Any] | None = None
    #: CPU placement per node and the containers runtime policies placed (:mod:`.runtime_policies`)
    placement: dict[str, Any] | None = None
    #: Block I/O classes per pod and throttling by class per node (:mod:`kubetwin.sim.blockio`), None without
    blockio: dict[str, Any] | None = None
    #: what the autoscalers did (:mod:`kubetwin.sim.autoscalers`), None without autoscalers
    autoscaling: dict[str, Any] | None = None
    #: the cluster at the end as manifests (:mod:`kubetwin.sim.end_state`), only when asked for
    end_state: Any = None

    # --- figures ---------------------------------------------------------------------------------
    def phase_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.pods:
            out[p.phase] = out.get(p.phase, 0) + 1
        return out

    def pods_per_second(self) -> float:
        return self.counters.attempts / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def time_average(self, value: Any) -> float:
        """The average over simulated time of ``value(sample)``, each sample holding until the next."""
        samples = self.samples
        if not samples:
            return 0.0
        span = samples[-1].time - samples[0].time
        if span <= 0:
            return float(value(samples[-1]))
        total = 0.0
        for a, b in zip(samples, samples[1:]):
            total += float(value(a)) * (b.time - a.time)
        return total / span

    def summary(self) -> dict[str, Any]:
        """Counts over the whole run; ``running``, ``pending``, ``utilization`` and ``strandedCpus``
        at the end of the run; ``*Average`` keys averaged over simulated time."""
        c = self.counters
        phases = self.phase_counts()
        last = self.samples[-1] if self.samples else None
        stranded = sum(n.stranded_cpus for n in self.node_reports)
        numa_pods = [p for p in self.pods if p.cpus]
        aligned = sum(1 for p in numa_pods if p.mems and "," not in p.mems)
        resources = sorted({r for s in self.samples for r in s.utilization})
        out = {
            "scenario": self.scenario, "nodes": self.nodes, "pods": len(self.pods),
            "simulatedSeconds": self.sim_time, "wallSeconds": round(self.wall_seconds, 4),
            "schedulingAttemptsPerSecond": round(self.pods_per_second(), 1),
            "scheduled": c.scheduled, "bound": c.bound, "running": phases.get("Running", 0),
            "succeeded": phases.get("Succeeded", 0), "pending": phases.get("Pending", 0),
            "pendingByReason": dict(sorted(self.pending_reasons.items(), key=lambda kv: -kv[1])),
            "rejectedByAdmissionControl": dict(c.rejected_admission_control),
            "rejectedByKubelet": dict(c.rejected_kubelet),
            "preempted": c.preempted, "evicted": c.evicted, "evictedBySignal": dict(c.evicted_by_signal),
            "oomKilled": c.oom_killed, "recreated": c.recreated, "completed": c.completed,
            "schedulingAttempts": c.attempts, "unschedulableAttempts": c.unschedulable_attempts,
            "utilization": dict(last.utilization) if last else {},
            "gpuFragmentation": last.gpu_fragmentation if last else 0.0,
            "strandedCpus": stranded,
            "exclusiveCpuPods": len(numa_pods), "singleNumaMemoryPods": aligned,
            "runningAverage": round(self.time_average(lambda s: s.running), 2),
            "pendingAverage": round(self.time_average(lambda s: s.pending), 2),
            "utilizationAverage": {r: self.time_average(lambda s, r=r: s.utilization.get(r, 0.0)) for r in resources},
        }
        resizes: dict[str, int] = {}
        for e in self.events:
            if e["type"] == "PodResize":
                resizes[e["status"]] = resizes.get(e["status"], 0) + 1
        if resizes:  # outcomes of in-place resizes (retries included), only when the scenario has some
            out["inPlaceResizes"] = dict(sorted(resizes.items()))
        if self.variant:
            out["variant"] = {"name": self.variant, "changes": list(self.changes)}
        if self.node_cpu is not None:
            from .cpu import summary_figures

            out["cpu"] = summary_figures(self.node_cpu)
        if self.node_psi is not None:
            from .stall_psi import summary_figures as stall_figures

            for res, figures in self.node_psi.items():
                out[f"{res}Pressure"] = stall_figures(figures, res)
        if self.autoscaling is not None:
            from ..sim.autoscaling_summary import autoscaling_summary

            out["autoscaling"] = autoscaling_summary(self.autoscaling)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "apiVersion": "kubetwin.io/v1alpha1", "kind": "SimulationResult",
            "summary": self.summary(),
            "pods": [asdict(p) for p in self.pods],
            "timeSeries": [asdict(s) for s in self.samples],
            "nodes": [asdict(n) for n in self.node_reports],
            "events": list(self.events),
            **({"cpu": _plain(self.node_cpu)} if self.node_cpu is not None else {}),
            **({"disk": self.node_disk} if self.node_disk is not None else {}),
            **({"pressure": self.node_psi} if self.node_psi is not None else {}),
            **({"placement": self.placement} if self.placement is not None else {}),
            **({"autoscaling": self.autoscaling} if self.autoscaling is not None else {}),
            **({"blockio": self.blockio} if self.blockio is not None else {}),
        }


def _plain(m: Mapping[str, Any]) -> Any:
    """A mapping built when read (``CPUResult``) as the plain data it stands for."""
    to_json = getattr(m, "to_json", None)
    return to_json() if to_json is not None else m


def baseline_of(results: list[SimResult]) -> list[SimResult | None]:
    """For each run, the run its variant is compared with (same workload, no variant), or None."""
    plain = {r.scenario: r for r in results if not r.variant}
    out: list[SimResult | None] = []
    for r in results:
        base = None
        if r.variant and r.scenario.endswith(":" + r.variant):
            base = plain.get(r.scenario[: -len(r.variant) - 1])
        out.append(base)
    return out
