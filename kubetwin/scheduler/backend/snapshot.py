"""The snapshot plugins read in a cycle: NodeInfos in node-tree order and the nodes whose pods
have (anti-)affinity (``pkg/scheduler/backend/cache/snapshot.go``).

Upstream's cache copies what changed into a Snapshot before each cycle (``UpdateSnapshot``);
kubetwin's long-running scheduler runs one cycle at a time, so its snapshot is live: the cache
(:mod:`.cache`) adds and removes pods through it, and it keeps, as upstream's
``havePodsWithAffinityNodeInfoList`` and ``havePodsWithRequiredAntiAffinityNodeInfoList`` do,
the nodes running pods with (required anti-)affinity — here as counts per node position, so a
pod leaving updates them without a walk.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from ...errors import KubetwinError
from ...model.node import Node
from ...model.pod import Pod
from ..framework.types import NodeInfo, PodInfo, ResourceAccounting, Snapshot
from .node_tree import node_tree_order


def _drop(counts: dict[int, int], i: int) -> None:
    left = counts.get(i, 0) - 1
    if left > 0:
        counts[i] = left
    else:
        counts.pop(i, None)


class LiveSnapshot(Snapshot):
    """The cache's snapshot, kept current: nodes with affinity pods come from its own counts."""

    def __init__(self, nodes: Iterable[Node], accounting: ResourceAccounting,
                 namespaces: Mapping[str, Mapping[str, str]] | None = None):
        infos = node_tree_order([NodeInfo(n, accounting) for n in nodes])
        super().__init__(infos, dict(namespaces or {}), [])
        if len(self.index) != len(infos):
            names = [ni.name for ni in infos]
            dup = next(n for n in names if names.count(n) > 1)
            raise KubetwinError(f"node {dup} is given twice")
        #: node position -> its pods with any pod (anti-)affinity / with required anti-affinity
        self.nodes_with_affinity: dict[int, int] = {}
        self.nodes_with_anti: dict[int, int] = {}
        self.pods_with_affinity = 0
        self.pods_with_required_anti_affinity = 0

    @property
    def have_pods_with_affinity(self) -> list[NodeInfo]:
        infos = self.node_infos
        return [infos[i] for i in self.nodes_with_affinity]

    def add_pod(self, i: int, info: PodInfo) -> None:
        """Node ``i`` runs the pod now (the cache's ``AddPod`` on its NodeInfo)."""
        self.node_infos[i].add_pod(info)
        if info.has_affinity:
            self.pods_with_affinity += 1
            self.nodes_with_affinity[i] = self.nodes_with_affinity.get(i, 0) + 1
        if info.has_required_anti_affinity:
            self.pods_with_required_anti_affinity += 1
            self.nodes_with_anti[i] = self.nodes_with_anti.get(i, 0) + 1

    def remove_pod(self, i: int, pod: Pod, info: PodInfo) -> None:
        """Node ``i`` no longer runs ``pod`` (added with ``info``)."""
        self.node_infos[i].remove_pod(pod)
        if info.has_affinity:
            self.pods_with_affinity -= 1
            _drop(self.nodes_with_affinity, i)
        if info.has_required_anti_affinity:
            self.pods_with_required_anti_affinity -= 1
            _drop(self.nodes_with_anti, i)

    def update_node(self, i: int, node: Node) -> Node:
        """Node ``i``'s object is now ``node`` (its pods stay); returns the old one."""
        ni = self.node_infos[i]
        old = ni.node
        ni.set_node(node)
        return old

    def take_over(self, old: "LiveSnapshot", src: np.ndarray, new_of: np.ndarray) -> None:
        """Nodes joined or left: the nodes both know keep their NodeInfos (with their pods) from
        ``old`` (``src[i]``: node ``i``'s position in ``old``, -1 if new; ``new_of``: the reverse)."""
        for i in np.flatnonzero(src >= 0):
            self.node_infos[i] = old.node_infos[src[i]]
        self.refresh()
        self.nodes_with_affinity = {int(new_of[i]): c for i, c in old.nodes_with_affinity.items()}
        self.nodes_with_anti = {int(new_of[i]): c for i, c in old.nodes_with_anti.items()}
        self.pods_with_affinity = old.pods_with_affinity
        self.pods_with_required_anti_affinity = old.pods_with_required_anti_affinity
