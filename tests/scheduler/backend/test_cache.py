"""``Cache``: pod and node events change the snapshot and the columns together, one generation each."""

from __future__ import annotations

import numpy as np
import pytest

from kubetwin.errors import KubetwinError
from kubetwin.model.features import gates_for
from kubetwin.model.node import node_from_dict
from kubetwin.model.pod import pod_from_dict
from kubetwin.scheduler.backend.cache import Cache


def _node(name, unschedulable=False):
    return node_from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                           "spec": {"unschedulable": unschedulable},
                           "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}})


def _pod(k, cpu="1", priority=0, node=None):
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], "priority": priority}
    if node:
        spec["nodeName"] = node
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{k}", "uid": f"u{k}"},
                          "spec": spec})


def test_pods_given_with_a_node_name_are_bound_at_start():
    cache = Cache([_node("a"), _node("b")], gates_for(None), pods=[_pod(0, node="b"), _pod(1, node="gone")])
    assert cache.node_of(_pod(0)) == "b" and cache.node_of(_pod(1)) is None
    assert cache.snapshot.get("b").pods[0].pod.uid == "u0"


def test_binding_and_removing_update_nodeinfo_and_columns_alike():
    cache = Cache([_node("a"), _node("b")], gates_for(None))
    pod = _pod(0, "2")
    cache.bind(pod, "a")
    assert cache.requested[0, cache.rindex["cpu"]] == 2000 and len(cache.infos[0].pods) == 1
    assert cache.remove(pod) == "a"
    assert not cache.requested.any() and cache.infos[0].pods == []
    assert cache.remove(pod) is None


def test_a_pod_cannot_be_bound_twice_nor_to_an_unknown_node():
    cache = Cache([_node("a")], gates_for(None))
    cache.bind(_pod(0), "a")
    with pytest.raises(KubetwinError, match="already bound to a"):
        cache.bind(_pod(0), "a")
    with pytest.raises(KubetwinError, match="no node 'x'"):
        cache.bind(_pod(1), "x")


def test_changed_since_names_the_nodes_binds_touched_and_none_after_a_node_update():
    cache = Cache([_node("a"), _node("b")], gates_for(None))
    start = cache.generation
    cache.bind(_pod(0), "b")
    assert cache.changed_since(start) == {1}
    cache.bind(_pod(1), "a")
    assert cache.changed_since(start) == {0, 1}
    cache.update_node(_node("a", unschedulable=True))
    assert cache.changed_since(start) is None


def test_a_node_update_reaches_the_snapshot_and_the_columns():
    cache = Cache([_node("a"), _node("b")], gates_for(None))
    assert cache.update_node(_node("b", unschedulable=True)) == ["unschedulable"]
    assert cache.snapshot.get("b").node.spec.unschedulable
    assert np.array_equal(cache.unschedulable, [False, True]) and cache.any_unschedulable


def test_a_lower_priority_bound_pod_is_a_possible_victim_until_it_leaves():
    cache = Cache([_node("a")], gates_for(None))
    low = _pod(0, priority=5)
    cache.bind(low, "a")
    assert cache.any_priority_below(10) and not cache.any_priority_below(5)
    cache.remove(low)
    assert not cache.any_priority_below(10)


def test_the_handle_reads_the_cache_its_snapshot_and_its_nominations():
    cache = Cache([_node("a")], gates_for(None))
    assert cache.handle.cache is cache and cache.handle.snapshot is cache.snapshot
    assert cache.handle.nominated is cache.nominated
