"""Specifications of the views the HTTP API answers (``kubetwin.serve.views``)."""

from __future__ import annotations

import pytest

from kubetwin.serve import views
from kubetwin.serve.cluster import load_cluster
from kubetwin.serve.extender import decode_pod

from .cluster_fixture import pod, write_scenario


@pytest.fixture
def cluster(tmp_path):
    return load_cluster([str(write_scenario(tmp_path))])


def test_a_node_without_a_kubelet_has_no_numa_map(cluster):
    assert views.node_detail(cluster, "plain-0")["kubelet"] is None


def test_the_what_if_admit_leaves_the_served_node_as_it_was(cluster):
    views.what_if_admit(cluster, "numa-1", [decode_pod(pod("a", "4"), "pod")])
    assert cluster.bound.get("numa-1") is None
    assert cluster.kubelets.kubelet("numa-1").admitted == []


def test_an_unknown_pod_is_not_found(cluster):
    with pytest.raises(LookupError):
        views.pod_detail(cluster, "default", "nope")


def test_a_verdict_names_the_kubelets_reason(cluster):
    v = cluster.kubelets.verdict("numa-0", decode_pod(pod("p", "5"), "pod"))
    assert views.verdict_json(v) == {"modelled": True, "admitted": False, "reason": "TopologyAffinityError",
                                     "message": "Resources cannot be allocated with Topology locality"}
