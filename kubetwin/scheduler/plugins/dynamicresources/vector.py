"""DynamicResources' Filter and Score over every node at once (the twins of :mod:`.dynamicresources`),
from the Filter verdicts the plugin keeps between cycles (:mod:`.verdicts`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....model.pod import Pod
from ...backend.cache import ClusterState
from ...fastpath.vector import SKIPPED, UU, FilterVerdict, ScoreVector, Vectorised, default_normalize, single_reason
from ...framework.interface import CycleState
from .dynamicresources import ERR_CANNOT_ALLOCATE


def filter_dynamic_resources(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict | None:
    """Claims that all wait for an allocation, from the plugin's verdicts kept per (claim specs,
    node) until the node's devices change; None (per-node Filter) for anything else."""
    fail = plugin.filter_all(state, pod, cs.infos)
    if fail is None:
        return None
    return single_reason(plugin.name, fail, UU, ERR_CANNOT_ALLOCATE)


def score_dynamic_resources(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    """Prioritized-list ranks from this cycle's Filter results; a pod that left nothing to
    score (no claims, nothing allocated, gate off) scores 0 everywhere, which adds nothing."""
    if not plugin.scores_pod(pod):
        return SKIPPED
    raw_list = plugin.node_scores(pod, [cs.names[i] for i in idx.tolist()])
    raw = np.array(raw_list, dtype=np.int64)
    return ScoreVector(raw, default_normalize(raw, False))


def pre_filter_is_skip(cs: ClusterState, pod: Pod, plugin: Any) -> bool:
    """PreFilter Skips a pod without claims while no DeviceClass could back an extended resource."""
    return not (pod.spec.resource_claims or cs.handle.objects.get("DeviceClass"))


VECTORISED = Vectorised(filter=filter_dynamic_resources, score=score_dynamic_resources,
                        pre_filter_is_skip=pre_filter_is_skip)
