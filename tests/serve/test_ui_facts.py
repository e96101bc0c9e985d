"""Specifications of the facts the web UI shows beyond the API's views: a node's requested
amounts and conditions, the machine's cores, a running pod's topology hints."""

from __future__ import annotations

import pytest

from kubetwin.serve import views
from kubetwin.serve.cluster import load_cluster
from kubetwin.serve.ui_facts import admission_hints, cpu_cores, node_facts

from .cluster_fixture import write_scenario


@pytest.fixture
def cluster(tmp_path):
    return load_cluster([str(write_scenario(tmp_path))])


def test_a_nodes_requested_amounts_sum_its_running_pods_in_scheduler_units(cluster):
    facts = node_facts(cluster)["numa-0"]
    assert facts["requestedAmounts"] == {"cpu": 4000, "memory": 1 << 30}
    assert facts["allocatableAmounts"]["cpu"] == 7000


def test_a_node_without_pods_requests_nothing(cluster):
    assert node_facts(cluster)["numa-1"]["requestedAmounts"] == {}


def test_the_numa_node_count_comes_from_the_machine(cluster):
    assert node_facts(cluster)["numa-0"]["numaNodes"] == 2


def test_a_node_without_a_machine_has_no_numa_node_count(cluster):
    assert node_facts(cluster)["plain-0"]["numaNodes"] is None


def test_the_facts_are_computed_again_after_a_bind(cluster):
    from kubetwin.serve.extender import decode_pod

    from .cluster_fixture import pod

    assert node_facts(cluster)["plain-0"]["requestedAmounts"] == {}
    cluster.bind(decode_pod(pod("late", "2"), "pod"), "plain-0")
    assert node_facts(cluster)["plain-0"]["requestedAmounts"] == {"cpu": 2000, "memory": 1 << 30}


def test_the_overview_carries_the_facts_of_each_node(cluster):
    rows = {n["name"]: n for n in views.overview(cluster)["nodes"]}
    assert rows["numa-0"]["requestedAmounts"]["cpu"] == 4000 and rows["plain-0"]["conditions"] == []


def test_each_core_names_its_socket_numa_node_and_cpus(cluster):
    cores = cpu_cores(cluster.nodes["numa-0"].machine)
    assert [c["cpus"] for c in cores] == [[i] for i in range(8)]
    assert {c["numaNode"] for c in cores if c["cpus"][0] >= 4} == {1} and {c["socket"] for c in cores} == {0}


def test_the_node_view_carries_the_cores_for_the_numa_map(cluster):
    assert len(views.node_detail(cluster, "numa-0")["kubelet"]["cores"]) == 8


def test_a_running_pods_hints_are_the_cpu_managers_and_the_merged_one(cluster):
    [record] = admission_hints(cluster, "numa-0", "default/running")
    assert record["container"] == "c" and record["admit"] is True
    assert record["merged"] == {"numaNodeAffinity": [1], "preferred": True}
    assert {"numaNodeAffinity": [1], "preferred": True} in record["providers"]["cpu"]["cpu"]


def test_the_pod_drill_down_carries_the_hints(cluster):
    d = views.pod_detail(cluster, "default", "running")
    assert d["admission"]["hints"][0]["merged"]["numaNodeAffinity"] == [1]


def test_asking_for_hints_leaves_the_served_kubelet_as_it_was(cluster):
    before = views.node_detail(cluster, "numa-0")["kubelet"]["numaNodes"]
    admission_hints(cluster, "numa-0", "default/running")
    assert views.node_detail(cluster, "numa-0")["kubelet"]["numaNodes"] == before
