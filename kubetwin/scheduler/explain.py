"""Terminal rendering of one explained cycle (rich is imported only here)."""

from __future__ import annotations

from .cycle import CycleOutcome


def render_table(outcome: CycleOutcome) -> None:
    from rich.table import Table

    from ..cli.common import console

    con = console()
    for change in outcome.admission:
        con.print(f"[dim]admission: {change}[/dim]")
    table = Table(title=f"scheduling {outcome.pod.key}", show_lines=False)
    table.add_column("node")
    table.add_column("filter")
    table.add_column("scores (normalized × weight)")
    table.add_column("total", justify="right")
    for name, v in outcome.nodes.items():
        if not v.filter:
            table.add_row(name, "[dim]not evaluated[/dim]", "", "")
            continue
        st = v.status
        verdict = "Success" if st.is_success else f"{st.code.name}: {st.message}"
        scores = ", ".join(f"{p} {v.normalized[p]}×{v.weighted[p] // v.normalized[p] if v.normalized[p] else '-'}"
                           for p in v.raw)
        mark = " ←" if name == outcome.node else ""
        table.add_row(name + mark, verdict, scores, "" if v.total is None else str(v.total))
    con.print(table)
    con.print(outcome.message)
    if outcome.nominated_node:
        con.print(f"preemption: nominate {outcome.nominated_node}, evicting {', '.join(outcome.victims)}")
    if outcome.not_modelled:
        con.print(f"[dim]not modelled: {', '.join(outcome.not_modelled)}[/dim]")
