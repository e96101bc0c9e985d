"""The terminal summary of a run (rich tables; rich is imported only here).

One column per run. A ``--variant`` run shows its figures with the difference to its baseline run
(``44 (+10)``) and, below the table, what it changed. Figures are labelled by when they hold:
over the whole run, at the end of the run, or averaged over simulated time.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..sim.results import SimResult, baseline_of
from .placement import placement_table

MAX_POD_ROWS = 500


def _delta(value: float, base: float, percent: bool) -> str:
    d = value - base
    if abs(d) < (0.0005 if percent else 1e-9):
        return ""
    if percent:
        return f" ({'+' if d > 0 else '−'}{abs(100 * d):.1f})"
    text = f"{abs(d):.1f}" if isinstance(d, float) and not float(d).is_integer() else str(int(abs(d)))
    return f" ({'+' if d > 0 else '−'}{text})"


def _peak_stall(res: str, key: str) -> Callable[[dict[str, Any]], float]:
    """The run's peak node ``some`` avg10 of memory or I/O pressure, as a share."""
    return lambda s: s.get(f"{res}Pressure", {}).get(f"peakNode{key}SomeAvg10", 0.0) / 100


def _share(field: str, resource: str) -> Callable[[dict[str, Any]], float]:
    """The figure ``summary[field][resource]`` (0 where absent)."""
    return lambda s: s.get(field, {}).get(resource, 0.0)


def summary_rows(sums: Sequence[dict[str, Any]]) -> list[tuple[str, Callable[[dict[str, Any]], float], str]]:
    """(label, figure, format) of the summary table; format: "n" count, "%" share, "t" time, "s" seconds."""
    rows: list[tuple[str, Callable[[dict[str, Any]], float], str]] = [
        ("nodes", lambda s: s["nodes"], "n"),
        ("pods", lambda s: s["pods"], "n"),
        ("scheduled", lambda s: s["scheduled"], "n"),
        ("running at the end", lambda s: s["running"], "n"),
        ("running, time average", lambda s: s.get("runningAverage", 0), "f"),
        ("succeeded", lambda s: s["succeeded"], "n"),
        ("pending at the end", lambda s: s["pending"], "n"),
        ("rejected by admission control", lambda s: sum(s["rejectedByAdmissionControl"].values()), "n"),
        ("rejected by kubelets", lambda s: sum(s["rejectedByKubelet"].values()), "n"),
        ("preempted", lambda s: s["preempted"], "n"),
        ("evicted", lambda s: s["evicted"], "n"),
    ]
    if any(s["oomKilled"] for s in sums):
        rows.append(("OOM kills", lambda s: s["oomKilled"], "n"))
    rows.append(("re-created by controllers", lambda s: s["recreated"], "n"))
    for res in ("cpu", "memory", "gpu", "devices"):
        # held at some time of the run: DRA devices of nodes the Cluster Autoscaler added and removed
        if any(res in s["utilization"] or res in s.get("utilizationAverage", {}) for s in sums):
            label = "DRA devices allocated" if res == "devices" else f"{res} requested / allocatable"
            rows.append((f"{label}, at the end", _share("utilization", res), "%"))
            rows.append((f"{label}, time average", _share("utilizationAverage", res), "%"))
    if any(s["gpuFragmentation"] for s in sums):
        rows.append(("GPU fragmentation, at the end", lambda s: s["gpuFragmentation"], "%"))
    if any("cpu" in s for s in sums):   # CPU curves: throttling and CPU pressure (kubetwin.sim.cpu)
        rows.append(("pods throttled by cpu.max", lambda s: s.get("cpu", {}).get("throttledPods", 0), "n"))
        rows.append(("throttled CFS periods", lambda s: s.get("cpu", {}).get("throttledPeriodShare", 0.0), "%"))
        rows.append(("peak node cpu.pressure some avg10",
                     lambda s: s.get("cpu", {}).get("peakNodeCpuSomeAvg10", 0.0) / 100, "%"))
    for res, key in (("memory", "Memory"), ("io", "IO")):   # memory / I/O stalls (kubetwin.sim.memory_psi, io_psi)
        if any(f"{res}Pressure" in s for s in sums):
            rows.append((f"peak node {res}.pressure some avg10", _peak_stall(res, key), "%"))
    rows.append(("pods given exclusive CPUs", lambda s: s["exclusiveCpuPods"], "n"))
    rows.append(("CPUs stranded on partly used NUMA, at the end", lambda s: s["strandedCpus"], "n"))
    if any("autoscaling" in s for s in sums):
        from .autoscaling import autoscaling_rows

        rows.extend(autoscaling_rows(sums))
    rows.append(("simulated time", lambda s: s["simulatedSeconds"], "t"))
    rows.append(("wall time", lambda s: s["wallSeconds"], "s"))
    return rows


def fmt(value: float, kind: str) -> str:
    if kind == "%":
        return f"{100 * value:.1f}%"
    if kind == "t":
        return _dur(value)
    if kind == "s":
        return f"{value:.2f} s"
    if kind == "f":
        return f"{value:.1f}"
    return str(value)


def render_summary(results: list[Any], con: Any = None, *, pods: bool = False) -> None:
    """The summary table (a column per run, deltas to the baseline), what each variant changed,
    why pods did not run, and with ``pods`` the per-pod table."""
    from rich.markup import escape
    from rich.table import Table

    if con is None:
        from rich.console import Console

        con = Console()
    sums = [r.summary() for r in results]
    bases = baseline_of(results)
    base_sums = [None if b is None else sums[results.index(b)] for b in bases]
    title = "simulation" + (" — a variant's figures with (the difference to its baseline)"
                            if any(b is not None for b in bases) else "")
    t = Table(title=title, show_lines=False)
    t.add_column("")
    for r in results:
        t.add_column(escape(r.scenario), justify="right")
    for label, fig, kind in summary_rows(sums):
        cells = []
        for s, bs in zip(sums, base_sums):
            text = fmt(fig(s), kind)
            if bs is not None and kind in ("n", "%", "f"):
                text += _delta(fig(s), fig(bs), kind == "%")
            cells.append(text)
        t.add_row(label, *cells)
    con.print(t)
    for r, b in zip(results, bases):
        if r.variant:
            con.print(f"{r.scenario}: {', '.join(r.changes) or 'no change'}"
                      + (f" (compared with {b.scenario})" if b is not None else ""), markup=False, emoji=False)
    for r, s in zip(results, sums):
        reasons = list(s["pendingByReason"].items()) + [
            (f"kubelet: {k}", v) for k, v in s["rejectedByKubelet"].items()] + [
            (f"admission: {k}", v) for k, v in s["rejectedByAdmissionControl"].items()] + [
            (f"evicted: {k}", v) for k, v in s["evictedBySignal"].items()]
        if not reasons:
            continue
        rt = Table(title=f"{escape(r.scenario)}: why pods did not run")
        rt.add_column("reason")
        rt.add_column("pods", justify="right")
        for k, v in reasons[:12]:
            rt.add_row(escape(k), str(v))
        con.print(rt)
    if (placed := placement_table(results)) is not None:
        con.print(placed)
    if pods:
        for r in results:
            render_pods(r, con)


def pod_rows(r: SimResult, limit: int | None = None) -> list[dict[str, str]]:
    """Every pod's placement, phase, reason and message; pods that did not run first."""
    order = {"Failed": 0, "Rejected": 0, "Pending": 1}
    pods = sorted(r.pods, key=lambda p: (order.get(p.phase, 2), p.arrival))
    if limit is not None:
        pods = pods[:limit]
    rows = []
    blockio = (getattr(r, "blockio", None) or {}).get("pods") or {}   # Block I/O classes (kubetwin.sim.blockio)
    for p in pods:
        place = p.node
        extra = []
        if p.cpus:
            extra.append(f"cpus {p.cpus}")
        if p.mems:
            extra.append(f"mems {p.mems}")
        if p.gpus:
            extra.append("gpus " + ",".join(f"{g[0]}" + (f"({g[1] / 10:.0f}%)" if g[1] < 1000 else "")
                                            for g in p.gpus))
        if p.claims:
            extra.append("claims " + ",".join(p.claims))
        for c in blockio.get(f"{p.namespace}/{p.name}", ()):
            if c["blockioClass"]:
                lines = "; ".join(f"{f}: {t}".replace("\n", ", ") for f, t in (c.get("files") or {}).items())
                extra.append(f"blockio {c['container']}={c['blockioClass']}" + (f" ({lines})" if lines else ""))
        rows.append({"pod": f"{p.namespace}/{p.name}", "node": place, "placement": "; ".join(extra),
                     "phase": p.phase, "reason": p.reason, "message": p.message})
    return rows


def render_pods(r: SimResult, con: Any) -> None:
    from rich.markup import escape
    from rich.table import Table

    rows = pod_rows(r, MAX_POD_ROWS)
    more = f" (first {len(rows)} of {len(r.pods)}; --json has all)" if len(r.pods) > len(rows) else ""
    t = Table(title=f"{escape(r.scenario)}: pods{more}", show_lines=False)
    for col in ("pod", "node", "placement", "phase", "reason", "message"):
        t.add_column(col, overflow="fold")
    for row in rows:
        t.add_row(*(escape(row[k]) for k in ("pod", "node", "placement", "phase", "reason", "message")))
    con.print(t)


def _dur(s: float) -> str:
    s = int(s)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m{sec:02d}s" if h else f"{m}m{sec:02d}s"
