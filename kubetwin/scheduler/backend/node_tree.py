"""The cache's node tree: the order in which a cycle visits nodes (``pkg/scheduler/backend/cache/node_tree.go``).

Nodes are grouped by zone (region and zone labels) in order of appearance, and listed one node
per zone in turn. Which nodes a sampled cycle looks at, and where the next cycle starts, follow
this order.
"""

from __future__ import annotations

from typing import Sequence, TypeVar

from ..framework.types import NodeInfo

N = TypeVar("N", bound=NodeInfo)


def node_tree_order(nodes: Sequence[N]) -> list[N]:
    """The cache's ``nodeTree`` listing: one node per zone in turn, zones in order of appearance."""
    zones: dict[str, list[N]] = {}
    for ni in nodes:
        region = ni.labels.get("topology.kubernetes.io/region", "")
        zone = ni.labels.get("topology.kubernetes.io/zone", "")
        key = f"{region}:\x00:{zone}" if region or zone else ""
        zones.setdefault(key, []).append(ni)
    out: list[N] = []
    lists = list(zones.values())
    i = 0
    while len(out) < len(nodes):
        for lst in lists:
            if i < len(lst):
                out.append(lst[i])
        i += 1
    return out
