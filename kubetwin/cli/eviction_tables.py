"""``kubetwin evict``'s tables: the eviction order of one signal, the eviction manager's steps and
the kernel's OOM order, rendered from the data of :mod:`kubetwin.kubelet.eviction.report`.

Not an upstream module: kubetwin's own presentation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ..kubelet.eviction.signals import RESOURCE_EPHEMERAL_STORAGE, RESOURCE_MEMORY, SIGNAL_TO_RESOURCE
from .common import console

if TYPE_CHECKING:
    from rich.console import JustifyMethod


def _fmt_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.1f}{unit}" if n % size else f"{n // size}{unit}"
    return str(n)


def render_ranking(signal: str, rows: Sequence[dict[str, Any]]) -> None:
    from rich.table import Table

    resource = SIGNAL_TO_RESOURCE[signal]
    fmt = _fmt_bytes if resource in (RESOURCE_MEMORY, RESOURCE_EPHEMERAL_STORAGE) else (lambda n: "-" if n is None else str(n))
    table = Table(title=f"eviction order for {signal} (first evicted first)")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("#", "right"), ("pod", "left"), ("priority", "right"), ("usage", "right"), ("request", "right"),
        ("over request", "left"))
    for col, just in columns:
        table.add_column(col, justify=just)
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


def render_oom(data: dict[str, Any]) -> None:
    from rich.table import Table

    con = console()
    t = Table(title=f"if the node ran out of memory first: the kernel's OOM order "
                    f"(capacity {_fmt_bytes(data['memoryCapacity'])}, swap {_fmt_bytes(data['swapCapacity'])})")
    oom_columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("#", "right"), ("pod/container", "left"), ("QoS", "left"), ("oom_score_adj", "right"),
        ("working set", "right"), ("badness", "right"), ("memory.max", "right"), ("memory.high", "right"),
        ("note", "left"))
    for col, just in oom_columns:
        t.add_column(col, justify=just)
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
