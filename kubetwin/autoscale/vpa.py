"""VerticalPodAutoscaler ``autoscaling.k8s.io/v1``: the recommender's histograms and estimators,
and the policy capping of its recommendation.

Why: a VPA recommendation is not "the p90 of usage": CPU samples go into a decaying
exponential histogram with fixed 5%-growth buckets (the answer is a bucket *end*), memory into
a histogram of per-interval peaks (one sample per 24 h window, replaced when a higher peak
arrives, bumped after an OOM kill), the safety margin is added as a separately truncated
integer, the bounds are widened by a confidence multiplier from the history length, and
per-pod minimums are split between containers. kubetwin answers with those numbers.

Upstream (read, not copied): ``kubernetes/autoscaler`` tag ``vertical-pod-autoscaler-1.7.1``:
``pkg/recommender/util/{histogram,histogram_options,decaying_histogram}.go``,
``pkg/recommender/model/{aggregations_config,aggregate_container_state,container,types}.go``,
``pkg/recommender/logic/{recommender,estimator}.go``, ``pkg/recommender/config/config.go``
(defaults), ``pkg/utils/vpa/capping.go`` (``applyVPAPolicyForContainer``), the CRD
``pkg/apis/autoscaling.k8s.io/v1/types.go``.

Time is float seconds since the Unix epoch. Histograms accumulate in place (they are the
recommender's hot path, as upstream's); everything else is values in, values out.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, Union

from ..diagnostics import not_modelled
from ..errors import InputError
from ..model.apischema import type_spec
from ..model.quantity import Quantity
from ..model.strict import ANY, INTEGER, STRING, STRING_OR_NUMBER, check, list_of, map_of, obj

# --- model/types.go: ResourceAmount ---------------------------------------------------------

#: ``MaxResourceAmount``
MAX_RESOURCE_AMOUNT = 10**14
_INT64_MIN = -(2**63)


def resource_amount_from_float(amount: float) -> int:
    """``resourceAmountFromFloat``: clamp to [0, 1e14], then Go's float→int64 conversion
    (truncation; NaN converts to the minimum int64 on amd64)."""
    if amount > MAX_RESOURCE_AMOUNT:
        return MAX_RESOURCE_AMOUNT
    if amount < 0:
        amount = 0.0
    if amount != amount:
        return _INT64_MIN
    return int(amount)


def cpu_amount_from_cores(cores: float) -> int:
    return resource_amount_from_float(cores * 1000.0)


def scale_resource(amount: int, factor: float) -> int:
    return resource_amount_from_float(float(amount) * factor)


# --- util/histogram_options.go --------------------------------------------------------------


@dataclass(frozen=True)
class ExponentialHistogramOptions:
    """Bucket ``n`` starts at ``first * (ratio^n - 1) / (ratio - 1)``; the last is unbounded."""

    num_buckets: int
    first_bucket_size: float
    ratio: float
    epsilon: float

    @staticmethod
    def new(max_value: float, first_bucket_size: float, ratio: float, epsilon: float) -> "ExponentialHistogramOptions":
        if max_value <= 0 or first_bucket_size <= 0 or ratio <= 1:
            raise ValueError("maxValue, firstBucketSize and ratio must be > 0, > 0, > 1")
        n = int(math.ceil(math.log(max_value * (ratio - 1) / first_bucket_size + 1) / math.log(ratio))) + 1
        return ExponentialHistogramOptions(n, first_bucket_size, ratio, epsilon)

    @functools.cached_property
    def _log_ratio(self) -> float:
        return math.log(self.ratio)

    def find_bucket(self, value: float) -> int:
        if value < self.first_bucket_size:
            return 0
        bucket = int(math.log(value * (self.ratio - 1) / self.first_bucket_size + 1) / self._log_ratio)
        return self.num_buckets - 1 if bucket >= self.num_buckets else bucket

    def bucket_start(self, bucket: int) -> float:
        if bucket < 0 or bucket >= self.num_buckets:
            raise IndexError(f"index {bucket} out of range [0..{self.num_buckets - 1}]")
        if bucket == 0:
            return 0.0
        return self.first_bucket_size * (self.ratio ** bucket - 1) / (self.ratio - 1)


@dataclass(frozen=True)
class LinearHistogramOptions:
    """Buckets of equal size (upstream keeps them for tests and experiments)."""

    num_buckets: int
    bucket_size: float
    epsilon: float

    @staticmethod
    def new(max_value: float, bucket_size: float, epsilon: float) -> "LinearHistogramOptions":
        if max_value <= 0 or bucket_size <= 0:
            raise ValueError("maxValue and bucketSize must both be positive")
        return LinearHistogramOptions(int(math.ceil(max_value / bucket_size)) + 1, bucket_size, epsilon)

    def find_bucket(self, value: float) -> int:
        bucket = int(value / self.bucket_size)
        if bucket < 0:
            return 0
        return self.num_buckets - 1 if bucket >= self.num_buckets else bucket

    def bucket_start(self, bucket: int) -> float:
        if bucket < 0 or bucket >= self.num_buckets:
            raise IndexError(f"index {bucket} out of range [0..{self.num_buckets - 1}]")
        return bucket * self.bucket_size


HistogramOptions = Union[ExponentialHistogramOptions, LinearHistogramOptions]

#: model/aggregations_config.go
MIN_SAMPLE_WEIGHT = 0.1
EPSILON = 0.001 * MIN_SAMPLE_WEIGHT
BUCKET_SIZE_GROWTH = 0.05
CPU_HISTOGRAM_OPTIONS = ExponentialHistogramOptions.new(1000.0, 0.01, 1.0 + BUCKET_SIZE_GROWTH, EPSILON)
MEMORY_HISTOGRAM_OPTIONS = ExponentialHistogramOptions.new(1e12, 1e7, 1.0 + BUCKET_SIZE_GROWTH, EPSILON)
DAY = 86400.0
DEFAULT_MEMORY_AGGREGATION_INTERVAL = DAY
DEFAULT_MEMORY_AGGREGATION_INTERVAL_COUNT = 8
DEFAULT_HALF_LIFE = DAY
DEFAULT_OOM_BUMP_UP_RATIO = 1.2
DEFAULT_OOM_MIN_BUMP_UP = 100.0 * 1024 * 1024
MAX_DECAY_EXPONENT = 100
#: seconds from Go's zero time (year 1) to the Unix epoch: ``time.Round`` counts from there.
_GO_ZERO_TO_UNIX = 62135596800.0


# --- util/histogram.go ----------------------------------------------------------------------


class Histogram:
    """``histogram``: bucket weights, total weight, the non-empty bucket range."""

    __slots__ = ("options", "weights", "total", "min_bucket", "max_bucket")

    def __init__(self, options: HistogramOptions):
        self.options = options
        self.weights = [0.0] * options.num_buckets
        self.total = 0.0
        self.min_bucket = options.num_buckets - 1
        self.max_bucket = 0

    def add_sample(self, value: float, weight: float, time: float = 0.0) -> None:
        if weight < 0:
            raise ValueError("sample weight must be non-negative")
        b = self.options.find_bucket(value)
        self.weights[b] += weight
        self.total += weight
        if b < self.min_bucket and self.weights[b] >= self.options.epsilon:
            self.min_bucket = b
        if b > self.max_bucket and self.weights[b] >= self.options.epsilon:
            self.max_bucket = b

    def subtract_sample(self, value: float, weight: float, time: float = 0.0) -> None:
        if weight < 0:
            raise ValueError("sample weight must be non-negative")
        b = self.options.find_bucket(value)
        eps = self.options.epsilon
        self.total = _safe_subtract(self.total, weight, eps)
        self.weights[b] = _safe_subtract(self.weights[b], weight, eps)
        self._update_min_max()

    def scale(self, factor: float) -> None:
        for b in range(self.min_bucket, self.max_bucket + 1):
            self.weights[b] *= factor
        self.total *= factor
        self._update_min_max()

    def _update_min_max(self) -> None:
        eps = self.options.epsilon
        last = self.options.num_buckets - 1
        while self.weights[self.min_bucket] < eps and self.min_bucket < last:
            self.min_bucket += 1
        while self.weights[self.max_bucket] < eps and self.max_bucket > 0:
            self.max_bucket -= 1

    def is_empty(self) -> bool:
        return self.weights[self.min_bucket] < self.options.epsilon

    def percentile(self, p: float) -> float:
        """The *end* of the bucket where the cumulative weight reaches ``p`` of the total (the
        start of the last, unbounded bucket)."""
        if self.is_empty():
            return 0.0
        partial = 0.0
        threshold = p * self.total
        b = self.min_bucket
        while b < self.max_bucket:
            partial += self.weights[b]
            if partial >= threshold:
                break
            b += 1
        if b < self.options.num_buckets - 1:
            return self.options.bucket_start(b + 1)
        return self.options.bucket_start(b)


def _safe_subtract(value: float, sub: float, eps: float) -> float:
    value -= sub
    return 0.0 if value < eps else value


def _go_round_time(t: float, d: float) -> float:
    """``time.Time.Round(d)``: the nearest multiple of ``d`` since Go's zero time, halves up."""
    since_zero = t + _GO_ZERO_TO_UNIX
    return math.floor(since_zero / d + 0.5) * d - _GO_ZERO_TO_UNIX


class DecayingHistogram(Histogram):
    """``decayingHistogram``: a sample at ``t`` weighs ``2^((t - ref)/halfLife)``; the reference
    moves forward (rescaling the weights) once that exponent would pass 100."""

    __slots__ = ("half_life", "reference")

    def __init__(self, options: HistogramOptions, half_life: float):
        super().__init__(options)
        self.half_life = half_life
        self.reference: float | None = None  # Go's zero time

    def _shift_reference(self, new_ref: float) -> None:
        new_ref = _go_round_time(new_ref, self.half_life)
        if self.reference is None:
            # zero time minus now saturates time.Duration: 2^-huge scales the (empty) weights to 0
            self.scale(0.0)
        else:
            exponent = math.floor((self.reference - new_ref) / self.half_life + 0.5)
            self.scale(math.ldexp(1.0, exponent))
        self.reference = new_ref

    def _decay_factor(self, t: float) -> float:
        if self.reference is None or t > self.reference + self.half_life * MAX_DECAY_EXPONENT:
            self._shift_reference(t)
        assert self.reference is not None
        return 2.0 ** ((t - self.reference) / self.half_life)

    def add_sample(self, value: float, weight: float, time: float = 0.0) -> None:
        super().add_sample(value, weight * self._decay_factor(time), time)

    def subtract_sample(self, value: float, weight: float, time: float = 0.0) -> None:
        super().subtract_sample(value, weight * self._decay_factor(time), time)


# --- model/aggregate_container_state.go, container.go ---------------------------------------


class AggregateContainerState:
    """CPU usage histogram (cores, weight 0.1 each) and memory-peaks histogram (bytes, weight 1),
    with the sample span and count the confidence multiplier reads."""

    __slots__ = ("cpu", "memory_peaks", "first_sample_start", "last_sample_start", "total_samples_count")

    def __init__(self, cpu_half_life: float = DEFAULT_HALF_LIFE, memory_half_life: float = DEFAULT_HALF_LIFE):
        self.cpu = DecayingHistogram(CPU_HISTOGRAM_OPTIONS, cpu_half_life)
        self.memory_peaks = DecayingHistogram(MEMORY_HISTOGRAM_OPTIONS, memory_half_life)
        self.first_sample_start: float | None = None
        self.last_sample_start: float | None = None
        self.total_samples_count = 0

    def add_cpu_sample(self, millicores: int, start: float) -> None:
        self.cpu.add_sample(millicores / 1000.0, MIN_SAMPLE_WEIGHT, start)
        if self.last_sample_start is None or start > self.last_sample_start:
            self.last_sample_start = start
        if self.first_sample_start is None or start < self.first_sample_start:
            self.first_sample_start = start
        self.total_samples_count += 1

    def add_memory_peak(self, bytes_: int, start: float) -> None:
        self.memory_peaks.add_sample(float(bytes_), 1.0, start)

    def subtract_memory_peak(self, bytes_: int, start: float) -> None:
        self.memory_peaks.subtract_sample(float(bytes_), 1.0, start)


class ContainerState:
    """``ContainerState``: feeds one container's samples into its aggregate, keeping one memory
    peak per aggregation interval (``addMemorySample``) and bumping memory after an OOM kill."""

    __slots__ = ("aggregate", "last_cpu_sample_start", "memory_peak", "oom_peak", "window_end",
                 "last_memory_sample_start", "interval", "oom_bump_up_ratio", "oom_min_bump_up")

    def __init__(self, aggregate: AggregateContainerState, *, interval: float = DEFAULT_MEMORY_AGGREGATION_INTERVAL,
                 oom_bump_up_ratio: float = DEFAULT_OOM_BUMP_UP_RATIO, oom_min_bump_up: float = DEFAULT_OOM_MIN_BUMP_UP):
        self.aggregate = aggregate
        self.last_cpu_sample_start: float | None = None
        self.memory_peak = 0
        self.oom_peak = 0
        self.window_end: float | None = None
        self.last_memory_sample_start: float | None = None
        self.interval = interval
        self.oom_bump_up_ratio = oom_bump_up_ratio
        self.oom_min_bump_up = oom_min_bump_up

    def add_cpu_sample(self, millicores: int, start: float) -> bool:
        """Invalid (negative), duplicate and out-of-order samples are dropped."""
        if millicores < 0 or (self.last_cpu_sample_start is not None and not start > self.last_cpu_sample_start):
            return False
        self.aggregate.add_cpu_sample(millicores, start)
        self.last_cpu_sample_start = start
        return True

    def max_memory_peak(self) -> int:
        return max(self.memory_peak, self.oom_peak)

    def add_memory_sample(self, bytes_: int, start: float, is_oom: bool = False) -> bool:
        if bytes_ < 0 or (not is_oom and self.last_memory_sample_start is not None
                          and start < self.last_memory_sample_start):
            return False
        self.last_memory_sample_start = start
        if self.window_end is None:
            self.window_end = start
        add_new_peak = False
        if start < self.window_end:
            old = self.max_memory_peak()
            if old != 0 and bytes_ > old:
                self.aggregate.subtract_memory_peak(old, self.window_end)
                add_new_peak = True
        else:
            gap = start - self.window_end
            self.window_end += math.trunc(gap / self.interval) * self.interval + self.interval
            self.memory_peak = 0
            self.oom_peak = 0
            add_new_peak = True
        if add_new_peak:
            self.aggregate.add_memory_peak(bytes_, self.window_end)
            if is_oom:
                self.oom_peak = bytes_
            else:
                self.memory_peak = bytes_
        return True

    def record_oom(self, start: float, requested_memory: int) -> None:
        """``RecordOOM``: max(used + 100 MiB, used × 1.2), used = max(request, peak)."""
        if self.window_end is not None and start < self.window_end - self.interval:
            raise ValueError(f"OOM event will be discarded - it is too old ({start})")
        used = max(requested_memory, self.memory_peak)
        needed = max(used + resource_amount_from_float(self.oom_min_bump_up), scale_resource(used, self.oom_bump_up_ratio))
        if not self.add_memory_sample(needed, start, is_oom=True):
            raise ValueError("adding OOM sample failed")


# --- logic/recommender.go, estimator.go -------------------------------------------------------


@dataclass(frozen=True)
class RecommendationConfig:
    """``config.go`` defaults of the recommender's flags."""

    safety_margin_fraction: float = 0.15
    pod_min_cpu_millicores: float = 25.0
    pod_min_memory_mb: float = 250.0
    target_cpu_percentile: float = 0.9
    lower_bound_cpu_percentile: float = 0.5
    upper_bound_cpu_percentile: float = 0.95
    confidence_interval_cpu: float = DAY
    target_memory_percentile: float = 0.9
    lower_bound_memory_percentile: float = 0.5
    upper_bound_memory_percentile: float = 0.95
    confidence_interval_memory: float = DAY


@dataclass(frozen=True)
class Resources:
    """CPU in millicores, memory in bytes (``model.Resources``)."""

    cpu: int | None
    memory: int | None


@dataclass(frozen=True)
class RecommendedContainerResources:
    target: Resources
    lower_bound: Resources
    upper_bound: Resources
    uncapped_target: Resources | None = None


def confidence(s: AggregateContainerState, interval: float) -> float:
    """``getConfidence``: min(history span / interval, samples / minutes in interval)."""
    span = 0.0 if s.first_sample_start is None or s.last_sample_start is None else s.last_sample_start - s.first_sample_start
    return min(span / interval, s.total_samples_count / (interval / 60.0))


def with_confidence_multiplier(base: int, multiplier: float, exponent: float, conf: float) -> int:
    """``*ConfidenceMultiplier``: ``base × (1 + multiplier/confidence)^exponent``; with no
    history (confidence 0) that is +Inf (capped at 1e14) or 0."""
    if conf == 0.0:  # Go: 1 + m/0 = +Inf
        factor = math.inf if exponent > 0 else (0.0 if exponent < 0 else 1.0)
    else:
        factor = (1.0 + multiplier / conf) ** exponent
    return scale_resource(base, factor)


def _with_margin(base: int, fraction: float) -> int:
    return base + scale_resource(base, fraction)


def _estimate(s: AggregateContainerState, cfg: RecommendationConfig, cpu_p: float, mem_p: float,
              conf_mult: tuple[float, float] | None, min_cpu: int, min_mem: int) -> Resources:
    cpu = _with_margin(cpu_amount_from_cores(s.cpu.percentile(cpu_p)), cfg.safety_margin_fraction)
    mem = _with_margin(resource_amount_from_float(s.memory_peaks.percentile(mem_p)), cfg.safety_margin_fraction)
    if conf_mult is not None:
        m, e = conf_mult
        cpu = with_confidence_multiplier(cpu, m, e, confidence(s, cfg.confidence_interval_cpu))
        mem = with_confidence_multiplier(mem, m, e, confidence(s, cfg.confidence_interval_memory))
    return Resources(max(cpu, min_cpu), max(mem, min_mem))


def recommend(states: Mapping[str, AggregateContainerState], cfg: RecommendationConfig = RecommendationConfig(),
              controlled: Mapping[str, Sequence[str]] | None = None) -> dict[str, RecommendedContainerResources]:
    """``GetRecommendedPodResources``: target (p90 + margin), lower bound (p50 + margin, ×(1 +
    0.001/confidence)^-2), upper bound (p95 + margin, ×(1 + 1/confidence)), each at least the pod
    minimum split evenly between the containers; only the controlled resources are kept."""
    if not states:
        return {}
    fraction = 1.0 / len(states)
    min_cpu = scale_resource(cpu_amount_from_cores(cfg.pod_min_cpu_millicores * 0.001), fraction)
    min_mem = scale_resource(resource_amount_from_float(cfg.pod_min_memory_mb * 1024 * 1024), fraction)
    out: dict[str, RecommendedContainerResources] = {}
    for name, s in states.items():
        target = _estimate(s, cfg, cfg.target_cpu_percentile, cfg.target_memory_percentile, None, min_cpu, min_mem)
        lower = _estimate(s, cfg, cfg.lower_bound_cpu_percentile, cfg.lower_bound_memory_percentile, (0.001, -2.0),
                          min_cpu, min_mem)
        upper = _estimate(s, cfg, cfg.upper_bound_cpu_percentile, cfg.upper_bound_memory_percentile, (1.0, 1.0),
                          min_cpu, min_mem)
        res = tuple((controlled or {}).get(name, ("cpu", "memory")))
        out[name] = RecommendedContainerResources(_controlled(target, res), _controlled(lower, res),
                                                  _controlled(upper, res), _controlled(target, res))
    return out


def _controlled(r: Resources, resources: Sequence[str]) -> Resources:
    """The recommendation with only the controlled resources kept."""
    return Resources(r.cpu if "cpu" in resources else None, r.memory if "memory" in resources else None)


# --- the CRD and its resource policy ---------------------------------------------------------

_QUANTITIES = map_of(STRING_OR_NUMBER)
_STARTUP_BOOST = obj(cpu=obj(type=STRING, factor=INTEGER, quantity=STRING_OR_NUMBER, durationSeconds=INTEGER))
_CONTAINER_POLICY = obj(
    containerName=STRING, mode=STRING, minAllowed=_QUANTITIES, maxAllowed=_QUANTITIES,
    controlledResources=list_of(STRING), controlledValues=STRING, oomBumpUpRatio=STRING_OR_NUMBER,
    oomMinBumpUp=STRING_OR_NUMBER, memoryAggregationIntervalSeconds=INTEGER, memoryAggregationIntervalCount=INTEGER,
    startupBoost=_STARTUP_BOOST)


def vpa_spec() -> Any:
    """The ``autoscaling.k8s.io/v1`` VerticalPodAutoscaler CRD's fields (1.7.1), for strict decoding."""
    return _vpa_spec()


def _vpa_spec() -> Any:
    return obj(
        apiVersion=STRING, kind=STRING, metadata=type_spec("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
        spec=obj(
            targetRef=obj(apiVersion=STRING, kind=STRING, name=STRING),
            updatePolicy=obj(updateMode=STRING, minReplicas=INTEGER,
                             evictionRequirements=list_of(obj(resources=list_of(STRING), changeRequirement=STRING)),
                             evictAfterOOMSeconds=INTEGER),
            resourcePolicy=obj(containerPolicies=list_of(_CONTAINER_POLICY)),
            recommenders=list_of(obj(name=STRING)),
            startupBoost=_STARTUP_BOOST),
        status=ANY)


UPDATE_MODES = ("Off", "Initial", "Recreate", "InPlaceOrRecreate", "InPlace", "Auto")
_ENUMS = {"mode": ("Auto", "Off"), "controlledValues": ("RequestsAndLimits", "RequestsOnly")}


@dataclass(frozen=True)
class ContainerResourcePolicy:
    container_name: str
    mode: str = "Auto"
    min_allowed: Mapping[str, Quantity] = field(default_factory=dict)
    max_allowed: Mapping[str, Quantity] = field(default_factory=dict)
    controlled_resources: tuple[str, ...] = ("cpu", "memory")
    controlled_values: str = "RequestsAndLimits"
    oom_bump_up_ratio: float | None = None
    oom_min_bump_up: float | None = None


@dataclass(frozen=True)
class VPASpec:
    name: str
    namespace: str
    target_kind: str
    target_name: str
    update_mode: str
    min_replicas: int | None
    container_policies: tuple[ContainerResourcePolicy, ...]

    def policy_for(self, container: str) -> ContainerResourcePolicy | None:
        """``GetContainerResourcePolicy``: the container's own entry, else ``*``."""
        star = None
        for p in self.container_policies:
            if p.container_name == container:
                return p
            if p.container_name == "*":
                star = p
        return star


def parse_vpa(o: Mapping[str, Any], file: str | None = None) -> VPASpec:
    """A strict, typed view of a ``autoscaling.k8s.io/v1`` VerticalPodAutoscaler (1.7.1 CRD)."""
    if o.get("apiVersion") != "autoscaling.k8s.io/v1" or o.get("kind") != "VerticalPodAutoscaler":
        raise InputError(f"expected autoscaling.k8s.io/v1 VerticalPodAutoscaler, got {o.get('apiVersion')} "
                         f"{o.get('kind')}", file=file)
    check(o, _vpa_spec(), file=file)
    spec = o.get("spec") or {}
    if not spec.get("targetRef"):   # absent or null (a truncated `targetRef:`): the CRD requires it
        raise InputError("Required value", path="spec.targetRef", file=file,
                         fix="name the workload: targetRef: {apiVersion: apps/v1, kind: Deployment, name: NAME}")
    up = spec.get("updatePolicy") or {}
    mode = up.get("updateMode", "Recreate")
    if mode not in UPDATE_MODES:
        raise InputError(f"Unsupported value: {mode!r}", path="spec.updatePolicy.updateMode", file=file,
                         fix=f"use one of {', '.join(UPDATE_MODES)}")
    for key in ("evictionRequirements", "evictAfterOOMSeconds"):
        if key in up:
            not_modelled(f"spec.updatePolicy.{key}", file=file)
    if "startupBoost" in spec:
        not_modelled("spec.startupBoost", file=file)
    if spec.get("recommenders"):
        not_modelled("spec.recommenders", file=file, why="the default recommender is modelled")
    policies = []
    for i, cp in enumerate((spec.get("resourcePolicy") or {}).get("containerPolicies") or []):
        path = f"spec.resourcePolicy.containerPolicies[{i}]"
        for key, allowed in _ENUMS.items():
            if key in cp and cp[key] not in allowed:
                raise InputError(f"Unsupported value: {cp[key]!r}", path=f"{path}.{key}", file=file,
                                 fix=f"use one of {', '.join(allowed)}")
        for key in ("memoryAggregationIntervalSeconds", "memoryAggregationIntervalCount", "startupBoost"):
            if key in cp:
                not_modelled(f"{path}.{key}", file=file)
        policies.append(ContainerResourcePolicy(
            cp.get("containerName", ""), cp.get("mode", "Auto"), _quantities(cp, "minAllowed", path, file),
            _quantities(cp, "maxAllowed", path, file),
            tuple(cp.get("controlledResources", ("cpu", "memory"))), cp.get("controlledValues", "RequestsAndLimits"),
            Quantity.parse(str(cp["oomBumpUpRatio"])).as_float() if "oomBumpUpRatio" in cp else None,
            Quantity.parse(str(cp["oomMinBumpUp"])).as_float() if "oomMinBumpUp" in cp else None))
    meta = o.get("metadata") or {}
    ref = spec["targetRef"]
    return VPASpec(meta.get("name", ""), meta.get("namespace", "default"), ref.get("kind", ""), ref.get("name", ""),
                   mode, up.get("minReplicas"), tuple(policies))


def _milli_of(resource: str, amount: int) -> int:
    return amount if resource == "cpu" else amount * 1000


def _cap(resource: str, amount: int | None, policy: ContainerResourcePolicy) -> int | None:
    """``maybeCapToMin`` then ``maybeCapToMax`` (a zero bound is no bound)."""
    if amount is None:
        return None
    lo = policy.min_allowed.get(resource)
    if lo is not None and not lo.is_zero() and _milli_of(resource, amount) < lo.milli_value():
        amount = lo.milli_value() if resource == "cpu" else lo.value()
    hi = policy.max_allowed.get(resource)
    if hi is not None and not hi.is_zero() and _milli_of(resource, amount) > hi.milli_value():
        amount = hi.milli_value() if resource == "cpu" else hi.value()
    return amount


def _quantities(cp: Mapping[str, Any], key: str, path: str, file: str | None) -> dict[str, Quantity]:
    """A container policy's ``minAllowed`` / ``maxAllowed``, parsed."""
    out = {}
    for r, q in (cp.get(key) or {}).items():
        try:
            out[r] = Quantity.parse(str(q))
        except InputError as e:
            raise e.within(f"{path}.{key}.{r}").in_file(file) from None
    return out


def apply_policy(vpa: VPASpec, recs: Mapping[str, RecommendedContainerResources]) -> dict[str, RecommendedContainerResources]:
    """The recommender's capping (``applyVPAPolicyForContainer``): containers whose policy mode is
    ``Off`` get none; target and both bounds are raised to ``minAllowed`` and lowered to
    ``maxAllowed``; ``uncappedTarget`` keeps the estimate."""
    out = {}
    for name, r in recs.items():
        p = vpa.policy_for(name)
        if p is None:
            out[name] = r
            continue
        if p.mode == "Off":
            continue
        out[name] = RecommendedContainerResources(_capped(r.target, p), _capped(r.lower_bound, p),
                                                  _capped(r.upper_bound, p), r.target)
    return out


def _capped(x: Resources, policy: ContainerResourcePolicy) -> Resources:
    return Resources(_cap("cpu", x.cpu, policy), _cap("memory", x.memory, policy))


def container_state_for(vpa: VPASpec, container: str, aggregate: AggregateContainerState) -> ContainerState:
    """A container's sample feeder with the VPA's per-container OOM bump-up overrides applied."""
    p = vpa.policy_for(container)
    return ContainerState(
        aggregate,
        oom_bump_up_ratio=DEFAULT_OOM_BUMP_UP_RATIO if p is None or p.oom_bump_up_ratio is None else p.oom_bump_up_ratio,
        oom_min_bump_up=DEFAULT_OOM_MIN_BUMP_UP if p is None or p.oom_min_bump_up is None else p.oom_min_bump_up)
