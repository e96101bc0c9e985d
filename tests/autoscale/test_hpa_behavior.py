"""HPA scaling behaviour: limits, stabilization windows, conditions (horizontal.go semantics)."""

from __future__ import annotations

import pytest

from kubetwin.autoscale import hpa
from kubetwin.errors import InputError

NOW = 100_000.0


def _hpa_obj(**spec_extra: object) -> dict[str, object]:
    spec: dict[str, object] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2, "maxReplicas": 20,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                                                      "target": {"type": "Utilization", "averageUtilization": 50}}}],
    }
    spec.update(spec_extra)
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default"}, "spec": spec}


def _rules(policies: list[tuple[str, int, int]], select: str = "Max", window: int | None = 0) -> hpa.ScalingRules:
    return hpa.ScalingRules(window, select, tuple(hpa.ScalingPolicy(t, v, p) for t, v, p in policies))


def test_scale_up_limit_counts_replicas_added_within_the_period() -> None:
    state = hpa.HPAState(scale_up_events=(hpa.ScaleEvent(2, NOW - 30),))
    assert hpa.scale_up_limit(5, state, _rules([("Pods", 4, 60)]), NOW) == 7


def test_scale_up_limit_ignores_events_older_than_the_period() -> None:
    state = hpa.HPAState(scale_up_events=(hpa.ScaleEvent(2, NOW - 90),))
    assert hpa.scale_up_limit(5, state, _rules([("Pods", 4, 60)]), NOW) == 9


def test_scale_up_min_select_policy_takes_the_smallest_limit() -> None:
    assert hpa.scale_up_limit(5, hpa.HPAState(), _rules([("Pods", 4, 60), ("Pods", 2, 60)], "Min"), NOW) == 7


def test_scale_up_percent_policy_rounds_up() -> None:
    assert hpa.scale_up_limit(3, hpa.HPAState(), _rules([("Percent", 50, 60)]), NOW) == 5


def test_disabled_select_policy_holds_the_current_count() -> None:
    assert hpa.scale_up_limit(5, hpa.HPAState(), _rules([("Pods", 4, 60)], "Disabled"), NOW) == 5
    assert hpa.scale_down_limit(5, hpa.HPAState(), _rules([("Pods", 4, 60)], "Disabled"), NOW) == 5


def test_scale_down_percent_policy_truncates_from_the_period_start() -> None:
    state = hpa.HPAState(scale_down_events=(hpa.ScaleEvent(1, NOW - 30),))
    assert hpa.scale_down_limit(10, state, _rules([("Percent", 20, 60)]), NOW) == 8


def test_scale_down_min_select_policy_keeps_the_highest_limit() -> None:
    rules = _rules([("Percent", 10, 60), ("Pods", 15, 60)], "Min")
    assert hpa.scale_down_limit(100, hpa.HPAState(), rules, NOW) == 90


def test_without_behavior_scale_up_is_limited_to_twice_or_four() -> None:
    assert hpa.convert_desired_replicas_with_rules(3, 50, 1, 100)[:2] == (6, "ScaleUpLimit")
    assert hpa.convert_desired_replicas_with_rules(1, 50, 1, 100)[:2] == (4, "ScaleUpLimit")
    assert hpa.convert_desired_replicas_with_rules(10, 50, 1, 15)[:2] == (15, "TooManyReplicas")


def test_without_behavior_desired_below_min_replicas_is_raised_to_it() -> None:
    assert hpa.convert_desired_replicas_with_rules(3, 1, 2, 10)[:2] == (2, "TooFewReplicas")


def test_downscale_stabilization_applies_the_highest_recent_recommendation() -> None:
    state = hpa.HPAState(recommendations=(hpa.Recommendation(NOW - 60, 8), hpa.Recommendation(NOW - 400, 12)))
    best, new_state = hpa.stabilize_recommendation(state, 4, NOW)
    assert best == 8
    assert hpa.Recommendation(NOW, 4) in new_state.recommendations
    assert hpa.Recommendation(NOW - 400, 12) not in new_state.recommendations  # the old slot is reused


def test_reconcile_without_behavior_reports_scale_down_stabilized() -> None:
    spec = hpa.parse_hpa(_hpa_obj())
    state = hpa.HPAState(recommendations=(hpa.Recommendation(NOW - 60, 6),))
    d = hpa.reconcile(spec, 6, 6, [hpa.Proposal(3, 25)], state, NOW)
    assert d.desired_replicas == 6 and not d.rescale
    assert d.conditions[0].reason == "ScaleDownStabilized"


def test_reconcile_scales_up_and_records_the_event_with_behavior() -> None:
    spec = hpa.parse_hpa(_hpa_obj(behavior={"scaleUp": {"policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}]}}))
    d = hpa.reconcile(spec, 4, 4, [hpa.Proposal(10, 125)], hpa.HPAState(), NOW)
    assert d.desired_replicas == 6
    assert [(c.type, c.status, c.reason) for c in d.conditions] == [
        ("AbleToScale", "True", "SucceededRescale"), ("ScalingActive", "True", "ValidMetricFound"),
        ("ScalingLimited", "True", "ScaleUpLimit")]
    assert d.state.scale_up_events == (hpa.ScaleEvent(2, NOW),)
    again = hpa.reconcile(spec, 6, 6, [hpa.Proposal(10, 125)], d.state, NOW + 15)
    assert again.desired_replicas == 6  # the 2 pods added within 60 s use up the policy


def test_scale_down_window_defaults_to_the_controller_flag_under_behavior() -> None:
    spec = hpa.parse_hpa(_hpa_obj(behavior={"scaleUp": {"stabilizationWindowSeconds": 0}}))
    state = hpa.HPAState(recommendations=(hpa.Recommendation(NOW - 200, 9),))
    d = hpa.reconcile(spec, 9, 9, [hpa.Proposal(3, 10)], state, NOW)
    assert d.desired_replicas == 9 and d.conditions[0].reason == "ScaleDownStabilized"


def test_current_above_max_replicas_is_brought_down_to_max() -> None:
    d = hpa.reconcile(hpa.parse_hpa(_hpa_obj()), 30, 30, [hpa.Proposal(30)], hpa.HPAState(), NOW)
    assert d.desired_replicas == 20 and d.rescale_reason == "Current number of replicas above Spec.MaxReplicas"


def test_zero_target_replicas_disables_scaling() -> None:
    d = hpa.reconcile(hpa.parse_hpa(_hpa_obj()), 0, 0, [hpa.Proposal(5)], hpa.HPAState(), NOW)
    assert not d.rescale and d.conditions[-1].reason == "ScalingDisabled"


def test_an_invalid_metric_blocks_scale_down() -> None:
    spec = hpa.parse_hpa(_hpa_obj(metrics=[
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}}]))
    d = hpa.reconcile(spec, 5, 5, [hpa.Proposal(2), hpa.MetricError("no metrics")], hpa.HPAState(), NOW)
    assert d.desired_replicas == 5
    assert (d.conditions[-1].status, d.conditions[-1].reason) == ("False", "FailedGetPodsMetric")


def test_parse_applies_api_defaults() -> None:
    obj = _hpa_obj()
    del obj["spec"]["minReplicas"]  # type: ignore[index]  # the test object is a nested dict
    del obj["spec"]["metrics"]  # type: ignore[index]  # the test object is a nested dict
    spec = hpa.parse_hpa(obj)
    assert spec.min_replicas == 1
    assert spec.metrics == (hpa.MetricSpec("Resource", "cpu", "Utilization", average_utilization=80),)
    assert spec.behavior is None


def test_parse_fills_unset_behavior_rules_with_defaults() -> None:
    spec = hpa.parse_hpa(_hpa_obj(behavior={"scaleDown": {"selectPolicy": "Min"}}))
    assert spec.behavior is not None
    up, down = spec.behavior
    assert up == hpa.default_scale_up_rules()
    assert down.select_policy == "Min" and down.policies == hpa.default_scale_down_rules().policies


def test_parse_reads_the_per_direction_tolerance() -> None:
    spec = hpa.parse_hpa(_hpa_obj(behavior={"scaleUp": {"tolerance": "0.01"}, "scaleDown": {"tolerance": "50m"}}))
    assert hpa.tolerances_for(spec) == hpa.Tolerances(scale_down=0.05, scale_up=0.01)


def test_parse_refuses_a_misspelt_field() -> None:
    with pytest.raises(InputError, match="maxReplica"):
        hpa.parse_hpa(_hpa_obj(maxReplica=3))


def test_parse_refuses_a_target_without_its_value() -> None:
    with pytest.raises(InputError, match="without its value"):
        hpa.parse_hpa(_hpa_obj(metrics=[{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}]))


def test_first_sync_records_the_current_count_so_no_immediate_scale_down() -> None:
    d = hpa.reconcile(hpa.parse_hpa(_hpa_obj()), 6, 6, [hpa.Proposal(3, 25)], hpa.HPAState(), NOW)
    assert d.desired_replicas == 6 and d.conditions[0].reason == "ScaleDownStabilized"
    later = hpa.reconcile(hpa.parse_hpa(_hpa_obj()), 6, 6, [hpa.Proposal(3, 25)], d.state, NOW + 301)
    assert later.desired_replicas == 3
