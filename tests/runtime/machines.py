"""Machines of nri-plugins' topology-aware unit tests (``pools_test.go``'s sysfs test data),
written from their facts: sockets, NUMA nodes and their CPUs, hyperthread pairs, L3 sharing,
memory per node (``MemTotal``), distances, isolated CPUs."""

from __future__ import annotations

from kubetwin.machine.machineinfo import machine_from_machineinfo
from kubetwin.machine.model import Machine

KB = 1024


def _machine(nodes: list[dict], sibling: int, package_of, l3_of, name: str) -> Machine:
    """``nodes``: [{"id", "cpus": [first threads...], "memory", "distances"}]; CPU c's sibling is
    c + ``sibling``."""
    topo = []
    for n in nodes:
        cores = []
        for c in n["cpus"]:
            threads = [c, c + sibling] if sibling else [c]
            caches = [{"id": c, "size": 32768, "type": "Data", "level": 1},
                      {"id": c, "size": 32768, "type": "Instruction", "level": 1},
                      {"id": c, "size": 1 << 20, "type": "Unified", "level": 2}]
            cores.append({"core_id": c, "socket_id": package_of(c), "thread_ids": threads, "caches": caches,
                          "uncore_caches": [{"id": l3_of(c), "size": 40 << 20, "type": "Unified", "level": 3}]})
        topo.append({"node_id": n["id"], "memory": n["memory"], "cores": cores, "distances": n["distances"]})
    ncpu = sum(len(n["cpus"]) for n in nodes) * (2 if sibling else 1)
    doc = {"num_cores": ncpu, "num_physical_cores": sum(len(n["cpus"]) for n in nodes),
           "num_sockets": len({package_of(c) for n in nodes for c in n["cpus"]}),
           "memory_capacity": sum(n["memory"] for n in nodes), "topology": topo}
    return machine_from_machineinfo(doc, name=name)


def desktop() -> Machine:
    """One socket, 10 cores × 2 threads (c, c+10), one NUMA node."""
    return _machine([{"id": 0, "cpus": list(range(10)), "memory": 65621548 * KB, "distances": [10]}], 10,
                    lambda c: 0, lambda c: 0, "desktop")


SERVER_DISTANCES = [[10, 21, 11, 21, 17, 28], [21, 10, 21, 11, 28, 28], [11, 21, 10, 21, 28, 17],
                    [21, 11, 21, 10, 28, 28], [17, 28, 28, 28, 10, 28], [28, 28, 17, 28, 28, 10]]
SERVER_ISOLATED = "4-7,60-63"


def server() -> Machine:
    """Two sockets of two NUMA nodes (SNC), CPU c on node c % 4 and socket c % 2, 28 CPUs per node
    (threads c, c+56); NUMA nodes 4 and 5 hold PMEM only (closest to nodes 0 and 2)."""
    mem = [32372996, 33023416, 33023424, 33018848, 130023424, 130023424]
    nodes = [{"id": i, "cpus": [c for c in range(56) if c % 4 == i] if i < 4 else [], "memory": mem[i] * KB,
              "distances": SERVER_DISTANCES[i]} for i in range(6)]
    return _machine(nodes, 56, lambda c: c % 2, lambda c: c % 2, "server")


def four_sockets() -> Machine:
    """Four sockets of one NUMA node each, 18 cores × 2 threads (c, c+72) per socket."""
    mem = [196726504, 198172236, 198137748, 198170672]
    nodes = [{"id": i, "cpus": list(range(18 * i, 18 * i + 18)), "memory": mem[i] * KB,
              "distances": [10 if j == i else 21 for j in range(4)]} for i in range(4)]
    return _machine(nodes, 72, lambda c: c // 18, lambda c: c // 18, "4-socket-server-nosnc")
