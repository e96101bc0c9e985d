"""A kept answer handed to another pod of the same shape."""

from __future__ import annotations

import dataclasses

from kubetwin.model.pod import pod_from_dict
from kubetwin.scheduler.framework.status import Code
from kubetwin.scheduler.scheduler import ScheduleResult


def _pod(name: str):
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                          "spec": {"containers": [{"name": "c"}]}})


def test_result_for_another_pod_differs_only_in_its_pod():
    r = ScheduleResult(_pod("a"), None, Code.Unschedulable, "0/3 nodes are available: 3 Insufficient cpu.",
                       0, 3, frozenset({"NodeResourcesFit"}))
    other = _pod("b")
    got = r.for_pod(other)
    assert got.pod is other
    assert got == dataclasses.replace(r, pod=other)
    assert r.pod.metadata.name == "a"


def test_a_placed_result_is_the_one_the_constructor_gives():
    from kubetwin.scheduler.schedule_one import ScheduleResult

    placed = ScheduleResult.placed("pod", "node-1", 3, 7)
    assert placed == ScheduleResult("pod", "node-1", feasible=3, evaluated=7)
    assert placed.scheduled and placed.unschedulable_plugins == frozenset() and placed.victims == ()
