"""The Memory Manager as a Topology Manager hint provider, through its policy (``None`` or
``Static``, :mod:`.policy`) — ``pkg/kubelet/cm/memorymanager/memory_manager.go``."""

from __future__ import annotations

import copy
from typing import Any, Callable

from ...machine.model import Machine
from ...model.kubelet_config import KubeletConfiguration
from ...model.pod import Container, Pod
from ..topology.hint import TopologyHint
from .policy import Policy, new_policy
from .policy_static import StaticMemoryPolicy
from .state import MemoryState


class MemoryManager:
    resource = "memory"

    def __init__(self, cfg: KubeletConfiguration, machine: Machine,
                 affinity: Callable[[str, str], TopologyHint], state: MemoryState | None = None):
        self.policy_name = cfg.memory_manager_policy
        self.policy: Policy = new_policy(cfg, machine, affinity, state)

    @property
    def static(self) -> StaticMemoryPolicy | None:
        """The ``Static`` policy (its state, its counters), or None under ``None``."""
        return self.policy if isinstance(self.policy, StaticMemoryPolicy) else None

    def fork(self, affinity: Callable[[str, str], TopologyHint]) -> "MemoryManager":
        """A copy with its own state, asking ``affinity`` (a copied kubelet's Topology Manager)."""
        new = copy.copy(self)
        new.policy = self.policy.fork(affinity)
        return new

    def get_topology_hints(self, pod: Pod, c: Container) -> Any:
        return self.policy.get_topology_hints(pod, c)

    def get_pod_topology_hints(self, pod: Pod) -> Any:
        return self.policy.get_pod_topology_hints(pod)

    def allocate(self, pod: Pod, c: Container) -> None:
        self.policy.allocate(pod, c)

    def allocate_pod(self, pod: Pod) -> None:
        self.policy.allocate_pod(pod)

    def remove_pod(self, pod_uid: str) -> None:
        self.policy.remove_pod(pod_uid)

    def numa_nodes_for(self, pod_uid: str, name: str) -> list[int] | None:
        """The container's cpuset.mems (``None``: not pinned)."""
        return self.policy.numa_nodes_for(pod_uid, name)
