"""The VPA recommender's estimators against upstream's
vertical-pod-autoscaler/pkg/recommender/logic/estimator_test.go (vertical-pod-autoscaler 1.7.1)."""

from __future__ import annotations

import pytest

from kubetwin.autoscale import vpa


def _nine_cpu_samples_two_minutes_apart() -> vpa.AggregateContainerState:
    s = vpa.AggregateContainerState()
    for i in range(9):
        s.add_cpu_sample(1000, i * 120.0)
    return s


def test_percentile_estimator_returns_the_histograms_percentiles() -> None:  # TestPercentileEstimator
    cpu = vpa.Histogram(vpa.CPU_HISTOGRAM_OPTIONS)
    mem = vpa.Histogram(vpa.MEMORY_HISTOGRAM_OPTIONS)
    for x in (1.0, 2.0, 3.0):
        cpu.add_sample(x, 1.0)
        mem.add_sample(x * 1e9, 1.0)
    # within 5 %, for the histogram's bucket rounding
    assert vpa.cpu_amount_from_cores(cpu.percentile(0.2)) / 1000 == pytest.approx(1.0, rel=0.05)
    assert vpa.resource_amount_from_float(mem.percentile(0.5)) == pytest.approx(2e9, rel=0.05)


def test_confidence_with_a_custom_interval() -> None:  # TestConfidenceMultiplierWithCustomInterval
    s = _nine_cpu_samples_two_minutes_apart()
    conf = vpa.confidence(s, 18 * 60.0)
    assert conf == 0.5   # 9 samples in an 18-minute interval
    assert vpa.with_confidence_multiplier(vpa.cpu_amount_from_cores(3.14), 0.1, 2.0, conf) / 1000 == 4.521
    assert vpa.with_confidence_multiplier(vpa.resource_amount_from_float(3.14e9), 0.1, 2.0, conf) == 4.5216e9


def test_confidence_multiplier_without_history_gives_the_maximum_amount() -> None:  # TestConfidenceMultiplierNoHistory
    s = vpa.AggregateContainerState()
    assert vpa.with_confidence_multiplier(vpa.cpu_amount_from_cores(3.14), 0.1, 2.0,
                                          vpa.confidence(s, vpa.DAY)) == vpa.MAX_RESOURCE_AMOUNT


def test_margin_estimator_adds_the_margin() -> None:  # TestMarginEstimator
    assert vpa._with_margin(vpa.cpu_amount_from_cores(3.14), 0.1) / 1000 == 3.454
    assert vpa._with_margin(vpa.resource_amount_from_float(3.14e9), 0.1) == 3.454e9


def test_min_resources_estimator_keeps_an_estimate_above_the_minimum() -> None:  # TestMinResourcesEstimator
    cfg = vpa.RecommendationConfig(safety_margin_fraction=0.0)
    s = vpa.AggregateContainerState()
    got = vpa._estimate(s, cfg, 0.9, 0.9, None, vpa.cpu_amount_from_cores(0.2), vpa.resource_amount_from_float(2e7))
    assert (got.cpu, got.memory) == (200, 20_000_000)   # an empty history estimates 0: the minimum wins
    s.add_cpu_sample(3140, 0.0)
    s.add_memory_peak(400_000_000, 0.0)
    got = vpa._estimate(s, cfg, 0.9, 0.9, None, vpa.cpu_amount_from_cores(0.2), vpa.resource_amount_from_float(2e7))
    assert got.cpu >= 3140 and got.memory >= 400_000_000
