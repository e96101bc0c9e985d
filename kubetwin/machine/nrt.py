"""NodeResourceTopology (``topology.node.k8s.io/v1alpha2``) out, shaped as node-feature-discovery's
``nfd-topology-updater`` publishes it: one zone ``node-<id>`` of type ``Node`` per NUMA node,
``costs`` = that node's row of the distance matrix (``node-<id>`` → distance, itself included),
and per zone the resources the scheduler's NodeResourceTopologyMatch plugin compares: ``cpu``
(the zone's logical CPUs), ``memory`` and ``hugepages-<size>``, each with capacity,
allocatable and available.

Without reservations allocatable = available = capacity; ``allocatable`` (zone id →
resource → quantity string) overrides per zone, and available follows allocatable.
"""

from __future__ import annotations

from typing import Any, Mapping

from .model import Machine


def hugepage_resource(page_size_kib: int) -> str:
    """The Kubernetes resource name of a huge page size (``hugepages-2Mi``, ``hugepages-1Gi``)."""
    size = page_size_kib * 1024
    for suffix, mult in (("Ei", 1 << 60), ("Pi", 1 << 50), ("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if size % mult == 0:
            return f"hugepages-{size // mult}{suffix}"
    return f"hugepages-{size}"


def zone_capacity(machine: Machine) -> dict[int, dict[str, str]]:
    """NUMA node id → resource → capacity (quantity strings, memory in bytes)."""
    out: dict[int, dict[str, str]] = {}
    for n in machine.nodes:
        res = {"cpu": str(len(n.cpus))}
        hp_total = 0
        hps: dict[str, str] = {}
        for h in n.hugepages:
            hps[hugepage_resource(h.page_size)] = str(h.bytes)
            hp_total += h.bytes
        res["memory"] = str(max(n.memory - hp_total, 0))
        res.update(hps)
        out[n.id] = res
    return out


def to_nrt(machine: Machine, *, node_name: str = "", allocatable: Mapping[int, Mapping[str, str]] | None = None,
           topology_policy: str = "none", scope: str = "container") -> dict[str, Any]:
    caps = zone_capacity(machine)
    matrix = machine.distance_matrix
    zones = []
    for n in machine.nodes:
        alloc = dict(caps[n.id])
        alloc.update((allocatable or {}).get(n.id, {}))
        zone: dict[str, Any] = {"name": f"node-{n.id}", "type": "Node"}
        if n.id in matrix:
            zone["costs"] = [{"name": f"node-{to}", "value": d} for to, d in matrix[n.id].items()]
        zone["resources"] = [
            {"name": r, "capacity": caps[n.id][r], "allocatable": alloc[r], "available": alloc[r]}
            for r in sorted(caps[n.id])
        ]
        zones.append(zone)
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": node_name or machine.name or "node"},
        "topologyPolicies": [],
        "attributes": [{"name": "topologyManagerPolicy", "value": topology_policy},
                       {"name": "topologyManagerScope", "value": scope}],
        "zones": zones,
    }
