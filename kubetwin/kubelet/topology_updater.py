"""A live NodeResourceTopology, as node-feature-discovery's ``nfd-topology-updater`` publishes
it from the kubelet's PodResources API.

Models NFD v0.19.0: ``pkg/resourcemonitor/podresourcesscanner.go`` (``Scan``: which pods and
resources count), ``pkg/resourcemonitor/noderesourcesaggregator.go`` (``Aggregate``: per-NUMA
capacity, allocatable and available), ``pkg/utils/memory_resources.go`` (memory capacity per
NUMA node: ``MemTotal`` and the huge pages) and ``pkg/nfd-topology-updater`` (the object: the
topology manager policy and scope as attributes, the pod-set fingerprint when
``-pods-fingerprint``, its default, is on). The kubelet side comes from
:mod:`kubetwin.kubelet.podresources`.

What the numbers mean, per zone ``node-<N>`` (type ``Node``):

* ``cpu``: allocatable = the CPUs ``GetAllocatableResources`` lists on the NUMA node (none under
  CPU Manager policy ``none``), capacity = allocatable + the node's other (reserved) CPUs,
  available = allocatable minus the exclusive CPUs of Guaranteed pods with an integral CPU
  request. A NUMA node with no allocatable resource at all shows only ``cpu`` with allocatable 0.
* ``memory`` / ``hugepages-<size>``: only with the Memory Manager's ``Static`` policy (its
  allocatable blocks); capacity from the machine (``MemTotal``, pages × size), available after
  the memory blocks of Guaranteed pods (and pods with devices), taken NUMA node by NUMA node.
* device resources: one per allocatable device on each of its NUMA nodes, available after the
  devices containers hold.

Upstream quirks kept: NUMA nodes and costs are indexed by position in the machine's node list
(``range topo.Nodes``); a watchable pod's memory counts even when its CPUs are not exclusive.
Upstream emits zones and resources in Go map order; kubetwin sorts them (zones by NUMA id,
resources by name).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..machine.model import Machine
from ..machine.nrt import hugepage_resource
from ..model import podfingerprint
from ..model.pod import Pod

#: the attributes NFD writes (``createTopologyAttributes``)
POLICY_ATTRIBUTE = "topologyManagerPolicy"
SCOPE_ATTRIBUTE = "topologyManagerScope"


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """``resourcemonitor.ResourceInfo``: ids (CPUs, devices) or one size (memory), NUMA nodes."""

    name: str
    data: tuple[str, ...]
    numa_node_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ScanResponse:
    pod_resources: tuple[tuple[str, str, tuple[ResourceInfo, ...]], ...]   # (namespace, name, resources)
    attributes: tuple[tuple[str, str], ...] = ()


#: the pod object behind a PodResources entry (None: unknown — see :func:`scan`)
PodLookup = Callable[[str, str], "Pod | None"]


def _is_guaranteed(pod: Pod, gates: Any) -> bool:
    from .qos import get_pod_qos

    return get_pod_qos(pod, gates) == "Guaranteed"


def _has_integral_cpus(pod: Pod) -> bool:
    """``checkPodExclusiveCPUs``: any container whose CPU request is a whole number."""
    for c in list(pod.spec.init_containers) + list(pod.spec.containers):
        q = c.resources.requests.get("cpu")
        if q is not None and q.value() * 1000 == q.milli_value():
            return True
    return False


def scan(list_response: Mapping[str, Any], lookup: PodLookup, gates: Any, *, fingerprint: bool = True
         ) -> ScanResponse:
    """``PodResourcesScanner.Scan`` over a PodResources ``List`` answer (protojson).

    ``lookup`` gives the pod objects NFD fetches from the API server (its QoS, its CPU requests).
    ``None`` for a pod: only its kubelet state is known (a state folder) — it is taken as
    Guaranteed with exclusive CPUs, which is what CPU and memory assignments in the kubelet's
    checkpoints imply under the static policies.
    """
    pods = list_response.get("podResources") or []
    attributes: list[tuple[str, str]] = []
    if fingerprint and pods:
        attributes.append((podfingerprint.ATTRIBUTE,
                           podfingerprint.sign((p.get("namespace", ""), p.get("name", "")) for p in pods)))
    out = []
    for p in pods:
        ns, name = p.get("namespace", ""), p.get("name", "")
        containers = p.get("containers") or []
        has_device = any(c.get("devices") for c in containers)
        pod = lookup(ns, name)
        if pod is None:
            guaranteed, exclusive = True, True
        else:
            guaranteed = _is_guaranteed(pod, gates)
            exclusive = guaranteed and _has_integral_cpus(pod)
        if not (guaranteed or has_device):
            continue
        resources: list[ResourceInfo] = []
        for c in containers:
            mine: list[ResourceInfo] = []
            cpus = c.get("cpuIds") or []
            if cpus and exclusive:
                mine.append(ResourceInfo("cpu", tuple(str(int(x)) for x in cpus)))
            for d in c.get("devices") or []:
                mine.append(ResourceInfo(d["resourceName"], tuple(d.get("deviceIds") or ()), _nodes(d)))
            for m in c.get("memory") or []:
                size = int(m.get("size") or 0)
                if size == 0:
                    continue
                mine.append(ResourceInfo(m["memoryType"], (str(size),), _nodes(m)))
            resources += mine
        if resources:
            out.append((ns, name, tuple(resources)))
    return ScanResponse(tuple(out), tuple(attributes))


def _nodes(entry: Mapping[str, Any]) -> tuple[int, ...]:
    topology = entry.get("topology")
    if topology is None:
        return ()
    return tuple(int(n.get("ID", 0)) for n in topology.get("nodes") or ())


@dataclass
class _Data:
    allocatable: int
    available: int
    capacity: int


@dataclass
class Aggregator:
    """``nodeResources`` (``NewResourcesAggregatorFromData``) for one machine and allocatable answer."""

    machine: Machine
    allocatable_response: Mapping[str, Any]
    per_numa_allocatable: dict[int, dict[str, int]] = field(init=False)
    resource_to_numa: dict[str, dict[str, int]] = field(init=False)
    reserved_cpus: dict[int, list[str]] = field(init=False)

    def __post_init__(self) -> None:
        devices = self._all_devices()
        self.resource_to_numa = {}
        for rname, ids, nodes in devices:
            m = self.resource_to_numa.setdefault(rname, {})
            for n in nodes:
                for i in ids:
                    m[i] = n
        self.per_numa_allocatable = {}
        for rname, ids, nodes in devices:
            for n in nodes:
                res = self.per_numa_allocatable.setdefault(n, {})
                res[rname] = res.get(rname, 0) + len(ids)
        for block in self.allocatable_response.get("memory") or []:
            if "topology" not in block:
                continue
            for n in _nodes(block):
                res = self.per_numa_allocatable.setdefault(n, {})
                res[block["memoryType"]] = res.get(block["memoryType"], 0) + int(block.get("size") or 0)
        allocatable_cpus = {i for rname, ids, _ in devices if rname == "cpu" for i in ids}
        self.reserved_cpus = {}
        for node in self.machine.nodes:
            for cpu in node.cpus.sorted():
                if str(cpu) not in allocatable_cpus:
                    self.reserved_cpus.setdefault(node.id, []).append(str(cpu))

    def _all_devices(self) -> list[tuple[str, tuple[str, ...], tuple[int, ...]]]:
        """``getContainerDevicesFromAllocatableResources``: devices, then CPUs grouped by NUMA node."""
        out = [(d["resourceName"], tuple(d.get("deviceIds") or ()), _nodes(d))
               for d in self.allocatable_response.get("devices") or []]
        cpu_node = {cpu: n.id for n in self.machine.nodes for cpu in n.cpus}
        per_numa: dict[int, list[str]] = {}
        for cpu in self.allocatable_response.get("cpuIds") or []:
            nid = cpu_node.get(int(cpu))
            if nid is not None:
                per_numa.setdefault(nid, []).append(str(int(cpu)))
        out += [("cpu", tuple(ids), (nid,)) for nid, ids in sorted(per_numa.items())]
        return out

    def _memory_capacity(self) -> dict[int, dict[str, int]]:
        """``GetNumaMemoryResources``: ``MemTotal`` and pages × size per NUMA node."""
        out: dict[int, dict[str, int]] = {}
        for n in self.machine.nodes:
            info = {"memory": n.memory}
            for h in n.hugepages:
                info[hugepage_resource(h.page_size)] = h.bytes
            out[n.id] = info
        return out

    def aggregate(self, scanned: ScanResponse) -> list[dict[str, Any]]:
        """``Aggregate``: the zones, from the scanned pods' resources."""
        caps = self._memory_capacity()
        per_numa: dict[int, dict[str, _Data]] = {}
        for index, _node in enumerate(self.machine.nodes):   # range topo.Nodes: by position
            node_res = self.per_numa_allocatable.get(index)
            if node_res is None:
                per_numa[index] = {"cpu": _Data(0, 0, len(self.reserved_cpus.get(index, ())))}
                continue
            res = per_numa[index] = {}
            for name, alloc in node_res.items():
                if name == "cpu":
                    res[name] = _Data(alloc, alloc, alloc + len(self.reserved_cpus.get(index, ())))
                elif name == "memory" or name.startswith("hugepages-"):
                    res[name] = _Data(alloc, alloc, caps.get(index, {}).get(name, alloc))
                else:
                    res[name] = _Data(alloc, alloc, alloc)
        for _ns, _name, resources in scanned.pod_resources:
            for ri in resources:
                if ri.name == "memory" or ri.name.startswith("hugepages-"):
                    _take_memory(per_numa, ri)
                else:
                    self._take(per_numa, ri)
        zones = []
        for nid in sorted(per_numa):
            zone: dict[str, Any] = {"name": f"node-{nid}", "type": "Node"}
            if nid < len(self.machine.nodes):
                zone["costs"] = [{"name": f"node-{to}", "value": d}
                                 for to, d in enumerate(self.machine.nodes[nid].distances)]
            zone["resources"] = [{"name": name, "capacity": str(d.capacity), "allocatable": str(d.allocatable),
                                  "available": str(d.available)} for name, d in sorted(per_numa[nid].items())]
            zones.append(zone)
        return zones

    def _take(self, per_numa: dict[int, dict[str, _Data]], ri: ResourceInfo) -> None:
        """``updateAvailable``: one less per id, on the NUMA node the id was allocatable from."""
        mapping = self.resource_to_numa.get(ri.name)
        if mapping is None:
            mapping = {}
            for n in ri.numa_node_ids:
                if n in per_numa and ri.name in per_numa[n]:
                    for i in ri.data:
                        mapping[i] = n
            self.resource_to_numa[ri.name] = mapping
        for i in ri.data:
            nid = mapping.get(i)
            if nid is None or nid not in per_numa or ri.name not in per_numa[nid]:
                continue
            per_numa[nid][ri.name].available -= 1


def _take_memory(per_numa: dict[int, dict[str, _Data]], ri: ResourceInfo) -> None:
    """``updateMemoryAvailable``: the size comes off the block's NUMA nodes in order."""
    if not ri.numa_node_ids or len(ri.data) != 1:
        return
    want = int(ri.data[0])
    for n in ri.numa_node_ids:
        if want == 0:
            return
        if n not in per_numa:
            continue
        d = per_numa[n].get(ri.name)
        if d is None:
            return
        if d.available == 0:
            continue
        if want >= d.available:
            want -= d.available
            d.available = 0
        else:
            d.available -= want
            want = 0


def node_resource_topology(node_name: str, zones: list[dict[str, Any]], policy: str, scope: str,
                           attributes: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    """The object the updater applies: zones, policy and scope attributes, scan attributes."""
    attrs = [{"name": POLICY_ATTRIBUTE, "value": policy}, {"name": SCOPE_ATTRIBUTE, "value": scope}]
    for name, value in attributes:   # updateAttributes: replace by name, else append
        for a in attrs:
            if a["name"] == name:
                a["value"] = value
                break
        else:
            attrs.append({"name": name, "value": value})
    return {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
            "metadata": {"name": node_name}, "attributes": attrs, "zones": zones}


def export(node: Any, list_response: Mapping[str, Any], allocatable_response: Mapping[str, Any],
           node_name: str, lookup: PodLookup, *, fingerprint: bool = True,
           aggregator: Aggregator | None = None) -> dict[str, Any]:
    """One update of the topology-updater for the kubelet ``node`` (a :class:`NodeAdmission`).

    ``aggregator``: the agent's own, made once at its start from ``GetAllocatableResources``
    (``NewResourcesAggregator``) and kept across updates, as the agent keeps it."""
    scanned = scan(list_response, lookup, node.gates, fingerprint=fingerprint)
    if aggregator is None:
        aggregator = Aggregator(node.machine, allocatable_response)
    zones = aggregator.aggregate(scanned)
    return node_resource_topology(node_name, zones, node.config.topology_manager_policy,
                                  node.config.topology_manager_scope, scanned.attributes)
