"""The DaemonSet controller in ``simulate`` and the Cluster Autoscaler's template pods
(kubetwin/sim/daemonset_controller.py; cluster-autoscaler 1.36.1 ``simulator/node_info_utils.go``,
``utils/daemonset``, drainability rules ``daemonset``/``mirror``, ``--ignore-daemonsets-utilization``,
``--force-ds``)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kubetwin.errors import InputError
from kubetwin.model.features import gates_for
from kubetwin.model.node import node_from_dict
from kubetwin.sim import simulate
from kubetwin.sim.daemonset_controller import DaemonSetController, is_daemon_set_pod, is_mirror_pod


def daemon_set(name="agent", cpu="1", node_selector=None, priority_class=None):
    spec: dict = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "uid": f"uid-{name}"},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


def deployment(replicas, cpu, name="web"):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}}}


def ca_spec(count=1, **ca):
    return {"horizon": "30m", "autoscaling": {"clusterAutoscaler": {"expander": "least-waste", **ca}},
            "nodeGroups": [{"name": "pool", "count": count, "minSize": 1, "maxSize": 10,
                            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}]}


def daemon_pods(r, name="agent"):
    return [p for p in r.pods if p.name.startswith(f"{name}-")]


# --- the controller -------------------------------------------------------------------------------
def test_every_node_runs_one_pod_of_each_daemon_set(tmp_path, kit):
    r = simulate(kit.scenario(tmp_path, {"nodeGroups": [kit.group(count=3)]}, daemon_set()))
    pods = daemon_pods(r)
    assert sorted(p.node for p in pods) == ["n-0", "n-1", "n-2"]
    assert all(p.phase == "Running" for p in pods)


def test_a_daemon_set_runs_only_on_the_nodes_its_selector_matches(tmp_path, kit):
    groups = [kit.group("a", count=1, labels={"role": "agent"}), kit.group("b", count=1)]
    r = simulate(kit.scenario(tmp_path, {"nodeGroups": groups}, daemon_set(node_selector={"role": "agent"})))
    assert [p.node for p in daemon_pods(r)] == ["a-0"]


def test_a_daemon_set_with_an_amount_past_int64_is_refused_with_its_template_path(tmp_path, kit):
    with pytest.raises(InputError, match=r"spec.template.spec.containers\[0\].resources.requests"):
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()]}, daemon_set(cpu="1e30"))


def test_a_misspelt_daemon_set_field_is_refused(tmp_path, kit):
    ds = daemon_set()
    ds["spec"]["templat"] = ds["spec"].pop("template")
    with pytest.raises(InputError, match="templat"):
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()]}, ds)


def test_daemon_and_mirror_pods_are_recognised_by_controller_and_annotation():
    from kubetwin.model.pod import pod_from_dict

    ds_pod = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "a", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d", "uid": "u",
                                          "controller": True}]}, "spec": {"containers": [{"name": "c"}]}})
    mirror = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "b", "annotations": {"kubernetes.io/config.mirror": "x"}}, "spec": {"containers": [{"name": "c"}]}})
    assert is_daemon_set_pod(ds_pod) and not is_mirror_pod(ds_pod)
    assert is_mirror_pod(mirror) and not is_daemon_set_pod(mirror)


# --- podsExpectedOnFreshNode ------------------------------------------------------------------------
def _controller(*sets, residents=()):
    sim = SimpleNamespace(gates=gates_for(None, {}), residents=[dict(enumerate(residents))])
    return DaemonSetController(sim, list(sets))


NODE = node_from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "template", "labels": {}},
                       "status": {"allocatable": {"cpu": "4"}}})


def test_a_template_from_the_node_group_gets_every_daemon_set_that_should_run_on_it():
    pods = _controller(daemon_set("a"), daemon_set("b")).template_pods(NODE, None, force=False)
    assert sorted(p.name.split("-")[0] for p in pods) == ["a", "b"]


def test_a_template_from_a_node_without_the_daemon_pod_adds_it_only_with_force_ds():
    c = _controller(daemon_set("a"))
    assert c.template_pods(NODE, 0, force=False) == []
    assert len(c.template_pods(NODE, 0, force=True)) == 1


def test_a_preempting_system_node_critical_daemon_pod_is_added_without_force_ds():
    c = _controller(daemon_set("a", priority_class="system-node-critical"))
    assert len(c.template_pods(NODE, 0, force=False)) == 1


# --- the Cluster Autoscaler -------------------------------------------------------------------------
def test_a_node_the_autoscaler_adds_gets_its_daemon_pod(tmp_path, kit):
    r = simulate(kit.scenario(tmp_path, ca_spec(), daemon_set(cpu="500m"), deployment(4, "1500m")))
    assert r.autoscaling["clusterAutoscaler"]["scaleUps"]
    nodes = sorted(p.node for p in daemon_pods(r) if p.phase == "Running")
    assert nodes == sorted({p.node for p in r.pods if p.phase == "Running"})


def test_the_estimator_counts_the_daemon_pods_of_the_template_node(tmp_path, kit):
    # 4-CPU nodes, a 1-CPU daemon pod: one 2-CPU pod per node fits beside it, not two
    r = simulate(kit.scenario(tmp_path, ca_spec(), daemon_set(cpu="1"), deployment(5, "2")))
    up = r.autoscaling["clusterAutoscaler"]["scaleUps"][0]
    assert up["nodes"] == 4   # the existing node runs one; four more for the other four
    assert sum(p.phase == "Running" for p in r.pods if p.name.startswith("web-")) == 5


def test_daemon_pods_do_not_block_scale_down_and_go_with_their_node(tmp_path, kit):
    r = simulate(kit.scenario(tmp_path, ca_spec(count=2, scaleDownUnneededTime="1m"), daemon_set(cpu="100m")))
    ca = r.autoscaling["clusterAutoscaler"]
    assert len(ca["scaleDowns"]) == 1 and ca["scaleDowns"][0]["empty"]
    gone = ca["scaleDowns"][0]["node"]
    (pod,) = [p for p in daemon_pods(r) if p.node == gone]
    assert (pod.phase, pod.reason) == ("Deleted", "NodeDeleted")


def test_ignore_daemon_sets_utilization_leaves_daemon_pods_out_of_the_utilization(tmp_path, kit):
    # per node: a 1500m daemon pod and a 500m pod on 4 CPUs = 50 %, above a 0.4 threshold;
    # without the daemon pod 500m of 2500m = 20 %
    objs = (daemon_set(cpu="1500m"), deployment(2, "500m"))
    kept = simulate(kit.scenario(tmp_path, ca_spec(count=2, scaleDownUnneededTime="1m",
                                                   scaleDownUtilizationThreshold=0.4), *objs))
    assert kept.autoscaling["clusterAutoscaler"]["scaleDowns"] == []
    gone = simulate(kit.scenario(tmp_path, ca_spec(count=2, scaleDownUnneededTime="1m",
                                                   scaleDownUtilizationThreshold=0.4,
                                                   ignoreDaemonSetsUtilization=True), *objs))
    assert len(gone.autoscaling["clusterAutoscaler"]["scaleDowns"]) == 1


def test_the_example_nodes_daemon_pods_are_on_the_template_without_daemon_set_objects(tmp_path, kit):
    # a snapshot's daemon pod (owned by a DaemonSet the scenario does not list) on the group's
    # node: upstream's template from that node keeps it
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "agent-x", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u1", "controller": True}]},
        "spec": {"nodeName": "pool-0", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    r = simulate(kit.scenario(tmp_path, ca_spec(), pod, deployment(5, "2")))
    assert r.autoscaling["clusterAutoscaler"]["scaleUps"][0]["nodes"] == 4
