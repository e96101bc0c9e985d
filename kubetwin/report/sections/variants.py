"""Variants: what each ``--variant`` run changed, and the run it is compared with.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..markup import escape

if TYPE_CHECKING:
    from ...sim.results import SimResult


def variants_section(results: Sequence[SimResult], bases: Sequence[SimResult | None]) -> str:
    rows = [(r, b) for r, b in zip(results, bases) if r.variant]
    if not rows:
        return ""
    body = "".join(f"<tr><td>{escape(r.scenario)}</td><td class=l>{escape(', '.join(r.changes) or 'no change')}</td>"
                   f"<td class=l>{escape(b.scenario) if b is not None else '—'}</td></tr>" for r, b in rows)
    return ("<section><h2>Variants</h2><table><thead><tr><th>run</th><th>changes (--variant)</th>"
            "<th>compared with</th></tr></thead>" + body + "</table></section>")
