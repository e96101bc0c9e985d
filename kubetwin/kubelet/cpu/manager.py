"""The CPU Manager: policy ``none`` or ``static`` plus its state, as a Topology Manager hint provider."""

from __future__ import annotations

import copy

from ...errors import InputError
from ...machine.cputopology import CPUTopology
from ...model.cpuset import EMPTY, CPUSet
from ...model.kubelet_config import KubeletConfiguration
from ...model.pod import Container, Pod
from .options import StaticPolicyOptions, check_policy_options_against_machine, parse_static_policy_options
from .policy_static import AffinityFn, StaticPolicy, _no_affinity, choose_reserved_cpus
from .state import CPUState


def _num_reserved_cpus(cfg: KubeletConfiguration) -> int:
    """ceil(kubeReserved.cpu + systemReserved.cpu) — reservedSystemCPUs replaces both."""
    if not cfg.reserved_system_cpus.is_empty():
        return cfg.reserved_system_cpus.size()
    milli = 0
    found = False
    for res in (cfg.kube_reserved, cfg.system_reserved):
        q = res.get("cpu")
        if q is not None:
            milli += q.milli_value()
            found = True
    if not found:
        raise InputError("[cpumanager] unable to determine reserved CPU resources for static policy",
                         path="kubeReserved.cpu", fix="set kubeReserved.cpu, systemReserved.cpu or reservedSystemCPUs")
    if milli == 0:
        raise InputError("[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater "
                         "than zero", path="kubeReserved.cpu")
    return (milli + 999) // 1000


class CPUManager:
    """Hint provider and allocator for ``cpu``; ``policy is None`` means the ``none`` policy."""

    resource = "cpu"

    def __init__(self, cfg: KubeletConfiguration, topo: CPUTopology, affinity: AffinityFn = _no_affinity,
                 state: CPUState | None = None):
        self.topo = topo
        self.gates = cfg.feature_gate_values
        self.policy_name = cfg.cpu_manager_policy
        self.policy: StaticPolicy | None = None
        if self.policy_name == "static":
            opts = parse_static_policy_options(cfg.cpu_manager_policy_options, self.gates)
            check_policy_options_against_machine(opts, topo.num_sockets, topo.num_numa_nodes,
                                                 cfg.topology_manager_policy)
            probe = StaticPolicy(topo, opts, EMPTY, self.gates, affinity)
            reserved = choose_reserved_cpus(topo, probe.strategy, cfg.reserved_system_cpus, _num_reserved_cpus(cfg))
            self.policy = StaticPolicy(topo, opts, reserved, self.gates, affinity)
        elif cfg.cpu_manager_policy_options:
            raise InputError(f"None policy: received unsupported options={dict(cfg.cpu_manager_policy_options)}",
                             path="cpuManagerPolicyOptions")
        self.state = state if state is not None else CPUState(self.policy_name)
        if self.state.policy_name != self.policy_name:
            raise InputError(f'could not restore state from checkpoint: configured policy "{self.policy_name}" differs '
                             f'from state checkpoint policy "{self.state.policy_name}"', path="cpu_manager_state.policyName",
                             fix="drain the node and remove the cpu_manager_state file, or use the policy it was written with")
        if self.policy is not None:
            self.policy.validate_state(self.state)
            self.policy.initialize_metrics(self.state)

    def fork(self, affinity: AffinityFn) -> "CPUManager":
        """A copy with its own state, asking ``affinity`` (a copied kubelet's Topology Manager)."""
        new = copy.copy(self)
        new.state = self.state.clone()
        if self.policy is not None:
            new.policy = self.policy.fork(affinity)
        return new

    @property
    def reserved(self) -> CPUSet:
        return self.policy.reserved if self.policy else EMPTY

    # --- hint provider ---------------------------------------------------------------------
    def get_topology_hints(self, pod: Pod, c: Container):
        return self.policy.get_topology_hints(self.state, pod, c) if self.policy else None

    def get_pod_topology_hints(self, pod: Pod):
        return self.policy.get_pod_topology_hints(self.state, pod) if self.policy else None

    def allocate(self, pod: Pod, c: Container) -> None:
        if self.policy:
            self.policy.allocate(self.state, pod, c)

    def allocate_pod(self, pod: Pod) -> None:
        if self.policy:
            self.policy.allocate_pod(self.state, pod)

    def remove_pod(self, pod_uid: str) -> None:
        if not self.policy:
            return
        for name in list(self.state.entries.get(pod_uid, {})):
            self.policy.remove_container(self.state, pod_uid, name)
        if pod_uid in self.state.pod_entries and pod_uid not in self.state.entries:
            self.policy.release_pod_bubble(self.state, pod_uid)
        self.policy.cpus_to_reuse.pop(pod_uid, None)

    # --- what the container sees -----------------------------------------------------------
    def exclusive_cpus(self, pod_uid: str, name: str) -> CPUSet | None:
        return self.state.get(pod_uid, name) if self.policy else None

    def cpuset_for(self, pod_uid: str, name: str) -> CPUSet | None:
        """The container's cpuset.cpus: its assignment, else the shared pool (``None`` under policy none)."""
        if not self.policy:
            return None
        return self.state.cpuset_or_default(pod_uid, name)
