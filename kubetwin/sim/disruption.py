"""PodDisruptionBudgets as the disruption controller keeps their status, for voluntary evictions
(the VPA updater, the Cluster Autoscaler's drain) through the Eviction API.

Upstream (read, not copied): ``pkg/controller/disruption/disruption.go`` (``getExpectedPodCount``,
``countHealthyPods``, ``updatePdbStatus``: ``disruptionsAllowed = currentHealthy -
desiredHealthy``, percentages of the expected count rounded up) and the Eviction API's check in
``pkg/registry/core/pod/storage/eviction.go``. Simplifications, stated: the expected count is the
matching pods that exist (pending or running) rather than their controllers' scale, and a running
pod is healthy (no readiness probes are simulated).
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from ..model.pod import Pod
from ..scheduler.plugins.defaultpreemption.pdb import _selects


def _scaled(value: int | str, total: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


def disruptions_allowed(pdb: Any, pods: Iterable[tuple[Pod, bool]]) -> int:
    """``pods``: (pod, running) of the PDB's namespace; how many of them may be evicted now."""
    matching = [(p, r) for p, r in pods if p.metadata.namespace == pdb.metadata.namespace and _selects(pdb, p)]
    expected = len(matching)
    healthy = sum(1 for _, r in matching if r)
    spec = pdb.spec
    if spec.max_unavailable is not None:
        desired = max(0, expected - _scaled(spec.max_unavailable, expected))
    elif spec.min_available is not None:
        desired = _scaled(spec.min_available, expected)
    else:
        desired = 0
    return max(0, healthy - desired)


def eviction_allowed(pod: Pod, pdbs: Iterable[Any], pods: list[tuple[Pod, bool]]) -> bool:
    """The Eviction API's answer: every PDB that selects the pod allows one more disruption."""
    for pdb in pdbs:
        if pdb.metadata.namespace != pod.metadata.namespace or not _selects(pdb, pod):
            continue
        if disruptions_allowed(pdb, pods) < 1:
            return False
    return True
