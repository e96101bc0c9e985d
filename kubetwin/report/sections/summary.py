"""Summary: the terminal summary's rows, a column per run, a variant's figures with their
difference to its baseline.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ..markup import escape
from ..terminal import fmt, summary_rows

if TYPE_CHECKING:
    from ...sim.results import SimResult


def summary_section(results: Sequence[SimResult], sums: Sequence[dict[str, Any]], bases: Sequence[SimResult | None],
                    base_sums: Sequence[dict[str, Any] | None]) -> str:
    """The summary table; ``bases``/``base_sums``: each run's baseline (None: it has none)."""
    heads = "".join(f"<th>{escape(r.scenario)}" + (" <span class=d>(Δ baseline)</span>" if b is not None else "")
                    + "</th>" for r, b in zip(results, bases))
    rows = ["<tr><th></th>" + heads + "</tr>"]
    for label, fig, kind in summary_rows(sums):
        rows.append(f"<tr><td>{escape(label)}</td>" + "".join(
            _delta_cell(fig(s), None if bs is None else fig(bs), kind) for s, bs in zip(sums, base_sums)) + "</tr>")
    rows.append("<tr><td>rejected by kubelets, by reason</td>" + "".join(
        f"<td>{escape(', '.join(f'{k}: {v}' for k, v in s['rejectedByKubelet'].items()) or 0)}</td>" for s in sums)
        + "</tr>")
    rows.append("<tr><td>scheduling attempts</td>" + "".join(f"<td>{s['schedulingAttempts']}</td>" for s in sums)
                + "</tr>")
    return ("<section><h2>Summary</h2><p>Counts are over the whole run unless labelled <i>at the end</i> "
            "(the state when the simulation stopped) or <i>time average</i> (averaged over simulated time)."
            "</p><table>" + "".join(rows) + "</table></section>")


def _delta_cell(value: float, base: float | None, kind: str) -> str:
    text = escape(fmt(value, kind))
    if base is None or kind not in ("n", "%", "f"):
        return f"<td>{text}</td>"
    d = value - base
    if abs(d) < (0.0005 if kind == "%" else 1e-9):
        return f"<td>{text}<span class=d>(=)</span></td>"
    shown = f"{abs(100 * d):.1f} pts" if kind == "%" else (f"{abs(d):.1f}" if kind == "f" else str(int(abs(d))))
    return f"<td>{text}<span class='d {'up' if d > 0 else 'down'}'>({'+' if d > 0 else '−'}{shown})</span></td>"
