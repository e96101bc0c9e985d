"""The CPU Manager's ``none`` policy (``pkg/kubelet/cm/cpumanager/policy_none.go``): every
container runs in the shared pool; no hints, no allocation, no options."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import InputError
from ...model.cpuset import EMPTY, CPUSet

if TYPE_CHECKING:
    from ...machine.cputopology import CPUTopology
    from ...model.kubelet_config import KubeletConfiguration
    from ...model.pod import Container, Pod
    from .policy import AffinityFn
    from .state import CPUState

POLICY_NAME = "none"


class NonePolicy:
    name = POLICY_NAME
    reserved: CPUSet = EMPTY

    def validate_state(self, s: "CPUState") -> None:
        pass

    def initialize_metrics(self, s: "CPUState") -> None:
        pass

    def get_topology_hints(self, s: "CPUState", pod: "Pod", c: "Container") -> None:
        return None

    def get_pod_topology_hints(self, s: "CPUState", pod: "Pod") -> None:
        return None

    def allocate(self, s: "CPUState", pod: "Pod", c: "Container") -> None:
        pass

    def allocate_pod(self, s: "CPUState", pod: "Pod") -> None:
        pass

    def remove_container(self, s: "CPUState", pod_uid: str, name: str) -> None:
        pass

    def release_pod_bubble(self, s: "CPUState", pod_uid: str) -> None:
        pass

    def forget_pod(self, pod_uid: str) -> None:
        pass

    def fork(self, affinity: AffinityFn) -> NonePolicy:
        return NonePolicy()


def new_none_policy(cfg: KubeletConfiguration, topo: CPUTopology, affinity: AffinityFn) -> NonePolicy:
    """``NewNonePolicy``: options are refused (``Start``)."""
    if cfg.cpu_manager_policy_options:
        raise InputError(f"None policy: received unsupported options={dict(cfg.cpu_manager_policy_options)}",
                         path="cpuManagerPolicyOptions")
    return NonePolicy()
