"""``LiveSnapshot``: NodeInfos in node-tree order, with the nodes whose pods have (anti-)affinity."""

from __future__ import annotations

import numpy as np
import pytest

from kubetwin.errors import KubetwinError
from kubetwin.model.features import gates_for
from kubetwin.model.node import node_from_dict
from kubetwin.model.pod import pod_from_dict
from kubetwin.scheduler.backend.snapshot import LiveSnapshot
from kubetwin.scheduler.framework.types import PodInfo, ResourceAccounting

ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}]}}


def _node(name, zone):
    return node_from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "topology.kubernetes.io/zone": zone}}, "status": {"allocatable": {"cpu": "8", "pods": "110"}}})


def _pod(k, affinity=None):
    spec = {"containers": [{"name": "c"}]}
    if affinity:
        spec["affinity"] = affinity
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{k}", "uid": f"u{k}"},
                          "spec": spec})


def _snapshot(nodes):
    return LiveSnapshot(nodes, ResourceAccounting(gates_for(None)))


def test_nodes_are_in_node_tree_order_zone_by_zone():
    snap = _snapshot([_node("a1", "a"), _node("a2", "a"), _node("b1", "b")])
    assert [ni.name for ni in snap.node_infos] == ["a1", "b1", "a2"]
    assert snap.index == {"a1": 0, "b1": 1, "a2": 2}


def test_a_node_given_twice_is_refused():
    with pytest.raises(KubetwinError, match="node a is given twice"):
        _snapshot([_node("a", "z"), _node("a", "z")])


def test_nodes_with_affinity_pods_follow_pods_added_and_removed():
    snap = _snapshot([_node("a", "z"), _node("b", "z")])
    pod = _pod(0, ANTI)
    info = PodInfo(pod)
    snap.add_pod(1, info)
    snap.add_pod(1, PodInfo(_pod(1)))
    assert [ni.name for ni in snap.have_pods_with_affinity] == ["b"]
    assert snap.nodes_with_anti == {1: 1} and snap.pods_with_required_anti_affinity == 1
    snap.remove_pod(1, pod, info)
    assert snap.have_pods_with_affinity == [] and snap.nodes_with_anti == {}
    assert [pi.pod.uid for pi in snap.node_infos[1].pods] == ["u1"]


def test_taking_over_keeps_the_node_infos_both_snapshots_know():
    old = _snapshot([_node("a", "z"), _node("b", "z")])
    info = PodInfo(_pod(0, ANTI))
    old.add_pod(1, info)
    new = _snapshot([_node("b", "z"), _node("c", "z")])
    src = np.array([1, -1])
    new_of = np.array([-1, 0])
    new.take_over(old, src, new_of)
    assert new.get("b") is old.node_infos[1]
    assert new.nodes_with_anti == {0: 1}
