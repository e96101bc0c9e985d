"""The ``single-numa-node`` Topology Manager policy
(``pkg/kubelet/cm/topologymanager/policy_single_numa_node.go``): only preferred hints on one NUMA
node (or with no preference) are merged, always with the narrowest fitter; a merge over every
node means no affinity; a result that is not preferred is refused."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .hint import TopologyHint
from .policy import SINGLE_NUMA_NODE, Policy


@dataclass(frozen=True)
class SingleNumaNodePolicy(Policy):
    name = SINGLE_NUMA_NODE

    def fitter(self) -> Callable[[int, int], int]:
        return self.numa.narrowest

    def considered(self, lists: list[list[TopologyHint]]) -> list[list[TopologyHint]]:
        """``filterSingleNumaHints``: preferred hints with no affinity or a single NUMA node."""
        return [[h for h in lst if h.preferred and (h.affinity is None or h.affinity.bit_count() == 1)]
                for lst in lists]

    def admit(self, best: TopologyHint) -> tuple[TopologyHint, bool]:
        if best.affinity == self.numa.default_affinity:
            best = TopologyHint(None, best.preferred)
        return best, best.preferred
