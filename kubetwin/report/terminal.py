"""The terminal summary of a run (rich tables; rich is imported only here)."""

from __future__ import annotations

from typing import Any


def render_summary(results: list[Any], con: Any = None) -> None:
    """One column per configuration: scheduled, pending by reason, rejections, utilisation, NUMA figures."""
    from rich.console import Console
    from rich.table import Table

    con = con or Console()
    sums = [r.summary() for r in results]
    t = Table(title="simulation", show_lines=False)
    t.add_column("")
    for r in results:
        t.add_column(r.scenario, justify="right")

    def row(label: str, fn: Any) -> None:
        t.add_row(label, *[str(fn(s)) for s in sums])

    row("nodes", lambda s: s["nodes"])
    row("pods", lambda s: s["pods"])
    row("scheduled", lambda s: s["scheduled"])
    row("running", lambda s: s["running"])
    row("succeeded", lambda s: s["succeeded"])
    row("pending", lambda s: s["pending"])
    row("rejected by admission control", lambda s: sum(s["rejectedByAdmissionControl"].values()))
    row("rejected by kubelets", lambda s: sum(s["rejectedByKubelet"].values()))
    row("preempted", lambda s: s["preempted"])
    row("evicted", lambda s: s["evicted"])
    if any(s["oomKilled"] for s in sums):
        row("OOM kills", lambda s: s["oomKilled"])
    row("re-created by controllers", lambda s: s["recreated"])
    for res in ("cpu", "memory", "gpu", "devices"):
        if any(res in s["utilization"] for s in sums):
            row("DRA devices allocated" if res == "devices" else f"{res} requested / allocatable",
                lambda s, res=res: f"{100 * s['utilization'].get(res, 0):.1f}%")
    if any(s["gpuFragmentation"] for s in sums):
        row("GPU fragmentation", lambda s: f"{100 * s['gpuFragmentation']:.1f}%")
    row("pods with exclusive CPUs", lambda s: s["exclusiveCpuPods"])
    row("CPUs stranded on partly used NUMA nodes", lambda s: s["strandedCpus"])
    row("simulated time", lambda s: _dur(s["simulatedSeconds"]))
    row("wall time", lambda s: f"{s['wallSeconds']:.2f} s")
    con.print(t)
    for r, s in zip(results, sums):
        reasons = list(s["pendingByReason"].items()) + [
            (f"kubelet: {k}", v) for k, v in s["rejectedByKubelet"].items()] + [
            (f"admission: {k}", v) for k, v in s["rejectedByAdmissionControl"].items()] + [
            (f"evicted: {k}", v) for k, v in s["evictedBySignal"].items()]
        if not reasons:
            continue
        rt = Table(title=f"{r.scenario}: why pods did not run")
        rt.add_column("reason")
        rt.add_column("pods", justify="right")
        for k, v in reasons[:12]:
            rt.add_row(k, str(v))
        con.print(rt)


def _dur(s: float) -> str:
    s = int(s)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m{sec:02d}s" if h else f"{m}m{sec:02d}s"
