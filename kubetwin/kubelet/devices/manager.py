"""The Device Manager (``pkg/kubelet/cm/devicemanager``) as a Topology Manager hint provider.

Extended resources advertised by device plugins are handed out as whole devices: requests
equal limits, so limits are what counts. Hints list every NUMA mask with enough free (or
reusable) devices, preferred when the mask is as narrow as the request allows over *all*
devices. Allocation takes devices from the reuse pool (init containers' devices), then the ones
inside the merged affinity, then the rest (``filterByAffinity``). Go iterates sets in random
order where the kubelet picks among equivalent devices; kubetwin picks by the kubelet's own node
ordering, then by device id, so its answers are one of the kubelet's possible answers and stable.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable

from ...model.pod import Container, Pod, is_sidecar
from ...model.resources import PodResourcesOptions, pod_limits
from ..admission_errors import AdmissionError
from ..topology.bitmask import iterate_bitmasks
from ..topology.hint import TopologyHint
from .inventory import Device, DeviceInventory

#: The fake NUMA node of devices without topology (``nodeWithoutTopology``).
NODE_WITHOUT_TOPOLOGY = -1

AffinityFn = Callable[[str, str], TopologyHint]
#: pod UID -> container -> resource -> NUMA node (-1 = none) -> device ids (``DevicesPerNUMA``)
PodDevices = dict[str, dict[str, dict[str, dict[int, list[str]]]]]


def _no_affinity(pod_uid: str, container: str) -> TopologyHint:
    return TopologyHint(None, True)


@dataclass
class DeviceCheckpointData:
    """``kubelet_internal_checkpoint``: allocations and the resources registered when it was written."""

    pod_devices: PodDevices = field(default_factory=dict)
    registered: dict[str, list[str]] = field(default_factory=dict)


class DeviceManager:
    """Hint provider and allocator for device-plugin resources."""

    def __init__(self, inventory: DeviceInventory, numa_nodes: tuple[int, ...],
                 affinity: AffinityFn = _no_affinity, checkpoint: DeviceCheckpointData | None = None):
        self.numa_nodes = tuple(numa_nodes)
        self.affinity = affinity
        self.all_devices: dict[str, dict[str, Device]] = {}
        self.healthy: dict[str, set[str]] = {}
        self.unhealthy: dict[str, set[str]] = {}
        self.pod_devices: PodDevices = {}
        self.allocated: dict[str, set[str]] = {}
        self.devices_to_reuse: dict[str, dict[str, set[str]]] = {}
        self._masks = tuple(iterate_bitmasks(self.numa_nodes))
        if checkpoint is not None:
            # readCheckpoint: allocations come back; registered resources exist with no devices
            # until their plugin registers again (here: the inventory, right below).
            for uid, conts in checkpoint.pod_devices.items():
                for cname, res in conts.items():
                    for rname, per_numa in res.items():
                        self._insert(uid, cname, rname, {n: list(ids) for n, ids in per_numa.items()})
            for rname in checkpoint.registered:
                self.healthy.setdefault(rname, set())
                self.unhealthy.setdefault(rname, set())
        for rname, devices in inventory.resources.items():
            self._register(rname, devices)
        self.allocated = self._devices_in_use()

    def fork(self, affinity: AffinityFn) -> "DeviceManager":
        """A copy with its own allocations and device sets, asking ``affinity``."""
        new = copy.copy(self)
        new.affinity = affinity
        new.all_devices = {r: dict(d) for r, d in self.all_devices.items()}
        new.healthy = {r: set(s) for r, s in self.healthy.items()}
        new.unhealthy = {r: set(s) for r, s in self.unhealthy.items()}
        new.pod_devices = {uid: {c: {r: {n: list(ids) for n, ids in per.items()} for r, per in res.items()}
                                 for c, res in conts.items()} for uid, conts in self.pod_devices.items()}
        new.allocated = {r: set(s) for r, s in self.allocated.items()}
        new.devices_to_reuse = {uid: {r: set(s) for r, s in per.items()} for uid, per in self.devices_to_reuse.items()}
        return new

    # --- registration (genericDeviceUpdateCallback) ----------------------------------------
    def _register(self, rname: str, devices: tuple[Device, ...]) -> None:
        self.all_devices[rname] = {d.id: d for d in devices}
        self.healthy[rname] = {d.id for d in devices if d.healthy}
        self.unhealthy[rname] = {d.id for d in devices if not d.healthy}

    def capacity(self) -> tuple[dict[str, int], dict[str, int]]:
        """``GetCapacity``: capacity counts every device, allocatable only the healthy ones."""
        cap: dict[str, int] = {}
        alloc: dict[str, int] = {}
        for rname, ids in self.healthy.items():
            cap[rname] = len(ids)
            alloc[rname] = len(ids)
        for rname, ids in self.unhealthy.items():
            cap[rname] = cap.get(rname, 0) + len(ids)
        return cap, alloc

    def is_device_plugin_resource(self, rname: str) -> bool:
        return rname in self.healthy or rname in self.allocated

    # --- podDevices bookkeeping ------------------------------------------------------------
    def _insert(self, uid: str, cname: str, rname: str, per_numa: dict[int, list[str]]) -> None:
        self.pod_devices.setdefault(uid, {}).setdefault(cname, {})[rname] = per_numa

    def _devices_in_use(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for conts in self.pod_devices.values():
            for res in conts.values():
                for rname, per_numa in res.items():
                    s = out.setdefault(rname, set())
                    for ids in per_numa.values():
                        s.update(ids)
        return out

    def container_devices(self, uid: str, cname: str, rname: str) -> set[str] | None:
        per_numa = self.pod_devices.get(uid, {}).get(cname, {}).get(rname)
        if per_numa is None:
            return None
        return {d for ids in per_numa.values() for d in ids}

    def pod_devices_of(self, uid: str, rname: str) -> set[str]:
        out: set[str] = set()
        for res in self.pod_devices.get(uid, {}).values():
            for ids in res.get(rname, {}).values():
                out.update(ids)
        return out

    def devices_by_resource(self, uid: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for res in self.pod_devices.get(uid, {}).values():
            for rname, per_numa in res.items():
                out.setdefault(rname, set()).update(d for ids in per_numa.values() for d in ids)
        return out

    def devices_for(self, uid: str, cname: str) -> list[tuple[str, list[str]]]:
        """(resource, sorted device ids) of one container, resources in name order."""
        res = self.pod_devices.get(uid, {}).get(cname, {})
        return [(r, sorted({d for ids in per_numa.values() for d in ids})) for r, per_numa in sorted(res.items())]

    def remove_pod(self, uid: str) -> None:
        """Stale-state sweep (``UpdateAllocatedDevices``) for one pod: its devices are free again."""
        if self.pod_devices.pop(uid, None) is not None:
            self.allocated = self._devices_in_use()
        self.devices_to_reuse.pop(uid, None)

    # --- hints ------------------------------------------------------------------------------
    def _numa_of(self, rname: str, dev_id: str) -> tuple[int, ...]:
        d = self.all_devices.get(rname, {}).get(dev_id)
        return d.numa_nodes if d is not None else ()

    def has_topology(self, rname: str) -> bool:
        """``deviceHasTopologyAlignment``: any device of the resource reports NUMA nodes."""
        return any(d.numa_nodes for d in self.all_devices.get(rname, {}).values())

    def available(self, rname: str) -> set[str]:
        return self.healthy.get(rname, set()) - self.allocated.get(rname, set())

    def generate_hints(self, rname: str, available: set[str], reusable: set[str], request: int) -> list[TopologyHint]:
        devices = self.all_devices.get(rname, {})
        dev_masks = {d: sum(1 << n for n in dev.numa_nodes) for d, dev in devices.items()}
        min_size = len(self.numa_nodes)
        found: list[int] = []
        for mask in self._masks:
            in_mask = sum(1 for m in dev_masks.values() if m & mask)
            if in_mask >= request and mask.bit_count() < min_size:
                min_size = mask.bit_count()
            matching = 0
            ok = True
            for d in reusable:
                if d not in devices or not devices[d].numa_nodes:
                    continue  # a reusable device without topology fits any mask but is not counted
                if not dev_masks[d] & mask:
                    ok = False
                    break
                matching += 1
            if not ok:
                continue
            matching += sum(1 for d in available if dev_masks.get(d, 0) & mask)
            if matching >= request:
                found.append(mask)
        return [TopologyHint(m, m.bit_count() == min_size) for m in found]

    def _hints_for(self, requests: dict[str, int], allocated_of, reusable_of) -> dict[str, list[TopologyHint] | None]:
        hints: dict[str, list[TopologyHint] | None] = {}
        for rname, requested in requests.items():
            if not self.has_topology(rname):
                hints[rname] = None
                continue
            allocated = allocated_of(rname)
            if allocated:
                if len(allocated) != requested:
                    hints[rname] = []
                else:
                    hints[rname] = self.generate_hints(rname, allocated, set(), requested)
                continue
            available = self.available(rname)
            reusable = reusable_of(rname)
            if len(available | reusable) < requested:
                hints[rname] = []
                continue
            hints[rname] = self.generate_hints(rname, available, reusable, requested)
        return hints

    def container_requests(self, c: Container) -> dict[str, int]:
        return {r: q.value() for r, q in c.resources.limits.items() if self.is_device_plugin_resource(r)}

    def pod_requests(self, pod: Pod) -> dict[str, int]:
        limits = pod_limits(pod, PodResourcesOptions(exclude_overhead=True))
        return {r: q.value() for r, q in limits.items() if self.is_device_plugin_resource(r)}

    def get_topology_hints(self, pod: Pod, c: Container):
        requests = self.container_requests(c)
        if not requests:
            return None
        reuse = self.devices_to_reuse.get(pod.uid, {})
        return self._hints_for(requests, lambda r: self.container_devices(pod.uid, c.name, r) or set(),
                               lambda r: reuse.get(r, set()))

    def get_pod_topology_hints(self, pod: Pod):
        requests = self.pod_requests(pod)
        if not requests:
            return None
        return self._hints_for(requests, lambda r: self.pod_devices_of(pod.uid, r), lambda r: set())

    # --- allocation ---------------------------------------------------------------------------
    def allocate(self, pod: Pod, c: Container) -> None:
        """``Allocate``: one container; init containers' devices become reusable by later ones."""
        uid = pod.uid
        reuse = self.devices_to_reuse.setdefault(uid, {})
        for other in [u for u in self.devices_to_reuse if u != uid]:
            del self.devices_to_reuse[other]
        self._allocate_container(pod, c, reuse)
        for ic in pod.spec.init_containers:
            if ic.name == c.name:
                if not is_sidecar(ic):
                    self._add_to_reuse(uid, c.name, reuse)
                else:
                    self._remove_from_reuse(uid, c.name, reuse)
                return
        self._remove_from_reuse(uid, c.name, reuse)

    def allocate_pod(self, pod: Pod) -> None:
        """The Device Manager does not allocate at pod level (v1.36): devices come at container start."""

    def allocate_at_container_start(self, pod: Pod) -> None:
        """``GetDeviceRunContainerOptions`` re-issuing ``Allocate`` for containers without devices."""
        for c, _ in pod.all_containers():
            if any(self.container_devices(pod.uid, c.name, r) is None
                   for r, v in self.container_requests(c).items() if v > 0):
                self.allocate(pod, c)

    def _add_to_reuse(self, uid: str, cname: str, reuse: dict[str, set[str]]) -> None:
        for rname, per_numa in self.pod_devices.get(uid, {}).get(cname, {}).items():
            reuse.setdefault(rname, set()).update(d for ids in per_numa.values() for d in ids)

    def _remove_from_reuse(self, uid: str, cname: str, reuse: dict[str, set[str]]) -> None:
        for rname, per_numa in self.pod_devices.get(uid, {}).get(cname, {}).items():
            if rname in reuse:
                reuse[rname].difference_update(d for ids in per_numa.values() for d in ids)

    def _allocate_container(self, pod: Pod, c: Container, reuse: dict[str, set[str]]) -> None:
        for rname, q in c.resources.limits.items():
            if not self.is_device_plugin_resource(rname):
                continue
            needed = q.value()
            devs = self.devices_to_allocate(pod.uid, c.name, rname, needed, reuse.get(rname, set()))
            if not devs:
                continue
            per_numa: dict[int, list[str]] = {}
            for d in devs:
                nodes = self._numa_of(rname, d) or (NODE_WITHOUT_TOPOLOGY,)
                for n in nodes:
                    per_numa.setdefault(n, []).append(d)
            self._insert(pod.uid, c.name, rname, per_numa)

    def devices_to_allocate(self, uid: str, cname: str, rname: str, required: int, reusable: set[str]) -> list[str]:
        """``devicesToAllocate``: the ids to hand to the plugin's Allocate, in the order taken."""
        needed = required
        have = self.container_devices(uid, cname, rname)
        if have is not None:
            needed -= len(have)
            if needed != 0:
                raise AdmissionError(f'pod "{uid}" container "{cname}" changed request for resource "{rname}" '
                                     f"from {len(have)} to {required}")
        healthy = self.healthy.get(rname)
        if healthy is None:
            raise AdmissionError(f"cannot allocate unregistered device {rname}")
        if not healthy:
            raise AdmissionError(f"no healthy devices present; cannot allocate unhealthy devices {rname}")
        if have is not None and not have <= healthy:
            raise AdmissionError(f"previously allocated devices are no longer healthy; cannot allocate unhealthy "
                                 f"devices {rname}")
        if needed == 0:
            return []
        allocated: list[str] = []
        taken: set[str] = set()
        in_use = self.allocated.setdefault(rname, set())

        def take_from(pool: list[str]) -> bool:
            nonlocal needed
            for d in pool:
                if d in taken:
                    continue
                in_use.add(d)
                taken.add(d)
                allocated.append(d)
                needed -= 1
                if needed == 0:
                    return True
            return False

        if take_from(sorted(reusable)):
            return allocated
        available = healthy - in_use
        if len(available) < needed:
            raise AdmissionError(f"requested number of devices unavailable for {rname}. Requested: {needed}, "
                                 f"Available: {len(available)}")
        aligned, unaligned, no_affinity = self.filter_by_affinity(uid, cname, rname, available)
        if take_from(aligned) or take_from(unaligned) or take_from(no_affinity):
            return allocated
        raise AdmissionError(f"unexpectedly allocated less resources than required. Requested: {required}, "
                             f"Got: {required - needed}")

    def filter_by_affinity(self, uid: str, cname: str, rname: str, available: set[str]
                           ) -> tuple[list[str], list[str], list[str]]:
        """``filterByAffinity``: devices inside the merged affinity, outside it, and without topology."""
        hint = self.affinity(uid, cname)
        if not self.has_topology(rname) or hint.affinity is None:
            return [], [], sorted(available)
        per_node: dict[int, set[str]] = {}
        for d in available:
            for n in self._numa_of(rname, d) or (NODE_WITHOUT_TOPOLOGY,):
                per_node.setdefault(n, set()).add(d)
        mask = hint.affinity

        def in_hint(n: int) -> bool:
            return n >= 0 and bool(mask >> n & 1)

        # in the affinity first (fewer devices first), then other real nodes (fewer first), then -1;
        # ties by node id (Go's sort.Slice leaves them unordered)
        def key(n: int) -> tuple[int, int, int]:
            group = 0 if in_hint(n) else (2 if n == NODE_WITHOUT_TOPOLOGY else 1)
            return group, len(per_node[n]), n

        nodes = sorted(per_node, key=key)
        rank = {n: i for i, n in enumerate(nodes)}
        lists: tuple[list[tuple[int, str]], list[tuple[int, str]], list[tuple[int, str]]] = ([], [], [])
        for d in available:
            first = min((rank[n] for n in (self._numa_of(rname, d) or (NODE_WITHOUT_TOPOLOGY,))))
            n = nodes[first]
            idx = 2 if n == NODE_WITHOUT_TOPOLOGY else (0 if in_hint(n) else 1)
            lists[idx].append((first, d))
        preferred, other, without_topology = ([d for _, d in sorted(lst)] for lst in lists)
        return preferred, other, without_topology

    # --- checkpoint --------------------------------------------------------------------------
    def checkpoint_data(self) -> DeviceCheckpointData:
        """``writeCheckpoint``: allocations, and each resource's healthy devices as registered."""
        return DeviceCheckpointData(
            {u: {c: {r: {n: list(ids) for n, ids in pn.items()} for r, pn in res.items()}
                 for c, res in conts.items()} for u, conts in self.pod_devices.items()},
            {r: sorted(ids) for r, ids in self.healthy.items()})

    def numa_map(self) -> dict[str, dict[str, dict]]:
        """resource -> device -> {numaNodes, health, owner} for the node picture."""
        owners: dict[tuple[str, str], str] = {}
        for uid, conts in self.pod_devices.items():
            for cname, res in conts.items():
                for rname, per_numa in res.items():
                    for ids in per_numa.values():
                        for d in ids:
                            owners[(rname, d)] = f"{uid}/{cname}"
        out: dict[str, dict[str, dict]] = {}
        for rname, devices in sorted(self.all_devices.items()):
            out[rname] = {d.id: {"numaNodes": list(d.numa_nodes), "health": d.health,
                                 "owner": owners.get((rname, d.id))} for d in devices.values()}
        return out
