"""Specifications of the kubelets kept as equivalence classes (``kubetwin.serve.kubelet_models``):
every verdict is the one the node's own kubelet gives."""

from __future__ import annotations

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.serve.kubelet_models import KubeletModels, pod_shape

MACHINE = load_machine("1s2n4c1t")
CONFIG = KubeletConfiguration.from_dict({"cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node",
                                         "reservedSystemCPUs": "0"})


def _pod(name: str, cpu: str, node: str = ""):
    res = {"requests": {"cpu": cpu, "memory": "1Gi"}, "limits": {"cpu": cpu, "memory": "1Gi"}}
    spec: dict = {"containers": [{"name": "c", "image": "x", "resources": res}]}
    if node:
        spec["nodeName"] = node
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "d", "uid": name},
                          "spec": spec})


def _models(*names: str) -> KubeletModels:
    m = KubeletModels()
    for n in names:
        m.add_node(n, MACHINE, CONFIG)
    return m


def test_nodes_of_one_machine_and_configuration_start_in_one_class():
    m = _models("a", "b", "c")
    assert m.class_count() == 1


def test_nodes_that_admitted_the_same_shapes_share_a_class():
    m = _models("a", "b")
    m.admit("a", _pod("p1", "2"))
    m.admit("b", _pod("p2", "2"))
    assert m.class_count() == 2
    assert m.kubelet("a") is m.kubelet("b")


def test_a_pods_shape_leaves_out_its_identity_and_node():
    assert pod_shape(_pod("p1", "2")) == pod_shape(_pod("p2", "2", node="a"))
    assert pod_shape(_pod("p1", "2")) != pod_shape(_pod("p1", "3"))


def test_a_verdict_is_the_one_the_nodes_own_kubelet_gives():
    m = _models("a")
    own = NodeAdmission(MACHINE, CONFIG)
    for i, cpu in enumerate(["3", "4", "1", "4"]):
        pod = _pod(f"p{i}", cpu)
        v = m.verdict("a", pod)
        d = own.fork().admit(pod)
        assert v is not None and (v.admitted, v.reason) == (d.admitted, d.reason)
        m.admit("a", pod)
        own.admit(pod)


def test_a_trial_does_not_change_the_class_kubelet():
    m = _models("a")
    m.verdict("a", _pod("p", "4"))
    assert m.kubelet("a").admitted == []


def test_a_node_without_a_kubelet_has_no_verdict():
    assert _models("a").verdict("elsewhere", _pod("p", "1")) is None


def test_rejections_follow_admissions():
    m = _models("a", "b")
    pod = _pod("p", "4")
    assert m.rejections(pod) == {}
    m.admit("a", _pod("big", "4"))
    assert list(m.rejections(pod)) == ["a"]


def test_unresolvable_means_even_the_empty_kubelet_rejects():
    m = _models("a")
    m.admit("a", _pod("big", "4"))
    assert not m.unresolvable("a", _pod("p", "4"))
    assert m.unresolvable("a", _pod("p", "5"))


def test_replay_gives_a_kubelet_with_the_pods_own_names():
    m = _models("a")
    kubelet, decisions = m.replay("a", [_pod("first", "2")])
    assert [d.admitted for d in decisions] == [True]
    assert [p.name for p in kubelet.admitted] == ["first"]
