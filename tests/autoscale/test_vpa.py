"""The VPA recommender: histograms, estimators, policy capping, strict CRD parsing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubetwin.autoscale import vpa
from kubetwin.diagnostics import collecting
from kubetwin.errors import InputError

FACTS = json.loads((Path(__file__).parent / "vpa_histogram_cases.json").read_text())
START = 1234567890.0
HOUR = 3600.0


@pytest.mark.parametrize("case", FACTS["options"], ids=[c["test"] for c in FACTS["options"]])
def test_histogram_options_match_upstream(case: dict[str, Any]) -> None:
    cls = vpa.LinearHistogramOptions if case["kind"] == "linear" else vpa.ExponentialHistogramOptions
    o = cls.new(*case["args"])
    assert o.num_buckets == case["num_buckets"]
    assert [o.bucket_start(b) for b, _ in case["bucket_start"]] == pytest.approx([v for _, v in case["bucket_start"]],
                                                                                 rel=1e-12)
    assert [o.find_bucket(v) for v, _ in case["find_bucket"]] == [b for _, b in case["find_bucket"]]


@pytest.mark.parametrize("case", FACTS["percentiles"], ids=[c["test"] for c in FACTS["percentiles"]])
def test_histogram_percentiles_match_upstream(case: dict[str, Any]) -> None:
    options = vpa.LinearHistogramOptions.new(*case.get("options", [10.0, 1.0, 1e-15]))
    h = vpa.DecayingHistogram(options, HOUR) if case["decaying"] else vpa.Histogram(options)
    for value, weight, hours in case["samples"]:
        h.add_sample(value, weight, START + hours * HOUR)
    assert [h.percentile(p) for p, _ in case["expect"]] == pytest.approx([v for _, v in case["expect"]], rel=1e-12)


def test_histogram_is_empty_below_epsilon() -> None:  # TestEmptyHistogram
    h = vpa.Histogram(vpa.LinearHistogramOptions.new(1.0, 0.1, 1e-15))
    h.add_sample(0.1, 2.5e-15)
    h.subtract_sample(0.1, 1e-15)
    assert not h.is_empty()
    h.subtract_sample(0.1, 1e-15)
    assert h.is_empty()


def test_confidence_multiplier_without_history_is_infinite_or_zero() -> None:  # TestConfidenceMultiplier
    s = vpa.AggregateContainerState()
    base = vpa.cpu_amount_from_cores(3.14)
    assert vpa.with_confidence_multiplier(base, 1.0, 1.0, vpa.confidence(s, 86400.0)) == 10**14
    assert vpa.with_confidence_multiplier(base, 1.0, -1.0, vpa.confidence(s, 86400.0)) == 0


def test_confidence_is_the_smaller_of_span_and_sample_count() -> None:  # TestConfidenceMultiplier
    s = vpa.AggregateContainerState()
    for i in range(9):
        s.add_cpu_sample(1000, i * 120.0)
    assert vpa.confidence(s, 86400.0) == 0.00625
    assert vpa.with_confidence_multiplier(vpa.cpu_amount_from_cores(3.14), 0.1, 2.0, 0.00625) == 907460
    assert vpa.with_confidence_multiplier(3_140_000_000, 0.1, 2.0, 0.00625) == 907_460_000_000


def test_cpu_samples_weigh_the_minimum_sample_weight() -> None:
    s = vpa.AggregateContainerState()
    s.add_cpu_sample(1000, START)
    assert s.cpu.total == pytest.approx(vpa.MIN_SAMPLE_WEIGHT * s.cpu._decay_factor(START))


def test_one_memory_peak_per_aggregation_interval() -> None:
    agg = vpa.AggregateContainerState()
    c = vpa.ContainerState(agg)
    c.add_memory_sample(100 * 2**20, START)
    c.add_memory_sample(50 * 2**20, START + HOUR)  # lower: the window's peak stays
    c.add_memory_sample(300 * 2**20, START + 2 * HOUR)  # higher: replaces the peak
    assert c.memory_peak == 300 * 2**20
    assert agg.memory_peaks.percentile(1.0) >= 300 * 2**20
    assert agg.memory_peaks.percentile(0.0) >= 300 * 2**20  # the 100 MiB peak was subtracted


def test_oom_bumps_memory_by_at_least_100_mib() -> None:
    agg = vpa.AggregateContainerState()
    c = vpa.ContainerState(agg)
    c.add_memory_sample(200 * 2**20, START)
    c.record_oom(START + 10, 256 * 2**20)
    assert c.oom_peak == 256 * 2**20 + 100 * 2**20  # max(used + 100Mi, used * 1.2), used = request


def test_recommendation_adds_margin_and_keeps_the_pod_minimum() -> None:
    agg = vpa.AggregateContainerState()
    c = vpa.ContainerState(agg)
    for i in range(2000):
        c.add_cpu_sample(5, START + i * 60)
        c.add_memory_sample(10 * 2**20, START + i * 60)
    rec = vpa.recommend({"app": agg})["app"]
    assert rec.target.cpu == 25  # 5m + 15% is below the 25m pod minimum
    assert rec.target.memory == 250 * 2**20


def test_pod_minimum_is_split_between_containers() -> None:
    states = {"a": vpa.AggregateContainerState(), "b": vpa.AggregateContainerState()}
    for s in states.values():
        s.add_cpu_sample(1, START)
    rec = vpa.recommend(states)
    assert rec["a"].target.cpu == 12 and rec["a"].target.memory == 125 * 2**20


def test_target_is_p90_bucket_end_plus_margin() -> None:
    agg = vpa.AggregateContainerState()
    for i in range(1440):
        agg.add_cpu_sample(1000, START + i * 60)
    rec = vpa.recommend({"app": agg}, controlled={"app": ("cpu",)})["app"]
    end = vpa.CPU_HISTOGRAM_OPTIONS.bucket_start(vpa.CPU_HISTOGRAM_OPTIONS.find_bucket(1.0) + 1)
    base = vpa.cpu_amount_from_cores(end)
    assert rec.target.cpu == base + vpa.scale_resource(base, 0.15)
    assert rec.target.memory is None  # not a controlled resource


def _vpa_obj(**spec: Any) -> dict[str, Any]:
    s = {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}
    s.update(spec)
    return {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": "web"},
            "spec": s}


def test_policy_caps_target_and_bounds_and_keeps_uncapped_target() -> None:
    spec = vpa.parse_vpa(_vpa_obj(resourcePolicy={"containerPolicies": [
        {"containerName": "*", "minAllowed": {"cpu": "100m"}, "maxAllowed": {"memory": "1Gi"}}]}))
    r = vpa.Resources(50, 2 * 2**30)
    out = vpa.apply_policy(spec, {"app": vpa.RecommendedContainerResources(r, r, r)})["app"]
    assert out.target == out.lower_bound == out.upper_bound == vpa.Resources(100, 2**30)
    assert out.uncapped_target == r


def test_container_mode_off_gets_no_recommendation() -> None:
    spec = vpa.parse_vpa(_vpa_obj(resourcePolicy={"containerPolicies": [{"containerName": "side", "mode": "Off"}]}))
    r = vpa.Resources(50, 2**20)
    assert set(vpa.apply_policy(spec, {"app": vpa.RecommendedContainerResources(r, r, r),
                                       "side": vpa.RecommendedContainerResources(r, r, r)})) == {"app"}


def test_update_mode_defaults_to_recreate() -> None:
    assert vpa.parse_vpa(_vpa_obj()).update_mode == "Recreate"


def test_null_target_ref_is_refused_as_required() -> None:
    """A truncated `targetRef:` (null) is a missing field, not a crash (found by the fuzzer)."""
    with pytest.raises(InputError) as e:
        vpa.parse_vpa(_vpa_obj(targetRef=None), "vpa.yaml")
    assert e.value.path == "spec.targetRef" and "Required value" in str(e.value)


def test_unknown_update_mode_is_refused() -> None:
    with pytest.raises(InputError, match="updateMode"):
        vpa.parse_vpa(_vpa_obj(updatePolicy={"updateMode": "Sometimes"}))


def test_misspelt_field_is_refused_with_a_suggestion() -> None:
    with pytest.raises(InputError, match="resourcePolicy"):
        vpa.parse_vpa(_vpa_obj(resourcePolicie={}))


def test_fields_not_modelled_are_reported() -> None:
    with collecting() as warnings:
        vpa.parse_vpa(_vpa_obj(updatePolicy={"evictAfterOOMSeconds": 60}))
    assert any("evictAfterOOMSeconds" in w for w in warnings)


def test_per_container_oom_bump_up_overrides_apply() -> None:
    spec = vpa.parse_vpa(_vpa_obj(resourcePolicy={"containerPolicies": [
        {"containerName": "app", "oomBumpUpRatio": "2", "oomMinBumpUp": "1Mi"}]}))
    c = vpa.container_state_for(spec, "app", vpa.AggregateContainerState())
    c.record_oom(START, 100 * 2**20)
    assert c.oom_peak == 200 * 2**20
