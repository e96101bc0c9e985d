"""Eviction results as plain data (the JSON contract of FORMAT.md, kinds EvictionRanking and
EvictionDecision) and as readable tables."""

from __future__ import annotations

from typing import Any, Sequence

from ...model.kubelet_config import Threshold
from ...model.pod import Pod
from ...model.summary import Summary
from .manager import Eviction
from .ranking import DiskLayout, memory_usage, pod_disk_usage, process_usage, resource_request, signal_to_rank_func
from .signals import Observations, RESOURCE_EPHEMERAL_STORAGE, RESOURCE_INODES, RESOURCE_MEMORY, SIGNAL_TO_RESOURCE
from .thresholds import threshold_to_dict
from .timeline import StepResult


def observations_to_dict(obs: Observations) -> dict[str, dict[str, str | None]]:
    return {s: {"available": str(o.available), "capacity": None if o.capacity is None else str(o.capacity)}
            for s, o in obs.items()}


def eviction_to_dict(e: Eviction) -> dict[str, Any]:
    return {"name": e.pod.name, "namespace": e.pod.namespace, "gracePeriodSeconds": e.grace_period_seconds,
            "reason": e.reason, "message": e.message, "cause": e.cause}


def step_to_dict(r: StepResult) -> dict[str, Any]:
    s = r.sync
    return {
        "at": r.at / 1e9,
        "conditions": list(s.conditions),
        "thresholdsMet": [threshold_to_dict(t) for t in s.thresholds_met],
        "thresholdsActing": [threshold_to_dict(t) for t in s.thresholds_acting],
        "signals": observations_to_dict(s.observations),
        "resourceToReclaim": s.resource_to_reclaim,
        "reclaimed": list(s.reclaimed),
        "ranking": [p.name for p in s.ranking],
        "evicted": [eviction_to_dict(e) for e in s.evicted],
        "admission": [{"name": a.pod.name, "namespace": a.pod.namespace, "admitted": a.admitted,
                       "reason": a.reason, "message": a.message} for a in r.admission],
        "error": s.error,
    }


def decision_to_dict(thresholds: Sequence[Threshold], effective: Sequence[Threshold],
                     results: Sequence[StepResult]) -> dict[str, Any]:
    return {"thresholds": [threshold_to_dict(t) for t in thresholds],
            "effectiveThresholds": [threshold_to_dict(t) for t in effective],
            "steps": [step_to_dict(r) for r in results]}


def ranking_rows(signal: str, ranked: Sequence[Pod], summary: Summary, layout: DiskLayout,
                 gates: Any = None) -> list[dict[str, Any]]:
    """Per ranked pod, the figures the comparators looked at."""
    from .ranking import ALL_FS, FsStatsType, stats_func

    stats = stats_func(summary)
    resource = SIGNAL_TO_RESOURCE[signal]
    rows = []
    for i, pod in enumerate(ranked, 1):
        s = stats(pod)
        row: dict[str, Any] = {"rank": i, "name": pod.name, "namespace": pod.namespace,
                               "priority": pod.spec.priority or 0, "hasStats": s is not None}
        if resource == RESOURCE_MEMORY:
            usage = memory_usage(s) if s else 0
            req = resource_request(pod, RESOURCE_MEMORY, gates).value()
        elif resource in (RESOURCE_EPHEMERAL_STORAGE, RESOURCE_INODES):
            disk, inodes = pod_disk_usage(s, pod, ALL_FS) if s else (0, 0)
            usage = inodes if resource == RESOURCE_INODES else disk
            req = resource_request(pod, resource, gates).value()
        else:
            usage, req = (process_usage(s) if s else 0), None
        row.update(usage=usage, request=req, exceeds=None if req is None else usage > req)
        rows.append(row)
    return rows


def _fmt_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.1f}{unit}" if n % size else f"{n // size}{unit}"
    return str(n)


def render_ranking(signal: str, rows: Sequence[dict[str, Any]]) -> None:
    from rich.table import Table

    from ...cli.common import console

    resource = SIGNAL_TO_RESOURCE[signal]
    fmt = _fmt_bytes if resource in (RESOURCE_MEMORY, RESOURCE_EPHEMERAL_STORAGE) else (lambda n: "-" if n is None else str(n))
    table = Table(title=f"eviction order for {signal} (first evicted first)")
    for col, just in (("#", "right"), ("pod", "left"), ("priority", "right"), ("usage", "right"),
                      ("request", "right"), ("over request", "left")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in rows:
        over = "-" if r["exceeds"] is None else ("yes" if r["exceeds"] else "no")
        if not r["hasStats"]:
            over = "no stats (first)"
        table.add_row(str(r["rank"]), f"{r['namespace']}/{r['name']}", str(r["priority"]), fmt(r["usage"]),
                      fmt(r["request"]), over)
    console().print(table)
    if resource == RESOURCE_MEMORY:
        console().print("order: usage above request first, then lower priority, then larger usage − request")
    elif resource == "pids":
        console().print("order: lower priority first, then more processes")
    else:
        console().print("order: disk usage above the ephemeral-storage request first, then lower priority, "
                        "then larger usage − request")


def render_decision(data: dict[str, Any]) -> None:
    from rich.table import Table

    from ...cli.common import console

    con = console()
    th = Table(title="eviction thresholds (after the disk layout is known)")
    for col in ("signal", "value", "grace period", "min reclaim", "kind"):
        th.add_column(col)
    for t in data["effectiveThresholds"]:
        th.add_row(t["signal"], f"< {t['value']}", t["gracePeriod"], t["minReclaim"] or "-",
                   "hard" if t["gracePeriod"] == "0s" else "soft")
    con.print(th)
    st = Table(title="eviction manager, one synchronize per step")
    for col in ("t", "conditions", "thresholds met", "reclaim", "evicted (grace)", "admission"):
        st.add_column(col, overflow="fold")
    for s in data["steps"]:
        met = ", ".join(f"{t['signal']}<{t['value']}" for t in s["thresholdsMet"]) or "-"
        ev = "; ".join(f"{e['namespace']}/{e['name']} ({e['gracePeriodSeconds']}s)" for e in s["evicted"]) or "-"
        adm = ", ".join(f"{a['name']}: {'yes' if a['admitted'] else 'no'}" for a in s["admission"]) or "-"
        rec = ", ".join(s["reclaimed"]) or "-"
        if s["error"]:
            ev = f"error: {s['error']}"
        st.add_row(f"{s['at']:g}s", ", ".join(s["conditions"]) or "-", met, rec, ev, adm)
    con.print(st)
    for s in data["steps"]:
        for e in s["evicted"]:
            con.print(f"[bold]{s['at']:g}s[/bold] {e['namespace']}/{e['name']}: {e['message']}")


def oom_to_dict(r: Any) -> dict[str, Any]:
    def row(c: Any) -> dict[str, Any]:
        return {"pod": c.pod.name, "namespace": c.pod.namespace, "container": c.container, "qosClass": c.qos,
                "oomScoreAdj": c.oom_score_adj, "workingSetBytes": c.working_set, "swapUsageBytes": c.swap_usage,
                "memoryMax": c.memory_max, "memoryMin": c.memory_min, "memoryLow": c.memory_low,
                "memoryHigh": c.memory_high, "swapMax": c.swap_max, "badness": c.badness,
                "throttled": c.throttled, "overLimit": c.over_limit}

    return {"memoryCapacity": r.memory_capacity, "swapCapacity": r.swap_capacity,
            "containerKills": [{"pod": k.pod.name, "namespace": k.pod.namespace, "container": k.container,
                                "scope": k.scope, "reason": k.reason, "restarts": k.restarts,
                                "wholeContainer": k.whole_container} for k in r.container_kills],
            "nodeOOMOrder": [row(c) for c in r.node_order]}


def render_oom(data: dict[str, Any]) -> None:
    from rich.table import Table

    from ...cli.common import console

    con = console()
    t = Table(title=f"if the node ran out of memory first: the kernel's OOM order "
                    f"(capacity {_fmt_bytes(data['memoryCapacity'])}, swap {_fmt_bytes(data['swapCapacity'])})")
    for col, just in (("#", "right"), ("pod/container", "left"), ("QoS", "left"), ("oom_score_adj", "right"),
                      ("working set", "right"), ("badness", "right"), ("memory.max", "right"),
                      ("memory.high", "right"), ("note", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for i, c in enumerate(data["nodeOOMOrder"], 1):
        note = []
        if c["overLimit"]:
            note.append("over its limit: OOM-killed in its cgroup")
        if c["throttled"]:
            note.append("above memory.high: throttled")
        if c["swapMax"]:
            note.append(f"may swap {_fmt_bytes(c['swapMax'])}")
        t.add_row(str(i), f"{c['namespace']}/{c['pod']}/{c['container']}", c["qosClass"], str(c["oomScoreAdj"]),
                  _fmt_bytes(c["workingSetBytes"]), str(c["badness"]),
                  _fmt_bytes(c["memoryMax"]) if c["memoryMax"] else "max",
                  _fmt_bytes(c["memoryHigh"]) if c["memoryHigh"] is not None else "-", "; ".join(note))
    con.print(t)
    con.print("badness = memory share in per mille of RAM+swap + oom_score_adj; highest is killed first")
    for k in data["containerKills"]:
        con.print(f"{k['namespace']}/{k['pod']}/{k['container']}: OOMKilled by its own limit "
                  f"({'whole container' if k['wholeContainer'] else 'largest process'}), "
                  f"{'restarts' if k['restarts'] else 'stays terminated'}")
