"""Every object is checked for its kind and apiVersion before its reader sees it."""

from __future__ import annotations

import pytest

from kubetwin.diagnostics import collecting
from kubetwin.errors import InputError
from kubetwin.model.apischema import set_schema_version
from kubetwin.model.kinds import READ_BY_SCHEDULER, check_object, check_read
from kubetwin.model.loader import load_documents


@pytest.fixture(autouse=True)
def _default_version():
    set_schema_version(None)
    yield
    set_schema_version(None)


def refused(obj, **kw) -> str:
    with pytest.raises(InputError) as err:
        check_object(obj, "f.yaml", **kw)
    return str(err.value)


def test_a_misspelt_kind_is_refused_with_the_nearest_kind():
    assert refused({"apiVersion": "v1", "kind": "Pdo"}) == \
        'f.yaml: kind: no matches for kind "Pdo" in version "v1" (fix: did you mean "Pod"?)'


def test_a_kind_a_reader_does_not_take_is_refused_with_the_nearest_it_takes():
    assert refused({"apiVersion": "v1", "kind": "Pdo"}, kinds=("Pod", "Node")) == \
        'f.yaml: kind: kind "Pdo" is not supported here (fix: did you mean "Pod"?)'


def test_another_kind_than_the_one_expected_names_both():
    assert refused({"apiVersion": "v1", "kind": "Node"}, kinds=("Pod",)) == \
        'f.yaml: kind: expected Pod, found kind "Node" (fix: this input takes Pod objects: check which file goes to ' \
        "which option (the command's --help))"


def test_an_api_version_that_does_not_serve_the_kind_names_the_one_that_does():
    assert refused({"apiVersion": "apps/v1beta1", "kind": "Deployment"}) == \
        'f.yaml: apiVersion: no matches for kind "Deployment" in version "apps/v1beta1" (fix: use apiVersion: apps/v1)'


def test_a_missing_kind_is_refused_in_kubectls_words():
    assert "Object 'Kind' is missing" in refused({"apiVersion": "v1", "metadata": {"name": "x"}})


def test_a_missing_api_version_is_refused_naming_the_one_to_use():
    assert refused({"kind": "Pod"}) == "f.yaml: apiVersion: Object 'apiVersion' is missing (fix: use apiVersion: v1)"


def test_a_non_mapping_is_refused():
    assert "expected a Kubernetes object" in refused(["a", "list"])


def test_a_built_in_kind_is_decoded_strictly():
    assert 'unknown field "spce" (fix: did you mean "spec"?)' in refused(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}, "spce": {}})


def test_an_api_version_the_chosen_release_no_longer_serves_is_still_checked():
    set_schema_version("1.36")
    assert 'unknown field "spec.devices.requests[0].deviceClasName"' in refused(
        {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim", "metadata": {"name": "c"},
         "spec": {"devices": {"requests": [{"name": "r", "deviceClasName": "gpu"}]}}})


def nrt(api_version="topology.node.k8s.io/v1alpha2", **fields):
    return {"apiVersion": api_version, "kind": "NodeResourceTopology", "metadata": {"name": "node-1"},
            "zones": [{"name": "node-0", "type": "Node", "resources": [{"name": "cpu", "available": "4"}]}], **fields}


def test_a_node_resource_topology_is_decoded_strictly():
    obj = nrt()
    obj["zones"][0]["resources"][0]["availble"] = "4"
    assert 'unknown field "zones[0].resources[0].availble" (fix: did you mean "zones[0].resources[0].available"?)' \
        in refused(obj)


def test_a_valid_node_resource_topology_is_accepted():
    check_object(nrt(attributes=[{"name": "topologyManagerPolicy", "value": "single-numa-node"}],
                     topologyPolicies=["SingleNUMANodeContainerLevel"]))


def test_v1alpha1_node_resource_topologies_have_no_top_level_attributes():
    assert 'unknown field "attributes"' in refused(nrt("topology.node.k8s.io/v1alpha1", attributes=[]))


def test_an_unknown_node_resource_topology_version_is_refused():
    assert 'no matches for kind "NodeResourceTopology" in version "topology.node.k8s.io/v1"' in refused(
        nrt("topology.node.k8s.io/v1"))


def test_configuration_kinds_are_left_to_their_readers():
    check_object({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "anything": 1})


def test_a_kind_the_scheduler_does_not_read_is_reported_as_ignored():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"selector": {}, "template": {}}}
    with collecting() as warnings:
        check_read(deployment, "f.yaml", reads=READ_BY_SCHEDULER, reader="kube-scheduler")
    assert warnings == ["f.yaml: kind: Deployment objects are not read by kube-scheduler; this one is ignored"]


def test_a_pod_among_the_schedulers_objects_points_to_pods():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    with collecting() as warnings:
        check_read(pod, "f.yaml", reads=READ_BY_SCHEDULER, reader="kube-scheduler")
    assert warnings and warnings[0].endswith("this one is ignored: give running pods with --pods")


# --- List -----------------------------------------------------------------------------------------


def test_a_misspelt_field_of_a_list_is_refused(tmp_path):
    p = tmp_path / "l.yaml"
    p.write_text("apiVersion: v1\nkind: List\nitmes: []\n")
    with pytest.raises(InputError, match='List: strict decoding error: unknown field "itmes" .fix: did you mean "items"'):
        load_documents(p)


def test_a_lists_metadata_is_list_metadata(tmp_path):
    p = tmp_path / "l.yaml"
    p.write_text("apiVersion: v1\nkind: List\nmetadata: {resourceVersion: '1', name: x}\nitems: []\n")
    with pytest.raises(InputError, match='unknown field "metadata.name"'):
        load_documents(p)


def test_items_of_a_typed_list_take_the_lists_kind(tmp_path):
    p = tmp_path / "l.json"
    p.write_text('{"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": [{"metadata": {"name": "a"}}]}')
    (doc,) = load_documents(p)
    assert doc.obj["kind"] == "Pod" and doc.obj["apiVersion"] == "v1"


def test_a_node_resource_topologys_amounts_are_quantities():
    obj = nrt()
    obj["zones"][0]["resources"][0]["available"] = "lots"
    assert refused(obj).startswith('f.yaml: zones[0].resources[0].available: quantity "lots" is invalid')
