"""QueueingHints: a parked pod moves on an event only when one of its rejecting plugins
registered the event's kind and that plugin's hint says the event may help it."""

from __future__ import annotations

import msgspec

from kubetwin.model.meta import convert
from kubetwin.model.node import Node, Taint
from kubetwin.model.pod import Pod
from kubetwin.scheduler.framework.events import (ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE, NODE_ADD, NODE_UPDATE,
                                       NODE_UPDATE_EVENTS, RESOURCE_CLAIM_UPDATE, UPDATE_NODE_ALLOCATABLE,
                                       UPDATE_NODE_CONDITION, UPDATE_NODE_LABEL, UPDATE_NODE_TAINT,
                                       node_update_events)
from kubetwin.scheduler.backend.queue import PLUGIN_EVENTS, SchedulingQueue, register_plugin_events

TAINT_UPDATE = NODE_UPDATE_EVENTS[UPDATE_NODE_TAINT]
ALLOC_UPDATE = NODE_UPDATE_EVENTS[UPDATE_NODE_ALLOCATABLE]
LABEL_UPDATE = NODE_UPDATE_EVENTS[UPDATE_NODE_LABEL]


def pod(name: str, cpu: str = "1", labels=None, namespace: str = "default", ports=None, **spec) -> Pod:
    c = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    if ports:
        c["ports"] = [{"containerPort": p, "hostPort": p} for p in ports]
    return convert({"metadata": {"name": name, "namespace": namespace, "uid": name, "labels": labels or {}},
                    "spec": {"containers": [c], **spec}}, Pod)


def node(name: str = "n1", cpu: str = "4", taints=(), labels=None, unschedulable: bool = False) -> Node:
    return convert({"metadata": {"name": name, "labels": labels or {}},
                    "spec": {"taints": [{"key": k, "effect": "NoSchedule"} for k in taints],
                             "unschedulable": unschedulable},
                    "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}, Node)


def parked(p: Pod, *plugins: str) -> SchedulingQueue:
    q = SchedulingQueue()
    q.add(p)
    q.pop()
    q.requeue_unschedulable(p, set(plugins))
    return q


# --- NodeResourcesFit ----------------------------------------------------------------------------

def test_a_taint_change_does_not_wake_a_pod_node_resources_fit_rejected():
    q = parked(pod("p", cpu="2"), "NodeResourcesFit")
    assert q.on_event(TAINT_UPDATE, old=node(taints=["x"]), new=node()) == 0


def test_a_node_update_that_grows_cpu_wakes_a_pod_node_resources_fit_rejected():
    q = parked(pod("p", cpu="2"), "NodeResourcesFit")
    assert q.on_event(ALLOC_UPDATE, old=node(cpu="1"), new=node(cpu="4")) == 1


def test_a_node_too_small_for_the_pod_does_not_wake_it():
    q = parked(pod("p", cpu="8"), "NodeResourcesFit")
    assert q.on_event(ALLOC_UPDATE, old=node(cpu="1"), new=node(cpu="4")) == 0
    assert q.on_event(NODE_ADD, new=node(cpu="4")) == 0
    assert q.on_event(NODE_ADD, new=node(cpu="16")) == 1


def test_an_allocatable_change_of_a_resource_the_pod_does_not_request_does_not_wake_it():
    q = parked(pod("p", cpu="2"), "NodeResourcesFit")
    bigger_memory = convert({"metadata": {"name": "n1"}, "status": {"allocatable": {
        "cpu": "4", "memory": "16Gi", "pods": "110"}}}, Node)
    assert q.on_event(ALLOC_UPDATE, old=node(), new=bigger_memory) == 0


def test_an_assigned_pods_deletion_wakes_a_pod_node_resources_fit_rejected():
    q = parked(pod("p"), "NodeResourcesFit")
    assert q.on_event(ASSIGNED_POD_ADD, pod=pod("other")) == 0
    assert q.on_event(ASSIGNED_POD_DELETE, old=pod("other")) == 1


# --- NodePorts -----------------------------------------------------------------------------------

def test_a_deleted_pod_without_host_ports_does_not_wake_a_pod_node_ports_rejected():
    q = parked(pod("p", ports=[8080]), "NodePorts")
    assert q.on_event(ASSIGNED_POD_DELETE, old=pod("other")) == 0


def test_a_deleted_pod_on_another_host_port_does_not_wake_it():
    q = parked(pod("p", ports=[8080]), "NodePorts")
    assert q.on_event(ASSIGNED_POD_DELETE, old=pod("other", ports=[9090])) == 0


def test_a_deleted_pod_holding_the_host_port_wakes_a_pod_node_ports_rejected():
    q = parked(pod("p", ports=[8080]), "NodePorts")
    assert q.on_event(ASSIGNED_POD_DELETE, old=pod("other", ports=[8080])) == 1


# --- TaintToleration / NodeUnschedulable / NodeAffinity ------------------------------------------

def test_removing_the_taint_wakes_a_pod_taint_toleration_rejected():
    q = parked(pod("p"), "TaintToleration")
    assert q.on_event(TAINT_UPDATE, old=node(taints=["x"]), new=node()) == 1


def test_adding_a_taint_does_not_wake_a_pod_taint_toleration_rejected():
    q = parked(pod("p"), "TaintToleration")
    assert q.on_event(TAINT_UPDATE, old=node(), new=node(taints=["x"])) == 0


def test_a_taint_change_that_leaves_an_untolerated_taint_does_not_wake_it():
    q = parked(pod("p"), "TaintToleration")
    assert q.on_event(TAINT_UPDATE, old=node(taints=["x", "y"]), new=node(taints=["y"])) == 0


def test_uncordoning_wakes_a_pod_node_unschedulable_rejected():
    q = parked(pod("p"), "NodeUnschedulable")
    old, new = node(unschedulable=True), node()
    events = node_update_events(["unschedulable"], new)
    assert events == [TAINT_UPDATE]
    assert q.on_event(events[0], old=old, new=new) == 1


def test_cordoning_is_no_event():
    assert node_update_events(["unschedulable"], node(unschedulable=True)) == []


def test_a_label_the_pod_selects_wakes_a_pod_node_affinity_rejected_only_when_it_appears():
    q = parked(pod("p", nodeSelector={"disk": "ssd"}), "NodeAffinity")
    assert q.on_event(LABEL_UPDATE, old=node(labels={"disk": "ssd"}), new=node(labels={"disk": "ssd", "a": "b"})) == 0
    assert q.on_event(LABEL_UPDATE, old=node(), new=node(labels={"disk": "hdd"})) == 0
    assert q.on_event(LABEL_UPDATE, old=node(), new=node(labels={"disk": "ssd"})) == 1


def test_a_taint_change_does_not_wake_a_pod_node_affinity_rejected():
    q = parked(pod("p", nodeSelector={"disk": "ssd"}), "NodeAffinity")
    assert q.on_event(TAINT_UPDATE, old=node(taints=["x"]), new=node(labels={"disk": "ssd"})) == 0


# --- PodTopologySpread / InterPodAffinity --------------------------------------------------------

SPREAD = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                         "labelSelector": {"matchLabels": {"app": "web"}}}]}


def test_a_deleted_pod_outside_the_spread_selector_does_not_wake_a_pod_pod_topology_spread_rejected():
    q = parked(pod("p", labels={"app": "web"}, **SPREAD), "PodTopologySpread")
    assert q.on_event(ASSIGNED_POD_DELETE, old=pod("db", labels={"app": "db"})) == 0
    assert q.on_event(ASSIGNED_POD_DELETE, old=pod("web", labels={"app": "web"}, namespace="other")) == 0
    assert q.on_event(ASSIGNED_POD_DELETE, old=pod("web", labels={"app": "web"})) == 1


def test_a_taint_change_wakes_a_spread_pod_only_on_nodes_with_its_topology_keys():
    q = parked(pod("p", **SPREAD), "PodTopologySpread")
    assert q.on_event(TAINT_UPDATE, old=node(taints=["x"]), new=node()) == 0
    assert q.on_event(TAINT_UPDATE, old=node(taints=["x"], labels={"zone": "a"}), new=node(labels={"zone": "a"})) == 1


def test_a_deleted_pod_matching_the_anti_affinity_wakes_a_pod_inter_pod_affinity_rejected():
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}}
    q = parked(pod("p", **anti), "InterPodAffinity")
    assert q.on_event(ASSIGNED_POD_ADD, pod=pod("db", labels={"app": "db"})) == 0
    assert q.on_event(ASSIGNED_POD_DELETE, old=pod("web", labels={"app": "web"})) == 0
    assert q.on_event(ASSIGNED_POD_DELETE, old=pod("db", labels={"app": "db"})) == 1


# --- the queue -----------------------------------------------------------------------------------

def test_a_pod_is_moved_when_any_of_its_rejecting_plugins_hints_queue():
    q = parked(pod("p", cpu="2"), "NodeResourcesFit", "TaintToleration")
    assert q.on_event(TAINT_UPDATE, old=node(taints=["x"]), new=node()) == 1


def test_a_pod_without_rejecting_plugins_is_moved_by_every_event():
    q = parked(pod("p"), )
    assert q.on_event(NODE_UPDATE_EVENTS[UPDATE_NODE_CONDITION], old=node(), new=node()) == 1


def test_an_event_without_its_objects_queues_as_a_failing_hint_would():
    q = parked(pod("p", ports=[8080]), "NodePorts")
    assert q.on_event(ASSIGNED_POD_DELETE) == 1


def test_a_hintless_out_of_tree_registration_for_node_update_wakes_on_any_node_update(monkeypatch):
    monkeypatch.setitem(PLUGIN_EVENTS, "Example", ())
    register_plugin_events("Example", [NODE_UPDATE])
    q = parked(pod("p"), "Example")
    assert q.on_event(ASSIGNED_POD_DELETE, old=pod("o")) == 0
    assert q.on_event(NODE_UPDATE_EVENTS[UPDATE_NODE_CONDITION], old=node(), new=node()) == 1


def test_a_deallocated_claim_wakes_a_pod_dynamic_resources_rejected_but_a_pod_deletion_does_not():
    q = parked(pod("p"), "DynamicResources")
    assert q.on_event(ASSIGNED_POD_DELETE, old=pod("o")) == 0
    claim = {"metadata": {"namespace": "default", "name": "c"}}
    assert q.on_event(RESOURCE_CLAIM_UPDATE, old={**claim, "status": {"allocation": True}},
                      new={**claim, "status": {}}) == 1


def test_an_event_seen_in_flight_sends_the_failed_pod_to_backoff_when_a_hint_queues():
    q = SchedulingQueue()
    p = pod("p")
    q.add(p)
    q.pop()
    q.requeue_unschedulable(p, {"NodeResourcesFit"}, 0.0, in_flight=[(ASSIGNED_POD_DELETE, pod("v"), None)])
    assert q.unschedulable == []


def test_an_event_seen_in_flight_that_no_hint_queues_leaves_the_pod_parked():
    q = SchedulingQueue()
    p = pod("p", ports=[8080])
    q.add(p)
    q.pop()
    q.requeue_unschedulable(p, {"NodePorts"}, 0.0, in_flight=[(ASSIGNED_POD_DELETE, pod("v"), None)])
    assert [x.name for x in q.unschedulable] == ["p"]


def test_only_pods_whose_plugins_registered_the_events_kind_are_asked():
    q = parked(pod("p"), "NodeResourcesFit")
    q.on_event(TAINT_UPDATE, old=node(), new=node())
    assert q._by_kind[TAINT_UPDATE.kind] == set()
    assert q._by_kind.get(ASSIGNED_POD_DELETE.kind) is None
    q.on_event(ASSIGNED_POD_DELETE, old=pod("o"))
    assert q.unschedulable == []


def test_node_conditions_and_taints_are_separate_events():
    old = node()
    new = msgspec.structs.replace(old, spec=msgspec.structs.replace(old.spec, taints=[Taint(key="t",
                                                                                            effect="NoSchedule")]))
    assert node_update_events(["taints", "labels"], new) == [LABEL_UPDATE, TAINT_UPDATE]
