"""The report's SVG charts, drawn here (no plotting library, no script): line charts over
simulated time and horizontal bar charts.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import Sequence

from .markup import escape, pct, sim_time

COLORS = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777")


def line_chart(title: str, series: Sequence[tuple[str, Sequence[tuple[float, float]]]], *, percent: bool = False,
               width: int = 600, height: int = 230) -> str:
    """An SVG line chart; ``series`` = [(label, [(x, y), ...])]."""
    pad_l, pad_b, pad_t, pad_r = 54, 30, 26, 12
    xs = [x for _, pts in series for x, _ in pts] or [0.0]
    ys = [y for _, pts in series for _, y in pts] or [0.0]
    x0, x1 = min(xs), max(xs)
    y1 = max(ys) if ys else 1.0
    if percent:
        y1 = max(y1, 0.01)
    y1 = y1 or 1.0
    x1 = x1 if x1 > x0 else x0 + 1

    def sx(x: float) -> float:
        return pad_l + (x - x0) / (x1 - x0) * (width - pad_l - pad_r)

    def sy(y: float) -> float:
        return height - pad_b - y / y1 * (height - pad_b - pad_t)

    out = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
           f'<text x="{pad_l}" y="16" font-size="13" font-weight="600">{escape(title)}</text>',
           f'<line x1="{pad_l}" y1="{height - pad_b}" x2="{width - pad_r}" y2="{height - pad_b}" stroke="#9ca3af"/>',
           f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{height - pad_b}" stroke="#9ca3af"/>']
    for k in range(5):
        yv = y1 * k / 4
        y = sy(yv)
        label = pct(yv) if percent else (f"{yv:.0f}" if y1 >= 4 else f"{yv:.2f}")
        out.append(f'<line x1="{pad_l}" y1="{y:.1f}" x2="{width - pad_r}" y2="{y:.1f}" stroke="#f0f0f0"/>'
                   f'<text x="{pad_l - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{label}</text>')
    for k in range(5):
        xv = x0 + (x1 - x0) * k / 4
        out.append(f'<text x="{sx(xv):.1f}" y="{height - 10}" font-size="10" text-anchor="middle">{sim_time(xv)}</text>')
    for idx, (label, pts) in enumerate(series):
        if not pts:
            continue
        color = COLORS[idx % len(COLORS)]
        d = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in _thin(pts))
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.8" points="{d}"><title>{escape(label)}</title></polyline>')
    out.append("</svg>")
    return "".join(out)


def _thin(pts: Sequence[tuple[float, float]], limit: int = 800) -> Sequence[tuple[float, float]]:
    if len(pts) <= limit:
        return pts
    step = len(pts) / limit
    return [pts[int(k * step)] for k in range(limit)] + [pts[-1]]


def bar_chart(title: str, rows: Sequence[tuple[str, int]], width: int = 600) -> str:
    rows = list(rows)[:14]
    if not rows:
        return ""
    bar_h, label_w = 20, 330
    height = 28 + bar_h * len(rows)
    top = max(v for _, v in rows) or 1
    out = [f'<svg width="{width}" height="{height}" role="img" aria-label="{escape(title)}">',
           f'<text x="0" y="16" font-size="13" font-weight="600">{escape(title)}</text>']
    for k, (label, v) in enumerate(rows):
        y = 26 + k * bar_h
        w = (width - label_w - 50) * v / top
        short = label if len(label) <= 52 else label[:50] + "…"
        out.append(f'<text x="0" y="{y + 13}" font-size="11"><title>{escape(label)}</title>{escape(short)}</text>'
                   f'<rect x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{bar_h - 6}" fill="#f59e0b"/>'
                   f'<text x="{label_w + w + 4:.1f}" y="{y + 13}" font-size="11">{v}</text>')
    out.append("</svg>")
    return "".join(out)
