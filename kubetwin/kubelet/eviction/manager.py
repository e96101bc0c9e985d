"""The kubelet eviction manager over time (``managerImpl.synchronize`` and ``Admit``).

One :meth:`EvictionManager.synchronize` is one pass of the kubelet's 10-second loop: observe the
Summary, decide which thresholds are met (grace periods ignored) and which act (grace periods
served), report node conditions with their transition period, enforce local-storage limits,
then try node-level reclaim and evict at most one pod. State carried between passes is exactly
the kubelet's: first-observed times, last-observed conditions, the thresholds last acted on
(re-tested with minimum reclaim), the last observations (to skip stale stats).

Upstream: ``pkg/kubelet/eviction/eviction_manager.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Final, Iterable, Sequence

from ... import tracing as _tracing
from ...model.features import FeatureGates
from ...model.kubelet_config import KubeletConfiguration, Threshold
from ...model.pod import Pod, Toleration
from ...model.summary import Summary
from ..oom import is_critical_pod
from ..qos import BEST_EFFORT, get_pod_qos
from .local_storage import local_storage_violation
from .messages import REASON, eviction_message, node_condition_message
from .ranking import DiskLayout, signal_to_rank_func, stats_func
from .signals import (
    CONDITION_TO_TAINT,
    DISK_PRESSURE,
    IMAGEFS_AVAILABLE,
    IMAGEFS_INODES_FREE,
    MEMORY_PRESSURE,
    NODEFS_AVAILABLE,
    NODEFS_INODES_FREE,
    PID_PRESSURE,
    SIGNAL_TO_CONDITION,
    SIGNAL_TO_RESOURCE,
    Observations,
    make_signal_observations,
)
from .thresholds import by_eviction_priority, merge_thresholds, thresholds_met, update_containerfs_thresholds

#: ``immediateEvictionGracePeriodSeconds``: hard thresholds and local-storage limits.
IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS: Final = 1
#: The order conditions are listed in (the kubelet keeps them in a map; we keep them stable).
CONDITION_ORDER: Final = (MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE)
SPLIT_DISK_ERROR: Final = "KubeletSeparateDiskGC is turned off but we still have a split filesystem"

CONTAINERS: Final = "containers"  # containerGC.DeleteAllUnusedContainers
IMAGES: Final = "images"          # imageGC.DeleteUnusedImages


def signal_to_node_reclaim_funcs(layout: DiskLayout) -> dict[str, tuple[str, ...]]:
    """``buildSignalToNodeReclaimFuncs``: garbage collection tried before evicting, per signal."""
    both = (CONTAINERS, IMAGES)
    if layout.dedicated_image_fs and layout.split_container_fs:
        return {NODEFS_AVAILABLE: (CONTAINERS,), NODEFS_INODES_FREE: (CONTAINERS,),
                IMAGEFS_AVAILABLE: (IMAGES,), IMAGEFS_INODES_FREE: (IMAGES,)}
    if layout.dedicated_image_fs:
        return {IMAGEFS_AVAILABLE: both, IMAGEFS_INODES_FREE: both}
    return {NODEFS_AVAILABLE: both, NODEFS_INODES_FREE: both, IMAGEFS_AVAILABLE: both, IMAGEFS_INODES_FREE: both}


@dataclass(frozen=True, slots=True)
class Eviction:
    """A pod the manager killed: phase Failed, reason Evicted, this message, this grace period."""

    pod: Pod
    grace_period_seconds: int
    message: str
    reason: str = REASON
    #: Which rule: a threshold's signal, or ``localStorage``.
    cause: str = ""


@dataclass(frozen=True, slots=True)
class AdmitResult:
    pod: Pod
    admitted: bool
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class SyncResult:
    """What one synchronize saw and did."""

    conditions: tuple[str, ...] = ()
    #: Met, grace periods ignored (includes thresholds held by minimum reclaim).
    thresholds_met: tuple[Threshold, ...] = ()
    #: Met with their grace period served and fresh stats: the ones that may evict.
    thresholds_acting: tuple[Threshold, ...] = ()
    observations: Observations = field(default_factory=dict)
    resource_to_reclaim: str | None = None
    reclaimed: tuple[str, ...] = ()
    #: True when node-level reclaim alone brought every threshold back (with minimum reclaim).
    reclaim_sufficed: bool = False
    ranking: tuple[Pod, ...] = ()
    evicted: tuple[Eviction, ...] = ()
    error: str | None = None


ReclaimFunc = Callable[[tuple[str, ...]], Summary]


class EvictionManager:
    """One node's eviction manager. Time is in nanoseconds since the manager started."""

    def __init__(self, config: KubeletConfiguration, layout: DiskLayout = DiskLayout(),
                 thresholds: Sequence[Threshold] | None = None):
        self.config = config
        self.layout = layout
        self.gates: FeatureGates = config.feature_gate_values
        self.thresholds: list[Threshold] = list(config.eviction_thresholds() if thresholds is None else thresholds)
        self._layout_known = False
        self._rank_funcs = signal_to_rank_func(layout, self.gates)
        self._reclaim_funcs = signal_to_node_reclaim_funcs(layout)
        self.node_conditions: tuple[str, ...] = ()
        self._first_observed: dict[Threshold, int] = {}
        self._conditions_last_observed: dict[str, int] = {}
        self._thresholds_met: list[Threshold] = []
        self._last_observations: Observations = {}

    @property
    def thresholds_met(self) -> tuple[Threshold, ...]:
        """Thresholds met past their grace period at the last pass (``thresholdsMet``): the
        next pass keeps them until they are met no longer, minimum reclaim included."""
        return tuple(self._thresholds_met)

    @property
    def thresholds_first_observed(self) -> dict[Threshold, int]:
        """When each threshold met at the last pass was first seen met (``thresholdsFirstObservedAt``)."""
        return dict(self._first_observed)

    @property
    def tracking_thresholds(self) -> bool:
        """Some threshold was met at the last pass (acting or still in its grace period): a
        later pass may change something even if usage stays put."""
        return bool(self._thresholds_met or self._first_observed)

    # --- the loop ------------------------------------------------------------------------------
    def synchronize(self, now: int, summary: Summary, active_pods: Sequence[Pod],
                    reclaim: ReclaimFunc | None = None) -> SyncResult:
        """One pass; ``reclaim(funcs)`` runs image/container GC and returns the Summary after it
        (default: GC frees nothing)."""
        if _tracing.ACTIVE is not None:
            from ...tracing.eviction import traced_synchronize

            return traced_synchronize(summary, lambda: self._synchronize(now, summary, active_pods, reclaim))
        return self._synchronize(now, summary, active_pods, reclaim)

    def _synchronize(self, now: int, summary: Summary, active_pods: Sequence[Pod],
                     reclaim: ReclaimFunc | None = None) -> SyncResult:
        cfg = self.config
        thresholds = list(self.thresholds)  # the first pass still sees the configured list
        if not thresholds and not cfg.local_storage_capacity_isolation:
            return SyncResult(conditions=self.node_conditions)
        if not self._layout_known:
            if self.layout.split_container_fs and not self.gates.enabled("KubeletSeparateDiskGC"):
                return SyncResult(conditions=self.node_conditions, error=SPLIT_DISK_ERROR)
            self._layout_known = True
            self.thresholds = update_containerfs_thresholds(
                self.thresholds, dedicated_image_fs=self.layout.dedicated_image_fs,
                split_container_fs=self.layout.split_container_fs)

        observations = make_signal_observations(summary)
        met = thresholds_met(thresholds, observations, False)
        if self._thresholds_met:
            met = merge_thresholds(met, thresholds_met(self._thresholds_met, observations, True))

        first_observed = {t: self._first_observed.get(t, now) for t in met}
        current = {SIGNAL_TO_CONDITION[t.signal] for t in met if t.signal in SIGNAL_TO_CONDITION}
        last_observed = dict(self._conditions_last_observed)
        for c in current:
            last_observed[c] = now
        period = int(cfg.eviction_pressure_transition_period)
        conditions = tuple(c for c in CONDITION_ORDER if c in last_observed and now - last_observed[c] < period)
        acting = [t for t, at in first_observed.items() if now - at >= int(t.grace_period)]

        self.node_conditions = conditions
        self._first_observed = first_observed
        self._conditions_last_observed = last_observed
        self._thresholds_met = acting
        acting = self._with_updated_stats(acting, observations)
        self._last_observations = observations

        base = SyncResult(conditions=conditions, thresholds_met=tuple(met), observations=observations)
        stats = stats_func(summary)
        if cfg.local_storage_capacity_isolation:
            evicted = self._local_storage_eviction(active_pods, stats)
            if evicted:
                return replace(base, evicted=tuple(evicted))
        if not acting:
            return base

        acting = by_eviction_priority(acting)
        to_reclaim = acting[0]
        resource = SIGNAL_TO_RESOURCE.get(to_reclaim.signal)
        if resource is None:
            return replace(base, thresholds_acting=tuple(acting))
        base = replace(base, thresholds_acting=tuple(acting), resource_to_reclaim=resource)

        funcs = self._reclaim_funcs.get(to_reclaim.signal, ())
        if funcs:
            after = reclaim(funcs) if reclaim is not None else summary
            if not thresholds_met(self.thresholds, make_signal_observations(after), True):
                return replace(base, reclaimed=funcs, reclaim_sufficed=True)
        base = replace(base, reclaimed=funcs)

        if not active_pods:
            return base
        ranking = self._rank_funcs[to_reclaim.signal](active_pods, stats)
        for pod in ranking:
            if is_critical_pod(pod):
                continue  # never evicted, but keeps its place in the ranking
            grace = IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS
            if not to_reclaim.is_hard:
                grace = cfg.eviction_max_pod_grace_period
                tgps = pod.spec.termination_grace_period_seconds
                if tgps is not None:
                    grace = min(grace, tgps)
            message = eviction_message(resource, pod, stats(pod), acting, observations,
                                       self.gates.enabled("InPlacePodVerticalScaling"))
            return replace(base, ranking=tuple(ranking),
                           evicted=(Eviction(pod, grace, message, cause=to_reclaim.signal),))
        return replace(base, ranking=tuple(ranking))

    def _with_updated_stats(self, thresholds: Iterable[Threshold], observations: Observations) -> list[Threshold]:
        """``thresholdsUpdatedStats``: act only on signals whose stats are newer than last pass's."""
        out = []
        for t in thresholds:
            obs = observations.get(t.signal)
            if obs is None:
                continue
            last = self._last_observations.get(t.signal)
            if last is None or obs.time is None or last.time is None or obs.time > last.time:
                out.append(t)
        return out

    def _local_storage_eviction(self, pods: Sequence[Pod], stats) -> list[Eviction]:
        out = []
        for pod in pods:
            s = stats(pod)
            if s is None:
                continue
            message = local_storage_violation(pod, s, self.layout.dedicated_image_fs)
            if message is not None and not is_critical_pod(pod):
                out.append(Eviction(pod, IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS, message, cause="localStorage"))
        return out

    # --- admission -----------------------------------------------------------------------------
    def admit(self, pod: Pod) -> AdmitResult:
        """``Admit``: under MemoryPressure alone only BestEffort pods that do not tolerate the
        memory-pressure taint are turned away; any other condition turns away every pod;
        critical pods always get in."""
        conditions = self.node_conditions
        if not conditions or is_critical_pod(pod):
            return AdmitResult(pod, True)
        if conditions == (MEMORY_PRESSURE,):
            if get_pod_qos(pod, self.gates) != BEST_EFFORT:
                return AdmitResult(pod, True)
            if tolerates_taint(pod.spec.tolerations, CONDITION_TO_TAINT[MEMORY_PRESSURE], "NoSchedule"):
                return AdmitResult(pod, True)
        return AdmitResult(pod, False, REASON, node_condition_message(conditions))


def tolerates_taint(tolerations: Iterable[Toleration], key: str, effect: str, value: str = "") -> bool:
    """``TolerationsTolerateTaint`` for a taint with an empty value."""
    for t in tolerations:
        if t.effect and t.effect != effect:
            continue
        if t.key and t.key != key:
            continue
        if not t.key and t.operator != "Exists":
            continue
        if t.operator == "Exists":
            return True
        if t.operator in ("Equal", "") and t.value == value:
            return True
    return False
