"""Kubernetes API objects are checked against the definitions of the chosen release."""

from __future__ import annotations

import pytest

from kubetwin.diagnostics import collecting
from kubetwin.errors import InputError
from kubetwin.model.apischema import check_api_object, kind_spec, set_schema_version, strict_struct


def _pod(**container):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", **container}]}}


@pytest.fixture(autouse=True)
def _default_version():
    set_schema_version(None)
    yield
    set_schema_version(None)


def test_a_typo_in_a_pod_is_refused_in_the_api_servers_words():
    with pytest.raises(InputError) as err:
        check_api_object(_pod(resorces={"requests": {"cpu": "1"}}), "pod.yaml")
    assert str(err.value) == ('pod.yaml: strict decoding error: unknown field "spec.containers[0].resorces" '
                              '(fix: did you mean "spec.containers[0].resources"?)')


def test_fields_kubetwin_does_not_read_are_still_known():
    pod = _pod(image="x", env=[{"name": "A", "value": "b"}], livenessProbe={"httpGet": {"path": "/", "port": 80}})
    pod["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
    pod["status"] = {"phase": "Running", "podIP": "10.0.0.1"}
    assert check_api_object(pod) is True


def test_a_mistyped_unread_field_is_refused():
    with pytest.raises(InputError, match='"spec.containers\\[0\\].ports\\[0\\].containerPort": expected an integer'):
        check_api_object(_pod(ports=[{"containerPort": "80"}]))


def test_quantities_may_be_strings_or_numbers():
    assert check_api_object(_pod(resources={"requests": {"cpu": 1, "memory": "1Gi"}}))


def test_a_kind_no_release_knows_is_left_to_its_reader():
    assert check_api_object({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"x": 1}}) is False


def test_an_api_version_the_release_no_longer_serves_is_checked_against_the_last_that_did():
    assert kind_spec("resource.k8s.io/v1alpha3", "ResourceClaim") is not None


def test_a_field_of_a_later_release_is_read_with_a_warning():
    set_schema_version("1.34")
    pod = _pod()
    pod["spec"]["resources"] = {"requests": {"cpu": "1"}}  # pod-level resources: 1.32+, so known in 1.34
    assert check_api_object(pod)
    later = _pod()
    later["status"] = {"nodeAllocatableResourceClaimStatuses": [{"resourceClaimName": "c", "mapping": []}]}
    set_schema_version("1.36")
    with collecting() as warnings:
        assert check_api_object(later, "pod.yaml")
    assert any("not in the Kubernetes 1.36 API; read as Kubernetes 1.37 defines it" in w for w in warnings)


def test_a_typo_inside_a_later_releases_field_is_still_refused():
    later = _pod()
    later["status"] = {"nodeAllocatableResourceClaimStatuses": [{"resourceClaimName": "c", "overhead": [{"nmae": "x"}]}]}
    with pytest.raises(InputError, match="overhead\\[0\\].nmae"):
        check_api_object(later)


def test_the_c_speed_struct_accepts_and_refuses_what_the_walker_does():
    import msgspec

    strict_pod = strict_struct("v1", "Pod")
    msgspec.convert(_pod(image="x", resources={"limits": {"cpu": 2}}), strict_pod)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(_pod(resorces={}), strict_pod)
