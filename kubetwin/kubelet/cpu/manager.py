"""The CPU Manager: its policy (``none`` or ``static``, :mod:`.policy`) and state, as a Topology
Manager hint provider (``pkg/kubelet/cm/cpumanager/cpu_manager.go``)."""

from __future__ import annotations

import copy
from typing import Any

from ...errors import InputError
from ...machine.cputopology import CPUTopology
from ...model.cpuset import CPUSet
from ...model.kubelet_config import KubeletConfiguration
from ...model.pod import Container, Pod
from .policy import AffinityFn, Policy, new_policy
from .policy_static import StaticPolicy, _no_affinity
from .state import CPUState


class CPUManager:
    """Hint provider and allocator for ``cpu``, through its policy."""

    resource = "cpu"

    def __init__(self, cfg: KubeletConfiguration, topo: CPUTopology, affinity: AffinityFn = _no_affinity,
                 state: CPUState | None = None):
        self.topo = topo
        self.gates = cfg.feature_gate_values
        self.policy_name = cfg.cpu_manager_policy
        self.policy: Policy = new_policy(cfg, topo, affinity)
        self.state = state if state is not None else CPUState(self.policy_name)
        if self.state.policy_name != self.policy_name:
            raise InputError(f'could not restore state from checkpoint: configured policy "{self.policy_name}" differs '
                             f'from state checkpoint policy "{self.state.policy_name}"', path="cpu_manager_state.policyName",
                             fix="drain the node and remove the cpu_manager_state file, or use the policy it was written with")
        self.policy.validate_state(self.state)
        self.policy.initialize_metrics(self.state)

    @property
    def static(self) -> StaticPolicy | None:
        """The ``static`` policy (exclusive CPUs, its counters), or None under ``none``."""
        return self.policy if isinstance(self.policy, StaticPolicy) else None

    def fork(self, affinity: AffinityFn) -> "CPUManager":
        """A copy with its own state, asking ``affinity`` (a copied kubelet's Topology Manager)."""
        new = copy.copy(self)
        new.state = self.state.clone()
        new.policy = self.policy.fork(affinity)
        return new

    @property
    def reserved(self) -> CPUSet:
        return self.policy.reserved

    # --- hint provider ---------------------------------------------------------------------
    def get_topology_hints(self, pod: Pod, c: Container) -> Any:
        return self.policy.get_topology_hints(self.state, pod, c)

    def get_pod_topology_hints(self, pod: Pod) -> Any:
        return self.policy.get_pod_topology_hints(self.state, pod)

    def allocate(self, pod: Pod, c: Container) -> None:
        self.policy.allocate(self.state, pod, c)

    def allocate_pod(self, pod: Pod) -> None:
        self.policy.allocate_pod(self.state, pod)

    def remove_pod(self, pod_uid: str) -> None:
        for name in list(self.state.entries.get(pod_uid, {})):
            self.policy.remove_container(self.state, pod_uid, name)
        if pod_uid in self.state.pod_entries and pod_uid not in self.state.entries:
            self.policy.release_pod_bubble(self.state, pod_uid)
        self.policy.forget_pod(pod_uid)

    # --- what the container sees -----------------------------------------------------------
    def exclusive_cpus(self, pod_uid: str, name: str) -> CPUSet | None:
        return self.state.get(pod_uid, name) if self.static is not None else None

    def cpuset_for(self, pod_uid: str, name: str) -> CPUSet | None:
        """The container's cpuset.cpus: its assignment, else the shared pool (``None`` under policy none)."""
        if self.static is None:
            return None
        return self.state.cpuset_or_default(pod_uid, name)
