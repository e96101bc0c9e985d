"""The Memory Manager's ``None`` policy (``pkg/kubelet/cm/memorymanager/policy_none.go``): no
hints, no NUMA pinning."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...machine.model import Machine
    from ...model.kubelet_config import KubeletConfiguration
    from ...model.pod import Container, Pod
    from .policy import AffinityFn
    from .state import MemoryState

POLICY_NAME = "None"


class NonePolicy:
    name = POLICY_NAME

    def __init__(self, cfg: KubeletConfiguration | None = None, machine: Machine | None = None,
                 affinity: AffinityFn | None = None, state: MemoryState | None = None):
        pass

    def get_topology_hints(self, pod: "Pod", c: "Container") -> None:
        return None

    def get_pod_topology_hints(self, pod: "Pod") -> None:
        return None

    def allocate(self, pod: "Pod", c: "Container") -> None:
        pass

    def allocate_pod(self, pod: "Pod") -> None:
        pass

    def remove_pod(self, pod_uid: str) -> None:
        pass

    def numa_nodes_for(self, pod_uid: str, name: str) -> list[int] | None:
        return None

    def fork(self, affinity: AffinityFn) -> NonePolicy:
        return NonePolicy()
