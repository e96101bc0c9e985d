"""A what-if, not upstream behaviour: a PSI-aware eviction policy beside the kubelet's eviction manager.

The kubelet evicts on memory, disk and PID signals only; CPU is compressible, so a node whose
containers queue for CPU never evicts anyone, however long the stall. KEP-4205 (PSI in the
Summary API) names pressure-based eviction as a possible future; this module is kubetwin's own
sketch of one, off unless a run asks for it (``--variant NAME:whatif.evictionPolicy=psi-aware``),
so it can be compared side by side with the upstream manager.

The policy, at every sample, per node: when the node's ``cpu.pressure`` ``some avg10`` (the worst
pod's, :mod:`.cpu`) is at or above ``whatif.psiThreshold`` percent (default 40), evict one pod —
the one using the most CPU above its request; BestEffort and Burstable pods only (never a
Guaranteed or critical pod, never one within its request). The upstream eviction manager keeps
running unchanged; this policy only adds evictions, with their own cause ``psi-aware``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..kubelet.oom import is_critical_pod
from ..kubelet.qos import GUARANTEED, get_pod_qos

if TYPE_CHECKING:
    from .cpu import NodeCPU
    from .loop import SimPod, Simulator

POLICIES = ("upstream", "psi-aware")
DEFAULT_THRESHOLD = 40.0
CAUSE = "psi-aware"


class PSIEviction:
    def __init__(self, sim: "Simulator", cpu: "NodeCPU", threshold: float = DEFAULT_THRESHOLD):
        self.sim = sim
        self.cpu = cpu
        self.threshold = threshold

    def step(self, t: float) -> None:
        """After the CPU accounting of a sample: at most one eviction per node under CPU pressure."""
        cpu = self.cpu
        node_psi = cpu.node_psi
        for i in np.nonzero(node_psi >= self.threshold)[0].tolist():
            victim = self._victim(int(i))
            if victim is None:
                continue
            sp, over = victim
            self.sim.evict(sp, f"kubetwin what-if (psi-aware eviction, not upstream): the node's cpu.pressure some "
                               f"avg10 was {node_psi[i]:.2f}%, at or above {self.threshold:g}%. The pod was using "
                               f"{over * 1000:.0f}m CPU above its request. ", CAUSE)

    def _victim(self, i: int) -> "tuple[SimPod, float] | None":
        cpu = self.cpu
        best: "tuple[tuple[float, int, int], SimPod, float] | None" = None
        for sp in self.sim.residents[i].values():
            rows = [r for r in cpu.rows_of.get(sp.i, ()) if cpu.used[r]]
            if not rows or is_critical_pod(sp.pod) or get_pod_qos(sp.pod, self.sim.gates) == GUARANTEED:
                continue
            over = float(sum(cpu.last_grant[r] - cpu.request[r] for r in rows if r < len(cpu.last_grant)))
            if over <= 0:
                continue
            key = (over, -sp.priority, -sp.i)
            if best is None or key > best[0]:
                best = (key, sp, over)
        return (best[1], best[2]) if best is not None else None
