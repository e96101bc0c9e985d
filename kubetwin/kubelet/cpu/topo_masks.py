"""Bit masks of one ``CPUTopology``, computed once, for the allocator's inner loops.

The allocator counts available CPUs per NUMA node, socket, core and uncore cache many times per
request; with one int mask per unit and the available CPUs as another int, each count is an AND
and a popcount. Built only through ``CPUTopology``'s public queries and cached per topology.

Upstream: ``pkg/kubelet/cm/cpumanager/topology`` (``CPUDetails`` as bit masks)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

if TYPE_CHECKING:
    from ...machine.cputopology import CPUTopology


@dataclass(frozen=True, eq=False)
class TopoMasks:
    topo: "CPUTopology"
    all: int
    numa: dict[int, int]
    socket: dict[int, int]
    core: dict[int, int]
    uncore: dict[int, int]
    numa_sockets: dict[int, tuple[int, ...]]
    socket_numas: dict[int, tuple[int, ...]]
    socket_cores: dict[int, tuple[int, ...]]
    numa_cores: dict[int, tuple[int, ...]]
    numa_uncores: dict[int, tuple[int, ...]]
    uncore_cores: dict[int, tuple[int, ...]]
    cpu_numa: dict[int, int]
    cpu_core: dict[int, int]
    cpu_socket: dict[int, int]
    cpus_per_core: int
    cpus_per_socket: int
    cpus_per_uncore: int
    numa_first: bool


_CACHE: "WeakKeyDictionary[CPUTopology, TopoMasks]" = WeakKeyDictionary()


def masks_of(topo: "CPUTopology") -> TopoMasks:
    try:
        return _CACHE[topo]
    except (KeyError, TypeError):
        pass
    d = topo.details
    numas = d.numa_nodes().sorted()
    sockets = d.sockets().sorted()
    cores = d.cores().sorted()
    uncores = d.uncore_caches().sorted()
    cpu_numa, cpu_core, cpu_socket = {}, {}, {}
    for cpu in d.cpus():
        info = d.info(cpu)
        cpu_numa[cpu], cpu_core[cpu], cpu_socket[cpu] = info.numa_node_id, info.core_id, info.socket_id
    tm = TopoMasks(
        topo=topo,
        all=d.cpus().mask,
        numa={n: d.cpus_in_numa_nodes(n).mask for n in numas},
        socket={s: d.cpus_in_sockets(s).mask for s in sockets},
        core={c: d.cpus_in_cores(c).mask for c in cores},
        uncore={u: d.cpus_in_uncore_caches(u).mask for u in uncores},
        numa_sockets={n: tuple(d.sockets_in_numa_nodes(n).sorted()) for n in numas},
        socket_numas={s: tuple(d.numa_nodes_in_sockets(s).sorted()) for s in sockets},
        socket_cores={s: tuple(d.cores_in_sockets(s).sorted()) for s in sockets},
        numa_cores={n: tuple(d.cores_in_numa_nodes(n).sorted()) for n in numas},
        numa_uncores={n: tuple(d.uncore_in_numa_nodes(n).sorted()) for n in numas},
        uncore_cores={u: tuple(d.cores_in_uncore_caches(u).sorted()) for u in uncores},
        cpu_numa=cpu_numa, cpu_core=cpu_core, cpu_socket=cpu_socket,
        cpus_per_core=topo.cpus_per_core(),
        cpus_per_socket=topo.cpus_per_socket(),
        cpus_per_uncore=topo.cpus_per_uncore(),
        numa_first=topo.num_sockets >= topo.num_numa_nodes,
    )
    try:
        _CACHE[topo] = tm
    except TypeError:
        pass
    return tm


def numa_mask_of_cpus(tm: TopoMasks, cpus: int) -> int:
    """The NUMA affinity (bit per NUMA node) covering the CPUs in ``cpus``."""
    out = 0
    for n, m in tm.numa.items():
        if cpus & m:
            out |= 1 << n
    return out
