"""``SimResult.node_cpu``, built when read: the CPU figures of a run kept compact.

At 50,000 pods the run's CPU figures as JSON-shaped dicts (per container ``cpu.max``, ``cpu.stat``,
``cpu.pressure``; per node a list per sample) take tens of MB that most runs never read (a
summary reads only the throttling totals). :class:`CPUResult` keeps what the accounting already
holds — each container's :class:`~kubetwin.sim.cpu.ContainerCPU` tuple, the per-node samples as
numpy arrays — and answers the mapping ``{"series", "nodes", "pods"}`` of
:meth:`kubetwin.sim.cpu.NodeCPU.result` on demand, with the same values in the same order
(:meth:`CPUResult.to_json` is what ``SimResult.to_json`` writes). Nothing read is cached: a
report that reads ``pods`` once pays for it once, and the run does not keep the dicts.

Not an upstream module: kubetwin's own result container (the figures are ``cgroup v2``'s
``cpu.stat`` / ``cpu.pressure``, :mod:`kubetwin.sim.cpu`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .cpu import ContainerCPU

#: one node's samples: (time, the nodes shown, cores used, some avg10, containers throttled)
NodeStep = tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: one pod: its key, its containers' figures, its [time, throttled, some avg10, cores] samples
PodCPU = tuple[str, list["ContainerCPU"], list[list[float]]]

_KEYS = ("series", "nodes", "pods")


def node_series(node_steps: list[NodeStep], peak_node: np.ndarray) -> dict[int, tuple[float, list[list[float]]]]:
    """Per node that was throttled or stalled at some sample (by index, in order): its highest
    some avg10 and its [time, cores used, some avg10, containers throttled] per such sample."""
    if not node_steps:
        return {}
    nodes = np.concatenate([k for _, k, _, _, _ in node_steps])
    order = np.argsort(nodes, kind="stable")          # by node, each node's samples in time order
    times = np.concatenate([np.full(len(k), t) for t, k, _, _, _ in node_steps])[order].tolist()
    used = np.concatenate([u for _, _, u, _, _ in node_steps])[order].tolist()
    psi = np.concatenate([p for _, _, _, p, _ in node_steps])[order].tolist()
    thr = np.concatenate([h for _, _, _, _, h in node_steps])[order].astype(np.int64).tolist()
    nodes = nodes[order]
    starts = np.flatnonzero(np.r_[True, nodes[1:] != nodes[:-1]]).tolist()
    peaks = peak_node[nodes[starts]].tolist()
    out = {}
    for k, (a, b) in enumerate(zip(starts, starts[1:] + [len(order)])):
        out[int(nodes[a])] = (peaks[k], [[times[j], used[j], psi[j], thr[j]] for j in range(a, b)])
    return out


class CPUResult(Mapping[str, Any]):
    """``{"series": [...], "nodes": {NAME: {...}}, "pods": {KEY: {...}}}``, each part built when read."""

    __slots__ = ("series", "_names", "_node_steps", "_peak_node", "_pods")

    def __init__(self, series: list[dict[str, Any]], names: list[str], node_steps: list[NodeStep],
                 peak_node: np.ndarray, pods: list[PodCPU]):
        #: cluster figures per sample (small: one dict a sample)
        self.series = series
        self._names = names
        self._node_steps = node_steps
        self._peak_node = peak_node
        self._pods = pods

    # --- the mapping ---------------------------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        if key == "series":
            return self.series
        if key == "nodes":
            return self.nodes()
        if key == "pods":
            return self.pods()
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(_KEYS)

    def __len__(self) -> int:
        return len(_KEYS)

    # --- the parts -----------------------------------------------------------------------------
    def nodes(self) -> dict[str, dict[str, Any]]:
        names = self._names
        return {names[i]: {"peakCpuSomeAvg10": peak, "series": s}
                for i, (peak, s) in node_series(self._node_steps, self._peak_node).items()}

    def pods(self) -> dict[str, dict[str, Any]]:
        return {key: {"containers": [c.to_json() for c in figs], "series": series} for key, figs, series in self._pods}

    def pod_containers(self) -> Iterator[list["ContainerCPU"]]:
        """Each pod's containers' figures, as tuples (what the run's summary reads)."""
        for _, figs, _ in self._pods:
            yield figs

    def to_json(self) -> dict[str, Any]:
        """The plain data (``SimResult.to_json``'s ``cpu``)."""
        return {"series": list(self.series), "nodes": self.nodes(), "pods": self.pods()}


__all__ = ["CPUResult", "NodeStep", "PodCPU", "node_series"]
