"""ResourceQuota, LimitRange and PriorityClass: typed views refused as the API server refuses them."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.model.policy import (
    check_single_global_default,
    global_default_priority,
    limit_range_from_dict,
    priority_class_from_dict,
    resource_quota_from_dict,
)
from kubetwin.model.quantity import parse_quantity


def quota(spec: dict) -> dict:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "ns"}, "spec": spec}


def limits(*items: dict) -> dict:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr"}, "spec": {"limits": list(items)}}


def pclass(name: str = "high", **fields) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, **fields}


def refused(build, obj) -> str:
    with pytest.raises(InputError) as info:
        build(obj, "objects.yaml")
    return str(info.value)


# --- ResourceQuota --------------------------------------------------------------------------------
def test_quota_reads_hard_scopes_and_selector():
    rq = resource_quota_from_dict(quota({
        "hard": {"requests.cpu": "4", "pods": "10", "requests.nvidia.com/gpu": "2"},
        "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]},
    }))
    assert rq.spec.hard["requests.cpu"] == parse_quantity("4")
    assert rq.all_scopes() == ("PriorityClass",)
    assert rq.metadata.namespace == "ns"


def test_quota_negative_hard_is_refused():
    msg = refused(resource_quota_from_dict, quota({"hard": {"cpu": "-1"}}))
    assert msg == 'objects.yaml: spec.hard.cpu: Invalid value: "-1": must be greater than or equal to 0'


def test_quota_fractional_pod_count_is_refused():
    assert 'spec.hard.pods: Invalid value: "1500m": must be an integer' in refused(
        resource_quota_from_dict, quota({"hard": {"pods": "1500m"}}))


def test_quota_unknown_resource_is_refused():
    assert "spec.hard.gpus: Invalid value: \"gpus\": must be a standard resource for quota" in refused(
        resource_quota_from_dict, quota({"hard": {"gpus": "1"}}))


def test_quota_bad_quantity_names_the_field():
    assert "objects.yaml: spec.hard.cpu" in refused(resource_quota_from_dict, quota({"hard": {"cpu": "lots"}}))


def test_quota_unknown_scope_is_refused():
    assert 'spec.scopes[0]: Invalid value: "Forever": unsupported scope' in refused(
        resource_quota_from_dict, quota({"hard": {"pods": "1"}, "scopes": ["Forever"]}))


def test_quota_conflicting_scopes_are_refused():
    assert "conflicting scopes" in refused(
        resource_quota_from_dict, quota({"hard": {"pods": "1"}, "scopes": ["Terminating", "NotTerminating"]}))


def test_quota_best_effort_scope_only_limits_pods():
    assert 'spec.hard.cpu: Invalid value: "cpu": unsupported scope applied to resource' in refused(
        resource_quota_from_dict, quota({"hard": {"cpu": "1"}, "scopes": ["BestEffort"]}))


def test_quota_selector_terminating_needs_exists():
    assert "must be 'Exist' when scope is any of" in refused(resource_quota_from_dict, quota({
        "hard": {"pods": "1"},
        "scopeSelector": {"matchExpressions": [{"scopeName": "Terminating", "operator": "In", "values": ["x"]}]}}))


def test_quota_selector_in_needs_values():
    assert "spec.scopeSelector.matchExpressions[0].values: Required value" in refused(resource_quota_from_dict, quota({
        "hard": {"pods": "1"},
        "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In"}]}}))


def test_quota_selector_exists_takes_no_values():
    assert "must be no value when `operator` is 'Exist'" in refused(resource_quota_from_dict, quota({
        "hard": {"pods": "1"},
        "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "Exists", "values": ["a"]}]}}))


def test_quota_wrong_kind_is_refused():
    assert "kind" in refused(resource_quota_from_dict, {**quota({}), "kind": "LimitRange"})


# --- LimitRange -----------------------------------------------------------------------------------
def test_limit_range_reads_items():
    lr = limit_range_from_dict(limits({"type": "Container", "default": {"cpu": "500m"},
                                       "defaultRequest": {"cpu": "250m"}, "max": {"cpu": "2"},
                                       "maxLimitRequestRatio": {"cpu": "4"}}))
    (item,) = lr.items_of("Container")
    assert item.default_request["cpu"] == parse_quantity("250m")
    assert item.max_limit_request_ratio["cpu"] == parse_quantity("4")


def test_limit_range_min_above_max_is_refused():
    msg = refused(limit_range_from_dict, limits({"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}))
    assert msg == 'objects.yaml: spec.limits[0].min.cpu: Invalid value: "2": min value 2 is greater than max value 1'


def test_limit_range_default_request_above_default_is_refused():
    assert "default request value 2 is greater than default limit value 1" in refused(
        limit_range_from_dict, limits({"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "2"}}))


def test_limit_range_default_above_max_is_refused():
    assert "spec.limits[0].default.memory: Invalid value: \"2Gi\": default value 2Gi is greater than max value 1Gi" in \
        refused(limit_range_from_dict, limits({"type": "Container", "default": {"memory": "2Gi"},
                                               "max": {"memory": "1Gi"}}))


def test_limit_range_default_below_min_is_refused():
    assert "min value 1 is greater than default value 500m" in refused(
        limit_range_from_dict, limits({"type": "Container", "default": {"cpu": "500m"}, "min": {"cpu": "1"}}))


def test_limit_range_ratio_below_one_is_refused():
    assert "ratio 500m is less than 1" in refused(
        limit_range_from_dict, limits({"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}}))


def test_limit_range_ratio_above_max_over_min_is_refused():
    assert "ratio 10 is greater than max/min = 4.000000" in refused(limit_range_from_dict, limits(
        {"type": "Container", "min": {"memory": "1Gi"}, "max": {"memory": "4Gi"}, "maxLimitRequestRatio": {"memory": "10"}}))


def test_limit_range_pod_type_takes_no_default():
    assert "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'" in refused(
        limit_range_from_dict, limits({"type": "Pod", "default": {"cpu": "1"}}))


def test_limit_range_duplicate_type_is_refused():
    assert 'spec.limits[1].type: Duplicate value: "Container"' in refused(
        limit_range_from_dict, limits({"type": "Container"}, {"type": "Container"}))


def test_limit_range_pvc_needs_storage_bound():
    assert "either minimum or maximum storage value is required" in refused(
        limit_range_from_dict, limits({"type": "PersistentVolumeClaim"}))


def test_limit_range_missing_type_is_refused():
    assert "spec.limits[0].type: Required value" in refused(limit_range_from_dict, limits({"max": {"cpu": "1"}}))


def test_limit_range_extended_resource_default_must_equal_request():
    assert "default value 2 must equal to defaultRequest value 1 in example.com/gpu" in refused(
        limit_range_from_dict, limits({"type": "Container", "default": {"example.com/gpu": "2"},
                                       "defaultRequest": {"example.com/gpu": "1"}}))


def test_limit_range_negative_value_is_refused():
    assert 'spec.limits[0].max.cpu: Invalid value: "-1": must be greater than or equal to 0' in refused(
        limit_range_from_dict, limits({"type": "Container", "max": {"cpu": "-1"}}))


# --- PriorityClass --------------------------------------------------------------------------------
def test_priority_class_defaults():
    pc = priority_class_from_dict(pclass(value=1000))
    assert (pc.value, pc.global_default, pc.preemption_policy) == (1000, False, "PreemptLowerPriority")


def test_user_priority_may_be_one_billion():
    assert priority_class_from_dict(pclass(value=1_000_000_000)).value == 1_000_000_000


def test_user_priority_above_one_billion_is_refused():
    assert "objects.yaml: value: Forbidden: maximum allowed value of a user defined priority is 1000000000" in refused(
        priority_class_from_dict, pclass(value=1_000_000_001))


def test_system_classes_keep_their_fixed_values():
    assert priority_class_from_dict(pclass("system-node-critical", value=2000001000)).is_system
    assert "value of system-cluster-critical PriorityClass must be 2000000000" in refused(
        priority_class_from_dict, pclass("system-cluster-critical", value=5))


def test_system_prefix_is_reserved():
    assert "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved" in refused(
        priority_class_from_dict, pclass("system-mine", value=5))


def test_unknown_preemption_policy_is_refused():
    assert 'preemptionPolicy: Unsupported value: "Sometimes"' in refused(
        priority_class_from_dict, pclass(value=1, preemptionPolicy="Sometimes"))


def test_value_must_be_an_integer():
    assert 'objects.yaml: strict decoding error: invalid type for field "value": expected an integer' in refused(
        priority_class_from_dict, pclass(value="high"))


def test_value_must_fit_int32():
    assert "must be a 32-bit integer" in refused(priority_class_from_dict, pclass(value=2**31))


def test_only_one_global_default():
    a = priority_class_from_dict(pclass("a", value=1, globalDefault=True))
    b = priority_class_from_dict(pclass("b", value=2, globalDefault=True))
    with pytest.raises(InputError, match="PriorityClass a is already marked as default"):
        check_single_global_default([a, b])
    assert global_default_priority([b, a]) is a


def test_policy_kinds_load_from_mixed_files(tmp_path):
    from kubetwin.model.objects import load_objects

    path = tmp_path / "objects.yaml"
    path.write_text("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 10\n---\n"
                    "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec: {limits: [{type: Container}]}\n")
    pc, lr = load_objects(path)
    assert (pc.value, lr.spec.limits[0].type) == (10, "Container")


def test_loading_a_bad_object_names_file_document_and_field(tmp_path):
    from kubetwin.model.objects import load_objects

    path = tmp_path / "objects.yaml"
    path.write_text("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 2000000000\n")
    with pytest.raises(InputError) as info:
        load_objects(path)
    assert str(info.value).startswith(f"{path}: document 1 (PriorityClass high): value: Forbidden")
