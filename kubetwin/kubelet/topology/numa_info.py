"""NUMA node ids and distances, and the two ways to pick the fitter of two masks (``numa_info.go``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .bitmask import bits_of, mask_of


@dataclass(frozen=True)
class NUMAInfo:
    nodes: tuple[int, ...]
    #: ``distances[a][b]``; empty when the machine does not report distances.
    distances: dict[int, dict[int, int]] = field(default_factory=dict, compare=False)

    @property
    def default_affinity(self) -> int:
        """All NUMA nodes (``DefaultAffinityMask``)."""
        return mask_of(self.nodes)

    def narrowest(self, a: int, b: int) -> int:
        ca, cb = a.bit_count(), b.bit_count()
        if ca != cb:
            return a if ca < cb else b
        return a if a < b else b

    def average_distance(self, mask: int) -> float:
        nodes = bits_of(mask)
        if not nodes:
            return 0.0
        total = 0
        for x in nodes:
            row = self.distances.get(x, {})
            for y in nodes:
                total += row.get(y, 0)
        return total / (len(nodes) * len(nodes))

    def closest(self, a: int, b: int) -> int:
        """Fewer nodes, then the smaller average distance, then the numerically smaller mask."""
        if a.bit_count() != b.bit_count():
            return self.narrowest(a, b)
        da, db = self.average_distance(a), self.average_distance(b)
        if da == db:
            return a if a < b else b
        return a if da < db else b
