"""The autoscalers of a scenario: HPA and VPA objects, the controllers' flags, node groups' sizes.

    spec:
      horizon: 24h                               # required: autoscalers act until the horizon
      autoscaling:
        horizontalPodAutoscaler: {syncPeriod: 15s, tolerance: 0.1, cpuInitializationPeriod: 5m,
                                  initialReadinessDelay: 30s, downscaleStabilization: 5m}
        verticalPodAutoscaler: {recommenderInterval: 1m, updaterInterval: 1m, minReplicas: 2,
                                evictionTolerance: 0.5}
        clusterAutoscaler: {scanInterval: 10s, expander: least-waste, estimator: binpacking,
                            scaleDownUtilizationThreshold: 0.5, scaleDownUnneededTime: 10m,
                            scaleDownDelayAfterAdd: 10m, nodeProvisioningTime: 2m,
                            maxNodesTotal: 0, maxNodesPerScaleUp: 1000, scaleDownEnabled: true,
                            maxScaleDownParallelism: 10, maxDrainParallelism: 1,
                            unremovableNodeRecheckTimeout: 5m}
      nodeGroups: [{name, count, minSize, maxSize, machine, ...}]   # minSize/maxSize: autoscaled

Defaults are the upstream flags' defaults (kube-controller-manager ``--horizontal-pod-autoscaler-*``,
vertical-pod-autoscaler 1.7.1 recommender/updater flags, cluster-autoscaler 1.36 flags);
``nodeProvisioningTime`` (how long the cloud takes to bring a node up) is the cloud's, not the
autoscaler's, and kubetwin's own default. ``estimator: kubelet-aware`` is kubetwin's what-if
(beyond upstream): a node counts as fitting only if its kubelet would admit the pods.

Not an upstream module: strict reading of kubetwin's scenario fields (docs/scenario-format.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import InputError
from ..model.strict import BOOLEAN, INTEGER, NUMBER, STRING, STRING_OR_NUMBER, check, obj, unknown_key_error
from .ca_planner import PlannerLimits
from .workload import seconds

ESTIMATORS = ("binpacking", "kubelet-aware")

_DURATION = STRING_OR_NUMBER
_HPA = obj(syncPeriod=_DURATION, tolerance=NUMBER, cpuInitializationPeriod=_DURATION, initialReadinessDelay=_DURATION,
           downscaleStabilization=_DURATION)
_VPA = obj(recommenderInterval=_DURATION, updaterInterval=_DURATION, minReplicas=INTEGER, evictionTolerance=NUMBER)
_CA = obj(scanInterval=_DURATION, expander=STRING, estimator=STRING, scaleDownUtilizationThreshold=NUMBER,
          scaleDownUnneededTime=_DURATION, scaleDownDelayAfterAdd=_DURATION, nodeProvisioningTime=_DURATION,
          maxNodesTotal=INTEGER, maxNodesPerScaleUp=INTEGER, scaleDownEnabled=BOOLEAN, priorities=STRING,
          maxScaleDownParallelism=INTEGER, maxDrainParallelism=INTEGER, unremovableNodeRecheckTimeout=_DURATION,
          ignoreDaemonSetsUtilization=BOOLEAN, forceDaemonSets=BOOLEAN)
#: the ``spec.autoscaling`` field spec (also read by the Simulation's strict decoding)
AUTOSCALING_SPEC = obj(horizontalPodAutoscaler=_HPA, verticalPodAutoscaler=_VPA, clusterAutoscaler=_CA)


@dataclass(frozen=True)
class HPAFlags:
    """kube-controller-manager's ``--horizontal-pod-autoscaler-*`` flags."""

    sync_period: float = 15.0
    tolerance: float = 0.1
    cpu_initialization_period: float = 300.0
    initial_readiness_delay: float = 30.0
    downscale_stabilization: float = 300.0


@dataclass(frozen=True)
class VPAFlags:
    """The recommender's and updater's flags (vertical-pod-autoscaler 1.7.1)."""

    recommender_interval: float = 60.0
    updater_interval: float = 60.0
    min_replicas: int = 2
    eviction_tolerance: float = 0.5
    #: ``--pod-update-threshold`` / ``podLifetimeUpdateThreshold`` / ``--min-change-priority``
    pod_lifetime_update_threshold: float = 12 * 3600.0
    min_change_priority: float = 0.1


@dataclass(frozen=True)
class CAFlags:
    """cluster-autoscaler 1.36's flags kubetwin acts on."""

    scan_interval: float = 10.0
    expander: tuple[str, ...] = ("random",)
    estimator: str = "binpacking"
    scale_down_utilization_threshold: float = 0.5
    scale_down_unneeded_time: float = 600.0
    scale_down_delay_after_add: float = 600.0
    node_provisioning_time: float = 120.0
    max_nodes_total: int = 0
    max_nodes_per_scale_up: int = 1000
    scale_down_enabled: bool = True
    #: the priority expander's ConfigMap data (``priorities``), when given
    priorities: str | None = None
    #: ``--max-scale-down-parallelism``, ``--max-drain-parallelism``, ``--unremovable-node-recheck-timeout``
    planner: PlannerLimits = field(default_factory=PlannerLimits)
    #: ``--ignore-daemonsets-utilization``: DaemonSet pods left out of a node's utilization
    ignore_daemon_sets_utilization: bool = False
    #: ``--force-ds``: a template built from a node of the group gets the pods of every DaemonSet
    #: that should run on it, not only those running on that node
    force_daemon_sets: bool = False


@dataclass(frozen=True)
class NodeGroupSize:
    """A node group the Cluster Autoscaler may resize: its bounds and its template node."""

    name: str
    min_size: int
    max_size: int
    template: Any   # kubetwin.sim.scenario.SimNode: what a new node of the group looks like
    #: the group's DRA drivers (``kubetwin.sim.scenario.DRADriver``): a new node publishes its slices
    drivers: tuple[Any, ...] = ()


@dataclass
class Autoscaling:
    """Everything the autoscalers of one scenario need, checked when the scenario is read."""

    hpa: HPAFlags = field(default_factory=HPAFlags)
    vpa: VPAFlags = field(default_factory=VPAFlags)
    ca: CAFlags | None = None
    hpas: list[tuple[Any, str]] = field(default_factory=list)   # (HPASpec, file)
    vpas: list[tuple[Any, str]] = field(default_factory=list)   # (VPASpec, file)
    groups: dict[str, NodeGroupSize] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return bool(self.hpas or self.vpas or (self.ca is not None and self.groups))


def _num(v: Any, path: str, lo: float, hi: float | None = None) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < lo or (hi is not None and v > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f">= {lo}"
        raise InputError(f"Invalid value: {v!r}: must be a number {bound}", path=path)
    return float(v)


def _int(v: Any, path: str, lo: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise InputError(f"Invalid value: {v!r}: must be an integer >= {lo}", path=path)
    return v


def parse_autoscaling(raw: Any, path: str = "spec.autoscaling") -> Autoscaling:
    """``spec.autoscaling`` (strict: unknown fields refused with the nearest name)."""
    out = Autoscaling()
    if raw is None:
        return out
    check(raw, AUTOSCALING_SPEC, prefix=path)
    h = raw.get("horizontalPodAutoscaler") or {}
    p = f"{path}.horizontalPodAutoscaler"
    out.hpa = HPAFlags(
        seconds(h.get("syncPeriod", 15), f"{p}.syncPeriod", allow_zero=False),
        _num(h.get("tolerance", 0.1), f"{p}.tolerance", 0.0, 1.0),
        seconds(h.get("cpuInitializationPeriod", 300), f"{p}.cpuInitializationPeriod"),
        seconds(h.get("initialReadinessDelay", 30), f"{p}.initialReadinessDelay"),
        seconds(h.get("downscaleStabilization", 300), f"{p}.downscaleStabilization"))
    v = raw.get("verticalPodAutoscaler") or {}
    p = f"{path}.verticalPodAutoscaler"
    out.vpa = VPAFlags(
        seconds(v.get("recommenderInterval", 60), f"{p}.recommenderInterval", allow_zero=False),
        seconds(v.get("updaterInterval", 60), f"{p}.updaterInterval", allow_zero=False),
        _int(v.get("minReplicas", 2), f"{p}.minReplicas", 1),
        _num(v.get("evictionTolerance", 0.5), f"{p}.evictionTolerance", 0.0, 1.0))
    c = raw.get("clusterAutoscaler")
    if c is not None:
        out.ca = parse_ca_flags(c, f"{path}.clusterAutoscaler")
    return out


def parse_expander(text: Any, path: str) -> tuple[str, ...]:
    """``--expander``: a comma-separated chain of expander names (checked by the library)."""
    from ..autoscale.clusterautoscaler import build_expander

    if not isinstance(text, str) or not text:
        raise InputError(f"Invalid value: {text!r}: expander names, comma-separated", path=path)
    names = tuple(s.strip() for s in text.split(","))
    build_expander(names, priorities={}, path=path)   # names, order and duplicates checked here
    return names


def parse_estimator(text: Any, path: str) -> str:
    if text not in ESTIMATORS:
        raise unknown_key_error(str(text), ESTIMATORS, path=path, what="estimator")
    return str(text)


def parse_ca_flags(c: Mapping[str, Any], p: str) -> CAFlags:
    threshold = _num(c.get("scaleDownUtilizationThreshold", 0.5), f"{p}.scaleDownUtilizationThreshold", 0.0, 1.0)
    expander = parse_expander(c.get("expander", "random"), f"{p}.expander")
    priorities = c.get("priorities")
    if "priority" in expander and priorities is None:
        raise InputError("the priority expander needs its ConfigMap's priorities", path=f"{p}.priorities",
                         fix="give priorities: the text of cluster-autoscaler-priority-expander's data.priorities")
    if priorities is not None:
        from ..autoscale.clusterautoscaler import parse_priorities

        try:
            parse_priorities(str(priorities))
        except InputError as exc:
            raise exc.within(f"{p}.priorities") from None
    return CAFlags(
        seconds(c.get("scanInterval", 10), f"{p}.scanInterval", allow_zero=False), expander,
        parse_estimator(c.get("estimator", "binpacking"), f"{p}.estimator"), threshold,
        seconds(c.get("scaleDownUnneededTime", 600), f"{p}.scaleDownUnneededTime"),
        seconds(c.get("scaleDownDelayAfterAdd", 600), f"{p}.scaleDownDelayAfterAdd"),
        seconds(c.get("nodeProvisioningTime", 120), f"{p}.nodeProvisioningTime"),
        _int(c.get("maxNodesTotal", 0), f"{p}.maxNodesTotal"),
        _int(c.get("maxNodesPerScaleUp", 1000), f"{p}.maxNodesPerScaleUp", 1),
        bool(c.get("scaleDownEnabled", True)),
        None if priorities is None else str(priorities),
        PlannerLimits(_int(c.get("maxScaleDownParallelism", 10), f"{p}.maxScaleDownParallelism"),
                      _int(c.get("maxDrainParallelism", 1), f"{p}.maxDrainParallelism"),
                      seconds(c.get("unremovableNodeRecheckTimeout", 300), f"{p}.unremovableNodeRecheckTimeout")),
        bool(c.get("ignoreDaemonSetsUtilization", False)), bool(c.get("forceDaemonSets", False)))


def node_group_size(g: Mapping[str, Any], path: str, count: int) -> tuple[int, int] | None:
    """A node group's ``minSize``/``maxSize`` (both or neither); ``count`` must lie between them."""
    has_min, has_max = g.get("minSize") is not None, g.get("maxSize") is not None
    if not has_min and not has_max:
        return None
    if not has_max:
        raise InputError("Required value: maxSize (minSize is given)", path=f"{path}.maxSize")
    lo = _int(g.get("minSize", 0), f"{path}.minSize")
    hi = _int(g["maxSize"], f"{path}.maxSize", 1)
    if lo > hi:
        raise InputError(f"Invalid value: minSize {lo} is above maxSize {hi}", path=f"{path}.minSize")
    if not lo <= count <= hi:
        raise InputError(f"Invalid value: count {count} is outside [minSize {lo}, maxSize {hi}]", path=f"{path}.count")
    return lo, hi


_SCALABLE = ("Deployment", "ReplicaSet", "StatefulSet")


def _target(sc: Any, kind: str, ns: str, name: str, path: str, file: str) -> Any:
    """The simulated controller an autoscaler's target reference names."""
    if kind not in _SCALABLE:
        raise unknown_key_error(kind, _SCALABLE, path=path, file=file, what="target kind")
    key = f"{kind}/{ns}/{name}"
    for c in sc.controllers:
        if c.key == key:
            return c
    raise InputError(f"{kind} {ns}/{name} is not in the scenario", path=path, file=file,
                     fix="add the target object to the scenario or correct the reference")


def resolve_autoscalers(sc: Any) -> None:
    """Read the scenario's HorizontalPodAutoscalers and VerticalPodAutoscalers (strict, with their
    files) and check that everything given is acted on: targets exist, metrics have a source,
    node-group bounds have a Cluster Autoscaler, the clock has a horizon."""
    from ..autoscale.hpa import parse_hpa
    from ..autoscale.vpa import parse_vpa

    hpas = sc.objects.get("HorizontalPodAutoscaler", [])
    vpas = sc.objects.get("VerticalPodAutoscaler", [])
    a = sc.autoscaling
    if not hpas and not vpas and a is None:
        return
    if a is None:
        a = Autoscaling()
    sc.autoscaling = a
    origins = sc.origins
    for k, o in enumerate(hpas):
        file = origins.get("HorizontalPodAutoscaler", [sc.source] * len(hpas))[k]
        spec = parse_hpa(o, file)
        c = _target(sc, spec.target_kind, spec.namespace, spec.target_name, "spec.scaleTargetRef", file)
        for i, m in enumerate(spec.metrics):
            where = f"spec.metrics[{i}]"
            if m.type == "Object":
                raise InputError("Object metrics are not modelled by kubetwin", path=where, file=file,
                                 fix="use a Pods or External metric fed by the target's kubetwin.io/load")
            if m.type in ("Pods", "External") and (c.load is None or c.load.metric_milli(m.name, 0.0) is None):
                raise InputError(f"metric {m.name!r} has no source: the target {c.key} has no kubetwin.io/load "
                                 f"metrics.{m.name} curve", path=where, file=file,
                                 fix=f"annotate the target with kubetwin.io/load: {{metrics: {{{m.name}: ...}}}}")
        a.hpas.append((spec, file))
    for k, o in enumerate(vpas):
        file = origins.get("VerticalPodAutoscaler", [sc.source] * len(vpas))[k]
        vspec = parse_vpa(o, file)
        _target(sc, vspec.target_kind, vspec.namespace, vspec.target_name, "spec.targetRef", file)
        a.vpas.append((vspec, file))
    if a.groups and a.ca is None:
        g = next(iter(a.groups))
        raise InputError(f"node group {g} has minSize/maxSize but no Cluster Autoscaler would resize it",
                         path="spec.autoscaling.clusterAutoscaler", file=sc.source,
                         fix="add spec.autoscaling.clusterAutoscaler: {} (or drop minSize/maxSize)")
    if a.ca is not None and not a.groups:
        raise InputError("the Cluster Autoscaler has no node group to resize", path="spec.nodeGroups", file=sc.source,
                         fix="give a node group minSize and maxSize")
    if a.ca is not None:
        if any(n.gpus for n in sc.nodes):
            raise InputError("the Cluster Autoscaler together with GPU-share nodes is not modelled by kubetwin",
                             path="spec.autoscaling.clusterAutoscaler", file=sc.source)
    if a.active and sc.settings.horizon is None:
        raise InputError("autoscalers act as long as the clock runs: the simulation needs a horizon",
                         path="spec.horizon", file=sc.source, fix="set spec.horizon (e.g. 24h)")
