"""The ``resize`` subresource: patches and ``ValidatePodResize`` (``kubetwin.model.pod_resize``).

Cases after ``pkg/apis/core/validation/validation_test.go`` (``TestValidatePodResize``) and the
e2e ``pod_resize.go`` "apply invalid resize patch requests" group, whose messages they check.
"""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.model.features import gates_for
from kubetwin.model.pod import Pod, pod_from_dict
from kubetwin.model.pod_resize import (
    apply_resize_patch,
    check_resize_patch,
    load_resize_patch,
    refusal_message,
    validate_pod_resize,
)


def pod(containers: list[dict], init: list[dict] | None = None, resources: dict | None = None,
        annotations: dict | None = None) -> Pod:
    spec: dict = {"containers": containers}
    if init:
        spec["initContainers"] = init
    if resources:
        spec["resources"] = resources
    meta = {"name": "p", "namespace": "default", "uid": "p", **({"annotations": annotations} if annotations else {})}
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def c(name="c", requests=None, limits=None, **extra) -> dict:
    return {"name": name, "image": "i", "resources": {"requests": requests or {}, "limits": limits or {}}, **extra}


BURSTABLE = pod([c(requests={"cpu": "100m", "memory": "64Mi"}, limits={"cpu": "200m", "memory": "128Mi"})])


def resize(p: Pod, patch: dict, version: str = "1.36") -> str:
    new = apply_resize_patch(p, check_resize_patch(patch))
    errs = validate_pod_resize(p, new, gates_for(version))
    return refusal_message(p, errs) if errs else "accepted"


def containers(**res) -> dict:
    return {"spec": {"containers": [{"name": "c", "resources": res}]}}


def test_cpu_and_memory_changes_that_keep_the_qos_class_are_accepted():
    assert resize(BURSTABLE, containers(requests={"cpu": "150m"}, limits={"cpu": "300m", "memory": "256Mi"})) == \
        "accepted"


def test_a_removed_request_is_forbidden():
    """e2e: 'resource requests cannot be removed'."""
    assert resize(BURSTABLE, containers(requests={"memory": None})) == (
        'Pod "p" is invalid: spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed')


def test_a_removed_limit_is_forbidden():
    assert resize(BURSTABLE, containers(limits={"cpu": None})) == (
        'Pod "p" is invalid: spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed')


def test_only_cpu_and_memory_may_change():
    """e2e: 'only cpu and memory resources are mutable'."""
    assert resize(BURSTABLE, containers(limits={"ephemeral-storage": "1Gi"})) == (
        'Pod "p" is invalid: spec: Forbidden: only cpu and memory resources are mutable')


def test_the_qos_class_may_not_change_and_the_old_class_is_shown():
    """e2e: 'Pod QOS Class may not change as a result of resizing' (the value is the pod's class)."""
    assert resize(BURSTABLE, containers(requests={"cpu": "200m", "memory": "128Mi"})) == (
        'Pod "p" is invalid: spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing')


@pytest.mark.parametrize("version, answer", [
    ("1.34", 'Pod "p" is invalid: spec.containers[0].resources.limits[memory]: Forbidden: memory limits cannot be '
             'decreased unless resizePolicy is RestartContainer'),
    ("1.35", "accepted"),
])
def test_a_memory_limit_decrease_needs_restart_container_before_v1_35(version, answer):
    """validateContainerResize: the NotRequired special case, lifted in v1.35."""
    assert resize(BURSTABLE, containers(limits={"memory": "100Mi"}), version) == answer


def test_a_memory_limit_decrease_with_restart_container_is_accepted_in_v1_34():
    p = pod([c(requests={"cpu": "100m", "memory": "64Mi"}, limits={"cpu": "200m", "memory": "128Mi"},
               resizePolicy=[{"resourceName": "memory", "restartPolicy": "RestartContainer"}])])
    assert resize(p, containers(limits={"memory": "100Mi"}), "1.34") == "accepted"


def test_requests_above_limits_are_refused_as_on_create():
    assert "must be less than or equal to cpu limit of 200m" in resize(BURSTABLE, containers(requests={"cpu": "300m"}))


def test_a_non_sidecar_init_container_may_not_be_resized():
    p = pod([c(requests={"cpu": "100m"})], init=[c("init", requests={"cpu": "100m"})])
    patch = {"spec": {"initContainers": [{"name": "init", "resources": {"requests": {"cpu": "200m"}}}]}}
    assert resize(p, patch) == 'Pod "p" is invalid: spec: Forbidden: resources for non-sidecar init containers are ' \
                               'immutable'


def test_a_sidecar_may_be_resized():
    p = pod([c(requests={"cpu": "100m"})], init=[c("side", requests={"cpu": "100m"}, restartPolicy="Always")])
    patch = {"spec": {"initContainers": [{"name": "side", "resources": {"requests": {"cpu": "200m"}}}]}}
    assert resize(p, patch) == "accepted"


def test_a_mirror_pod_cannot_be_resized():
    p = pod([c(requests={"cpu": "100m"})], annotations={"kubernetes.io/config.mirror": "x"})
    assert resize(p, containers(requests={"cpu": "200m"})) == 'Pod "p" is invalid: []: Forbidden: static pods cannot ' \
                                                               'be resized'


@pytest.mark.parametrize("version, answer", [
    ("1.35", 'Pod "p" is invalid: []: Forbidden: pods with pod-level resources cannot be resized'),
    ("1.36", "accepted"),
])
def test_pod_level_resources_resize_follows_its_gate(version, answer):
    """InPlacePodLevelResourcesVerticalScaling: alpha (off) in v1.35, beta (on) in v1.36."""
    p = pod([c()], resources={"requests": {"cpu": "100m", "memory": "100Mi"},
                              "limits": {"cpu": "200m", "memory": "200Mi"}})
    patch = {"spec": {"resources": {"requests": {"cpu": "150m"}}}}
    assert resize(p, patch, version) == answer


def test_several_errors_are_listed_in_brackets():
    two = pod([c("a", requests={"cpu": "1"}), c("b", requests={"cpu": "1"})])
    patch = {"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": None}}},
                                     {"name": "b", "resources": {"requests": {"cpu": None}}}]}}
    msg = resize(two, patch)
    assert msg.startswith('Pod "p" is invalid: [spec: Invalid value: "Burstable"')
    assert msg.count("resource requests cannot be removed") == 2


# --- the patch ------------------------------------------------------------------------------------


def test_a_patch_field_the_subresource_would_drop_is_an_error():
    with pytest.raises(InputError, match=r'unknown field "spec.containers\[0\].image"'):
        check_resize_patch({"spec": {"containers": [{"name": "c", "image": "x"}]}})


def test_a_misspelt_patch_field_gets_a_suggestion():
    with pytest.raises(InputError) as e:
        check_resize_patch({"spec": {"containers": [{"name": "c", "resorces": {}}]}})
    assert e.value.fix == 'did you mean "spec.containers[0].resources"?'


def test_a_container_the_pod_lacks_is_an_error_naming_the_containers():
    with pytest.raises(InputError) as e:
        apply_resize_patch(BURSTABLE, check_resize_patch({"spec": {"containers": [{"name": "x", "resources": {}}]}}))
    assert (e.value.path, e.value.fix) == ("spec.containers[0].name", "containers: c")


def test_a_bad_quantity_in_a_patch_is_an_error_with_its_path():
    with pytest.raises(InputError) as e:
        apply_resize_patch(BURSTABLE, check_resize_patch(containers(requests={"cpu": "1 core"})))
    assert e.value.path.startswith("spec.containers[0].resources.requests.cpu")


def test_resize_policies_merge_by_resource_name():
    p = pod([c(requests={"cpu": "1"}, resizePolicy=[{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                                                   {"resourceName": "memory", "restartPolicy": "NotRequired"}])])
    new = apply_resize_patch(p, check_resize_patch(
        {"spec": {"containers": [{"name": "c", "resizePolicy": [{"resourceName": "memory",
                                                                 "restartPolicy": "RestartContainer"}]}]}}))
    assert [(x.resource_name, x.restart_policy) for x in new.spec.containers[0].resize_policy] == [
        ("cpu", "NotRequired"), ("memory", "RestartContainer")]


def test_a_patch_file_holds_exactly_one_patch(tmp_path):
    f = tmp_path / "two.yaml"
    f.write_text("spec: {}\n---\nspec: {}\n")
    with pytest.raises(InputError, match="expected one resize patch, found 2"):
        load_resize_patch(str(f))
