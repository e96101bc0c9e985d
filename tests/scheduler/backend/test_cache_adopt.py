"""``ClusterState.adopt``: after nodes join or leave, the new state holds what binding every pod
again would give."""

from __future__ import annotations

import numpy as np
import pytest

from kubetwin.errors import KubetwinError
from kubetwin.model.features import gates_for
from kubetwin.model.node import node_from_dict
from kubetwin.model.pod import pod_from_dict
from kubetwin.scheduler.backend.cache import ClusterState


def _node(name):
    return node_from_dict({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name}}, "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}})


def _pod(k, cpu="1"):
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"p{k}", "uid": f"u{k}", "labels": {"app": "a"}},
                          "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}})


def _state(names, placed):
    cs = ClusterState([_node(n) for n in names], gates_for(None))
    for pod, node in placed:
        cs.bind(pod, node)
    return cs


def test_adopting_gives_what_binding_again_gives():
    placed = [(_pod(0), "a"), (_pod(1, "2"), "c"), (_pod(2), "c")]
    old = _state(["a", "b", "c"], placed)
    old.match_counts("default", "app=a", lambda labels: labels.get("app") == "a")
    new = ClusterState([_node(n) for n in ("a", "c", "d")], gates_for(None))
    new.adopt(old)
    fresh = _state(["a", "c", "d"], placed)
    for name in ("requested", "free", "npods", "non_zero"):
        assert np.array_equal(getattr(new, name), getattr(fresh, name)), name
    assert {u: b.node for u, b in new.bound.items()} == {u: b.node for u, b in fresh.bound.items()}
    assert [len(ni.pods) for ni in new.infos] == [1, 2, 0]
    counts = new.match_counts("default", "app=a", lambda labels: labels.get("app") == "a")
    assert counts.tolist() == [1, 2, 0]
    assert new.snapshot.get("c") is new.infos[1]


def test_a_node_with_pods_cannot_be_dropped():
    old = _state(["a", "b"], [(_pod(0), "b")])
    new = ClusterState([_node("a")], gates_for(None))
    with pytest.raises(KubetwinError, match="cannot drop node 'b'"):
        new.adopt(old)
