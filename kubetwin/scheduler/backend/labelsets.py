"""The bound pods grouped by label set, so that a selector is matched once per distinct label set
instead of once per pod.

The spreading and inter-pod affinity plugins count the pods a selector matches on every node
(``PreFilter``/``PreScore`` of ``pkg/scheduler/framework/plugins/podtopologyspread`` and
``interpodaffinity``: upstream walks every pod of every node). Their selectors read a pod's
namespace and labels only — and whether it is terminating, which the counts are taken with or
without — and a cluster's pods have few distinct label sets (a workload's replicas share theirs),
so :class:`LabelSets` keeps, per (namespace, live, labels), how many such pods each node runs; a
new selector's counts per node are the sum over the groups it matches. The cache keeps it in
step with each bind and removal from the start (a few hundred nanoseconds per bind); a cluster
whose pods have too many distinct label sets (a label unique to each pod) gives it up and the
counts walk the pods again.

Not an upstream module: the fast path's index of what upstream walks pod by pod.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import msgspec
import numpy as np

from ...model.pod import Pod
from ..framework.types import NodeInfo

#: (namespace, not terminating, the labels) encoded: pods with equal labels written in another
#: order make two groups, each matched alike (a finer grouping, the same counts)
LabelSetKey = bytes
#: give up once there are more distinct label sets than this and more than a quarter of the pods
MAX_GROUPS = 20_000


_ENCODE = msgspec.msgpack.Encoder().encode


def label_set_key(pod: Pod) -> LabelSetKey:
    m = pod.metadata
    return _ENCODE((m.namespace, m.deletion_timestamp is None, m.labels))


class LabelSets:
    """The bound pods by label set: per group a pod of it and how many run on each node."""

    __slots__ = ("groups", "pods")

    def __init__(self) -> None:
        #: key -> (a pod of the group, its namespace, live?, {node: pods of the group on it})
        self.groups: dict[LabelSetKey, tuple[Pod, str, bool, dict[int, int]]] = {}
        #: bound pods counted
        self.pods = 0

    @classmethod
    def of(cls, infos: Sequence[NodeInfo]) -> "LabelSets | None":
        """Grouped from every node's pods; None when they have too many distinct label sets."""
        out = cls()
        for i, ni in enumerate(infos):
            for pi in ni.pods:
                p = pi.pod
                out.add(label_set_key(p), p, i)
        return None if out.too_many() else out

    def too_many(self) -> bool:
        return len(self.groups) > MAX_GROUPS and len(self.groups) * 4 > self.pods

    def add(self, key: LabelSetKey, pod: Pod, i: int) -> None:
        got = self.groups.get(key)
        if got is None:
            m = pod.metadata
            got = self.groups[key] = (pod, m.namespace, m.deletion_timestamp is None, {})
        nodes = got[3]
        nodes[i] = nodes.get(i, 0) + 1
        self.pods += 1

    def remove(self, key: LabelSetKey, i: int) -> None:
        got = self.groups.get(key)
        if got is None:
            return
        nodes = got[3]
        left = nodes.get(i, 0) - 1
        if left > 0:
            nodes[i] = left
        else:
            nodes.pop(i, None)
            if not nodes:
                del self.groups[key]
        self.pods -= 1

    def counts(self, n: int, namespace: str | None, terminating: bool, matches: Callable[[Pod], bool]) -> np.ndarray:
        """Pods per node (``n`` nodes) whose group ``matches`` (a test of a pod's namespace and
        labels, asked of one pod per group), of ``namespace`` only unless it is None, terminating
        ones only with ``terminating``."""
        nodes: list[int] = []
        weights: list[int] = []
        for pod, ns, live, on in self.groups.values():
            if (namespace is not None and ns != namespace) or not (terminating or live) or not matches(pod):
                continue
            nodes.extend(on)
            weights.extend(on.values())
        return _per_node(n, nodes, weights)


def _per_node(n: int, nodes: Sequence[int], weights: Sequence[Any]) -> np.ndarray:
    arr = np.zeros(n, dtype=np.int64)
    if nodes:
        np.add.at(arr, np.array(nodes, dtype=np.int64), np.array(weights, dtype=np.int64))
    return arr
