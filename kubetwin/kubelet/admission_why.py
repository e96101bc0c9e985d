"""Why a pod got ``TopologyAffinityError``: what was asked, and what each NUMA node could give.

The kubelet's own message is only "Resources cannot be allocated with Topology locality"
(``topologymanager/scope.go``), and kubetwin keeps it as the pod's reason and message. This
module adds the explanation a reader needs, built from what the Topology Manager had in hand
when it refused: each hint provider's hints (which NUMA node sets could hold each resource, kept
on the error) and the managers' state at that moment (what each NUMA node had free):

    container app: cpu: needs 20 CPUs aligned to one NUMA node; the largest NUMA node has 16 free
    (NUMA 0: 16, NUMA 1: 12)

It runs only for a rejected pod and reads the managers without changing them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from .topology.bitmask import bits_of
from .topology.hint import TopologyHint

if TYPE_CHECKING:  # pragma: no cover
    from ..model.pod import Container, Pod
    from .admission import NodeAdmission


@dataclass(frozen=True, slots=True)
class ResourceNeed:
    """One resource a provider gave hints for: the amount asked and each NUMA node's share."""

    provider: str                      # cpu, memory, devices
    resource: str                      # cpu, memory, hugepages-1Gi, nvidia.com/gpu
    requested: int                     # CPUs, bytes or devices
    free: dict[int, int]               # NUMA node -> free now
    capacity: dict[int, int]           # NUMA node -> what it holds when empty
    hints: tuple[TopologyHint, ...] | None

    def amount(self, n: int) -> str:
        if self.provider == "cpu":
            return f"{n} CPU{'s' if n != 1 else ''}"
        if self.provider == "memory":
            return _bytes(n)
        return f"{n} {self.resource} device{'s' if n != 1 else ''}"

    def free_text(self, n: int) -> str:
        return _bytes(n) if self.provider == "memory" else str(n)

    def width(self) -> int:
        """The fewest NUMA nodes that could ever hold the request (the width of a preferred hint)."""
        total = 0
        for k, cap in enumerate(sorted(self.capacity.values(), reverse=True), 1):
            total += cap
            if total >= self.requested:
                return k
        return len(self.capacity)


def _bytes(b: int) -> str:
    for unit, mul in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if b >= mul and b % mul == 0:
            return f"{b // mul}{unit}"
    for unit, mul in (("Gi", 1 << 30), ("Mi", 1 << 20)):
        if b >= mul:
            return f"{b / mul:.1f}{unit}"
    return str(b)


def explain_topology_affinity_error(node: "NodeAdmission", pod: "Pod", container: "Container | None",
                                    hints: Sequence[tuple[str, Any]]) -> str:
    """One line per refusal: which resources could not be aligned, with each NUMA node's figures."""
    needs = resource_needs(node, pod, container, hints)
    policy = node.topology.policy.name
    who = f"container {container.name}" if container is not None else "pod"
    if not needs:
        return f"{who}: no hint provider could align its resources (topology manager policy {policy})"
    parts: list[str] = []
    places: list[tuple[ResourceNeed, set[int]]] = []
    for need in needs:
        text, where = _need_text(need, policy)
        if text:
            parts.append(text)
        if where is not None:
            places.append((need, where))
    if not parts and places:  # each resource fits somewhere on its own, just not in the same place
        common = set.intersection(*(w for _, w in places)) if places else set()
        shown = "; ".join(f"{n.resource} ({n.amount(n.requested)}) fits on NUMA node{'s' if len(w) != 1 else ''} "
                          f"{_nodes(w)} (" + ", ".join(f"NUMA {k}: {n.free_text(f)} free"
                                                       for k, f in sorted(n.free.items())) + ")"
                          for n, w in places)
        if not common:
            parts.append(f"each resource fits on a NUMA node, but not on the same one: {shown}")
        else:
            parts.append(f"the resources fit together only on NUMA node(s) {_nodes(common)}, which the "
                         f"{policy} policy does not accept as preferred: {shown}")
    scope = node.topology.scope
    return f"{who} (topology manager policy {policy}, scope {scope}): " + "; ".join(parts)


def _nodes(ids: set[int]) -> str:
    return ",".join(str(i) for i in sorted(ids))


def _need_text(need: ResourceNeed, policy: str) -> tuple[str, set[int] | None]:
    """The sentence for a resource that cannot be aligned ("" if it can), and where it fits
    preferred (the NUMA nodes of its preferred hints), for the cross-resource sentence."""
    per_numa = ", ".join(f"NUMA {n}: {need.free_text(f)}" for n, f in sorted(need.free.items()))
    total_free = sum(need.free.values())
    asked = need.amount(need.requested)
    if need.hints is not None and not need.hints:
        if total_free < need.requested:
            return (f"{need.resource}: needs {asked}; only {need.free_text(total_free)} free on the whole node "
                    f"({per_numa})"), None
        return (f"{need.resource}: needs {asked}; the {need.provider} manager found no NUMA node set that can "
                f"hold it ({per_numa})"), None
    if need.hints is None:
        return "", None
    width = 1 if policy == "single-numa-node" else need.width()
    preferred = [h for h in need.hints if h.preferred and h.affinity is not None]
    if policy == "single-numa-node":
        preferred = [h for h in preferred if h.affinity is not None and h.affinity.bit_count() == 1]
    if preferred:
        where: set[int] = set()
        for h in preferred:
            if h.affinity is not None and h.affinity.bit_count() == width:
                where.update(bits_of(h.affinity))
        return "", where
    if width == 1:
        largest = max(need.free.values(), default=0)
        most = max(need.capacity.values(), default=0)
        never = (f"; no NUMA node can ever hold it (the largest has {need.free_text(most)} when empty)"
                 if most < need.requested else "")
        return (f"{need.resource}: needs {asked} aligned to one NUMA node; the largest NUMA node has "
                f"{need.free_text(largest)} free ({per_numa}){never}"), None
    best = sum(sorted(need.free.values(), reverse=True)[:width])
    return (f"{need.resource}: needs {asked} aligned to {width} NUMA nodes (the fewest that can hold it); the "
            f"{width} NUMA nodes with the most free have {need.free_text(best)} ({per_numa})"), None


def resource_needs(node: "NodeAdmission", pod: "Pod", container: "Container | None",
                   hints: Sequence[tuple[str, Any]]) -> list[ResourceNeed]:
    """Each resource a provider gave hints for, with the amount asked and each NUMA node's figures."""
    out: list[ResourceNeed] = []
    for provider, provided in hints:
        if not provided:
            continue
        for resource, lst in provided.items():
            need = _need(node, pod, container, provider, resource, lst)
            if need is not None:
                out.append(need)
    return out


def _need(node: "NodeAdmission", pod: "Pod", container: "Container | None", provider: str, resource: str,
          lst: Any) -> ResourceNeed | None:
    hints = None if lst is None else tuple(lst)
    numa = [n.id for n in node.machine.nodes]
    cpu_policy, memory_policy = node.cpu.static, node.memory.static
    if provider == "cpu" and cpu_policy is not None:
        from .podlevel import guaranteed_cpus, pod_guaranteed_cpus

        gates = node.gates
        requested = (guaranteed_cpus(pod, container, gates) if container is not None
                     else pod_guaranteed_cpus(pod, gates))
        avail = cpu_policy.available(node.cpu.state)
        reusable = cpu_policy.cpus_to_reuse.get(pod.uid)
        if reusable is not None:
            avail = avail | reusable
        free = {n.id: (avail & n.cpus).size() for n in node.machine.nodes}
        capacity = {n.id: (n.cpus - node.cpu.reserved).size() for n in node.machine.nodes}
        return ResourceNeed("cpu", resource, requested, free, capacity, hints)
    if provider == "memory" and memory_policy is not None:
        requested = _memory_request(node, pod, container, resource)
        ms = memory_policy.state.machine_state
        free = {n: (ms[n].memory_map[resource].free if n in ms and resource in ms[n].memory_map else 0)
                for n in numa}
        capacity = {n: (ms[n].memory_map[resource].allocatable if n in ms and resource in ms[n].memory_map else 0)
                    for n in numa}
        return ResourceNeed("memory", resource, requested, free, capacity, hints)
    if provider == "devices":
        dm = node.device_manager
        requests = dm.container_requests(container) if container is not None else dm.pod_requests(pod)
        devices = dm.all_devices.get(resource, {})
        available = dm.available(resource)
        free = {n: sum(1 for d in available if d in devices and n in devices[d].numa_nodes) for n in numa}
        capacity = {n: sum(1 for d in devices.values() if n in d.numa_nodes) for n in numa}
        return ResourceNeed("devices", resource, requests.get(resource, 0), free, capacity, hints)
    return None


def _memory_request(node: "NodeAdmission", pod: "Pod", container: "Container | None", resource: str) -> int:
    if container is not None:
        q = container.resources.requests.get(resource)
        return q.value() if q is not None else 0
    from .memory.podlevel_memory import pod_requested_resources

    return pod_requested_resources(pod, node.gates).get(resource, 0)
