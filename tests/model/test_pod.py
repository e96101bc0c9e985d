"""Pods are validated as the API server validates their resource fields."""

import pytest

from kubetwin.errors import InputError
from kubetwin.model.pod import default_requests_from_limits, pod_from_dict


def pod(containers, init=(), **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": list(containers), "initContainers": list(init), **spec}}


def c(name, requests=None, limits=None, **extra):
    return {"name": name, "resources": {"requests": requests or {}, "limits": limits or {}}, **extra}


def test_sidecar_is_an_init_container_with_restart_policy_always():
    p = pod_from_dict(pod([c("app")], init=[c("side", restartPolicy="Always")]))
    assert p.spec.init_containers[0].restart_policy == "Always"


def test_request_above_limit_is_refused():
    with pytest.raises(InputError) as err:
        pod_from_dict(pod([c("a", {"memory": "2Gi"}, {"memory": "1Gi"})]))
    assert err.value.path == "spec.containers[0].resources.requests.memory"
    assert "less than or equal to memory limit of 1Gi" in str(err.value)


def test_negative_quantity_is_refused():
    with pytest.raises(InputError, match="greater than or equal to 0"):
        pod_from_dict(pod([c("a", {"cpu": "-1"})]))


def test_duplicate_container_names_are_refused_across_init_and_app():
    with pytest.raises(InputError, match="Duplicate"):
        pod_from_dict(pod([c("a")], init=[c("a")]))


def test_restart_policy_on_an_app_container_is_forbidden():
    with pytest.raises(InputError, match="Forbidden"):
        pod_from_dict(pod([c("a", restartPolicy="Always")]))


def test_extended_resource_must_be_whole():
    with pytest.raises(InputError, match="integer"):
        pod_from_dict(pod([c("a", {"example.com/gpu": "500m"}, {"example.com/gpu": "500m"})]))


@pytest.mark.parametrize("name", ["fuzz unknown field!", "cpu:", "example.com/", "-gpu"])
def test_a_resource_name_that_is_not_a_qualified_name_is_refused(name):
    with pytest.raises(InputError, match="must be a qualified name") as err:
        pod_from_dict(pod([c("a", {"cpu": "1", name: "1"})]))
    assert err.value.path == f"spec.containers[0].resources.requests.{name}"


def test_a_pod_level_resource_name_that_is_not_a_qualified_name_is_refused():
    with pytest.raises(InputError, match="must be a qualified name"):
        pod_from_dict(pod([c("a")], resources={"requests": {"memory ": "1Gi"}}))


def test_rules_upstream_tests_bend_are_warnings():
    warnings = []
    pod_from_dict(pod([c("a", {"hugepages-2Mi": "1Gi"})]), warn=warnings.append)
    assert "Limit must be set" in str(warnings[0])


def test_defaulting_copies_limits_into_missing_requests():
    p = default_requests_from_limits(pod_from_dict(pod([c("a", {"memory": "1Gi"}, {"cpu": "2", "memory": "2Gi"})])))
    assert str(p.spec.containers[0].requests["cpu"]) == "2"
    assert str(p.spec.containers[0].requests["memory"]) == "1Gi"


def test_extended_resource_claim_status_is_typed_and_round_trips():
    import msgspec

    status = {"extendedResourceClaimStatus": {
        "requestMappings": [{"containerName": "a", "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-0"}],
        "resourceClaimName": "p-extended-resources-x7k9p"}}
    p = pod_from_dict({**pod([c("a")]), "status": status})
    got = p.status.extended_resource_claim_status
    assert got.resource_claim_name == "p-extended-resources-x7k9p"
    assert got.request_mappings[0].request_name == "container-0-request-0"
    assert msgspec.to_builtins(p.status) == status


def test_pod_without_extended_resource_claim_status_has_none():
    assert pod_from_dict(pod([c("a")])).status.extended_resource_claim_status is None


@pytest.mark.parametrize("field, labels", [
    ("metadata", {"labels": {"fuzz unknown field!": "x"}}),
    ("metadata", {"labels": {"app": "-bad-"}}),
    ("spec", {"nodeSelector": {"zone:": "a"}}),
])
def test_labels_and_node_selectors_are_validated_as_the_api_server_validates_labels(field, labels):
    obj = pod([c("a")])
    obj[field].update(labels)
    with pytest.raises(InputError, match="label (key|value)"):
        pod_from_dict(obj)


def test_an_overhead_resource_name_that_is_not_a_qualified_name_is_refused():
    with pytest.raises(InputError, match="must be a qualified name") as err:
        pod_from_dict(pod([c("a")], overhead={"cpu ": "1"}))
    assert err.value.path == "spec.overhead.cpu "


def test_a_claim_listed_twice_in_a_containers_resources_is_refused():
    obj = pod([{"name": "a", "resources": {"claims": [{"name": "gpu"}, {"name": "gpu"}]}}],
              resourceClaims=[{"name": "gpu", "resourceClaimName": "c"}])
    with pytest.raises(InputError, match='Duplicate value: "gpu"') as err:
        pod_from_dict(obj)
    assert err.value.path == "spec.containers[0].resources.claims[1]"


def test_one_claim_used_through_two_requests_is_accepted():
    obj = pod([{"name": "a", "resources": {"claims": [{"name": "gpu", "request": "a"}, {"name": "gpu", "request": "b"}]}}],
              resourceClaims=[{"name": "gpu", "resourceClaimName": "c"}])
    assert len(pod_from_dict(obj).spec.containers[0].resources.claims) == 2


def test_a_pod_without_a_uid_gets_a_uuid_derived_from_its_namespace_and_name():
    import uuid

    p = pod_from_dict(pod([c("a")]))
    assert str(uuid.UUID(p.uid)) == p.uid and p.uid == pod_from_dict(pod([c("a")])).uid


def test_pods_without_uids_in_different_namespaces_get_different_uids():
    a, b = pod(pod_spec := [c("a")]), pod(pod_spec)
    b["metadata"]["namespace"] = "other"
    assert pod_from_dict(a).uid != pod_from_dict(b).uid


def test_a_given_uid_is_kept():
    p = pod([c("a")])
    p["metadata"]["uid"] = "1234"
    assert pod_from_dict(p).uid == "1234"
