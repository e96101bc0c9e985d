"""The kubelet's PodResources API v1 (``List``, ``GetAllocatableResources``, ``Get``), answered
from one node's resource managers.

Models ``pkg/kubelet/apis/podresources/server_v1.go`` with the providers of
``pkg/kubelet/cm/container_manager_linux.go`` (``GetCPUs``, ``GetAllocatableCPUs``,
``GetMemory``, ``GetAllocatableMemory``, ``GetDevices``, ``GetAllocatableDevices``,
``GetDynamicResources``), the device manager's ``getContainerDevices``
(``devicemanager/pod_devices.go``) and the DRA manager's ``GetContainerClaimInfos``. Messages are
those of ``k8s.io/kubelet/pkg/apis/podresources/v1/api.proto`` written as protojson writes them:
lowerCamelCase names (``cpuIds``, ``resourceName``; ``NUMANode.ID`` stays ``ID``), int64 as
strings, empty fields left out, fields in proto order.

What each answer holds:

* CPU ids: a container's *exclusive* CPUs (the CPU Manager's assignments; none under policy
  ``none``); allocatable: every online CPU but the reserved ones under ``static``, none under
  ``none``.
* Memory: a container's Memory Manager blocks (type, size, NUMA nodes; none under ``None``);
  allocatable: one block per NUMA node and memory type with allocatable memory (``Static``).
* Devices: one ``ContainerDevices`` per device and NUMA node it was allocated from (no topology
  for a device without one); allocatable: every device a plugin registered, healthy or not.
* Dynamic resources (``KubeletPodResourcesDynamicResources`` and ``DynamicResourceAllocation``):
  the prepared claims of ``dra_manager_state`` per container claim reference
  (:func:`kubetwin.dra.prepare.dynamic_resource`); a claim that cannot be resolved empties the
  container's list, as the kubelet logs and moves on.

Version-dependent behaviour comes from the one version table: ``Get`` answers only with
``KubeletPodResourcesGet`` ("PodResources API Get method disabled"); ``List`` lists active pods
only with ``KubeletPodResourcesListUseActivePods`` (1.34+; before, every pod the kubelet knows,
rejected ones included, with no resources); restartable init containers come first with
``SidecarContainers``.

Upstream builds several of these lists from Go maps and ``CPUSet.UnsortedList`` (random order);
kubetwin sorts them (CPU ids ascending; devices by resource, id, NUMA node; memory by NUMA node,
then type) so answers are reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..model.pod import Container, Pod

if TYPE_CHECKING:
    from ..dra.checkpoint import ClaimInfoState
    from .admission import NodeAdmission

#: ``nodeWithoutTopology`` of the device manager
_NO_TOPOLOGY = -1
#: phases of a pod the kubelet counts as terminal (``isAdmittedPodTerminal``)
_TERMINAL = ("Succeeded", "Failed")


class PodResourcesError(Exception):
    """The gRPC error the server answers with (its text is upstream's)."""


@dataclass(frozen=True, slots=True)
class KnownPod:
    """A pod the kubelet's pod manager holds: admitted, or rejected (then its status is Failed)."""

    pod: Pod
    admitted: bool

    @property
    def active(self) -> bool:
        """``filterOutInactivePods``: a rejected pod (Failed) or a terminal one is not active."""
        return self.admitted and self.pod.status.phase not in _TERMINAL


def _ids(values: Iterable[int]) -> list[str]:
    return [str(v) for v in values]


def _topology(nodes: Iterable[int]) -> dict[str, Any]:
    return {"nodes": [{"ID": str(n)} for n in nodes]}


class PodResourcesServer:
    """``v1PodResourcesServer`` over one node's kubelet (:class:`NodeAdmission`)."""

    def __init__(self, node: NodeAdmission, pods: Sequence[KnownPod],
                 dra_state: Iterable[ClaimInfoState] = ()) -> None:
        self.node = node
        self.pods = tuple(pods)
        self.gates = node.gates
        self._claims = {(e.claim_name, e.namespace): e for e in dra_state}

    # --- the three calls ---------------------------------------------------------------------
    def list_pod_resources(self) -> dict[str, Any]:
        """``List``: every (active) pod with its containers' resources."""
        use_active = self.gates.enabled("KubeletPodResourcesListUseActivePods")
        pods = [k for k in self.pods if k.active or not use_active]
        out = [self._pod_resources(k.pod) for k in pods]
        return {"podResources": out} if out else {}

    def get_allocatable_resources(self) -> dict[str, Any]:
        """``GetAllocatableResources``: what the managers can hand out (capacity, not what is free)."""
        out: dict[str, Any] = {}
        devices = self._allocatable_devices()
        if devices:
            out["devices"] = devices
        cpus = self._allocatable_cpus()
        if cpus:
            out["cpuIds"] = cpus
        memory = self._allocatable_memory()
        if memory:
            out["memory"] = memory
        return out

    def get_pod_resources(self, namespace: str, name: str) -> dict[str, Any]:
        """``Get``: one pod the kubelet knows (rejected pods too: the pod manager keeps them)."""
        if not self.gates.enabled("KubeletPodResourcesGet"):
            raise PodResourcesError("PodResources API Get method disabled")
        for k in self.pods:
            if k.pod.name == name and (k.pod.namespace or "default") == namespace:
                return {"podResources": self._pod_resources(k.pod)}
        raise PodResourcesError(f"pod {name} in namespace {namespace} not found")

    # --- one pod -------------------------------------------------------------------------------
    def _pod_resources(self, pod: Pod) -> dict[str, Any]:
        containers: list[Container] = []
        if self.gates.enabled("SidecarContainers"):
            containers += [c for c in pod.spec.init_containers if c.restart_policy == "Always"]
        containers += list(pod.spec.containers)
        out: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace or "default"}
        entries = [self._container_resources(pod, c) for c in containers]
        if entries:
            out["containers"] = entries
        return out

    def _container_resources(self, pod: Pod, c: Container) -> dict[str, Any]:
        out: dict[str, Any] = {"name": c.name}
        devices = self._devices(pod.uid, c.name)
        if devices:
            out["devices"] = devices
        cpus = self.node.cpu.exclusive_cpus(pod.uid, c.name)
        if cpus is not None and not cpus.is_empty():
            out["cpuIds"] = _ids(cpus.sorted())
        memory = self._memory(pod.uid, c.name)
        if memory:
            out["memory"] = memory
        if self.gates.enabled("KubeletPodResourcesDynamicResources"):
            dynamic = self._dynamic_resources(pod, c)
            if dynamic:
                out["dynamicResources"] = dynamic
        return out

    # --- providers -----------------------------------------------------------------------------
    def _devices(self, uid: str, cname: str) -> list[dict[str, Any]]:
        """``getContainerDevices`` then ``containerDevicesFromResourceDeviceInstances``."""
        out = []
        for rname, per_numa in sorted(self.node.device_manager.pod_devices.get(uid, {}).get(cname, {}).items()):
            nodes: dict[str, set[int]] = {}
            for numa, ids in per_numa.items():
                for dev in ids:
                    s = nodes.setdefault(dev, set())
                    if numa != _NO_TOPOLOGY:
                        s.add(numa)
            out += _device_entries(rname, nodes)
        return out

    def _allocatable_devices(self) -> list[dict[str, Any]]:
        out = []
        for rname, devices in sorted(self.node.device_manager.all_devices.items()):
            out += _device_entries(rname, {d.id: set(d.numa_nodes) for d in devices.values()})
        return out

    def _allocatable_cpus(self) -> list[str]:
        cpu = self.node.cpu
        if cpu.static is None:
            return []
        return _ids(self.node.topo.details.cpus().difference(cpu.reserved).sorted())

    def _memory_state(self) -> Any:
        static = self.node.memory.static
        return static.state if static is not None else None

    def _memory(self, uid: str, cname: str) -> list[dict[str, Any]]:
        state = self._memory_state()
        if state is None:
            return []
        return [_memory_block(b.type, b.size, b.numa_affinity) for b in state.entries.get(uid, {}).get(cname, ())]

    def _allocatable_memory(self) -> list[dict[str, Any]]:
        state = self._memory_state()
        if state is None:
            return []
        out = []
        for numa in sorted(state.machine_state):
            for rname, table in sorted(state.machine_state[numa].memory_map.items()):
                if table.allocatable != 0:
                    out.append(_memory_block(rname, table.allocatable, (numa,)))
        return out

    def _dynamic_resources(self, pod: Pod, c: Container) -> list[dict[str, Any]]:
        """``GetDynamicResources`` through ``GetContainerClaimInfos``."""
        if not self.gates.enabled("DynamicResourceAllocation"):
            return []
        from ..dra.prepare import dynamic_resource

        statuses = {s.name: s.resource_claim_name for s in pod.status.resource_claim_statuses}
        namespace = pod.namespace or "default"
        out = []
        for pc in pod.spec.resource_claims:
            claim_name = pc.resource_claim_name
            if not claim_name and pc.resource_claim_template_name and pc.name in statuses:
                claim_name = statuses[pc.name]
                if not claim_name:
                    continue   # no ResourceClaim needed
            if not claim_name:
                return []      # resourceclaim.Name failed: logged, the container gets none
            for ref in c.resources.claims:
                if ref.name != pc.name:
                    continue
                entry = self._claims.get((claim_name, namespace))
                if entry is None:
                    return []  # "unable to get claim info for claim ...": logged, none
                out.append(dynamic_resource(entry))
        return out


def _device_entries(rname: str, nodes: Mapping[str, set[int]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for dev in sorted(nodes):
        if not nodes[dev]:
            out.append({"resourceName": rname, "deviceIds": [dev]})
            continue
        for n in sorted(nodes[dev]):
            out.append({"resourceName": rname, "deviceIds": [dev], "topology": _topology((n,))})
    return out


def _memory_block(memory_type: str, size: int, numa: Iterable[int]) -> dict[str, Any]:
    """``containerMemoryFromBlock``: the topology is always set, possibly with no nodes."""
    out: dict[str, Any] = {"memoryType": memory_type}
    if size:
        out["size"] = str(size)
    nodes = list(numa)
    out["topology"] = _topology(nodes) if nodes else {}
    return out


def known_pods(decisions: Iterable[Any]) -> list[KnownPod]:
    """The pod manager's pods from admission decisions (anything with ``pod`` and ``admitted``)."""
    return [KnownPod(d.pod, d.admitted) for d in decisions]


#: the calls ``kubetwin admit --podresources`` answers
CALLS = ("list", "allocatable", "get")


def parse_call(text: str) -> tuple[str, str, str]:
    """``list``, ``allocatable`` or ``get=NS/POD`` (``get=POD``: namespace default) → (call, ns, name)."""
    from ..errors import InputError
    from ..model.strict import unknown_key_error

    call, sep, target = text.partition("=")
    if call not in CALLS:
        raise unknown_key_error(call, CALLS, path="--podresources", what="PodResources call")
    if call != "get":
        if sep:
            raise InputError(f"{call} takes no argument", path="--podresources", fix=f"write --podresources {call}")
        return call, "", ""
    ns, slash, name = target.rpartition("/")
    if not name or (slash and not ns):
        raise InputError("get needs the pod: get=NAMESPACE/NAME", path="--podresources",
                         fix="write e.g. --podresources get=default/web-0")
    return call, ns or "default", name


def answer(server: PodResourcesServer, call: tuple[str, str, str]) -> dict[str, Any]:
    """The response message of one call; a gRPC error becomes an :class:`InputError`."""
    from ..errors import InputError

    kind, namespace, name = call
    if kind == "list":
        return server.list_pod_resources()
    if kind == "allocatable":
        return server.get_allocatable_resources()
    try:
        return server.get_pod_resources(namespace, name)
    except PodResourcesError as exc:
        fix = ("enable the KubeletPodResourcesGet feature gate in the kubelet configuration"
               if "disabled" in str(exc) else "name a pod of the input")
        raise InputError(f"PodResources Get: {exc}", path="--podresources", fix=fix) from None


def list_from_state(node: NodeAdmission) -> dict[str, Any]:
    """A ``List`` answer from the managers' state alone (checkpoints read back, no pod objects):
    one entry per pod UID the CPU, Memory or Device Manager holds, named by its UID (namespace
    empty), its containers in name order. What a node agent sees of those pods' resources;
    their names and QoS are not in the checkpoints."""
    uids: dict[str, set[str]] = {}
    cpu_state = node.cpu.state if node.cpu.static is not None else None
    if cpu_state is not None:
        for uid, conts in cpu_state.entries.items():
            uids.setdefault(uid, set()).update(conts)
    static = node.memory.static
    if static is not None:
        for uid, mconts in static.state.entries.items():
            uids.setdefault(uid, set()).update(mconts)
    for uid, dconts in node.device_manager.pod_devices.items():
        uids.setdefault(uid, set()).update(dconts)
    server = PodResourcesServer(node, ())
    pods = []
    for uid in sorted(uids):
        containers = []
        for name in sorted(uids[uid]):
            out: dict[str, Any] = {"name": name}
            devices = server._devices(uid, name)
            if devices:
                out["devices"] = devices
            cpus = node.cpu.exclusive_cpus(uid, name)
            if cpus is not None and not cpus.is_empty():
                out["cpuIds"] = _ids(cpus.sorted())
            memory = server._memory(uid, name)
            if memory:
                out["memory"] = memory
            containers.append(out)
        pods.append({"name": uid, "containers": containers})
    return {"podResources": pods} if pods else {}
