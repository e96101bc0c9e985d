"""The HPA replica calculation against cases translated from upstream's replica_calculator_test.go."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubetwin.autoscale import hpa

CASES = json.loads((Path(__file__).parent / "replica_calculator_cases.json").read_text())["cases"]
NOW = 10_000.0
CONTAINERS_PER_POD = 2  # numContainersPerPod in the upstream harness
INIT_PERIOD = 120.0  # defaultTestingCPUInitializationPeriod
READINESS_DELAY = 10.0  # defaultTestingDelayOfInitialReadinessStatus


def _pods(case: dict[str, Any]) -> list[hpa.HPAPod]:
    n = max(len(case.get("requests_milli", [])), len(case.get("readiness", [])), case["current"]
            if "requests_milli" not in case else 0)
    pods = []
    for i in range(n):
        start = NOW if case.get("start", ["cool"] * n)[i] == "hot" else NOW - 180.0
        readiness = case.get("readiness", ["True"] * n)[i]
        req = case.get("requests_milli", [0] * n)[i]
        pods.append(hpa.HPAPod(
            name=f"test-pod-{i}", phase=case.get("phase", ["Running"] * n)[i],
            ready=hpa.PodCondition(readiness, start), start_time=start,
            deleted=case.get("deleted", [False] * n)[i],
            requests={f"container{c + 1}": req for c in range(CONTAINERS_PER_POD)}))
    return pods


def _pod_metrics(case: dict[str, Any]) -> dict[str, hpa.PodMetric]:
    if "container_levels" in case:
        index = int(case["container"][-1]) - 1
        return {f"test-pod-{i}": hpa.PodMetric(levels[index], NOW, 60.0)
                for i, levels in enumerate(case["container_levels"]) if len(levels) > index}
    per_container = CONTAINERS_PER_POD if "resource" in case else 1
    return {f"test-pod-{i}": hpa.PodMetric(level * per_container, NOW, 60.0) for i, level in enumerate(case["levels"])}


@pytest.mark.parametrize("case", CASES, ids=[c["test"] for c in CASES])
def test_replica_calculation_matches_upstream_case(case: dict[str, Any]) -> None:
    pods = _pods(case)
    kind = case.get("metric")
    timing = dict(cpu_initialization_period=INIT_PERIOD, delay_of_initial_readiness_status=READINESS_DELAY)
    if kind is None:
        got = hpa.resource_replicas(case["current"], case["target_utilization"], case["resource"], pods,
                                    _pod_metrics(case), NOW, container=case.get("container", ""), **timing)
        assert (got.replicas, got.utilization, got.raw) == (
            case["expected"], case["expected_utilization"], case["expected_value"])
        return
    if kind == "pods":
        got = hpa.plain_metric_replicas(case["current"], case["target_usage"], "", pods, _pod_metrics(case), NOW,
                                        **timing)
    elif kind in ("object", "external"):
        got = hpa.object_or_external_value_replicas(case["current"], sum(case["levels"]), case["target_usage"], pods)
    else:
        got = hpa.per_pod_value_replicas(case["current"], sum(case["levels"]), case["per_pod_target"])
    assert (got.replicas, got.utilization) == (case["expected"], case["expected_usage"])


def test_a_container_without_a_request_is_an_error() -> None:
    pods = [hpa.HPAPod("p", requests={"app": None})]
    with pytest.raises(hpa.MetricError, match="missing request for cpu"):
        hpa.resource_replicas(1, 50, "cpu", pods, {"p": hpa.PodMetric(100)}, NOW)


def test_configurable_tolerance_is_per_direction() -> None:
    t = hpa.Tolerances(scale_down=0.05, scale_up=0.01)
    assert t.is_within(0.96) and not t.is_within(0.94) and not t.is_within(1.02)


def test_a_named_container_missing_from_a_pod_is_an_error() -> None:
    pods = [hpa.HPAPod("p", requests={"app": 100})]
    with pytest.raises(hpa.MetricError, match="container other not found in Pod p"):
        hpa.resource_replicas(1, 50, "cpu", pods, {"p": hpa.PodMetric(100)}, NOW, container="other")


def test_pod_level_request_is_used_when_no_container_is_named() -> None:
    pods = [hpa.HPAPod("p", requests={"app": 100}, pod_level_request=1000)]
    got = hpa.resource_replicas(1, 50, "cpu", pods, {"p": hpa.PodMetric(1000)}, NOW)
    assert (got.replicas, got.utilization) == (2, 100)


def test_missing_pods_on_scale_down_count_at_the_target_when_it_is_above_100_percent() -> None:
    pods = [hpa.HPAPod(f"p{i}", requests={"app": 1000}) for i in range(4)]
    metrics = {f"p{i}": hpa.PodMetric(500, NOW - 10) for i in range(3)}  # p3 has no sample
    got = hpa.resource_replicas(4, 200, "memory", pods, metrics, NOW)
    # ratio 50/200 = 0.25 < 1: p3 counts 1000 * 200 / 100 = 2000 → (1500 + 2000) / 4000 = 87% → 0.435
    assert got.replicas == 2
