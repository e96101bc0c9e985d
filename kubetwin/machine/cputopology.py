"""The kubelet's view of the CPUs: ``CPUTopology`` and ``CPUDetails`` (``cpumanager/topology``).

``discover(machine)`` does what the kubelet's ``Discover(machineInfo)`` does:

* every thread of a core gets the core id = the core's smallest thread id (cAdvisor's
  ``core_id`` is only unique per socket, so it is not used), its ``socket_id``, the NUMA node
  that lists the core, and uncore cache id = the core's first uncore cache id, else the
  socket id;
* ``num_cpus`` = MachineInfo ``num_cores`` (taken from the field, not counted; 0 is the error
  "could not detect number of cpus"), ``num_sockets`` = ``num_sockets`` (the field),
  ``num_cores`` = cores listed over all NUMA nodes, ``num_numa_nodes`` / ``num_uncore_cache``
  = distinct ids among the CPUs (CPU-less NUMA nodes do not count);
* ``cpus_per_core/socket/uncore()`` are integer divisions of those counters (0 when the
  divisor is 0): on a hybrid CPU (P-cores with 2 threads, E-cores with 1) ``cpus_per_core``
  is 24 // 16 = 1, which is what the kubelet uses;
* a core without threads, or with a thread listed twice, is an error, as upstream.

``CPUDetails`` answers the set queries of upstream's ``CPUDetails`` map. Results are
``CPUSet`` values whether they hold CPU ids or NUMA/socket/core/uncore ids, like upstream.
For speed everything is precomputed once per machine as bit masks (one Python int per NUMA
node, socket, core and uncore cache, plus the parent → children id lists); a
``CPUDetails`` is that shared index plus the mask of CPUs it keeps, so ``keep_only`` is one
AND, and ``cpus_in_numa_nodes(0, 1)`` is two ORs and an AND, independent of machine size.

Methods, in upstream's names (snake_case): ``cpus``, ``numa_nodes``, ``sockets``, ``cores``,
``uncore_caches``, ``cpus_in_numa_nodes``, ``cpus_in_sockets``, ``cpus_in_cores``,
``cpus_in_uncore_caches``, ``numa_nodes_in_sockets``, ``sockets_in_numa_nodes``,
``cores_in_numa_nodes``, ``cores_in_sockets``, ``uncore_in_numa_nodes``,
``cores_needed_in_uncore_cache``, ``are_numa_nodes_in_same_socket``, ``keep_only``,
``info(cpu)``. ``CPUTopology`` adds ``cpu_core_id`` / ``cpu_socket_id`` / ``cpu_numa_node_id``
(``KeyError``-free: they raise ``ValueError("unknown CPU ID: N")``) and ``check_alignment``.

Upstream: ``pkg/kubelet/cm/cpumanager/topology/topology.go``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InputError
from ..model.cpuset import CPUSet

if TYPE_CHECKING:
    from .model import Machine


@dataclass(frozen=True, slots=True)
class CPUInfo:
    """The kubelet's per-CPU record."""

    numa_node_id: int
    socket_id: int
    core_id: int
    uncore_cache_id: int


def _mask_of(ids: dict[int, int], wanted: tuple[int, ...]) -> int:
    m = 0
    for i in wanted:
        m |= ids.get(i, 0)
    return m


class _Index:
    """Precomputed masks and parent → children lists, shared by every CPUDetails of a machine."""

    __slots__ = ("info", "numa", "socket", "core", "uncore", "all",
                 "numa_sockets", "socket_numas", "numa_cores", "socket_cores",
                 "uncore_cores", "numa_uncores")

    def __init__(self, info: dict[int, CPUInfo]):
        self.info = info
        numa: dict[int, int] = {}
        socket: dict[int, int] = {}
        core: dict[int, int] = {}
        uncore: dict[int, int] = {}
        rel: dict[str, dict[int, set[int]]] = {k: {} for k in
                                              ("ns", "sn", "nc", "sc", "uc", "nu")}
        allm = 0
        for cpu, i in info.items():
            bit = 1 << cpu
            allm |= bit
            numa[i.numa_node_id] = numa.get(i.numa_node_id, 0) | bit
            socket[i.socket_id] = socket.get(i.socket_id, 0) | bit
            core[i.core_id] = core.get(i.core_id, 0) | bit
            uncore[i.uncore_cache_id] = uncore.get(i.uncore_cache_id, 0) | bit
            rel["ns"].setdefault(i.numa_node_id, set()).add(i.socket_id)
            rel["sn"].setdefault(i.socket_id, set()).add(i.numa_node_id)
            rel["nc"].setdefault(i.numa_node_id, set()).add(i.core_id)
            rel["sc"].setdefault(i.socket_id, set()).add(i.core_id)
            rel["uc"].setdefault(i.uncore_cache_id, set()).add(i.core_id)
            rel["nu"].setdefault(i.numa_node_id, set()).add(i.uncore_cache_id)
        self.numa, self.socket, self.core, self.uncore, self.all = numa, socket, core, uncore, allm
        srt = {k: {a: tuple(sorted(b)) for a, b in v.items()} for k, v in rel.items()}
        self.numa_sockets, self.socket_numas = srt["ns"], srt["sn"]
        self.numa_cores, self.socket_cores = srt["nc"], srt["sc"]
        self.uncore_cores, self.numa_uncores = srt["uc"], srt["nu"]


class CPUDetails:
    """CPU id → (NUMA node, socket, core, uncore cache), restricted to a set of CPUs."""

    __slots__ = ("_idx", "_mask")

    def __init__(self, index: _Index, mask: int):
        self._idx = index
        self._mask = mask

    # --- basics -----------------------------------------------------------------------
    def keep_only(self, cpus: CPUSet) -> "CPUDetails":
        return CPUDetails(self._idx, self._mask & cpus.mask)

    def cpus(self) -> CPUSet:
        return CPUSet.from_mask(self._mask)

    def __len__(self) -> int:
        return self._mask.bit_count()

    def __contains__(self, cpu: int) -> bool:
        return cpu >= 0 and (self._mask >> cpu) & 1 == 1

    def info(self, cpu: int) -> CPUInfo:
        if cpu not in self:
            raise ValueError(f"unknown CPU ID: {cpu}")
        return self._idx.info[cpu]

    # --- ids present among the kept CPUs ------------------------------------------------
    def _present(self, masks: dict[int, int], ids=None) -> CPUSet:
        m = self._mask
        cand = masks if ids is None else ids
        return CPUSet(i for i in cand if masks.get(i, 0) & m)

    def numa_nodes(self) -> CPUSet:
        return self._present(self._idx.numa)

    def sockets(self) -> CPUSet:
        return self._present(self._idx.socket)

    def cores(self) -> CPUSet:
        return self._present(self._idx.core)

    def uncore_caches(self) -> CPUSet:
        return self._present(self._idx.uncore)

    # --- CPUs in units -------------------------------------------------------------------
    def cpus_in_numa_nodes(self, *ids: int) -> CPUSet:
        return CPUSet.from_mask(_mask_of(self._idx.numa, ids) & self._mask)

    def cpus_in_sockets(self, *ids: int) -> CPUSet:
        return CPUSet.from_mask(_mask_of(self._idx.socket, ids) & self._mask)

    def cpus_in_cores(self, *ids: int) -> CPUSet:
        return CPUSet.from_mask(_mask_of(self._idx.core, ids) & self._mask)

    def cpus_in_uncore_caches(self, *ids: int) -> CPUSet:
        return CPUSet.from_mask(_mask_of(self._idx.uncore, ids) & self._mask)

    # --- units in units (a child counts when one of its CPUs is kept *and* in the parent) -
    def _children(self, parent_masks: dict[int, int], child_masks: dict[int, int],
                  rel: dict[int, tuple[int, ...]], ids: tuple[int, ...]) -> CPUSet:
        out = 0
        for p in ids:
            within = parent_masks.get(p, 0) & self._mask
            if not within:
                continue
            for c in rel.get(p, ()):
                if child_masks[c] & within:
                    out |= 1 << c
        return CPUSet.from_mask(out)

    def numa_nodes_in_sockets(self, *ids: int) -> CPUSet:
        x = self._idx
        return self._children(x.socket, x.numa, x.socket_numas, ids)

    def sockets_in_numa_nodes(self, *ids: int) -> CPUSet:
        x = self._idx
        return self._children(x.numa, x.socket, x.numa_sockets, ids)

    def cores_in_numa_nodes(self, *ids: int) -> CPUSet:
        x = self._idx
        return self._children(x.numa, x.core, x.numa_cores, ids)

    def cores_in_sockets(self, *ids: int) -> CPUSet:
        x = self._idx
        return self._children(x.socket, x.core, x.socket_cores, ids)

    def uncore_in_numa_nodes(self, *ids: int) -> CPUSet:
        x = self._idx
        return self._children(x.numa, x.uncore, x.numa_uncores, ids)

    def cores_in_uncore_caches(self, *ids: int) -> CPUSet:
        x = self._idx
        return self._children(x.uncore, x.core, x.uncore_cores, ids)

    def cores_needed_in_uncore_cache(self, num_cores_needed: int, *ids: int) -> CPUSet:
        """All cores of the uncore caches, or the ``num_cores_needed`` lowest ids of them."""
        cores = self.cores_in_uncore_caches(*ids)
        if cores.size() <= num_cores_needed:
            return cores
        return CPUSet(cores.sorted()[:max(num_cores_needed, 0)])

    def are_numa_nodes_in_same_socket(self, numa_nodes) -> bool:
        present = self.numa_nodes()
        if any(n not in present for n in numa_nodes):
            return False
        return self.sockets_in_numa_nodes(*numa_nodes).size() <= 1

    def __repr__(self) -> str:
        return f"CPUDetails(cpus={str(self.cpus())!r})"


@dataclass(frozen=True)
class CPUTopology:
    """The kubelet's ``CPUTopology``: counters from MachineInfo plus per-CPU details."""

    num_cpus: int
    num_cores: int
    num_sockets: int
    num_numa_nodes: int
    num_uncore_cache: int
    details: CPUDetails

    def cpus_per_core(self) -> int:
        return self.num_cpus // self.num_cores if self.num_cores else 0

    def cpus_per_socket(self) -> int:
        return self.num_cpus // self.num_sockets if self.num_sockets else 0

    def cpus_per_uncore(self) -> int:
        return self.num_cpus // self.num_uncore_cache if self.num_uncore_cache else 0

    def cpu_core_id(self, cpu: int) -> int:
        return self.details.info(cpu).core_id

    def cpu_socket_id(self, cpu: int) -> int:
        return self.details.info(cpu).socket_id

    def cpu_numa_node_id(self, cpu: int) -> int:
        return self.details.info(cpu).numa_node_id

    def check_alignment(self, cpus: CPUSet) -> bool:
        """Whether ``cpus`` lie inside one uncore cache (``CheckAlignment().UncoreCache``)."""
        if cpus.size() <= 1:
            return True
        info = self.details._idx.info
        ids = set()
        for c in cpus:
            if c not in info:
                return False
            ids.add(info[c].uncore_cache_id)
        return len(ids) == 1

    def all_cpus(self) -> CPUSet:
        return self.details.cpus()


def discover(machine: "Machine") -> CPUTopology:
    """``Discover``: the kubelet's CPU topology of a machine."""
    if machine.num_cores == 0:
        raise InputError("could not detect number of cpus", path="num_cores",
                         fix="MachineInfo num_cores must be the number of logical CPUs")
    info: dict[int, CPUInfo] = {}
    num_cores = 0
    for ni, node in enumerate(machine.nodes):
        num_cores += len(node.cores)
        for ci, core in enumerate(node.cores):
            where = f"topology[{ni}].cores[{ci}].thread_ids"
            if not core.threads:
                raise InputError("no cpus provided", path=where)
            if len(set(core.threads)) != len(core.threads):
                raise InputError("cpus provided are not unique", path=where)
            rec = CPUInfo(node.id, core.socket_id, core.id, core.uncore_cache_id)
            for t in core.threads:
                info[t] = rec
    index = _Index(info)
    return CPUTopology(
        num_cpus=machine.num_cores,
        num_cores=num_cores,
        num_sockets=machine.num_sockets,
        num_numa_nodes=len(index.numa),
        num_uncore_cache=len(index.uncore),
        details=CPUDetails(index, index.all),
    )
