"""Eviction results as plain data: the JSON contract of the conformance format (kinds
EvictionRanking and EvictionDecision), which ``kubetwin evict`` prints or renders as tables
(:mod:`kubetwin.cli.eviction_tables`). Upstream: the eviction manager's own types
(``pkg/kubelet/eviction/types.go``) and the figures its rankers read (``helpers.go``)."""

from __future__ import annotations

from typing import Any, Sequence

from ...model.features import FeatureGates
from ...model.kubelet_config import Threshold
from ...model.pod import Pod
from ...model.summary import Summary
from .manager import Eviction
from .ranking import DiskLayout, memory_usage, pod_disk_usage, process_usage, resource_request
from .signals import RESOURCE_EPHEMERAL_STORAGE, RESOURCE_INODES, RESOURCE_MEMORY, SIGNAL_TO_RESOURCE, Observations
from .thresholds import threshold_to_dict
from .timeline import StepResult


def observations_to_dict(obs: Observations) -> dict[str, dict[str, str | None]]:
    return {s: {"available": str(o.available), "capacity": None if o.capacity is None else str(o.capacity)}
            for s, o in obs.items()}


def eviction_to_dict(e: Eviction) -> dict[str, Any]:
    return {"name": e.pod.name, "namespace": e.pod.namespace, "gracePeriodSeconds": e.grace_period_seconds,
            "reason": e.reason, "message": e.message, "cause": e.cause}


def step_to_dict(r: StepResult) -> dict[str, Any]:
    s = r.sync
    return {
        "at": r.at / 1e9,
        "conditions": list(s.conditions),
        "thresholdsMet": [threshold_to_dict(t) for t in s.thresholds_met],
        "thresholdsActing": [threshold_to_dict(t) for t in s.thresholds_acting],
        "signals": observations_to_dict(s.observations),
        "resourceToReclaim": s.resource_to_reclaim,
        "reclaimed": list(s.reclaimed),
        "ranking": [p.name for p in s.ranking],
        "evicted": [eviction_to_dict(e) for e in s.evicted],
        "admission": [{"name": a.pod.name, "namespace": a.pod.namespace, "admitted": a.admitted,
                       "reason": a.reason, "message": a.message} for a in r.admission],
        "error": s.error,
    }


def decision_to_dict(thresholds: Sequence[Threshold], effective: Sequence[Threshold],
                     results: Sequence[StepResult]) -> dict[str, Any]:
    return {"thresholds": [threshold_to_dict(t) for t in thresholds],
            "effectiveThresholds": [threshold_to_dict(t) for t in effective],
            "steps": [step_to_dict(r) for r in results]}


def ranking_rows(signal: str, ranked: Sequence[Pod], summary: Summary, layout: DiskLayout,
                 gates: FeatureGates | None = None) -> list[dict[str, Any]]:
    """Per ranked pod, the figures the comparators looked at."""
    from .ranking import ALL_FS, stats_func

    stats = stats_func(summary)
    resource = SIGNAL_TO_RESOURCE[signal]
    rows = []
    for i, pod in enumerate(ranked, 1):
        s = stats(pod)
        row: dict[str, Any] = {"rank": i, "name": pod.name, "namespace": pod.namespace,
                               "priority": pod.spec.priority or 0, "hasStats": s is not None}
        if resource == RESOURCE_MEMORY:
            usage = memory_usage(s) if s else 0
            req = resource_request(pod, RESOURCE_MEMORY, gates).value()
        elif resource in (RESOURCE_EPHEMERAL_STORAGE, RESOURCE_INODES):
            disk, inodes = pod_disk_usage(s, pod, ALL_FS) if s else (0, 0)
            usage = inodes if resource == RESOURCE_INODES else disk
            req = resource_request(pod, resource, gates).value()
        else:
            usage, req = (process_usage(s) if s else 0), None
        row.update(usage=usage, request=req, exceeds=None if req is None else usage > req)
        rows.append(row)
    return rows


def oom_to_dict(r: Any) -> dict[str, Any]:
    def row(c: Any) -> dict[str, Any]:
        return {"pod": c.pod.name, "namespace": c.pod.namespace, "container": c.container, "qosClass": c.qos,
                "oomScoreAdj": c.oom_score_adj, "workingSetBytes": c.working_set, "swapUsageBytes": c.swap_usage,
                "memoryMax": c.memory_max, "memoryMin": c.memory_min, "memoryLow": c.memory_low,
                "memoryHigh": c.memory_high, "swapMax": c.swap_max, "badness": c.badness,
                "throttled": c.throttled, "overLimit": c.over_limit}

    return {"memoryCapacity": r.memory_capacity, "swapCapacity": r.swap_capacity,
            "containerKills": [{"pod": k.pod.name, "namespace": k.pod.namespace, "container": k.container,
                                "scope": k.scope, "reason": k.reason, "restarts": k.restarts,
                                "wholeContainer": k.whole_container} for k in r.container_kills],
            "nodeOOMOrder": [row(c) for c in r.node_order]}
