"""Over time: a chart per figure, a line per run.

Not an upstream module: kubetwin's own report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..markup import escape
from ..svg import COLORS, line_chart

if TYPE_CHECKING:
    from ...sim.results import SimResult


def over_time_section(results: Sequence[SimResult]) -> str:
    legend = "<div class=legend>" + "".join(
        f"<span><i class=sw style='background:{COLORS[k % len(COLORS)]}'></i>{escape(r.scenario)}</span>"
        for k, r in enumerate(results)) + "</div>"
    charts = [line_chart("running pods", [(r.scenario, [(s.time, s.running) for s in r.samples]) for r in results]),
              line_chart("pending pods", [(r.scenario, [(s.time, s.pending) for s in r.samples]) for r in results])]
    for res in ("cpu", "memory", "gpu", "devices"):
        if any(res in s.utilization for r in results for s in r.samples):   # devices may come with added nodes
            charts.append(line_chart("DRA devices allocated" if res == "devices" else f"{res} requested / allocatable",
                                     [(r.scenario, [(s.time, s.utilization.get(res, 0.0)) for s in r.samples])
                                      for r in results], percent=True))
    if any(s.evicted for r in results for s in r.samples):
        charts.append(line_chart("evictions (cumulative)", [(r.scenario, [(s.time, s.evicted) for s in r.samples])
                                                             for r in results]))
    if any(s.oom_killed for r in results for s in r.samples):
        charts.append(line_chart("OOM kills (cumulative)", [(r.scenario, [(s.time, s.oom_killed) for s in r.samples])
                                                             for r in results]))
    if any(s.pressure for r in results for s in r.samples):
        charts.append(line_chart("nodes under memory pressure", [
            (r.scenario, [(s.time, s.pressure.get("MemoryPressure", 0)) for s in r.samples]) for r in results]))
    if any(s.gpu_fragmentation for r in results for s in r.samples):
        charts.append(line_chart("GPU fragmentation", [(r.scenario, [(s.time, s.gpu_fragmentation) for s in r.samples])
                                                        for r in results], percent=True))
    return "<section><h2>Over time</h2>" + legend + "<div class=charts>" + "".join(charts) + "</div></section>"
