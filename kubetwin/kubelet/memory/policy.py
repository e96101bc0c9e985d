"""The Memory Manager's policy seam (``pkg/kubelet/cm/memorymanager/policy.go``): what the manager
asks of a policy, and the policies by their ``memoryManagerPolicy`` names (:mod:`.policy_none`,
:mod:`.policy_static`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from ...errors import InputError

if TYPE_CHECKING:
    from ...machine.model import Machine
    from ...model.kubelet_config import KubeletConfiguration
    from ...model.pod import Container, Pod
    from ..topology.hint import TopologyHint
    from .state import MemoryState

AffinityFn = Callable[[str, str], "TopologyHint"]


class Policy(Protocol):
    """``memorymanager.Policy``: hints for the Topology Manager, allocation and release."""

    name: str

    def get_topology_hints(self, pod: "Pod", c: "Container") -> Any: ...

    def get_pod_topology_hints(self, pod: "Pod") -> Any: ...

    def allocate(self, pod: "Pod", c: "Container") -> None: ...

    def allocate_pod(self, pod: "Pod") -> None: ...

    def remove_pod(self, pod_uid: str) -> None: ...

    def numa_nodes_for(self, pod_uid: str, name: str) -> list[int] | None: ...

    def fork(self, affinity: AffinityFn) -> "Policy": ...


def new_policy(cfg: KubeletConfiguration, machine: Machine, affinity: AffinityFn,
               state: MemoryState | None = None) -> Policy:
    """The policy ``memoryManagerPolicy`` names (``NewManager``'s switch)."""
    from . import policy_none, policy_static

    factories: dict[str, Callable[..., Any]] = {policy_none.POLICY_NAME: policy_none.NonePolicy,
                                                policy_static.POLICY_NAME: policy_static.StaticMemoryPolicy}
    make = factories.get(cfg.memory_manager_policy)
    if make is None:
        raise InputError(f'unknown policy: "{cfg.memory_manager_policy}"', path="memoryManagerPolicy",
                         fix=f"use one of {', '.join(factories)}")
    return make(cfg, machine, affinity, state)
