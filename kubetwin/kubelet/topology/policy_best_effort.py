"""The ``best-effort`` Topology Manager policy (``pkg/kubelet/cm/topologymanager/policy_best_effort.go``):
the best merged hint is stored, and the pod admitted whatever it is."""

from __future__ import annotations

from dataclasses import dataclass

from .hint import TopologyHint
from .policy import BEST_EFFORT, Policy


@dataclass(frozen=True)
class BestEffortPolicy(Policy):
    name = BEST_EFFORT

    def admit(self, best: TopologyHint) -> tuple[TopologyHint, bool]:
        return best, True
