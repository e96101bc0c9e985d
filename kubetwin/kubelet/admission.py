"""One node's admission pipeline, in the kubelet's order (``pkg/kubelet/kubelet.go``).

For each pod, in order: the Topology Manager's admit handler (which asks the CPU, memory and
device managers for hints and allocates), then the predicate admit handler (node allocatable:
``OutOfpods``, ``OutOfcpu``, ``OutOfmemory``, extended resources). A pod rejected after its
resources were allocated gives them back at once — the kubelet does it at the next stale-state
sweep, before anything else is allocated, so nothing observable differs.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from .. import tracing as _tracing
from ..errors import InputError
from ..machine.model import Machine
from ..model.kubelet_config import KubeletConfiguration
from ..model.pod import Container, Pod, is_extended_resource
from ..model.quantity import Quantity, parse_quantity
from ..model.resources import pod_limits, pod_requests
from .admission_errors import AdmissionError, KubeletHang, TopologyAffinityError, admit_result
from .cpu.manager import CPUManager
from .cpu.state import CPUState
from .topology.manager import HintProvider, TopologyManager
from .topology.numa_info import NUMAInfo
from .topology.policy import new_policy, parse_options

if TYPE_CHECKING:
    from .cgroups import CgroupSettings
    from .devices import DeviceCheckpointData, DeviceInventory
    from .memory.state import MemoryState

#: kubetwin's word (not a Kubernetes reason) for a pod whose admission never returns
HANG_REASON = "KubeletHang"


@dataclass(frozen=True)
class PodDecision:
    pod: Pod
    admitted: bool
    reason: str = ""
    message: str = ""
    #: the kubelet never returns from admitting this pod (an upstream endless loop): no verdict
    #: reaches the API server, and the node admits nothing after it (``reason`` is ``KubeletHang``)
    hang: bool = False
    #: known upstream bugs that decided this pod's allocation (docs/upstream-bugs.md)
    upstream_bugs: tuple[str, ...] = ()
    #: for a TopologyAffinityError: what was asked and what each NUMA node could give (not part
    #: of the kubelet's message; see ``admission_why``)
    explanation: str = ""


def node_capacity(machine: Machine, cfg: KubeletConfiguration) -> dict[str, Quantity]:
    """What the kubelet reports as ``status.capacity`` from MachineInfo (cpu, memory, hugepages,
    pods: ``maxPods``, or ``min(podsPerCore × num_cores, maxPods)`` when ``podsPerCore`` is set —
    ``nodestatus.MachineInfo``)."""
    pods = cfg.max_pods
    if cfg.pods_per_core > 0:
        pods = min(machine.num_cores * cfg.pods_per_core, cfg.max_pods)
    cap: dict[str, Quantity] = {
        "cpu": parse_quantity(str(machine.num_cores)),
        "memory": parse_quantity(str(machine.memory_capacity)),
        "pods": parse_quantity(str(pods)),
    }
    sizes: dict[int, int] = {}
    for node in machine.nodes:
        for hp in node.hugepages:
            sizes[hp.page_size] = sizes.get(hp.page_size, 0) + hp.bytes
    if not sizes:
        for hp in machine.hugepages:
            sizes[hp.page_size] = sizes.get(hp.page_size, 0) + hp.bytes
    for kib, total in sizes.items():
        cap[f"hugepages-{_page_name(kib)}"] = parse_quantity(str(total))
    return cap


def _page_name(kib: int) -> str:
    size = kib * 1024
    for unit, mul in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if size % mul == 0:
            return f"{size // mul}{unit}"
    return str(size)


def check_reserved_cpus(machine: Machine, cfg: KubeletConfiguration) -> None:
    """``getReservedCPUs`` (``cmd/kubelet/app/server.go``): the kubelet refuses to start when
    ``reservedSystemCPUs`` names a CPU the machine does not have."""
    reserved = cfg.reserved_system_cpus
    if reserved and not reserved.is_subset_of(machine.cpus):
        raise InputError(f"reserved-cpus: {reserved} is not a subset of online-cpus: {machine.cpus}",
                         path="reservedSystemCPUs", fix=f"name CPUs of this machine ({machine.cpus})")


def effective_config(cfg: KubeletConfiguration) -> KubeletConfiguration:
    """``reservedSystemCPUs`` replaces kube/system-reserved cpu (``cmd/kubelet/app/server.go``)."""
    if cfg.reserved_system_cpus.is_empty():
        return cfg
    kube = dict(cfg.kube_reserved)
    kube["cpu"] = parse_quantity(str(cfg.reserved_system_cpus.size()))
    system = {k: v for k, v in cfg.system_reserved.items() if k != "cpu"}
    return msgspec.structs.replace(cfg, kube_reserved=kube, system_reserved=system)


@dataclass
class NodeAdmission:
    """The kubelet of one node: managers, their state, and the pods admitted so far."""

    machine: Machine
    config: KubeletConfiguration
    cpu_state: CPUState | None = None
    memory_state: MemoryState | None = None
    explain: bool = False
    devices: DeviceInventory | None = None
    device_state: DeviceCheckpointData | None = None  # from kubelet_internal_checkpoint
    #: explain TopologyAffinityErrors (``PodDecision.explanation``); off where nobody reads it
    explain_rejections: bool = False
    admitted: list[Pod] = field(default_factory=list)
    #: the node's name, for traces (``--trace``); the kubelet's own decisions never read it
    node_name: str = ""
    #: set when an admission would never return (see ``PodDecision.hang``)
    hung: str | None = None
    #: ``cgroup_settings(self)``, computed on first use (``container_resources_for``)
    _cgroup_settings: CgroupSettings | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_reserved_cpus(self.machine, self.config)
        cfg = effective_config(self.config)
        self.config = cfg
        self.gates = cfg.feature_gate_values
        self.topo = self.machine.cpu_topology()
        numa_ids = tuple(n.id for n in self.machine.nodes)
        numa = NUMAInfo(numa_ids, self.machine.distance_matrix)
        opts = parse_options(cfg.topology_manager_policy_options, self.gates)
        policy = new_policy(cfg.topology_manager_policy, numa, opts)
        self.topology = TopologyManager(policy, cfg.topology_manager_scope, self.gates)
        if self.explain:
            self.topology.explain = []
        from .devices import EMPTY_INVENTORY, DeviceManager

        # the container manager registers the device manager as the first hint provider
        self.device_manager = DeviceManager(self.devices or EMPTY_INVENTORY, numa_ids, self.topology.get_affinity,
                                            self.device_state)
        self.topology.add_provider("devices", self.device_manager)
        self.cpu = CPUManager(cfg, self.topo, self.topology.get_affinity, self.cpu_state)
        self.topology.add_provider("cpu", self.cpu)
        from .memory.manager import MemoryManager

        self.memory = MemoryManager(cfg, self.machine, self.topology.get_affinity, self.memory_state)
        self.topology.add_provider("memory", self.memory)
        self.capacity = node_capacity(self.machine, cfg)
        dev_cap, dev_alloc = self.device_manager.capacity()
        for name, n in dev_cap.items():
            self.capacity[name] = parse_quantity(str(n))
        self.allocatable = cfg.node_allocatable(self.capacity)
        for name, n in dev_alloc.items():
            self.allocatable[name] = parse_quantity(str(n))
        # devices held by pods of the checkpoint count as used, until such a pod shows up as input
        # (then it is being re-admitted and counts by its own requests)
        self._used: dict[str, int] = {}
        self._held: dict[str, dict[str, int]] = {}
        for uid in self.device_manager.pod_devices:
            held = self._held[uid] = {}
            for name, ids in self.device_manager.devices_by_resource(uid).items():
                held[name] = len(ids)
                self._used[name] = self._used.get(name, 0) + len(ids)

    def fork(self) -> "NodeAdmission":
        """An independent kubelet in this one's state: managers and their state copied, the machine,
        configuration, topology and the managers' memos shared (cheaper than building one)."""
        new = copy.copy(self)
        new.topology = topology = self.topology.fork()
        new.device_manager = self.device_manager.fork(topology.get_affinity)
        new.cpu = self.cpu.fork(topology.get_affinity)
        new.memory = self.memory.fork(topology.get_affinity)
        copied: dict[int, HintProvider] = {id(self.device_manager): new.device_manager, id(self.cpu): new.cpu,
                                           id(self.memory): new.memory}
        for name, p in self.topology.providers:
            topology.add_provider(name, copied[id(p)])
        new.admitted = list(self.admitted)
        new.capacity, new.allocatable = dict(self.capacity), dict(self.allocatable)
        new._used = dict(self._used)
        new._held = {uid: dict(h) for uid, h in self._held.items()}
        if self.cpu_state is self.cpu.state:
            new.cpu_state = new.cpu.state
        return new

    # --- the pipeline ------------------------------------------------------------------------
    def admit(self, pod: Pod) -> PodDecision:
        if _tracing.ACTIVE is not None:
            from ..tracing.kubelet import traced_admit

            return traced_admit(self, pod, self._admit)
        return self._admit(pod)

    def _admit(self, pod: Pod) -> PodDecision:
        if self.hung is not None:
            return PodDecision(pod, False, HANG_REASON, f"not admitted: the kubelet hung earlier ({self.hung}) and "
                                                        "admits no pod after it", hang=True)
        for name, n in self._held.pop(pod.uid, {}).items():
            self._used[name] -= n
        notes = getattr(self.cpu.policy, "bug_notes", None)
        if notes:
            notes.clear()
        try:
            self.topology.admit(pod)
        except AdmissionError as exc:
            explanation = ""
            if isinstance(exc, TopologyAffinityError) and exc.hints and self.explain_rejections:
                from .admission_why import explain_topology_affinity_error

                explanation = explain_topology_affinity_error(self, pod, exc.container, exc.hints)
            self.release(pod.uid)
            reason, message = admit_result(exc)
            return PodDecision(pod, False, reason, message, explanation=explanation)
        except KubeletHang as exc:
            self.hung = f"pod {pod.namespace}/{pod.name}: {exc}"
            return PodDecision(pod, False, HANG_REASON, str(exc), hang=True)
        bugs = tuple(notes) if notes else ()
        requests = self._requests(pod)
        rejected = self._predicate(pod, requests)
        if rejected is not None:
            self.release(pod.uid)
            return PodDecision(pod, False, *rejected)
        if self.topology.pod_level_pod_scope(pod):
            # AllocatePod of the device manager is a no-op: devices come when the containers start
            try:
                self.device_manager.allocate_at_container_start(pod)
            except AdmissionError:
                pass  # the container fails to start; the pod stays admitted
        self.admitted.append(pod)
        for name, amount in requests.items():
            self._used[name] = self._used.get(name, 0) + amount
        return PodDecision(pod, True, upstream_bugs=bugs)

    def _requests(self, pod: Pod) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, q in pod_requests(pod).items():
            out[name] = q.milli_value() if name == "cpu" else q.value()
        # the API server defaults an extended resource's request from its limit (they must be equal)
        for c, _ in pod.all_containers():
            for name in c.resources.limits:
                if name not in c.resources.requests and is_extended_resource(name):
                    break
            else:
                continue
            for name, q in pod_limits(pod).items():
                if is_extended_resource(name) and name not in out:
                    out[name] = q.value()
            break
        return out

    def _predicate(self, pod: Pod, req: dict[str, int] | None = None) -> tuple[str, str] | None:
        """``noderesources.Fits`` as the kubelet's predicate admit handler reports it."""
        allocatable = self._sanitized_allocatable()
        pods_cap = allocatable.get("pods")
        if pods_cap is not None and len(self.admitted) + 1 > pods_cap.value():
            return "OutOfpods", _insufficient("pods", 1, len(self.admitted), pods_cap.value())
        if req is None:
            req = self._requests(pod)
        order = ["cpu", "memory", "ephemeral-storage"] + sorted(k for k in req if k not in ("cpu", "memory",
                                                                                            "ephemeral-storage"))
        for name in order:
            want = req.get(name, 0)
            if want == 0:
                continue
            alloc = allocatable.get(name)
            if alloc is None:
                if name in ("cpu", "memory") or name.startswith("hugepages-"):
                    cap = 0
                else:
                    continue  # extended resources the node does not have are dropped first
            else:
                cap = alloc.milli_value() if name == "cpu" else alloc.value()
            used = self._used.get(name, 0)
            if want > cap - used:
                return f"OutOf{name}", _insufficient(name, want, used, cap)
        return None

    def _sanitized_allocatable(self) -> dict[str, Quantity]:
        """``sanitizeNodeAllocatable``: for this admission, a device resource's allocatable is at
        least what is allocated (so running pods pass after a plugin lost devices)."""
        out = self.allocatable
        for name, ids in self.device_manager.allocated.items():
            have = out.get(name)
            if ids and (have is None or have.value() < len(ids)):
                if out is self.allocatable:
                    out = dict(out)
                out[name] = parse_quantity(str(len(ids)))
        return out

    # --- in-place resize (kubetwin.kubelet.resize) ----------------------------------------------
    def resize_predicate(self, current: Pod, desired: Pod) -> tuple[str, str] | None:
        """The predicate handler for a resize: ``desired`` against node allocatable minus the
        other pods' allocated requests (``current`` is left out, as ``canAdmitPod`` leaves it out)."""
        old = self._requests(current)
        saved_used, saved_admitted = self._used, self.admitted
        self._used = {k: v - old.get(k, 0) for k, v in self._used.items()}
        self.admitted = [p for p in self.admitted if p.uid != current.uid]
        try:
            return self._predicate(desired)
        finally:
            self._used, self.admitted = saved_used, saved_admitted

    def set_allocation(self, current: Pod, desired: Pod) -> None:
        """Checkpoint ``desired`` as the allocation of a running pod (``SetAllocatedResources``)."""
        old, new = self._requests(current), self._requests(desired)
        for name in set(old) | set(new):
            self._used[name] = self._used.get(name, 0) - old.get(name, 0) + new.get(name, 0)
        self.admitted = [desired if p.uid == current.uid else p for p in self.admitted]

    def release(self, pod_uid: str) -> None:
        """Give back everything a pod holds (removal, or a rejection after allocation)."""
        self.device_manager.remove_pod(pod_uid)
        self.cpu.remove_pod(pod_uid)
        self.memory.remove_pod(pod_uid)
        self.topology.remove_pod(pod_uid)

    def remove(self, pod: Pod) -> None:
        """The pod is gone: what it was allocated (its resized resources, if resized) is given back."""
        for k, held in enumerate(self.admitted):
            if held.uid == pod.uid:
                del self.admitted[k]
                for name, amount in self._requests(held).items():
                    self._used[name] = self._used.get(name, 0) - amount
                break
        self.release(pod.uid)


def _insufficient(name: str, requested: int, used: int, capacity: int) -> str:
    return f"Node didn't have enough resource: {name}, requested: {requested}, used: {used}, capacity: {capacity}"


def cgroup_settings(node: NodeAdmission):
    from .cgroups import CgroupSettings

    cfg = node.config
    alloc = node.allocatable.get("memory")
    sizes = tuple(sorted({hp.page_size * 1024 for n in node.machine.nodes for hp in n.hugepages}))
    return CgroupSettings(
        gates=node.gates, cgroup_version=2, cpu_cfs_quota=cfg.cpu_cfs_quota,
        cpu_cfs_quota_period_us=int(cfg.cpu_cfs_quota_period) // 1000,
        memory_throttling_factor=cfg.memory_throttling_factor,
        memory_reservation_policy=cfg.memory_reservation_policy,
        single_process_oom_kill=cfg.single_process_oom_kill_for(True),
        swap_behavior=cfg.memory_swap.swap_behavior or "NoSwap", pod_pids_limit=cfg.pod_pids_limit,
        memory_capacity=node.machine.memory_capacity, swap_capacity=node.machine.swap_capacity,
        node_allocatable_memory=alloc.value() if alloc is not None else node.machine.memory_capacity,
        hugepage_sizes=sizes)


def container_resources_for(node: NodeAdmission, pod: Pod, c: Container) -> tuple[dict[str, Any], str]:
    """CRI LinuxContainerResources of an admitted container, with the managers' cpusets and CFS lift."""
    from .cgroups import container_resources
    from .podlevel import guaranteed_cpus
    from .qos import get_pod_qos

    settings = node._cgroup_settings
    if settings is None:
        settings = node._cgroup_settings = cgroup_settings(node)
    res = dict(container_resources(pod, c, settings).resources)
    cpus = node.cpu.cpuset_for(pod.uid, c.name)
    if cpus is not None:
        res["cpusetCpus"] = str(cpus)
        exclusive = node.cpu.exclusive_cpus(pod.uid, c.name)
        if (exclusive is not None and guaranteed_cpus(pod, c, node.gates) > 0
                and node.gates.enabled("DisableCPUQuotaWithExclusiveCPUs") and res.get("cpuQuota", 0) != 0):
            res["cpuQuota"] = -1
    mems = node.memory.numa_nodes_for(pod.uid, c.name)
    if mems:
        res["cpusetMems"] = ",".join(str(n) for n in sorted(mems))
    return res, get_pod_qos(pod, node.gates)
