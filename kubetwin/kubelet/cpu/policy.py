"""The CPU Manager's policy seam (``pkg/kubelet/cm/cpumanager/policy.go``): what the manager asks
of a policy, and the policies by their ``cpuManagerPolicy`` names (:mod:`.policy_none`,
:mod:`.policy_static`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from ...errors import InputError

if TYPE_CHECKING:
    from ...machine.cputopology import CPUTopology
    from ...model.cpuset import CPUSet
    from ...model.kubelet_config import KubeletConfiguration
    from ...model.pod import Container, Pod
    from ..topology.hint import TopologyHint
    from .state import CPUState

#: one provider's hints: resource name -> hints (None: no preference)
Hints = dict[str, "list[TopologyHint] | None"]
AffinityFn = Callable[[str, str], "TopologyHint"]


class Policy(Protocol):
    """``cpumanager.Policy``: hints for the Topology Manager, allocation and release on a state."""

    name: str
    reserved: "CPUSet"

    def validate_state(self, s: "CPUState") -> None: ...

    def initialize_metrics(self, s: "CPUState") -> None: ...

    def get_topology_hints(self, s: "CPUState", pod: "Pod", c: "Container") -> Hints | None: ...

    def get_pod_topology_hints(self, s: "CPUState", pod: "Pod") -> Hints | None: ...

    def allocate(self, s: "CPUState", pod: "Pod", c: "Container") -> None: ...

    def allocate_pod(self, s: "CPUState", pod: "Pod") -> None: ...

    def remove_container(self, s: "CPUState", pod_uid: str, name: str) -> None: ...

    def release_pod_bubble(self, s: "CPUState", pod_uid: str) -> None: ...

    def forget_pod(self, pod_uid: str) -> None: ...

    def fork(self, affinity: AffinityFn) -> "Policy": ...


def new_policy(cfg: "KubeletConfiguration", topo: "CPUTopology", affinity: AffinityFn) -> Any:
    """The policy ``cpuManagerPolicy`` names (``NewManager``'s switch)."""
    from . import policy_none, policy_static

    factories: dict[str, Callable[..., Any]] = {policy_none.POLICY_NAME: policy_none.new_none_policy,
                                                policy_static.POLICY_NAME: policy_static.new_static_policy}
    make = factories.get(cfg.cpu_manager_policy)
    if make is None:
        raise InputError(f'unknown policy: "{cfg.cpu_manager_policy}"', path="cpuManagerPolicy",
                         fix=f"use one of {', '.join(factories)}")
    return make(cfg, topo, affinity)
