"""``NodeColumns``: the numpy columns over the node axis stay what walking the NodeInfos gives."""

from __future__ import annotations

import msgspec
import numpy as np

from kubetwin.model.features import gates_for
from kubetwin.model.node import node_from_dict
from kubetwin.model.pod import pod_from_dict
from kubetwin.scheduler.backend.columns import FIXED_RESOURCES, LabelIndex, NodeColumns
from kubetwin.scheduler.framework.types import NodeInfo, PodInfo, ResourceAccounting


def _node(name, labels=None, taints=(), gpus=0, cpu="8"):
    alloc = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    return node_from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
                           "spec": {"taints": list(taints)}, "status": {"allocatable": alloc}})


def _pod(k, cpu="1", labels=None, namespace="default"):
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"p{k}", "uid": f"u{k}", "namespace": namespace,
                                       "labels": labels or {}},
                          "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}})


def _columns(nodes):
    gates = gates_for(None)
    accounting = ResourceAccounting(gates)
    infos = [NodeInfo(n, accounting) for n in nodes]
    return NodeColumns(infos, {ni.name: i for i, ni in enumerate(infos)}, gates, accounting)


def _add(cols, i, pod):
    cols.infos[i].add_pod(PodInfo(pod))
    a = cols.amounts(pod)
    cols.add_pod(i, pod, a, False)
    return a


def test_resources_are_the_fixed_ones_then_each_scalar_resource_some_node_has():
    cols = _columns([_node("a"), _node("b", gpus=2)])
    assert cols.resources == [*FIXED_RESOURCES, "nvidia.com/gpu"]
    assert cols.alloc[:, cols.rindex["nvidia.com/gpu"]].tolist() == [0, 2]
    assert cols.alloc_nonzero[cols.rindex["cpu"]] and not cols.alloc_nonzero[cols.rindex["nvidia.com/gpu"]]


def test_free_is_allocatable_minus_requested_after_pods_come_and_go():
    cols = _columns([_node("a"), _node("b")])
    a = _add(cols, 1, _pod(0, "2"))
    _add(cols, 1, _pod(1, "500m"))
    cols.infos[1].remove_pod(_pod(0))
    cols.remove_pod(1, _pod(0), a.bound, a.non_zero, False)
    assert np.array_equal(cols.free, cols.alloc - cols.requested)
    assert cols.requested[1, cols.rindex["cpu"]] == 500
    assert cols.npods.tolist() == [0, 1]


def test_pods_of_one_template_share_their_amounts():
    cols = _columns([_node("a")])
    assert cols.amounts(_pod(0, "1")) is cols.amounts(_pod(1, "1"))
    assert cols.amounts(_pod(2, "2")) is not cols.amounts(_pod(0, "1"))


def test_selector_counts_are_kept_in_step_with_pods_added_after_the_first_ask():
    cols = _columns([_node("a"), _node("b")])
    _add(cols, 0, _pod(0, labels={"app": "x"}))
    counts = cols.match_counts("default", "app=x", lambda labels: labels.get("app") == "x")
    assert counts.tolist() == [1, 0]
    _add(cols, 1, _pod(1, labels={"app": "x"}))
    _add(cols, 1, _pod(2, labels={"app": "x"}, namespace="other"))
    assert cols.match_counts("default", "app=x", None).tolist() == [1, 1]


def test_a_node_update_reports_what_changed_and_reindexes_it():
    cols = _columns([_node("a", labels={"zone": "z1"}), _node("b")])
    new = _node("a", labels={"zone": "z2"}, taints=[{"key": "k", "effect": "PreferNoSchedule"}], cpu="4")
    old = cols.infos[0].node
    cols.infos[0].set_node(new)
    assert cols.node_changed(0, old, new) == ["taints", "labels", "allocatable"]
    assert cols.any_prefer_no_schedule
    assert cols.labels.code_of("zone", "z2") == 0
    assert cols.free[0, cols.rindex["cpu"]] == 4000


def test_a_label_requirement_is_evaluated_per_distinct_value_and_absent():
    cols = _columns([_node("a", labels={"zone": "z1"}), _node("b"), _node("c", labels={"zone": "z1"})])
    seen = []

    def matcher(labels):
        seen.append(dict(labels))
        return labels.get("zone") == "z1"

    assert cols.labels.evaluate("zone", matcher).tolist() == [True, False, True]
    assert seen == [{"zone": "z1"}, {}]


def test_label_index_codes_absent_labels_as_minus_one():
    cols = _columns([_node("a", labels={"zone": "z1"}), _node("b")])
    assert isinstance(cols.labels, LabelIndex)
    assert cols.labels.codes_of("zone").tolist() == [0, -1]
    assert cols.labels.codes_of("rack").tolist() == [-1, -1]


def test_label_index_shape_tells_complete_keys_and_keys_with_one_node_per_value():
    cols = _columns([_node("a", labels={"host": "a", "zone": "z1"}), _node("b", labels={"host": "b", "zone": "z1"}),
                     _node("c", labels={"zone": "z2"})])
    assert cols.labels.shape("host") == (False, True)
    assert cols.labels.shape("zone") == (True, False)
    assert cols.labels.shape("rack") == (False, True)


def test_a_selector_is_asked_once_per_label_set_of_the_bound_pods():
    cols = _columns([_node("a"), _node("b")])
    for k in range(6):
        _add(cols, k % 2, _pod(k, labels={"app": "x" if k < 4 else "y"}))
    asked = []

    def matcher(labels):
        asked.append(dict(labels))
        return labels.get("app") == "x"

    assert cols.match_counts("default", "app=x", matcher).tolist() == [2, 2]
    assert sorted(a["app"] for a in asked) == ["x", "y"]


def test_counts_by_label_set_leave_out_other_namespaces_and_terminating_pods():
    cols = _columns([_node("a"), _node("b")])
    _add(cols, 0, _pod(0, labels={"app": "x"}))
    _add(cols, 1, _pod(1, labels={"app": "x"}, namespace="other"))
    gone = _pod(2, labels={"app": "x"})
    gone = msgspec.structs.replace(gone, metadata=msgspec.structs.replace(
        gone.metadata, deletion_timestamp="2024-01-01T00:00:00Z"))
    _add(cols, 1, gone)
    assert cols.match_counts("default", "app=x", lambda labels: labels.get("app") == "x").tolist() == [1, 0]
    assert cols.match_counts("default", "app=x", None, terminating=True,
                             pod_matcher=lambda p: p.metadata.namespace == "default" and p.metadata.labels.get("app") == "x"
                             ).tolist() == [1, 1]


def test_label_set_counts_follow_removals():
    cols = _columns([_node("a"), _node("b")])
    a = _add(cols, 0, _pod(0, labels={"app": "x"}))
    _add(cols, 1, _pod(1, labels={"app": "x"}))
    cols.infos[0].remove_pod(_pod(0, labels={"app": "x"}))
    cols.remove_pod(0, _pod(0, labels={"app": "x"}), a.bound, a.non_zero, False)
    assert cols.match_counts("default", "app=x", lambda labels: labels.get("app") == "x").tolist() == [0, 1]


def test_too_many_distinct_label_sets_fall_back_to_walking_the_pods(monkeypatch):
    from kubetwin.scheduler.backend import labelsets

    monkeypatch.setattr(labelsets, "MAX_GROUPS", 2)
    cols = _columns([_node("a"), _node("b")])
    for k in range(4):
        _add(cols, k % 2, _pod(k, labels={"app": f"x{k}"}))
    assert cols._label_sets is None
    assert cols.match_counts("default", "app=x1", lambda labels: labels.get("app") == "x1").tolist() == [0, 1]
