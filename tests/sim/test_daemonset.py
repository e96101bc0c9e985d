"""The DaemonSet controller's placement (pkg/controller/daemon): eligible nodes, the tolerations
it adds, the node-name affinity of the pods it creates, pods it already has."""

from __future__ import annotations

from kubetwin.model.node import node_from_dict
from kubetwin.sim.daemonset import (
    DAEMON_TOLERATIONS,
    add_daemon_tolerations,
    daemon_pod_node,
    daemon_pods,
    daemon_set,
    node_name_affinity,
)


def node(name, labels=None, taints=None, unschedulable=False):
    return node_from_dict({"apiVersion": "v1", "kind": "Node",
                           "metadata": {"name": name, "labels": labels or {}},
                           "spec": {"taints": taints or [], "unschedulable": unschedulable},
                           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})


def ds(spec=None, name="agent"):
    return daemon_set({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "kube-system"},
                       "spec": {"selector": {"matchLabels": {"app": name}},
                                "template": {"metadata": {"labels": {"app": name}},
                                             "spec": {"containers": [{"name": "c", "image": "x"}], **(spec or {})}}}})


def nodes_of(pods):
    return [daemon_pod_node(p) for p in pods]


def test_a_pod_is_created_for_every_node_without_taints():
    assert nodes_of(daemon_pods(ds(), [node("a"), node("b")], set())) == ["a", "b"]


def test_a_node_that_already_runs_the_daemon_pod_gets_no_second_one():
    assert nodes_of(daemon_pods(ds(), [node("a"), node("b")], {"a"})) == ["b"]


def test_the_node_selector_limits_the_nodes():
    pods = daemon_pods(ds({"nodeSelector": {"pool": "gpu"}}), [node("a"), node("g", {"pool": "gpu"})], set())
    assert nodes_of(pods) == ["g"]


def test_required_node_affinity_limits_the_nodes():
    aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}]}}}
    pods = daemon_pods(ds({"affinity": aff}), [node("a", {"zone": "z1"}), node("b", {"zone": "z2"})], set())
    assert nodes_of(pods) == ["a"]


def test_an_untolerated_noschedule_taint_keeps_the_node_out():
    tainted = node("t", taints=[{"key": "gpu", "value": "x", "effect": "NoSchedule"}])
    assert daemon_pods(ds(), [tainted], set()) == []


def test_a_prefer_no_schedule_taint_does_not_keep_the_node_out():
    soft = node("s", taints=[{"key": "gpu", "value": "x", "effect": "PreferNoSchedule"}])
    assert nodes_of(daemon_pods(ds(), [soft], set())) == ["s"]


def test_a_tolerated_taint_lets_the_node_in():
    tainted = node("t", taints=[{"key": "gpu", "value": "x", "effect": "NoSchedule"}])
    spec = {"tolerations": [{"key": "gpu", "operator": "Exists"}]}
    assert nodes_of(daemon_pods(ds(spec), [tainted], set())) == ["t"]


def test_an_unschedulable_cordoned_node_still_runs_daemon_pods():
    cordoned = node("c", taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}],
                    unschedulable=True)
    assert nodes_of(daemon_pods(ds(), [cordoned], set())) == ["c"]


def test_a_not_ready_node_still_runs_daemon_pods():
    not_ready = node("n", taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}])
    assert nodes_of(daemon_pods(ds(), [not_ready], set())) == ["n"]


def test_network_unavailable_is_tolerated_only_by_host_network_pods():
    net = node("n", taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}])
    assert daemon_pods(ds(), [net], set()) == []
    assert nodes_of(daemon_pods(ds({"hostNetwork": True}), [net], set())) == ["n"]


def test_the_controller_adds_its_six_tolerations_in_order():
    spec: dict = {}
    add_daemon_tolerations(spec)
    assert [(t["key"], t["operator"], t["effect"]) for t in spec["tolerations"]] == [
        (k, "Exists", e) for k, e in DAEMON_TOLERATIONS]


def test_a_toleration_already_there_is_not_added_twice():
    spec = {"tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}]}
    add_daemon_tolerations(spec)
    assert len(spec["tolerations"]) == len(DAEMON_TOLERATIONS)


def test_the_created_pod_is_pinned_by_a_single_match_fields_term_replacing_the_required_terms():
    aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]}}
    out = node_name_affinity(aff, "node-7")["nodeAffinity"]
    assert out["requiredDuringSchedulingIgnoredDuringExecution"] == {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-7"]}]}]}
    assert out["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"] == 1


def test_the_created_pod_is_owned_by_its_daemon_set():
    (pod,) = daemon_pods(ds(), [node("a")], set())
    (ref,) = pod["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["controller"]) == ("DaemonSet", "agent", True)
    assert pod["metadata"]["namespace"] == "kube-system"
