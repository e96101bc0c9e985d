"""Prometheus text exposition of a run's figures (``kubetwin_sim_*``), one label set per scenario.

Not an upstream module: kubetwin's own figures, in the Prometheus text exposition format."""

from __future__ import annotations

from typing import Any


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def render_metrics(results: list[Any]) -> str:
    lines: list[str] = []

    def family(name: str, kind: str, help_: str, samples: list[tuple[dict[str, str], float]]) -> None:
        lines.append(f"# HELP {name} {help_}")
        lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            lab = ",".join(f'{k}="{_esc(str(v))}"' for k, v in labels.items())
            lines.append(f"{name}{{{lab}}} {value:g}" if lab else f"{name} {value:g}")

    sums = [(r.scenario, r.summary()) for r in results]
    family("kubetwin_sim_pods", "gauge", "Pods at the end of the run by phase.",
           [({"scenario": n, "phase": ph}, s[k]) for n, s in sums
            for ph, k in (("Running", "running"), ("Succeeded", "succeeded"), ("Pending", "pending"))])
    family("kubetwin_sim_scheduling_attempts_total", "counter", "Scheduling cycles run.",
           [({"scenario": n, "result": "scheduled"}, s["scheduled"]) for n, s in sums]
           + [({"scenario": n, "result": "unschedulable"}, s["unschedulableAttempts"]) for n, s in sums])
    family("kubetwin_sim_pending_pods", "gauge", "Pods still pending by scheduler reason.",
           [({"scenario": n, "reason": k}, v) for n, s in sums for k, v in s["pendingByReason"].items()])
    family("kubetwin_sim_kubelet_rejections_total", "counter", "Pods the kubelet rejected at admission, by reason.",
           [({"scenario": n, "reason": k}, v) for n, s in sums for k, v in s["rejectedByKubelet"].items()])
    family("kubetwin_sim_admission_rejections_total", "counter", "Pods the API server's admission rejected.",
           [({"scenario": n, "reason": k}, v) for n, s in sums for k, v in s["rejectedByAdmissionControl"].items()])
    family("kubetwin_sim_preemptions_total", "counter", "Pods preempted.", [({"scenario": n}, s["preempted"]) for n, s in sums])
    family("kubetwin_sim_evictions_total", "counter", "Pods the kubelets' eviction managers evicted, by signal.",
           [({"scenario": n, "signal": k}, v) for n, s in sums for k, v in s["evictedBySignal"].items()]
           or [({"scenario": n}, 0) for n, _ in sums])
    family("kubetwin_sim_oom_kills_total", "counter", "Containers the kernel OOM-killed.",
           [({"scenario": n}, s["oomKilled"]) for n, s in sums])
    family("kubetwin_sim_requested_ratio", "gauge", "Requested / allocatable at the end of the run.",
           [({"scenario": n, "resource": k}, v) for n, s in sums for k, v in s["utilization"].items()])
    family("kubetwin_sim_gpu_fragmentation_ratio", "gauge", "Free GPU capacity in slivers too small for a whole GPU.",
           [({"scenario": n}, s["gpuFragmentation"]) for n, s in sums])
    family("kubetwin_sim_stranded_cpus", "gauge", "Free CPUs on NUMA nodes that already hold exclusive CPUs.",
           [({"scenario": n}, s["strandedCpus"]) for n, s in sums])
    family("kubetwin_sim_wall_seconds", "gauge", "Wall-clock time of the run.",
           [({"scenario": n}, s["wallSeconds"]) for n, s in sums])
    return "\n".join(lines) + "\n"
