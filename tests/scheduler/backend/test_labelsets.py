"""``LabelSets``: the bound pods grouped by label set give the counts walking them gives."""

from __future__ import annotations

from kubetwin.model.pod import pod_from_dict
from kubetwin.scheduler.backend import labelsets
from kubetwin.scheduler.backend.labelsets import LabelSets, label_set_key


def _pod(k, labels, namespace="default"):
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": f"p{k}", "uid": f"u{k}", "namespace": namespace, "labels": labels},
                          "spec": {"containers": [{"name": "c"}]}})


def _sets(placed):
    out = LabelSets()
    for i, p in placed:
        out.add(label_set_key(p), p, i)
    return out


def test_pods_with_equal_labels_and_namespace_share_a_group():
    sets = _sets([(0, _pod(0, {"app": "x"})), (1, _pod(1, {"app": "x"})), (1, _pod(2, {"app": "x"}, "other"))])
    assert len(sets.groups) == 2


def test_counts_sum_the_matching_groups_per_node():
    sets = _sets([(0, _pod(0, {"app": "x"})), (2, _pod(1, {"app": "x"})), (2, _pod(2, {"app": "x"})),
                  (1, _pod(3, {"app": "y"}))])
    asked = []

    def matches(p):
        asked.append(p.metadata.labels["app"])
        return p.metadata.labels["app"] == "x"

    assert sets.counts(3, "default", False, matches).tolist() == [1, 0, 2]
    assert sorted(asked) == ["x", "y"]


def test_a_namespace_of_none_counts_every_namespace():
    sets = _sets([(0, _pod(0, {"app": "x"})), (1, _pod(1, {"app": "x"}, "other"))])
    assert sets.counts(2, None, False, lambda p: True).tolist() == [1, 1]
    assert sets.counts(2, "other", False, lambda p: True).tolist() == [0, 1]


def test_removing_the_last_pod_of_a_group_drops_the_group():
    p = _pod(0, {"app": "x"})
    sets = _sets([(0, p)])
    sets.remove(label_set_key(p), 0)
    assert sets.groups == {} and sets.pods == 0


def test_too_many_groups_for_the_pods_is_given_up(monkeypatch):
    monkeypatch.setattr(labelsets, "MAX_GROUPS", 2)
    sets = _sets([(0, _pod(k, {"app": f"x{k}"})) for k in range(3)])
    assert sets.too_many()
