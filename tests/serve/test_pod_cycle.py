"""Specifications of a running pod's scheduling cycle as if scheduled now without itself
(``kubetwin.serve.pod_cycle``, the ``rescheduled`` part of ``GET /api/v1/pods/{ns}/{name}``)."""

from __future__ import annotations

import pytest

from kubetwin.serve import views
from kubetwin.serve.cluster import load_cluster

from .cluster_fixture import NODES, write_scenario

#: a pod running on a node tainted after it was placed (NoSchedule does not evict it)
TAINTED = """\
apiVersion: kubetwin.io/v1alpha1
kind: Simulation
metadata: {name: tainted}
spec:
  nodeGroups:
  - name: old
    count: 1
    capacity: {cpu: "8", memory: 32Gi, pods: "110"}
    taints: [{key: retiring, value: "yes", effect: NoSchedule}]
  - name: new
    count: 1
    capacity: {cpu: "8", memory: 32Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, uid: web-uid}
spec:
  nodeName: old-0
  containers:
  - {name: c, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}
"""


@pytest.fixture
def cluster(tmp_path):
    return load_cluster([str(write_scenario(tmp_path))])


@pytest.fixture
def tainted(tmp_path):
    path = tmp_path / "tainted.yaml"
    path.write_text(TAINTED)
    return load_cluster([str(path)])


def test_a_running_pod_gets_a_scheduling_cycle_over_every_node(cluster):
    r = views.pod_detail(cluster, "default", "running")["rescheduled"]
    assert sorted(r["scheduling"]["nodes"]) == NODES
    assert r["runsOn"] == "numa-0"


def test_the_rescheduled_part_says_it_is_todays_answer_without_the_pod(cluster):
    note = views.pod_detail(cluster, "default", "running")["rescheduled"]["note"]
    assert "removed from its node" in note and "not the cycle that placed the pod" in note


def test_a_pending_pod_has_no_rescheduled_part(cluster):
    d = views.pod_detail(cluster, "default", "waiting")
    assert "rescheduled" not in d and "scheduling" in d


def test_the_chosen_node_is_the_cycles_and_same_node_compares_it_with_the_pods_node(cluster):
    r = views.pod_detail(cluster, "default", "running")["rescheduled"]
    assert r["chosenNode"] == r["scheduling"]["node"] is not None
    assert r["sameNode"] == (r["chosenNode"] == "numa-0")


def test_the_pods_own_requests_no_longer_count_on_its_node(cluster):
    fit = views.pod_detail(cluster, "default", "running")["rescheduled"]["scheduling"]["nodes"]["numa-0"]["filter"]
    assert fit["NodeResourcesFit"]["code"] == "Success"


def test_the_pods_own_nodes_kubelet_is_asked_without_the_pod(cluster):
    # with the pod admitted, numa-0's NUMA node 1 is full and NUMA node 0 has 3 free CPUs: 4 do not fit;
    # without it, NUMA node 1's 4 CPUs are free again
    pod = cluster.bound["numa-0"][0]
    assert not cluster.kubelets.verdict("numa-0", pod).admitted
    kubelet = views.pod_detail(cluster, "default", "running")["rescheduled"]["kubelet"]
    assert kubelet["numa-0"] == {"modelled": True, "admitted": True, "score": 10, "numaNodes": [1]}
    assert kubelet["plain-0"] == {"modelled": False}


def test_the_served_cluster_is_unchanged_by_the_cycle(cluster):
    before = (cluster.generation, {n: [p.key for p in ps] for n, ps in cluster.bound.items()},
              [p.key for p in cluster.inputs().pods], list(cluster.pending), cluster.kubelets.kubelet("numa-0").admitted)
    views.pod_detail(cluster, "default", "running")
    after = (cluster.generation, {n: [p.key for p in ps] for n, ps in cluster.bound.items()},
             [p.key for p in cluster.inputs().pods], list(cluster.pending), cluster.kubelets.kubelet("numa-0").admitted)
    assert after == before
    assert cluster.bound["numa-0"][0].spec.node_name == "numa-0"


def test_a_pod_its_node_would_no_longer_take_is_placed_elsewhere(tainted):
    r = views.pod_detail(tainted, "default", "web")["rescheduled"]
    assert r["chosenNode"] == "new-0" and r["runsOn"] == "old-0" and r["sameNode"] is False
    assert r["scheduling"]["nodes"]["old-0"]["filter"]["TaintToleration"]["code"] == "UnschedulableAndUnresolvable"


def test_a_pod_no_node_would_take_now_has_no_chosen_node(tmp_path):
    path = tmp_path / "only-old.yaml"
    path.write_text(TAINTED.replace('  - name: new\n    count: 1\n    capacity: {cpu: "8", memory: 32Gi, pods: "110"}\n', ""))
    r = views.pod_detail(load_cluster([str(path)]), "default", "web")["rescheduled"]
    assert r["chosenNode"] is None and r["scheduling"]["node"] is None and r["sameNode"] is False
    assert r["runsOn"] == "old-0"
