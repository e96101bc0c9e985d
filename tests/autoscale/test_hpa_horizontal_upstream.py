"""The HPA's behaviour rules against tables translated from upstream's horizontal_test.go
(``TestScalingWithRules``, ``TestNormalizeDesiredReplicas``, ``TestNormalizeDesiredReplicasWithBehavior``,
``TestStoreScaleEvents``); the cases and their conventions are in ``hpa_behavior_cases.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubetwin.autoscale import hpa

CASES = json.loads((Path(__file__).parent / "hpa_behavior_cases.json").read_text())
NOW = 1_000_000.0


def _rules(raw: list[int] | None, default: hpa.ScalingRules) -> hpa.ScalingRules:
    """generateScalingRules(...) through GenerateHPAScale{Up,Down}Rules: unset parts keep the defaults."""
    if raw is None:
        return default
    pods, pods_period, percent, percent_period, window = raw
    policies = []
    if pods:
        policies.append(hpa.ScalingPolicy("Pods", pods, pods_period))
    if percent:
        policies.append(hpa.ScalingPolicy("Percent", percent, percent_period))
    return hpa.ScalingRules(window, "Max", tuple(policies) or default.policies)


def _uniform(raw: list[Any] | None) -> tuple[hpa.ScaleEvent, ...]:
    """generateEventsUniformDistribution(changes, period): ages truncated to whole seconds."""
    if not raw:
        return ()
    changes, period = raw
    seg = period / len(changes)
    return tuple(hpa.ScaleEvent(c, NOW - int(period - seg * (i + 1) + seg / 2)) for i, c in enumerate(changes))


@pytest.mark.parametrize("case", CASES["scaling_with_rules"], ids=[c["test"] for c in CASES["scaling_with_rules"]])
def test_scaling_with_rules_matches_upstream(case: dict[str, Any]) -> None:
    state = hpa.HPAState(scale_up_events=_uniform(case.get("up_events")),
                         scale_down_events=_uniform(case.get("down_events")))
    up = _rules(case.get("up"), hpa.default_scale_up_rules())
    down = _rules(case.get("down"), hpa.default_scale_down_rules())
    replicas, condition, _ = hpa.convert_desired_replicas_with_behavior_rate(
        case["current"], case["desired"], case["min"], case["max"], up, down, state, NOW)
    assert (replicas, condition) == (case["expect"], case["condition"])


@pytest.mark.parametrize("case", CASES["normalize_desired_replicas"],
                         ids=[c["test"] for c in CASES["normalize_desired_replicas"]])
def test_downscale_stabilization_matches_upstream(case: dict[str, Any]) -> None:
    recs = tuple(hpa.Recommendation(NOW - age, value) for value, age in case["recommendations"])
    got, state = hpa.stabilize_recommendation(hpa.HPAState(recommendations=recs), case["desired"], NOW, 300.0)
    assert (got, len(state.recommendations)) == (case["expect"], case["log_length"])


@pytest.mark.parametrize("case", CASES["normalize_with_behavior"],
                         ids=[c["test"] for c in CASES["normalize_with_behavior"]])
def test_stabilization_with_behavior_matches_upstream(case: dict[str, Any]) -> None:
    recs = tuple(hpa.Recommendation(NOW - age, value) for value, age in case["recommendations"])
    up = hpa.ScalingRules(case["up_window"], "Max", ())
    down = hpa.ScalingRules(case["down_window"], "Max", ())
    got, _, _, state = hpa.stabilize_recommendation_with_behaviors(
        hpa.HPAState(recommendations=recs), case["current"], case["desired"], up, down, NOW)
    assert got == case["expect"]
    if case["expect_recommendations"] is not None:
        assert [r.recommendation for r in state.recommendations] == case["expect_recommendations"]


@pytest.mark.parametrize("direction", ["up", "down"])
@pytest.mark.parametrize("case", CASES["store_scale_events"], ids=[c["test"] for c in CASES["store_scale_events"]])
def test_stored_scale_events_match_upstream(case: dict[str, Any], direction: str) -> None:
    prev = tuple(hpa.ScaleEvent(c, NOW - age, outdated) for c, age, outdated in case["prev"])
    state = (hpa.HPAState(scale_up_events=prev) if direction == "up" else hpa.HPAState(scale_down_events=prev))
    events = state.scale_up_events if direction == "up" else state.scale_down_events
    assert hpa._change_in_period(60, events, NOW) == case["expect_change"]   # getReplicasChangePerPeriod
    behavior = None
    if case["rules"] is not None:
        rules = _rules(case["rules"], hpa.default_scale_up_rules())
        behavior = ((rules, hpa.default_scale_down_rules()) if direction == "up"
                    else (hpa.default_scale_up_rules(), rules))
    new = 10 + case["change"] if direction == "up" else 10 - case["change"]
    after = hpa.store_scale_event(state, behavior, 10, new, NOW)
    stored = after.scale_up_events if direction == "up" else after.scale_down_events
    assert [[e.replica_change, e.outdated] for e in stored] == case["new"]
