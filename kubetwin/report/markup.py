"""Small HTML helpers shared by the report's sections: escaping, percentages, simulated time.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

import html
from typing import Any


def escape(x: Any) -> str:
    """``x`` as HTML text."""
    return html.escape(str(x))


def pct(v: float) -> str:
    return f"{100 * v:.1f}%"


def sim_time(s: float) -> str:
    """Seconds of simulated time, short: ``45s``, ``3m07``, ``2h05``, ``1.5d``."""
    s = int(s)
    if s >= 86400:
        return f"{s / 86400:.1f}d"
    if s >= 3600:
        return f"{s // 3600}h{(s % 3600) // 60:02d}"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}"
    return f"{s}s"
