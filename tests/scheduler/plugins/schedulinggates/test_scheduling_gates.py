"""SchedulingGates: a gated pod stays out of activeQ and has no cycle."""

from __future__ import annotations

from kubetwin.scheduler.backend.queue import SchedulingQueue
from kubetwin.scheduler.framework.interface import PreEnqueuePlugin
from kubetwin.scheduler.framework.status import Code
from kubetwin.scheduler.plugins.schedulinggates.scheduling_gates import SchedulingGates
from kubetwin.scheduler.scheduler import Scheduler

from ...builders import GATES, node, pod


def gated(name: str = "g", *gates: str):
    return pod(name, schedulingGates=[{"name": g} for g in gates or ("example.com/a",)])


def test_pre_enqueue_lets_a_pod_without_gates_in():
    assert SchedulingGates.pre_enqueue(pod("p")).is_success


def test_pre_enqueue_rejects_a_gated_pod_as_unresolvable_naming_its_gates_as_go_prints_them():
    st = SchedulingGates.pre_enqueue(gated("g", "example.com/a", "example.com/b"))
    assert st.code == Code.UnschedulableAndUnresolvable
    assert st.message == "waiting for scheduling gates: [example.com/a example.com/b]"


def test_the_default_profile_runs_scheduling_gates_at_pre_enqueue():
    fwk = Scheduler(None, [node("n1")], GATES).framework
    assert [type(p) for p in fwk.pre_enqueue_plugins] == [SchedulingGates]
    assert isinstance(fwk.pre_enqueue_plugins[0], PreEnqueuePlugin)


def test_the_framework_names_the_plugin_that_kept_the_pod_out():
    fwk = Scheduler(None, [node("n1")], GATES).framework
    assert fwk.run_pre_enqueue_plugins(gated()).plugin == SchedulingGates.name


def test_a_gated_pod_gets_no_cycle_and_says_why():
    r = Scheduler(None, [node("n1")], GATES).schedule(gated("g", "example.com/a"))
    assert r.node is None and r.code == Code.Pending
    assert r.message == "waiting for scheduling gates: [example.com/a]"


def test_the_queue_holds_a_gated_pod_back():
    q = SchedulingQueue()
    Scheduler(None, [node("n1")], GATES).framework.configure_queue(q)
    q.add(gated(), 0.0)
    q.add(pod("free"), 1.0)
    first = q.pop()
    assert first is not None and first.metadata.name == "free" and q.pop() is None
