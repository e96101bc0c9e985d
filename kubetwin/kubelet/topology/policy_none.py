"""The ``none`` Topology Manager policy (``pkg/kubelet/cm/topologymanager/policy_none.go``):
no alignment; every pod is admitted with no NUMA affinity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .hint import TopologyHint
from .policy import NONE, Policy, ProviderHints


@dataclass(frozen=True)
class NonePolicy(Policy):
    name = NONE

    def merge(self, providers: Sequence[ProviderHints | None]) -> tuple[TopologyHint, bool]:
        return TopologyHint(None, True), True
