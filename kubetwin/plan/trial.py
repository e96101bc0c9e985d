"""One candidate mix simulated: the workload on ``count`` nodes of each type, scheduled by the
scenario's scheduler profile (the default one unless the workload gives a
KubeSchedulerConfiguration) and admitted by every node's kubelet — ``simulate``'s loop
(``kubetwin/sim/loop.py``), unchanged.

A mix **fits** when every pod ends Running (or Succeeded, for Jobs): a pod still Pending (the
scheduler found no node), or Failed (a kubelet rejected it: ``TopologyAffinityError``,
``OutOfcpu``, device errors; or evicted) means it does not — a kubelet rejection is not healed by
the ReplicaSet's replacement, which the scheduler puts back on the same node (kubernetes#84869).
Each failure is put down to its binding constraint from the scheduler's FitError text
(``pkg/scheduler/framework/plugins/*``' reasons) or the kubelet's admission reason
(``pkg/kubelet/lifecycle/predicate.go``, ``cm/topologymanager``).

Not an upstream module: kubetwin's own planner.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: the binding constraints a failure is put down to, by the text that names them
_CONSTRAINTS: tuple[tuple[str, str], ...] = (
    ("TopologyAffinityError", "NUMA alignment"),
    ("Insufficient cpu", "cpu"),
    ("OutOfcpu", "cpu"),
    ("Insufficient memory", "memory"),
    ("OutOfmemory", "memory"),
    ("Too many pods", "pod count"),
    ("OutOfpods", "pod count"),
    ("Insufficient ephemeral-storage", "ephemeral-storage"),
    ("Insufficient hugepages", "hugepages"),
    ("Insufficient ", "devices"),
    ("OutOf", "devices"),
    ("UnexpectedAdmissionError", "devices"),
    ("claim", "devices (DRA)"),
    ("anti-affinity", "pod anti-affinity"),
    ("pod affinity", "pod affinity"),
    ("topology spread", "topology spread"),
    ("untolerated taint", "taints"),
    ("node affinity", "node affinity/selector"),
    ("Evicted", "node pressure (eviction)"),
    ("OOMKilled", "memory (OOM kill)"),
    ("no nodes available", "no nodes"),
)


def constraints_of(reason: str) -> list[str]:
    """The binding constraints named in a failure's reason, in the order of :data:`_CONSTRAINTS`."""
    out: list[str] = []
    for part in reason.split(", "):
        for text, name in _CONSTRAINTS:
            if text in part:
                if name not in out:
                    out.append(name)
                break
    return out or ["other"]


@dataclass(frozen=True)
class Failure:
    """Pods of one owner that did not run, for one reason."""

    owner: str
    pods: int
    phase: str
    reason: str
    constraints: tuple[str, ...]
    example: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"owner": self.owner, "pods": self.pods, "phase": self.phase, "reason": self.reason,
                "constraints": list(self.constraints), "example": self.example, "message": self.message}


@dataclass(frozen=True)
class Trial:
    """A simulated mix and what it showed."""

    mix: tuple[tuple[str, int], ...]
    kubelet: bool
    fits: bool
    pods: int
    failures: tuple[Failure, ...] = ()
    #: per owner with pods that did not run: (pods running, pods wanted); a controller wants its
    #: replicas (a Job its parallelism), a bare pod itself
    short: tuple[tuple[str, int, int], ...] = ()
    #: the simulation's result (node reports for headroom), kept for the answer
    result: Any = field(default=None, compare=False, repr=False)

    @property
    def nodes(self) -> int:
        return sum(n for _, n in self.mix)

    def failed_pods(self) -> int:
        return sum(f.pods for f in self.failures)

    def to_dict(self) -> dict[str, Any]:
        return {"mix": dict(self.mix), "kubeletAdmission": self.kubelet, "fits": self.fits, "pods": self.pods,
                "failedPods": self.failed_pods(), "failures": [f.to_dict() for f in self.failures],
                "notRunning": [{"owner": o, "running": r, "wanted": w} for o, r, w in self.short]}


def failures_of(result: Any) -> tuple[Failure, ...]:
    """Pods that did not end Running or Succeeded, grouped by owner and reason."""
    from ..sim.loop import _reason_key

    groups: dict[tuple[str, str, str], list[Any]] = {}
    for p in result.pods:
        if p.phase in ("Running", "Succeeded"):
            continue
        if p.phase == "Pending":
            reason = _reason_key(p.message) if p.message else "not yet attempted"
        else:
            reason = p.reason or p.phase
        owner = p.owner or f"Pod/{p.namespace}/{p.name}"
        groups.setdefault((owner, p.phase, reason), []).append(p)
    out = []
    for (owner, phase, reason), pods in groups.items():
        first = pods[0]
        out.append(Failure(owner, len(pods), phase, reason, tuple(constraints_of(reason)),
                           f"{first.namespace}/{first.name}", first.message))
    out.sort(key=lambda f: (-f.pods, f.owner, f.reason))
    return tuple(out)


def run_trial(workload: Any, types: list[Any], counts: tuple[int, ...], *, kubelet: bool = True,
              kubernetes_version: str | None = None, keep: bool = False) -> Trial:
    """Simulate ``counts[i]`` nodes of ``types[i]`` with the workload; ``keep`` keeps the result."""
    from ..sim.loop import simulate
    from .workload import scenario_for

    nodes = [n for t, c in zip(types, counts) for n in t.nodes(c)]
    sc = scenario_for(workload, nodes, kubernetes_version=kubernetes_version, kubelet_admission=kubelet)
    result = simulate(sc)
    failures = failures_of(result)
    ran = sum(1 for p in result.pods if p.phase in ("Running", "Succeeded"))
    mix = tuple((t.name, c) for t, c in zip(types, counts))
    return Trial(mix, kubelet, not failures, ran, failures, _short(sc, result, failures),
                 result if keep else None)


def _short(sc: Any, result: Any, failures: tuple[Failure, ...]) -> tuple[tuple[str, int, int], ...]:
    wanted = {c.key: c.replicas for c in sc.controllers}
    running: dict[str, int] = {}
    for p in result.pods:
        if p.phase in ("Running", "Succeeded"):
            key = p.owner or f"Pod/{p.namespace}/{p.name}"
            running[key] = running.get(key, 0) + 1
    out = []
    for owner in dict.fromkeys(f.owner for f in failures):
        have = running.get(owner, 0)
        out.append((owner, have, wanted.get(owner, have + 1)))
    return tuple(out)
