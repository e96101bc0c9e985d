"""The Memory Manager as a Topology Manager hint provider; policy ``None`` does nothing."""

from __future__ import annotations

import copy
from typing import Any, Callable

from ...machine.model import Machine
from ...model.kubelet_config import KubeletConfiguration
from ...model.pod import Container, Pod
from ..topology.hint import TopologyHint


class MemoryManager:
    resource = "memory"

    def __init__(self, cfg: KubeletConfiguration, machine: Machine,
                 affinity: Callable[[str, str], TopologyHint], state: Any = None):
        self.policy_name = cfg.memory_manager_policy
        self.policy = None
        if self.policy_name == "Static":
            from .policy_static import StaticMemoryPolicy

            self.policy = StaticMemoryPolicy(cfg, machine, affinity, state)

    def fork(self, affinity: Callable[[str, str], TopologyHint]) -> "MemoryManager":
        """A copy with its own state, asking ``affinity`` (a copied kubelet's Topology Manager)."""
        new = copy.copy(self)
        if self.policy is not None:
            new.policy = self.policy.fork(affinity)
        return new

    def get_topology_hints(self, pod: Pod, c: Container):
        return self.policy.get_topology_hints(pod, c) if self.policy else None

    def get_pod_topology_hints(self, pod: Pod):
        return self.policy.get_pod_topology_hints(pod) if self.policy else None

    def allocate(self, pod: Pod, c: Container) -> None:
        if self.policy:
            self.policy.allocate(pod, c)

    def allocate_pod(self, pod: Pod) -> None:
        if self.policy:
            self.policy.allocate_pod(pod)

    def remove_pod(self, pod_uid: str) -> None:
        if self.policy:
            self.policy.remove_pod(pod_uid)

    def numa_nodes_for(self, pod_uid: str, name: str) -> list[int] | None:
        """The container's cpuset.mems (``None``: not pinned)."""
        return self.policy.numa_nodes_for(pod_uid, name) if self.policy else None
