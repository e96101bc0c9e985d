"""The one immutable hardware model every reader produces and every writer consumes.

Its shape follows cAdvisor's ``MachineInfo`` (NUMA nodes → cores → threads) because that is
what the kubelet reads: anything the kubelet decides must be derivable from these fields
alone, and a MachineInfo written from this model and read back must give the same model.
What MachineInfo cannot carry (PCI devices, where a reader found the machine) rides along
in fields the MachineInfo writer ignores.

Two core identities are kept on purpose: ``Core.core_id`` is cAdvisor's (the sysfs
``core_id``, unique only within a socket) and ``Core.id`` is the kubelet's (the smallest
thread id of the core, unique on the machine) — see ``cpumanager/topology/topology.go``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..model.cpuset import CPUSet

if TYPE_CHECKING:
    from .cputopology import CPUTopology

PCI_KINDS = ("gpu", "nic", "nvme", "other")
#: Linux's ``MAX_NUMNODES`` (``CONFIG_NODES_SHIFT`` is at most 10): NUMA node ids 0-1023.
MAX_NUMA_NODE_ID = 1023


@dataclass(frozen=True, slots=True)
class Cache:
    """A CPU cache as cAdvisor reports it (``info.Cache``); ``size`` in bytes."""

    id: int
    size: int
    type: str  # "Data", "Instruction" or "Unified"
    level: int


@dataclass(frozen=True, slots=True)
class HugePages:
    """Pre-allocated huge pages of one size; ``page_size`` in KiB, as cAdvisor keeps it."""

    page_size: int
    num_pages: int

    @property
    def bytes(self) -> int:
        return self.page_size * 1024 * self.num_pages


@dataclass(frozen=True, slots=True)
class Core:
    """A physical core and its hardware threads (logical CPUs)."""

    core_id: int  # cAdvisor's: sysfs core_id, unique per socket only
    socket_id: int
    threads: tuple[int, ...]  # logical CPU ids, in the order the source lists them
    caches: tuple[Cache, ...] = ()  # private caches (L1/L2)
    uncore_caches: tuple[Cache, ...] = ()  # L3 caches shared by part of the node only

    @property
    def id(self) -> int:
        """The kubelet's core id: the smallest thread id (``getUniqueCoreID``)."""
        return min(self.threads)

    @property
    def uncore_cache_id(self) -> int:
        """The kubelet's uncore cache id: the first uncore cache, else the socket id."""
        return self.uncore_caches[0].id if self.uncore_caches else self.socket_id


@dataclass(frozen=True, slots=True)
class NUMANode:
    """One NUMA node; ``memory`` in bytes; ``distances`` is this node's row of the matrix,
    ordered by the node ids of the machine (as sysfs ``nodeN/distance`` lists them)."""

    id: int
    memory: int
    hugepages: tuple[HugePages, ...] = ()
    cores: tuple[Core, ...] = ()
    caches: tuple[Cache, ...] = ()  # caches shared by the whole node (an L3 per node)
    distances: tuple[int, ...] = ()

    @property
    def cpus(self) -> CPUSet:
        return CPUSet(t for c in self.cores for t in c.threads)


def _pci_kind(class_code: int) -> str:
    """GPU / NIC / NVMe / other from the 16-bit PCI class+subclass code."""
    base, sub = class_code >> 8, class_code & 0xFF
    if base == 0x03:  # display controllers: VGA, XGA, 3D, other
        return "gpu"
    if base == 0x12:  # processing accelerators are GPUs for scheduling purposes
        return "gpu"
    if base == 0x02:  # network controllers
        return "nic"
    if base == 0x01 and sub == 0x08:  # non-volatile memory controller
        return "nvme"
    return "other"


@dataclass(frozen=True, slots=True)
class PCIDevice:
    """A PCI function and where it sits: ``class_code`` is the 16-bit class+subclass
    (``0x0302`` = 3D controller), ``numa_nodes`` the NUMA node(s) it is local to (empty when
    unknown: sysfs ``numa_node`` = -1).

    ``pcie_root`` is the PCIe root complex the function hangs off, named as Linux names its
    ``/sys/devices`` directory and as DRA drivers publish ``resource.kubernetes.io/pcieRoot``:
    ``pci<domain>:<root bus>`` (``"pci0000:00"``); empty when the source cannot tell. Devices
    under one root share the host bridge, which is what "GPU and NIC close together" means."""

    address: str  # domain:bus:device.function, e.g. "0000:3b:00.0"
    class_code: int
    vendor_id: int
    device_id: int
    numa_nodes: tuple[int, ...] = ()
    model: str = ""
    vendor: str = ""
    pcie_root: str = ""

    @property
    def kind(self) -> str:
        return _pci_kind(self.class_code)

    @property
    def numa_node(self) -> int | None:
        """The single NUMA node the device is attached to (``None``: unknown or several)."""
        return self.numa_nodes[0] if len(self.numa_nodes) == 1 else None


@dataclass(frozen=True, slots=True)
class LogicalCPU:
    """Everything the kubelet knows about one logical CPU (its ``CPUInfo``), plus cAdvisor's
    per-socket core id."""

    id: int
    core_id: int  # kubelet: smallest thread id of the core
    socket_id: int
    numa_node_id: int
    uncore_cache_id: int
    cadvisor_core_id: int


@dataclass(frozen=True)
class Machine:
    """A machine's hardware topology. Counters are MachineInfo's own fields (``num_cores`` is
    logical CPUs), not recomputed: the kubelet trusts them, so must we."""

    num_cores: int
    num_physical_cores: int
    num_sockets: int
    memory_capacity: int
    nodes: tuple[NUMANode, ...]
    swap_capacity: int = 0
    hugepages: tuple[HugePages, ...] = ()
    pci_devices: tuple[PCIDevice, ...] = ()
    cpu_frequency_khz: int = 0
    machine_id: str = ""
    system_uuid: str = ""
    boot_id: str = ""
    name: str = ""  # a label for pictures (hwloc DMI product, spec text, file name)
    # MachineInfo keys this model does not interpret (filesystems, disk_map, ...), kept as
    # canonical JSON so a MachineInfo passes through unchanged and the model stays hashable
    extra_json: str = field(default="{}", compare=True)

    def __post_init__(self) -> None:
        """Whatever the reader: ids within Linux's limits, each NUMA id once, each CPU in one core
        (readers check the same with their own field paths first; this is the last guard)."""
        from ..errors import InputError
        from ..model.cpuset import MAX_CPU_ID

        node_ids: set[int] = set()
        cpus = 0
        count = 0
        for n in self.nodes:
            if not 0 <= n.id <= MAX_NUMA_NODE_ID or n.id in node_ids:
                raise InputError(f"NUMA node id {n.id} is out of range or listed twice", path="topology")
            node_ids.add(n.id)
            for c in n.cores:
                for t in c.threads:
                    if not 0 <= t <= MAX_CPU_ID:
                        raise InputError(f"CPU id {t} is beyond the largest CPU id kubetwin reads ({MAX_CPU_ID})",
                                         path="topology")
                    cpus |= 1 << t
                    count += 1
        if cpus.bit_count() != count:
            raise InputError("a CPU is listed in two cores", path="topology",
                             fix="a logical CPU belongs to one core of one socket and one NUMA node")

    # --- derived views (computed once: the model is immutable) ---------------------------
    @cached_property
    def logical_cpus(self) -> dict[int, LogicalCPU]:
        """CPU id → its info (each CPU is in one core: ``__post_init__``)."""
        out: dict[int, LogicalCPU] = {}
        for node in self.nodes:
            for core in node.cores:
                if not core.threads:
                    continue
                cid, unc = core.id, core.uncore_cache_id
                for t in core.threads:
                    out[t] = LogicalCPU(t, cid, core.socket_id, node.id, unc, core.core_id)
        return out

    @cached_property
    def cpus(self) -> CPUSet:
        return CPUSet(self.logical_cpus)

    @cached_property
    def socket_ids(self) -> tuple[int, ...]:
        return tuple(sorted({c.socket_id for n in self.nodes for c in n.cores}))

    @cached_property
    def node_ids(self) -> tuple[int, ...]:
        return tuple(n.id for n in self.nodes)

    def node(self, node_id: int) -> NUMANode:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    @cached_property
    def uncore_caches(self) -> dict[int, CPUSet]:
        """Uncore (L3) cache group id → its CPUs, with the kubelet's socket fallback."""
        groups: dict[int, int] = {}
        for info in self.logical_cpus.values():
            groups[info.uncore_cache_id] = groups.get(info.uncore_cache_id, 0) | (1 << info.id)
        return {k: CPUSet.from_mask(v) for k, v in sorted(groups.items())}

    @cached_property
    def distance_matrix(self) -> dict[int, dict[int, int]]:
        """``{from: {to: distance}}`` over nodes whose row has one entry per node."""
        ids = self.node_ids
        out: dict[int, dict[int, int]] = {}
        for n in self.nodes:
            if len(n.distances) == len(ids):
                out[n.id] = dict(zip(ids, n.distances))
        return out

    @property
    def extra(self) -> dict[str, Any]:
        return json.loads(self.extra_json)

    def cpu_topology(self) -> CPUTopology:
        from .cputopology import discover

        return discover(self)


def canonical_extra(extra: Mapping[str, Any] | None) -> str:
    return json.dumps(dict(extra or {}), sort_keys=True, separators=(",", ":"))


def machine_counts(nodes: Iterable[NUMANode]) -> tuple[int, int, int]:
    """(logical CPUs, physical cores, sockets) counted from the topology: threads listed,
    cores listed (what the kubelet's ``Discover`` counts as NumCores), distinct sockets."""
    cpus: set[int] = set()
    cores = 0
    sockets: set[int] = set()
    for n in nodes:
        cores += len(n.cores)
        for c in n.cores:
            cpus.update(c.threads)
            sockets.add(c.socket_id)
    return len(cpus), cores, len(sockets)
