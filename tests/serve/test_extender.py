"""Specifications of the kubelet-aware extender's verbs (k8s.io/kube-scheduler/extender/v1)."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.serve import extender
from kubetwin.serve.cluster import load_cluster

from .cluster_fixture import NODES, pod, write_scenario


@pytest.fixture
def cluster(tmp_path):
    return load_cluster([str(write_scenario(tmp_path))])


def test_filter_with_node_names_answers_node_names(cluster):
    result = extender.filter_nodes(cluster, {"Pod": pod("p", "2"), "NodeNames": NODES})
    assert result["NodeNames"] == NODES
    assert result["Nodes"] is None
    assert result["FailedNodes"] == {} and result["FailedAndUnresolvableNodes"] == {} and result["Error"] == ""


def test_filter_fails_a_node_whose_kubelet_would_reject_the_pod_for_now(cluster):
    # numa-0 runs a 4-CPU pod: no NUMA node has 4 free CPUs now, but an empty numa-0 has
    result = extender.filter_nodes(cluster, {"Pod": pod("p", "4"), "NodeNames": NODES})
    assert result["NodeNames"] == ["numa-1", "plain-0"]
    assert result["FailedNodes"] == {
        "numa-0": "kubelet admission: TopologyAffinityError: Resources cannot be allocated with Topology locality"}


def test_filter_fails_a_node_as_unresolvable_when_even_its_empty_kubelet_would_reject(cluster):
    result = extender.filter_nodes(cluster, {"Pod": pod("p", "5"), "NodeNames": NODES})
    assert result["NodeNames"] == ["plain-0"]
    assert sorted(result["FailedAndUnresolvableNodes"]) == ["numa-0", "numa-1"]
    assert result["FailedNodes"] == {}


def test_filter_passes_a_node_without_a_modelled_kubelet(cluster):
    result = extender.filter_nodes(cluster, {"Pod": pod("p", "64"), "NodeNames": ["plain-0"]})
    assert result["NodeNames"] == ["plain-0"]


def test_filter_passes_a_node_the_served_cluster_does_not_know(cluster):
    result = extender.filter_nodes(cluster, {"Pod": pod("p", "5"), "NodeNames": ["elsewhere"]})
    assert result["NodeNames"] == ["elsewhere"]


def test_filter_with_node_objects_answers_the_passing_node_objects(cluster):
    items = [{"metadata": {"name": n}, "status": {"capacity": {"cpu": "4"}}} for n in NODES]
    result = extender.filter_nodes(cluster, {"Pod": pod("p", "5"), "Nodes": {"items": items}})
    assert result["NodeNames"] is None
    assert [i["metadata"]["name"] for i in result["Nodes"]["items"]] == ["plain-0"]


def test_field_names_match_case_insensitively_as_go_decodes_them(cluster):
    result = extender.filter_nodes(cluster, {"pod": pod("p", "2"), "nodenames": ["numa-1"]})
    assert result["NodeNames"] == ["numa-1"]


def test_an_unknown_field_is_refused_with_the_nearest_name(cluster):
    with pytest.raises(InputError) as err:
        extender.filter_nodes(cluster, {"Pod": pod("p", "2"), "NodeNamez": NODES})
    assert err.value.path == "NodeNamez"
    assert "NodeNames" in (err.value.fix or "")


def test_an_unknown_pod_field_is_refused_with_its_path(cluster):
    bad = pod("p", "2")
    bad["spec"]["containers"][0]["resorces"] = {}
    with pytest.raises(InputError) as err:
        extender.filter_nodes(cluster, {"Pod": bad, "NodeNames": NODES})
    assert "spec.containers[0].resorces" in str(err.value)


def test_a_field_given_twice_in_different_case_is_refused(cluster):
    with pytest.raises(InputError, match="duplicate field"):
        extender.filter_nodes(cluster, {"Pod": pod("p", "2"), "NodeNames": [], "nodeNames": []})


def test_filter_without_candidates_is_refused(cluster):
    with pytest.raises(InputError, match="NodeNames"):
        extender.filter_nodes(cluster, {"Pod": pod("p", "2")})


def test_prioritize_scores_numa_fit_and_zero_where_the_kubelet_rejects(cluster):
    result = extender.prioritize_nodes(cluster, {"Pod": pod("p", "4"), "NodeNames": NODES})
    assert result == [{"Host": "numa-0", "Score": 0}, {"Host": "numa-1", "Score": 10},
                      {"Host": "plain-0", "Score": 0}]


def test_prioritize_scores_zero_for_a_pod_with_nothing_numa_bound(cluster):
    shared = pod("p", "500m")
    result = extender.prioritize_nodes(cluster, {"Pod": shared, "NodeNames": ["numa-1"]})
    assert result == [{"Host": "numa-1", "Score": 0}]


def test_preempt_keeps_a_candidate_whose_kubelet_admits_the_pod_once_the_victims_are_gone(cluster):
    args = {"Pod": pod("p", "4"),
            "NodeNameToMetaVictims": {"numa-0": {"Pods": [{"UID": "running-uid"}], "NumPDBViolations": 1}}}
    assert extender.preempt(cluster, args) == {
        "NodeNameToMetaVictims": {"numa-0": {"Pods": [{"UID": "running-uid"}], "NumPDBViolations": 1}}}


def test_preempt_drops_a_candidate_whose_kubelet_still_rejects_the_pod(cluster):
    args = {"Pod": pod("p", "5"), "NodeNameToMetaVictims": {"numa-0": {"Pods": [{"UID": "running-uid"}]}}}
    assert extender.preempt(cluster, args) == {"NodeNameToMetaVictims": {}}


def test_preempt_reads_full_victim_pods_and_answers_meta_victims(cluster):
    victim = pod("running", "4", uid="running-uid")
    args = {"Pod": pod("p", "4"), "NodeNameToVictims": {"numa-0": {"Pods": [victim], "NumPDBViolations": 0}}}
    assert extender.preempt(cluster, args)["NodeNameToMetaVictims"]["numa-0"]["Pods"] == [{"UID": "running-uid"}]


def test_bind_is_refused_on_a_read_only_service(cluster):
    status, result = extender.bind(cluster, {"PodName": "waiting", "PodNamespace": "default", "PodUID": "waiting-uid",
                                             "Node": "numa-1"}, allow_writes=False)
    assert status == 403 and "--allow-writes" in result["Error"]


def test_bind_admits_a_pending_pod_and_the_next_filter_sees_it(cluster):
    status, result = extender.bind(cluster, {"PodName": "waiting", "PodNamespace": "default", "PodUID": "waiting-uid",
                                             "Node": "numa-1"}, allow_writes=True)
    assert (status, result) == (200, {"Error": ""})
    assert "default/waiting" not in cluster.pending
    assert [p.key for p in cluster.bound["numa-1"]] == ["default/waiting"]


def test_bind_of_a_pod_seen_in_a_filter_call_changes_what_the_next_filter_sees(cluster):
    extender.filter_nodes(cluster, {"Pod": pod("new", "4"), "NodeNames": NODES})
    status, result = extender.bind(cluster, {"PodName": "new", "PodNamespace": "default", "PodUID": "new-uid",
                                             "Node": "numa-1"}, allow_writes=True)
    assert (status, result["Error"]) == (200, "")
    after = extender.filter_nodes(cluster, {"Pod": pod("next", "4"), "NodeNames": ["numa-1"]})
    assert list(after["FailedNodes"]) == ["numa-1"]


def test_bind_answers_the_kubelets_rejection_as_the_error(cluster):
    extender.filter_nodes(cluster, {"Pod": pod("big", "4"), "NodeNames": NODES})
    status, result = extender.bind(cluster, {"PodName": "big", "PodNamespace": "default", "PodUID": "big-uid",
                                             "Node": "numa-0"}, allow_writes=True)
    assert status == 200 and "TopologyAffinityError" in result["Error"]


def test_bind_of_an_unknown_pod_is_not_found(cluster):
    status, _ = extender.bind(cluster, {"PodName": "ghost", "PodNamespace": "default", "PodUID": "g",
                                        "Node": "numa-1"}, allow_writes=True)
    assert status == 404


def _gpu_cluster(tmp_path):
    (tmp_path / "nodes.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-0, labels: {pool: gpu}}\n"
        "status: {capacity: {cpu: '8', memory: 32Gi, pods: '110'}, allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}\n")
    (tmp_path / "kubelets.yaml").write_text(
        "apiVersion: kubetwin.io/v1alpha1\nkind: NodeKubelets\nspec:\n  nodes:\n"
        "  - selector: {}\n    machine: 1s2n4c1t:gpus=2\n    devicesFromMachine: true\n"
        "    kubeletConfig: {cpuManagerPolicy: static, topologyManagerPolicy: single-numa-node, reservedSystemCPUs: '0'}\n")
    return load_cluster([str(tmp_path / "nodes.yaml")], kubelets_file=str(tmp_path / "kubelets.yaml"))


def _gpu_pod(gpus: str):
    p = pod("g", "2")
    for kind in ("requests", "limits"):
        p["spec"]["containers"][0]["resources"][kind]["nvidia.com/gpu"] = gpus
    return p


def test_filter_sees_the_device_plugins_gpus_and_their_numa_nodes(tmp_path):
    cluster = _gpu_cluster(tmp_path)
    assert extender.filter_nodes(cluster, {"Pod": _gpu_pod("1"), "NodeNames": ["gpu-0"]})["NodeNames"] == ["gpu-0"]
    # one GPU per NUMA node: two GPUs and their CPUs cannot come from one NUMA node
    two = extender.filter_nodes(cluster, {"Pod": _gpu_pod("2"), "NodeNames": ["gpu-0"]})
    assert "TopologyAffinityError" in two["FailedAndUnresolvableNodes"]["gpu-0"]


def test_filter_fails_a_node_without_enough_gpus(tmp_path):
    result = extender.filter_nodes(_gpu_cluster(tmp_path), {"Pod": _gpu_pod("3"), "NodeNames": ["gpu-0"]})
    assert "gpu-0" in result["FailedAndUnresolvableNodes"]
