"""The scheduler package's public calls a simulation uses instead of reaching into its state."""

from __future__ import annotations

import msgspec
import pytest

import kubetwin.scheduler as scheduler
from kubetwin.errors import InputError, KubetwinError
from kubetwin.scheduler.backend.queue import (ASSIGNED_POD_ADD, NODE_UPDATE, PLUGIN_EVENTS,
                                              POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION, SchedulingQueue)
from kubetwin.scheduler.scheduler import Scheduler
from kubetwin.scheduler.fastpath import vector

from .builders import GATES, node, pod


def test_public_names_are_exported():
    for name in scheduler.__all__:
        assert getattr(scheduler, name) is not None


def test_profile_from_config_reads_the_first_profile():
    prof = scheduler.profile_from_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                          "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 40,
                                          "profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "NodePorts"}]}}}]})
    assert prof.percentage_of_nodes_to_score == 40
    assert "NodePorts" not in dict(prof.plugins)


def test_profile_from_config_without_config_is_the_default_profile():
    assert scheduler.profile_from_config(None) == scheduler.Profile()


def test_profile_from_config_names_file_and_field_of_a_bad_value():
    with pytest.raises(InputError) as exc:
        scheduler.profile_from_config({"percentageOfNodesToScore": 101}, "sim.yaml")
    assert "sim.yaml" in str(exc.value) and "percentageOfNodesToScore" in str(exc.value)


def test_profile_from_config_names_the_profile_of_an_unknown_plugin():
    with pytest.raises(InputError) as exc:
        scheduler.profile_from_config({"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Nope"}]}}}]},
                                      "sim.yaml")
    assert "profiles[0].plugins.multiPoint.enabled[0].name" in str(exc.value)


def _tainted(n, key="node.kubernetes.io/memory-pressure"):
    from kubetwin.model.node import Taint

    return msgspec.structs.replace(n, spec=msgspec.structs.replace(
        n.spec, taints=[*n.spec.taints, Taint(key=key, effect="NoSchedule")]))


def test_update_node_taints_turn_pods_away_next_cycle():
    n1 = node("n1")
    s = Scheduler(None, [n1], GATES)
    assert s.update_node(_tainted(n1)) == ["taints"]
    assert "untolerated taint" in s.schedule(pod("a")).message
    assert s.update_node(n1) == ["taints"]
    assert s.schedule(pod("a")).node == "n1"


def test_update_node_labels_are_seen_by_node_selectors():
    n1 = node("n1")
    s = Scheduler(None, [n1], GATES)
    selected = pod("a", nodeSelector={"disk": "ssd"})
    assert s.schedule(selected).node is None
    relabelled = msgspec.structs.replace(n1, metadata=msgspec.structs.replace(
        n1.metadata, labels={**n1.metadata.labels, "disk": "ssd"}))
    assert s.update_node(relabelled) == ["labels"]
    assert s.schedule(selected).node == "n1"


def test_update_node_allocatable_keeps_the_pods_requests():
    s = Scheduler(None, [node("n1", cpu="4")], GATES, pods=[pod("a", cpu="3", node_name="n1")])
    assert s.schedule(pod("b", cpu="2")).node is None
    s.update_node(node("n1", cpu="8"))
    assert s.schedule(pod("b", cpu="2")).node == "n1"


def test_update_node_of_an_unknown_node_is_an_error():
    with pytest.raises(KubetwinError, match="no such node"):
        Scheduler(None, [node("n1")], GATES).update_node(node("n2"))


def test_long_unschedulable_pods_are_flushed_without_an_event():
    q = SchedulingQueue()
    q.add(pod("a"))
    p = q.pop()
    q.requeue_unschedulable(p, {"NodeResourcesFit"}, now=10.0)
    assert q.flush_unschedulable_leftover(10.0 + POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION) == 0
    assert q.pop(20.0) is None
    assert q.flush_unschedulable_leftover(10.0 + POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION + 1) == 1
    assert q.pop(400.0).name == "a"


def test_registered_events_decide_which_pods_an_event_wakes(monkeypatch):
    monkeypatch.setitem(PLUGIN_EVENTS, "Example", frozenset())
    scheduler.register_plugin_events("Example", [NODE_UPDATE])
    q = SchedulingQueue()
    q.add(pod("a"))
    q.requeue_unschedulable(q.pop(), {"Example"})
    assert q.on_event(ASSIGNED_POD_ADD) == 0
    assert q.on_event(NODE_UPDATE) == 1


def test_registered_vector_filter_is_used_for_its_plugin(monkeypatch):
    calls = []

    def fn(cs, p, plugin, state):
        calls.append(p.name)
        return None

    monkeypatch.setattr(vector, "_OUT_OF_TREE", {})
    monkeypatch.setattr(vector, "_RESOLVED", {})
    scheduler.register_vector_filter("NodeUnschedulable", fn)
    assert Scheduler(None, [node("n1")], GATES).schedule(pod("a")).node == "n1"
    assert calls == ["a"]
