"""Memory and I/O pressure over time: per container, pod and node, from stall shares at each sample.

:mod:`.memory_psi` and :mod:`.io_psi` say what share of each interval a container spent stalled
(``some``, ``full``); this module keeps the kernel's averages of those shares
(:class:`kubetwin.sim.psi.PSIAverages`, ``kernel/sched/psi.c``) for every container of a node,
aggregates them the way :mod:`.cpu` does (a pod reports its worst container, a node its worst pod
— a lower bound of the pod / root cgroup's own figure, which counts the time *any* task stalls —
and the node's ``full`` line is the node-wide share the caller passes), and keeps the series the
results and the report show.

A node is tracked from the first sample at which something on it stalls (before that every
average is zero), so nodes that never stall cost nothing.

Not an upstream module: kubetwin's bookkeeping around the kernel's averages; the Summary shape is
``k8s.io/kubelet/pkg/apis/stats/v1alpha1`` (``PSIStats`` of ``MemoryStats`` / ``IOStats``, filled
by ``pkg/kubelet/stats`` while ``KubeletPSI`` is on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from .psi import PSIAverages, PSILine

#: the results carry time series for this many pods, the worst (highest peak some avg10) first
MAX_POD_SERIES = 200
#: a node counts as "under pressure" in the cluster series from this some avg10 (%)
PRESSURE_AVG10 = 10.0


@dataclass(frozen=True, slots=True)
class Stall:
    """One container's stall shares over the interval that ends at a sample (0..1 each)."""

    pod: str          # namespace/name
    uid: str
    container: str
    some: float
    full: float
    why: str = ""     # what the model derived the stall from (for the results)


class _NodeRows:
    """One node's containers as rows of a :class:`PSIAverages`."""

    __slots__ = ("psi", "rows", "free", "last", "series", "peak", "node_full", "keys", "why")

    def __init__(self, last: float):
        self.psi = PSIAverages(8)
        self.rows: dict[tuple[str, str], int] = {}
        self.keys: dict[int, tuple[str, str, str]] = {}    # row -> (pod key, uid, container)
        self.why: dict[int, str] = {}
        self.free: list[int] = []
        self.last = last
        self.series: list[tuple[float, float, float, int]] = []
        self.peak = 0.0
        #: the node-wide full line: its own averages (row 0 of a one-row PSIAverages)
        self.node_full = PSIAverages(1)

    def row(self, key: tuple[str, str], pod: str) -> int:
        r = self.rows.get(key)
        if r is not None:
            return r
        if self.free:
            r = self.free.pop()
        else:
            r = len(self.rows)
            self.psi.grow(r + 1)
        self.psi.reset(np.array([r], dtype=np.int64))
        self.rows[key] = r
        self.keys[r] = (pod, key[0], key[1])
        return r


class NodeStalls:
    """One resource's (``memory`` or ``io``) pressure on every node of a simulation."""

    def __init__(self, resource: str, interval: float):
        self.resource = resource
        self.interval = interval
        self.nodes: dict[str, _NodeRows] = {}
        self.series: list[dict[str, float]] = []
        self.pod_series: dict[str, list[tuple[float, float, float]]] = {}
        self.pod_peak: dict[str, float] = {}
        #: per pod key: its containers' last figures (kept when the pod goes)
        self.containers: dict[str, dict[str, dict[str, Any]]] = {}
        self._sample: dict[str, float] = {}

    # --- one sample ------------------------------------------------------------------------------
    def step(self, node: str, t: float, stalls: Iterable[Stall], node_full: float = 0.0) -> None:
        """The interval up to ``t`` on ``node``: ``stalls`` lists the running containers that
        stalled (the others ran free); ``node_full`` is the node-wide full share."""
        stalls = [s for s in stalls if s.some > 0 or s.full > 0]
        n = self.nodes.get(node)
        if n is None:
            if not stalls and node_full <= 0:
                return
            n = self.nodes[node] = _NodeRows(t - self.interval)
        dt = t - n.last
        if dt <= 0:
            return
        n.last = t
        for s in stalls:
            r = n.row((s.uid, s.container), s.pod)
            if s.why:
                n.why[r] = s.why
        size = n.psi.avg.shape[1]
        some = np.zeros(size)
        full = np.zeros(size)
        for s in stalls:
            r = n.rows[(s.uid, s.container)]
            some[r] = s.some
            full[r] = s.full
        n.psi.advance(some, full, dt * 1e9)
        n.node_full.advance(np.array([node_full]), np.array([node_full]), dt * 1e9)
        # the figures of this sample
        avg10 = n.psi.avg10(0, size)
        full10 = n.psi.avg10(1, size)
        node_some = float(avg10.max()) if size else 0.0
        node_full10 = float(n.node_full.avg10(1, 1)[0])
        stalled = len(stalls)
        n.series.append((t, node_some, node_full10, stalled))
        n.peak = max(n.peak, node_some)
        worst: dict[str, tuple[float, float]] = {}
        for r, (pod, _, _) in n.keys.items():
            a, b = float(avg10[r]), float(full10[r])
            if a > 0 or b > 0:
                w = worst.get(pod, (0.0, 0.0))
                worst[pod] = (max(w[0], a), max(w[1], b))
        for pod, (a, b) in worst.items():
            self.pod_series.setdefault(pod, []).append((t, a, b))
            self.pod_peak[pod] = max(self.pod_peak.get(pod, 0.0), a)
        self._sample[node] = node_some
        self._sample.setdefault("\0full", 0.0)
        self._sample["\0full"] = max(self._sample["\0full"], node_full10)

    def forget(self, node: str, uid: str) -> None:
        """The pod left the node: its rows keep their last figures in the results, then are reused."""
        n = self.nodes.get(node)
        if n is None:
            return
        for key in [k for k in n.rows if k[0] == uid]:
            r = n.rows.pop(key)
            pod, _, container = n.keys[r]
            self.containers.setdefault(pod, {})[container] = self._figures(n, r)
            del n.keys[r]
            n.why.pop(r, None)
            n.free.append(r)

    def end_sample(self, t: float) -> None:
        """One cluster-wide record per sample (after every node stepped)."""
        full = self._sample.pop("\0full", 0.0)
        vals = list(self._sample.values())
        r = self.resource
        cap = r.capitalize() if r != "io" else "IO"
        self.series.append({"time": t, f"nodesWith{cap}Pressure": sum(v >= PRESSURE_AVG10 for v in vals),
                            f"maxNode{cap}SomeAvg10": max(vals, default=0.0), f"maxNode{cap}FullAvg10": full})
        self._sample = {}

    # --- figures ---------------------------------------------------------------------------------
    def _figures(self, n: _NodeRows, r: int) -> dict[str, Any]:
        some, full = n.psi.line(0, r), n.psi.line(1, r)
        return {"container": n.keys[r][2], "why": n.why.get(r, ""),
                f"{self.resource}.pressure": {"some": _line(some), "full": _line(full)}}

    def lines(self, node: str, uid: str, container: str | None = None) -> tuple[PSILine, PSILine] | None:
        """(some, full) of a container, or of a pod (its worst container): None if it never stalled."""
        n = self.nodes.get(node)
        if n is None:
            return None
        rows = [r for (u, c), r in n.rows.items() if u == uid and (container is None or c == container)]
        if not rows:
            return None
        pick = [max((n.psi.line(k, r) for r in rows), key=lambda ln: (ln.avg10, ln.total_us)) for k in (0, 1)]
        return pick[0], pick[1]

    def node_lines(self, node: str) -> tuple[PSILine, PSILine] | None:
        """(some, full) of the node: its worst container's some, the node-wide full."""
        n = self.nodes.get(node)
        if n is None:
            return None
        rows = list(n.rows.values())
        some = max((n.psi.line(0, r) for r in rows), key=lambda ln: (ln.avg10, ln.total_us),
                   default=PSILine(0.0, 0.0, 0.0, 0))
        return some, n.node_full.line(1, 0)

    def result(self, limit: int = MAX_POD_SERIES) -> dict[str, Any]:
        """Plain data for the results: cluster series, per-node series and peaks, per pod its
        containers' ``*.pressure`` figures and (for the ``limit`` worst pods) its series."""
        containers = {p: dict(v) for p, v in self.containers.items()}
        for n in self.nodes.values():
            for r, (pod, _, c) in n.keys.items():
                containers.setdefault(pod, {})[c] = self._figures(n, r)
        keep = set(sorted(self.pod_peak, key=lambda p: (-self.pod_peak[p], p))[:limit])
        return {
            "series": list(self.series),
            "nodes": {name: {"peakSomeAvg10": n.peak, "series": [list(x) for x in n.series]}
                      for name, n in sorted(self.nodes.items())},
            "pods": {p: {"peakSomeAvg10": self.pod_peak.get(p, 0.0), "containers": list(cs.values()),
                         "series": [list(x) for x in self.pod_series.get(p, [])] if p in keep else []}
                     for p, cs in sorted(containers.items())},
        }


def _line(ln: PSILine) -> dict[str, Any]:
    return {"avg10": ln.avg10, "avg60": ln.avg60, "avg300": ln.avg300, "total": ln.total_us}


def psi_stats(lines: tuple[PSILine, PSILine] | None) -> Any:
    """The Summary API's ``PSIStats`` (zeros for a group that never stalled, as cAdvisor reports it)."""
    from ..model.summary import PSIData, PSIStats

    def data(ln: PSILine | None) -> PSIData:
        if ln is None:
            return PSIData(total=0, avg10=0.0, avg60=0.0, avg300=0.0)
        return PSIData(total=ln.total_us, avg10=ln.avg10, avg60=ln.avg60, avg300=ln.avg300)

    some, full = lines if lines is not None else (None, None)
    return PSIStats(some=data(some), full=data(full))


def summary_figures(stalls: Mapping[str, Any], resource: str) -> dict[str, Any]:
    """The run's figures for ``SimResult.summary()``: the worst pressure seen on a node and a pod."""
    cap = resource.capitalize() if resource != "io" else "IO"
    series = stalls["series"]
    return {f"peakNode{cap}SomeAvg10": max((s[f"maxNode{cap}SomeAvg10"] for s in series), default=0.0),
            f"peakNode{cap}FullAvg10": max((s[f"maxNode{cap}FullAvg10"] for s in series), default=0.0),
            f"peakPod{cap}SomeAvg10": max((p["peakSomeAvg10"] for p in stalls["pods"].values()), default=0.0),
            "stalledPods": sum(1 for p in stalls["pods"].values() if p["peakSomeAvg10"] > 0),
            f"peakNodesWith{cap}Pressure": max((s[f"nodesWith{cap}Pressure"] for s in series), default=0)}
