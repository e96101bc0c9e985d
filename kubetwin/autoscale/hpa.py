"""HorizontalPodAutoscaler ``autoscaling/v2``: the replica calculation and the scaling behaviour.

Why: capacity planning needs the replica count the real controller would choose, including its
odd corners (unready pods counted as 0% only on a scale-up, missing pods as 100% of their
request only on a scale-down, the scale-direction guard, the stabilization windows that keep
recommendations, the rate policies that look back at recorded scale events).

Upstream (read, not copied): ``k8s.io/kubernetes`` v1.36 ``pkg/controller/podautoscaler``:
``replica_calculator.go`` (``GetResourceReplicas``, ``calcPlainMetricReplicas``,
``getUsageRatioReplicaCount``, ``GetExternalPerPodMetricReplicas``, ``groupPods``),
``metrics/utilization.go`` (``GetResourceUtilizationRatio``, ``GetMetricUsageRatio``) and
``horizontal.go`` (``computeReplicasForMetrics``, ``reconcileAutoscaler``,
``normalizeDesiredReplicas[WithBehaviors]``, ``stabilizeRecommendation[WithBehaviors]``,
``convertDesiredReplicasWithRules``, ``convertDesiredReplicasWithBehaviorRate``,
``calculateScale{Up,Down}Limit*``, ``storeScaleEvent``). The per-direction ``tolerance`` field
(``HPAConfigurableTolerance``, beta and on by default since v1.35) is honoured; without it the
controller's ``--horizontal-pod-autoscaler-tolerance`` (default 0.1) applies to both directions.
Defaults are ``pkg/apis/autoscaling/v2/defaults.go`` (``GenerateHPAScale{Up,Down}Rules``).
Read from the newest ``replica_calculator.go`` in the index (``calculateRequests`` with
pod-level requests, ``container ... not found``, the int32 clamps); that each of these branches
is in the v1.36 release was not confirmed line by line.

Time is a float of seconds (the simulation's clock). Inputs are immutable; the controller's
memory (recommendations, scale events) is a value passed in and returned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

from ..errors import InputError
from ..model.apischema import check_api_object
from ..model.quantity import Quantity

# --- controller flags (kube-controller-manager defaults) --------------------------------------

#: ``--horizontal-pod-autoscaler-tolerance``
DEFAULT_TOLERANCE = 0.1
#: ``--horizontal-pod-autoscaler-cpu-initialization-period``
DEFAULT_CPU_INITIALIZATION_PERIOD = 300.0
#: ``--horizontal-pod-autoscaler-initial-readiness-delay``
DEFAULT_DELAY_OF_INITIAL_READINESS_STATUS = 30.0
#: ``--horizontal-pod-autoscaler-downscale-stabilization``
DEFAULT_DOWNSCALE_STABILISATION_WINDOW = 300.0
#: ``--horizontal-pod-autoscaler-sync-period``
DEFAULT_SYNC_PERIOD = 15.0
#: ``scaleUpLimitFactor`` / ``scaleUpLimitMinimum`` (horizontal.go, used without ``behavior``)
SCALE_UP_LIMIT_FACTOR = 2.0
SCALE_UP_LIMIT_MINIMUM = 4.0

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)


class MetricError(Exception):
    """A metric could not be turned into a replica proposal (upstream returns ``err``)."""


@dataclass(frozen=True)
class Tolerances:
    """``tolerances`` in replica_calculator.go: a ratio within [1-down, 1+up] changes nothing."""

    scale_down: float = DEFAULT_TOLERANCE
    scale_up: float = DEFAULT_TOLERANCE

    def is_within(self, ratio: float) -> bool:
        return (1.0 - self.scale_down) <= ratio <= (1.0 + self.scale_up)


# --- per-pod inputs -------------------------------------------------------------------------


@dataclass(frozen=True)
class PodCondition:
    """The pod's ``Ready`` condition: status ``True``/``False``/``Unknown`` and when it last changed."""

    status: str
    last_transition_time: float


@dataclass(frozen=True)
class HPAPod:
    """What the HPA reads of a pod selected by the target's selector."""

    name: str
    phase: str = "Running"
    ready: PodCondition | None = PodCondition("True", 0.0)
    start_time: float | None = 0.0
    deleted: bool = False
    #: request of the metric's resource per container (milli-units; ``None``: the container has
    #: no request). Regular containers and restartable init containers (sidecars).
    requests: Mapping[str, int | None] = field(default_factory=dict)
    #: ``spec.resources.requests`` of the metric's resource (pod-level resources), milli-units.
    pod_level_request: int | None = None


@dataclass(frozen=True)
class PodMetric:
    """One pod's sample (``metricsclient.PodMetric``): milli-value, timestamp, window."""

    value: int
    timestamp: float = 0.0
    window: float = 60.0


@dataclass(frozen=True)
class Grouping:
    ready_pod_count: int
    unready: frozenset[str]
    missing: frozenset[str]
    ignored: frozenset[str]


def group_pods(pods: Sequence[HPAPod], metrics: Mapping[str, PodMetric], resource: str, now: float,
               cpu_initialization_period: float = DEFAULT_CPU_INITIALIZATION_PERIOD,
               delay_of_initial_readiness_status: float = DEFAULT_DELAY_OF_INITIAL_READINESS_STATUS) -> Grouping:
    """``groupPods``: deleted and failed pods are ignored; pending ones are unready; pods without a
    sample are missing; for ``cpu`` only, a pod still initialising (or never ready) is unready."""
    ready = 0
    unready: set[str] = set()
    missing: set[str] = set()
    ignored: set[str] = set()
    for pod in pods:
        if pod.deleted or pod.phase == "Failed":
            ignored.add(pod.name)
            continue
        if pod.phase == "Pending":
            unready.add(pod.name)
            continue
        metric = metrics.get(pod.name)
        if metric is None:
            missing.add(pod.name)
            continue
        if resource == "cpu":
            cond = pod.ready
            if cond is None or pod.start_time is None:
                is_unready = True
            elif pod.start_time + cpu_initialization_period > now:
                # within the initialisation period: unready, or not a full window since it changed
                is_unready = cond.status == "False" or metric.timestamp < cond.last_transition_time + metric.window
            else:
                # after it: unready only if it has never been ready
                is_unready = (cond.status == "False"
                              and pod.start_time + delay_of_initial_readiness_status > cond.last_transition_time)
            if is_unready:
                unready.add(pod.name)
                continue
        ready += 1
    return Grouping(ready, frozenset(unready), frozenset(missing), frozenset(ignored))


def pod_requests(pods: Sequence[HPAPod], container: str, resource: str) -> dict[str, int]:
    """``calculateRequests``: with no container named, the pod-level request when the pod sets
    one (``PodLevelResources``); else the sum over the containers and sidecars, or the named
    container's. ``None`` marks a container with no request: an error, as upstream."""
    out: dict[str, int] = {}
    for pod in pods:
        if container == "" and pod.pod_level_request is not None:
            out[pod.name] = pod.pod_level_request
            continue
        total = 0
        found = False
        for name, value in pod.requests.items():
            if container == "" or name == container:
                if value is None:
                    raise MetricError(f"missing request for {resource} in container {name} of Pod {pod.name}")
                total += value
            if name == container:
                found = True
                break
        if container != "" and not found:
            raise MetricError(f"container {container} not found in Pod {pod.name}")
        out[pod.name] = total
    return out


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def resource_utilization_ratio(metrics: Mapping[str, PodMetric], requests: Mapping[str, int],
                               target_utilization: int) -> tuple[float, int, int]:
    """``GetResourceUtilizationRatio``: utilization is an int32 percentage (truncated) and the
    ratio is taken from that truncated percentage; the raw value is the mean over pods with a
    request."""
    metrics_total = requests_total = entries = 0
    for name, metric in metrics.items():
        request = requests.get(name)
        if request is None:
            continue
        metrics_total += metric.value
        requests_total += request
        entries += 1
    if requests_total == 0:
        raise MetricError("no metrics returned matched known pods")
    utilization = _go_div(metrics_total * 100, requests_total)
    raw = _go_div(metrics_total, entries)
    return utilization / target_utilization, utilization, raw


def metric_usage_ratio(metrics: Mapping[str, PodMetric], target_usage: int) -> tuple[float, int]:
    """``GetMetricUsageRatio``: the integer mean of the milli-values over the target."""
    total = sum(m.value for m in metrics.values())
    n = len(metrics)
    current = _go_div(total, n)
    return current / target_usage, current


@dataclass(frozen=True)
class Proposal:
    """A metric's replica proposal and the current value upstream records in status."""

    replicas: int
    utilization: int | None = None
    raw: int | None = None


def resource_replicas(current_replicas: int, target_utilization: int, resource: str, pods: Sequence[HPAPod],
                      metrics: Mapping[str, PodMetric], now: float, *, container: str = "",
                      tolerances: Tolerances = Tolerances(),
                      cpu_initialization_period: float = DEFAULT_CPU_INITIALIZATION_PERIOD,
                      delay_of_initial_readiness_status: float = DEFAULT_DELAY_OF_INITIAL_READINESS_STATUS) -> Proposal:
    """``GetResourceReplicas`` (and ``GetContainerResourceReplicas`` with ``container``)."""
    if not pods:
        raise MetricError("no pods returned by selector while calculating replica count")
    g = group_pods(pods, metrics, resource, now, cpu_initialization_period, delay_of_initial_readiness_status)
    m = {k: v for k, v in metrics.items() if k not in g.ignored and k not in g.unready}
    if not m:
        raise MetricError("did not receive metrics for targeted pods (pods might be unready)")
    requests = pod_requests(pods, container, resource)
    ratio, utilization, raw = resource_utilization_ratio(m, requests, target_utilization)
    scale_up_with_unready = bool(g.unready) and ratio > 1.0
    if not scale_up_with_unready and not g.missing:
        if tolerances.is_within(ratio):
            return Proposal(current_replicas, utilization, raw)
        return Proposal(math.ceil(ratio * g.ready_pod_count), utilization, raw)
    if g.missing:
        if ratio < 1.0:
            # scale-down: a missing pod uses 100% of its request (the target, if above 100%)
            fallback = max(100, target_utilization)
            for name in g.missing:
                m[name] = PodMetric(_go_div(requests[name] * fallback, 100))
        elif ratio > 1.0:
            for name in g.missing:  # scale-up: 0%
                m[name] = PodMetric(0)
    if scale_up_with_unready:
        for name in g.unready:
            m[name] = PodMetric(0)
    new_ratio, _, _ = resource_utilization_ratio(m, requests, target_utilization)
    if tolerances.is_within(new_ratio) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return Proposal(current_replicas, utilization, raw)
    new_replicas = math.ceil(new_ratio * len(m))
    if (new_ratio < 1.0 and new_replicas > current_replicas) or (new_ratio > 1.0 and new_replicas < current_replicas):
        return Proposal(current_replicas, utilization, raw)
    return Proposal(new_replicas, utilization, raw)


def plain_metric_replicas(current_replicas: int, target_usage: int, resource: str, pods: Sequence[HPAPod],
                          metrics: Mapping[str, PodMetric], now: float, *,
                          tolerances: Tolerances = Tolerances(),
                          cpu_initialization_period: float = DEFAULT_CPU_INITIALIZATION_PERIOD,
                          delay_of_initial_readiness_status: float = DEFAULT_DELAY_OF_INITIAL_READINESS_STATUS) -> Proposal:
    """``calcPlainMetricReplicas``: Pods metrics (``resource`` ``""``) and resource
    ``AverageValue`` targets (readiness rules apply to ``cpu`` only)."""
    if not pods:
        raise MetricError("no pods returned by selector while calculating replica count")
    g = group_pods(pods, metrics, resource, now, cpu_initialization_period, delay_of_initial_readiness_status)
    m = {k: v for k, v in metrics.items() if k not in g.ignored and k not in g.unready}
    if not m:
        raise MetricError("did not receive metrics for targeted pods (pods might be unready)")
    ratio, usage = metric_usage_ratio(m, target_usage)
    scale_up_with_unready = bool(g.unready) and ratio > 1.0
    if not scale_up_with_unready and not g.missing:
        if tolerances.is_within(ratio):
            return Proposal(current_replicas, usage)
        return Proposal(math.ceil(ratio * g.ready_pod_count), usage)
    if g.missing:
        if ratio < 1.0:  # scale-down: a missing pod uses exactly the target
            for name in g.missing:
                m[name] = PodMetric(target_usage)
        elif ratio > 1.0:
            for name in g.missing:
                m[name] = PodMetric(0)
    if scale_up_with_unready:
        for name in g.unready:
            m[name] = PodMetric(0)
    new_ratio, _ = metric_usage_ratio(m, target_usage)
    if tolerances.is_within(new_ratio) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return Proposal(current_replicas, usage)
    new_replicas = math.ceil(new_ratio * len(m))
    if (new_ratio < 1.0 and new_replicas > current_replicas) or (new_ratio > 1.0 and new_replicas < current_replicas):
        return Proposal(current_replicas, usage)
    return Proposal(new_replicas, usage)


def ready_pods_count(pods: Sequence[HPAPod]) -> int:
    """``getReadyPodsCount``: Running pods whose Ready condition is True."""
    if not pods:
        raise MetricError("no pods returned by selector while calculating replica count")
    return sum(1 for p in pods if p.phase == "Running" and p.ready is not None and p.ready.status == "True")


def usage_ratio_replicas(current_replicas: int, ratio: float, pods: Sequence[HPAPod],
                         tolerances: Tolerances = Tolerances()) -> int:
    """``getUsageRatioReplicaCount``: from zero replicas, ``ceil(ratio)`` (scale from zero)."""
    if current_replicas != 0:
        if tolerances.is_within(ratio):
            return current_replicas
        wanted = ratio * ready_pods_count(pods)
        return INT32_MAX if wanted > INT32_MAX else math.ceil(wanted)
    return math.ceil(ratio)


def object_or_external_value_replicas(current_replicas: int, usage: int, target: int, pods: Sequence[HPAPod],
                                      tolerances: Tolerances = Tolerances()) -> Proposal:
    """``GetObjectMetricReplicas`` / ``GetExternalMetricReplicas`` (``Value`` targets; the
    external value is the sum of the returned series)."""
    return Proposal(usage_ratio_replicas(current_replicas, usage / target, pods, tolerances), usage)


def per_pod_value_replicas(status_replicas: int, usage: int, target_per_pod: int,
                           tolerances: Tolerances = Tolerances()) -> Proposal:
    """``GetObjectPerPodMetricReplicas`` / ``GetExternalPerPodMetricReplicas`` (``AverageValue``)."""
    replicas = status_replicas
    ratio = usage / (target_per_pod * replicas) if replicas else math.inf
    if not tolerances.is_within(ratio):
        replicas = min(math.ceil(usage / target_per_pod), INT32_MAX)
    avg = math.ceil(usage / status_replicas) if status_replicas else 0
    return Proposal(replicas, avg)


# --- the HPA object ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ScalingPolicy:
    type: str  # "Pods" | "Percent"
    value: int
    period_seconds: int


@dataclass(frozen=True)
class ScalingRules:
    stabilization_window_seconds: int | None
    select_policy: str  # "Max" | "Min" | "Disabled"
    policies: tuple[ScalingPolicy, ...]
    tolerance: float | None = None


def default_scale_up_rules() -> ScalingRules:
    """``GenerateHPAScaleUpRules`` with nothing set: no window, max of 4 pods / 100% per 15 s."""
    return ScalingRules(0, "Max", (ScalingPolicy("Pods", 4, 15), ScalingPolicy("Percent", 100, 15)))


def default_scale_down_rules() -> ScalingRules:
    """``GenerateHPAScaleDownRules`` with nothing set: the window left to the controller flag
    (``nil``, filled by ``maybeInitScaleDownStabilizationWindow``), 100% per 15 s."""
    return ScalingRules(None, "Max", (ScalingPolicy("Percent", 100, 15),))


@dataclass(frozen=True)
class MetricSpec:
    """One ``spec.metrics[]`` entry, reduced to what the calculation needs."""

    type: str  # Resource | ContainerResource | Pods | Object | External
    name: str  # resource name or metric name
    target_type: str  # Utilization | AverageValue | Value
    average_utilization: int | None = None
    average_value_milli: int | None = None
    value_milli: int | None = None
    container: str = ""

    def describe(self) -> str:
        if self.type in ("Resource", "ContainerResource"):
            if self.target_type == "Utilization":
                return f"{self.name} resource utilization (percentage of request)"
            return f"{self.name} resource"
        if self.type == "Pods":
            return f"pods metric {self.name}"
        if self.type == "Object":
            return f"{self.name} metric"  # upstream names the object too
        return f"external metric {self.name}"


@dataclass(frozen=True)
class HPASpec:
    name: str
    namespace: str
    target_kind: str
    target_name: str
    min_replicas: int
    max_replicas: int
    metrics: tuple[MetricSpec, ...]
    behavior: tuple[ScalingRules, ScalingRules] | None  # (scaleUp, scaleDown)


def _rules(raw: Mapping[str, Any] | None, default: ScalingRules) -> ScalingRules:
    if raw is None:
        return default
    pols = raw.get("policies")
    policies = default.policies if pols is None else tuple(
        ScalingPolicy(p["type"], int(p["value"]), int(p["periodSeconds"])) for p in pols)
    tol = raw.get("tolerance")
    return ScalingRules(
        raw.get("stabilizationWindowSeconds", default.stabilization_window_seconds),
        raw.get("selectPolicy", "Max"), policies,
        None if tol is None else Quantity.parse(str(tol)).as_float())


def _milli(q: Any) -> int:
    return Quantity.parse(str(q)).milli_value()


def _metric(i: int, m: Mapping[str, Any], file: str | None) -> MetricSpec:
    t = m.get("type")
    key = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods",
           "Object": "object", "External": "external"}.get(str(t))
    path = f"spec.metrics[{i}]"
    if key is None or key not in m:
        raise InputError(f"metric type {t!r} with no matching source", path=f"{path}.type", file=file,
                         fix="use Resource, ContainerResource, Pods, Object or External with its field")
    src = m[key]
    target = src.get("target") or {}
    ttype = target.get("type", "")
    name = src.get("name") if key in ("resource", "containerResource") else (src.get("metric") or {}).get("name", "")
    if (src.get("metric") or {}).get("selector") is not None and key in ("pods", "object"):
        pass  # the metric selector only filters series the caller supplies
    spec = MetricSpec(
        type=str(t), name=str(name), target_type=ttype,
        average_utilization=target.get("averageUtilization"),
        average_value_milli=_milli(target["averageValue"]) if "averageValue" in target else None,
        value_milli=_milli(target["value"]) if "value" in target else None,
        container=src.get("container", ""))
    need = {"Utilization": spec.average_utilization, "AverageValue": spec.average_value_milli,
            "Value": spec.value_milli}
    if ttype not in need or need[ttype] is None:
        raise InputError(f"target type {ttype!r} without its value", path=f"{path}.{key}.target", file=file,
                         fix="set type Utilization with averageUtilization, AverageValue with averageValue, "
                             "or Value with value")
    if ttype == "Utilization" and key not in ("resource", "containerResource"):
        raise InputError("Utilization targets exist only for Resource and ContainerResource metrics",
                         path=f"{path}.{key}.target.type", file=file)
    return spec


def parse_hpa(obj: Mapping[str, Any], file: str | None = None) -> HPASpec:
    """A strict, typed view of an ``autoscaling/v2`` HorizontalPodAutoscaler, defaults applied as
    the API server applies them (``minReplicas`` 1, a cpu 80% metric when none is given,
    ``behavior`` rules completed field by field)."""
    if obj.get("apiVersion") != "autoscaling/v2" or obj.get("kind") != "HorizontalPodAutoscaler":
        raise InputError(f"expected autoscaling/v2 HorizontalPodAutoscaler, got {obj.get('apiVersion')} "
                         f"{obj.get('kind')}", file=file, fix="write the HPA as autoscaling/v2")
    check_api_object(dict(obj), file)
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    ref = spec.get("scaleTargetRef") or {}
    min_r = spec.get("minReplicas", 1)
    max_r = spec.get("maxReplicas")
    if max_r is None:
        raise InputError("Required value", path="spec.maxReplicas", file=file)
    if min_r < 0 or max_r < 1 or min_r > max_r:
        raise InputError(f"minReplicas {min_r} and maxReplicas {max_r}: need 0 <= min <= max, max >= 1",
                         path="spec.minReplicas", file=file)
    raw_metrics = spec.get("metrics") or [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    metrics = tuple(_metric(i, m, file) for i, m in enumerate(raw_metrics))
    b = spec.get("behavior")
    behavior = None
    if b is not None:
        behavior = (_rules(b.get("scaleUp"), default_scale_up_rules()),
                    _rules(b.get("scaleDown"), default_scale_down_rules()))
    return HPASpec(meta.get("name", ""), meta.get("namespace", "default"), ref.get("kind", ""),
                   ref.get("name", ""), int(min_r), int(max_r), metrics, behavior)


# --- the controller's memory and the decision -----------------------------------------------


@dataclass(frozen=True)
class Recommendation:
    timestamp: float
    recommendation: int


@dataclass(frozen=True)
class ScaleEvent:
    replica_change: int
    timestamp: float
    outdated: bool = False


@dataclass(frozen=True)
class HPAState:
    """What ``HorizontalController`` keeps per HPA between syncs."""

    recommendations: tuple[Recommendation, ...] = ()
    scale_up_events: tuple[ScaleEvent, ...] = ()
    scale_down_events: tuple[ScaleEvent, ...] = ()


@dataclass(frozen=True)
class Condition:
    type: str
    status: str
    reason: str
    message: str


@dataclass(frozen=True)
class Decision:
    desired_replicas: int
    rescale: bool
    conditions: tuple[Condition, ...]
    state: HPAState
    rescale_reason: str = ""


def _record(recs: tuple[Recommendation, ...], old_index: int | None, rec: Recommendation) -> tuple[Recommendation, ...]:
    if old_index is None:
        return recs + (rec,)
    lst = list(recs)
    lst[old_index] = rec
    return tuple(lst)


def stabilize_recommendation(state: HPAState, desired: int, now: float,
                             window: float = DEFAULT_DOWNSCALE_STABILISATION_WINDOW) -> tuple[int, HPAState]:
    """``stabilizeRecommendation`` (no ``behavior``): the highest recommendation in the window;
    the newest replaces the last one found older than the window."""
    best = desired
    old: int | None = None
    cutoff = now - window
    for i, r in enumerate(state.recommendations):
        if r.timestamp < cutoff:
            old = i
        elif r.recommendation > best:
            best = r.recommendation
    return best, replace(state, recommendations=_record(state.recommendations, old, Recommendation(now, desired)))


def stabilize_recommendation_with_behaviors(state: HPAState, current: int, desired: int, up: ScalingRules,
                                            down: ScalingRules, now: float) -> tuple[int, str, str, HPAState]:
    """``stabilizeRecommendationWithBehaviors``: clamp the current count between the lowest
    recommendation of the scale-up window and the highest of the scale-down window."""
    up_cutoff = now - (up.stabilization_window_seconds or 0)
    down_cutoff = now - (down.stabilization_window_seconds or 0)
    up_rec = down_rec = desired
    old: int | None = None
    for i, r in enumerate(state.recommendations):
        if r.timestamp > up_cutoff:
            up_rec = min(r.recommendation, up_rec)
        if r.timestamp > down_cutoff:
            down_rec = max(r.recommendation, down_rec)
        if r.timestamp < up_cutoff and r.timestamp < down_cutoff:
            old = i
    rec = current
    if rec < up_rec:
        rec = up_rec
    if rec > down_rec:
        rec = down_rec
    new_state = replace(state, recommendations=_record(state.recommendations, old, Recommendation(now, desired)))
    if desired >= current:
        return rec, "ScaleUpStabilized", ("recent recommendations were lower than current one, applying the "
                                          "lowest recent recommendation"), new_state
    return rec, "ScaleDownStabilized", ("recent recommendations were higher than current one, applying the "
                                        "highest recent recommendation"), new_state


def _change_in_period(period_seconds: int, events: Sequence[ScaleEvent], now: float) -> int:
    cutoff = now - period_seconds
    return sum(e.replica_change for e in events if e.timestamp > cutoff and not e.outdated)


def scale_up_limit(current: int, state: HPAState, rules: ScalingRules, now: float) -> int:
    """``calculateScaleUpLimitWithScalingRules``."""
    if rules.select_policy == "Disabled":
        return current
    pick, result = (min, INT32_MAX) if rules.select_policy == "Min" else (max, INT32_MIN)
    for p in rules.policies:
        start = (current - _change_in_period(p.period_seconds, state.scale_up_events, now)
                 + _change_in_period(p.period_seconds, state.scale_down_events, now))
        proposed = start + p.value if p.type == "Pods" else math.ceil(start * (1 + p.value / 100))
        result = pick(result, proposed)
    return result


def scale_down_limit(current: int, state: HPAState, rules: ScalingRules, now: float) -> int:
    """``calculateScaleDownLimitWithBehaviors``: ``Min`` keeps the highest limit."""
    if rules.select_policy == "Disabled":
        return current
    pick, result = (max, INT32_MIN) if rules.select_policy == "Min" else (min, INT32_MAX)
    for p in rules.policies:
        start = (current - _change_in_period(p.period_seconds, state.scale_up_events, now)
                 + _change_in_period(p.period_seconds, state.scale_down_events, now))
        proposed = start - p.value if p.type == "Pods" else int(start * (1 - p.value / 100))
        result = pick(result, proposed)
    return result


def convert_desired_replicas_with_rules(current: int, desired: int, min_r: int, max_r: int) -> tuple[int, str, str]:
    """``convertDesiredReplicasWithRules`` (no ``behavior``): at most max(2×current, 4), at least
    ``minReplicas``."""
    limit = int(max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM))
    if max_r > limit:
        maximum, reason, msg = limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
    else:
        maximum, reason, msg = max_r, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
    minimum = min_r  # (releases before HPAScaleToZero's rework kept at least 1 here)
    if desired < minimum:
        return minimum, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
    if desired > maximum:
        return maximum, reason, msg
    return desired, "DesiredWithinRange", "the desired count is within the acceptable range"


def convert_desired_replicas_with_behavior_rate(current: int, desired: int, min_r: int, max_r: int,
                                                up: ScalingRules, down: ScalingRules, state: HPAState,
                                                now: float) -> tuple[int, str, str]:
    """``convertDesiredReplicasWithBehaviorRate``."""
    if desired > current:
        limit = max(scale_up_limit(current, state, up, now), current)
        if max_r > limit:
            maximum, reason, msg = limit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
        else:
            maximum, reason, msg = max_r, "TooManyReplicas", "the desired replica count is more than the maximum replica count"
        if desired > maximum:
            return maximum, reason, msg
    elif desired < current:
        limit = min(scale_down_limit(current, state, down, now), current)
        if min_r < limit:
            minimum, reason, msg = limit, "ScaleDownLimit", "the desired replica count is decreasing faster than the maximum scale rate"
        else:
            minimum, reason, msg = min_r, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
        if desired < minimum:
            return minimum, reason, msg
    return desired, "DesiredWithinRange", "the desired count is within the acceptable range"


def _longest_period(rules: ScalingRules) -> int:
    return max((p.period_seconds for p in rules.policies), default=0)


def store_scale_event(state: HPAState, behavior: tuple[ScalingRules, ScalingRules] | None, prev: int, new: int,
                      now: float) -> HPAState:
    """``storeScaleEvent``: mark events older than the longest policy period outdated and reuse
    the last outdated slot."""
    if behavior is None:
        return state
    up = new > prev
    rules = behavior[0] if up else behavior[1]
    events = state.scale_up_events if up else state.scale_down_events
    cutoff = now - _longest_period(rules)
    marked = [replace(e, outdated=True) if e.timestamp < cutoff else e for e in events]
    old = None
    for i, e in enumerate(marked):
        if e.outdated:
            old = i
    ev = ScaleEvent(abs(new - prev), now)
    if old is None:
        marked.append(ev)
    else:
        marked[old] = ev
    return replace(state, scale_up_events=tuple(marked)) if up else replace(state, scale_down_events=tuple(marked))


def reconcile(hpa: HPASpec, spec_replicas: int, status_replicas: int, proposals: Sequence[Proposal | MetricError],
              state: HPAState, now: float,
              downscale_stabilisation_window: float = DEFAULT_DOWNSCALE_STABILISATION_WINDOW) -> Decision:
    """``reconcileAutoscaler`` from the point where each metric has a proposal (or an error):
    ``computeReplicasForMetrics``' max over the valid ones, the min/max guards, normalization with
    or without ``behavior``, the conditions, and the scale event recorded when it rescales."""
    current = spec_replicas
    conds: list[Condition] = [Condition("AbleToScale", "True", "SucceededGetScale",
                                        "the HPA controller was able to get the target's current scale")]
    min_r = hpa.min_replicas
    reason = ""
    if not state.recommendations:  # recordInitialRecommendation: the current count, now
        state = replace(state, recommendations=(Recommendation(now, current),))
    if spec_replicas == 0 and min_r != 0:
        conds.append(Condition("ScalingActive", "False", "ScalingDisabled",
                               "scaling is disabled since the replica count of the target is zero"))
        return Decision(0, False, tuple(conds), state)
    if current > hpa.max_replicas:
        desired, reason = hpa.max_replicas, "Current number of replicas above Spec.MaxReplicas"
    elif current < min_r:
        desired, reason = min_r, "Current number of replicas below Spec.MinReplicas"
    else:
        best = 0
        best_metric = ""
        invalid = 0
        first_error: MetricError | None = None
        failed_type = ""
        for spec, p in zip(hpa.metrics, proposals):
            if isinstance(p, MetricError):
                if first_error is None:
                    first_error, failed_type = p, spec.type
                invalid += 1
                continue
            if best_metric == "" or p.replicas > best:
                best, best_metric = p.replicas, spec.describe()
        if invalid >= len(hpa.metrics) or (invalid > 0 and best < spec_replicas):
            conds.append(Condition("ScalingActive", "False", f"FailedGet{failed_type}Metric",
                                   f"the HPA was unable to compute the replica count: {first_error}"))
            return Decision(spec_replicas, False, tuple(conds), state)
        conds.append(Condition("ScalingActive", "True", "ValidMetricFound",
                               f"the HPA was able to successfully calculate a replica count from {best_metric}"))
        pre = best
        if hpa.behavior is None:
            stabilized, state = stabilize_recommendation(state, pre, now, downscale_stabilisation_window)
            if stabilized != pre:
                conds[0] = Condition("AbleToScale", "True", "ScaleDownStabilized",
                                     "recent recommendations were higher than current one, applying the highest "
                                     "recent recommendation")
            else:
                conds[0] = Condition("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size")
            desired, lreason, lmsg = convert_desired_replicas_with_rules(current, stabilized, min_r, hpa.max_replicas)
        else:
            up, down = hpa.behavior
            if down.stabilization_window_seconds is None:  # maybeInitScaleDownStabilizationWindow
                down = replace(down, stabilization_window_seconds=int(downscale_stabilisation_window))
            stabilized, sreason, smsg, state = stabilize_recommendation_with_behaviors(state, current, pre, up, down, now)
            if stabilized != pre:
                conds[0] = Condition("AbleToScale", "True", sreason, smsg)
            else:
                conds[0] = Condition("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size")
            desired, lreason, lmsg = convert_desired_replicas_with_behavior_rate(
                current, stabilized, min_r, hpa.max_replicas, up, down, state, now)
        conds.append(Condition("ScalingLimited", "False" if desired == stabilized else "True", lreason, lmsg))
        if desired > current:
            reason = "New size: %d; reason: %s above target" % (desired, best_metric)
        elif desired < current:
            reason = "New size: %d; reason: All metrics below target" % desired
    rescale = desired != current
    if rescale:
        conds[0] = Condition("AbleToScale", "True", "SucceededRescale",
                             f"the HPA controller was able to update the target scale to {desired}")
        state = store_scale_event(state, hpa.behavior, current, desired, now)
    return Decision(desired, rescale, tuple(conds), state, reason)


def tolerances_for(hpa: HPASpec, default: float = DEFAULT_TOLERANCE) -> Tolerances:
    """The per-direction tolerances: the ``behavior`` field where set, else the controller flag."""
    if hpa.behavior is None:
        return Tolerances(default, default)
    up, down = hpa.behavior
    return Tolerances(default if down.tolerance is None else down.tolerance,
                      default if up.tolerance is None else up.tolerance)
