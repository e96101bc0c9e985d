"""A kept failed cycle brought up to date node by node after pods came or went on a few nodes."""

from __future__ import annotations

import dataclasses

from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.framework.interface import CycleState
from kubetwin.scheduler.framework.status import Code
from kubetwin.scheduler.plugins.noderesources.vector import node_resources_fit_on, wanted_resources
from kubetwin.scheduler.profile import Profile
from kubetwin.scheduler.scheduler import Scheduler
from kubetwin.sim import gpushare

from ..builders import GATES, node, pod

TAINT = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]


def _filter_of(s: Scheduler, name: str):
    return next(p for p in s.framework.filter_plugins if p.name == name)


def _forbid(monkeypatch, plugin) -> None:
    def refuse(*a, **k):
        raise AssertionError(f"{plugin.name} ran again")
    monkeypatch.setattr(plugin, "filter", refuse)


def _patched(nodes, first: Pod, again: Pod, change) -> tuple[Scheduler, str]:
    """``again`` scheduled after ``first`` failed and ``change`` touched some nodes; the message
    a scheduler without kept verdicts gives for it."""
    slow = Scheduler(None, nodes, GATES, reuse_verdicts=False)
    s = Scheduler(None, nodes, GATES)
    for sched in (s, slow):
        assert sched.schedule(first).node is None
        change(sched)
    return s, slow.schedule(again).message


def test_a_kept_taint_rejection_stands_after_pods_come_and_go_on_the_node(monkeypatch):
    nodes = [node("tainted", cpu="4", taints=TAINT), node("small", cpu="1")]
    s, want = _patched(nodes, pod("a", cpu="2"), pod("b", cpu="2"), lambda sc: sc.bind(pod("x", cpu="1"), "tainted"))
    _forbid(monkeypatch, _filter_of(s, "TaintToleration"))
    r = s.schedule(pod("b", cpu="2"))
    assert s.patched_cycles == 1
    assert r.message == want


def test_node_object_filters_are_not_run_again_for_a_later_rejection(monkeypatch):
    nodes = [node("n1", cpu="2"), node("n2", cpu="2")]
    s, want = _patched(nodes, pod("a", cpu="3"), pod("b", cpu="3"), lambda sc: sc.bind(pod("x", cpu="1"), "n1"))
    for name in ("NodeUnschedulable", "NodeName", "TaintToleration"):
        _forbid(monkeypatch, _filter_of(s, name))
    r = s.schedule(pod("b", cpu="3"))
    assert s.patched_cycles == 1
    assert r.message == want


def test_wanted_resources_list_fixed_then_scalar_requests_without_ignored_ones():
    s = Scheduler(None, [node("n1")], GATES)
    fit = _filter_of(s, "NodeResourcesFit")
    p = convert({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {
        "example.com/foo": "2", "memory": "1Gi", "cpu": "1"}}}]}}, Pod)
    names = [w[0] for w in wanted_resources(s.cluster, p, fit, None)]
    assert names == ["cpu", "memory", "example.com/foo"]
    fit.args = dataclasses.replace(fit.args, ignored_resources=frozenset({"example.com/foo"}))
    assert [w[0] for w in wanted_resources(s.cluster, p, fit, None)] == ["cpu", "memory"]


def _gpu_node(name: str, count: int) -> Node:
    return convert({"metadata": {"name": name, "labels": {gpushare.GPU_MODEL: "T4"}},
                    "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110",
                                               gpushare.GPU_COUNT: str(count)}}}, Node)


def _gpu_pod(name: str, milli: int, count: int = 1) -> Pod:
    return convert({"metadata": {"name": name, "annotations": {gpushare.GPU_COUNT: str(count),
                                                               gpushare.GPU_MILLI: str(milli)}},
                    "spec": {"containers": [{"name": "c"}]}}, Pod)


def test_gpu_filter_on_the_live_node_answers_as_the_gpus_its_pods_hold():
    profile = Profile(plugins=Profile().plugins + ((gpushare.NAME, 0),))
    s = Scheduler(profile, [_gpu_node("g", 2)], GATES)
    plugin = _filter_of(s, gpushare.NAME)
    kept = _gpu_pod("a", 600)
    for p in (kept, _gpu_pod("b", 300), _gpu_pod("c", 1000)):
        s.bind(p, "g")
    s.remove(kept)
    live = s.cluster.infos[0]
    for milli, count in ((100, 1), (400, 1), (700, 1), (1000, 1), (1000, 2)):
        want = _gpu_pod("w", milli, count)
        assert plugin.filter(CycleState(), want, live) == plugin.filter(CycleState(), want, live.clone())


def _kept_failure(s: Scheduler, p: Pod):
    assert s.schedule(p).node is None
    diag, kind, others = s._failure
    return diag, s.kept.local_failure(p, diag, kind, others)


def test_kept_statuses_read_as_the_diagnosis_has_them():
    nodes = [node("tainted", cpu="4", taints=TAINT), node("small", cpu="1"), node("full", cpu="4", pods=1),
             node("tiny", cpu="1")]
    s = Scheduler(None, nodes, GATES)
    s.bind(pod("x", cpu="1"), "full")
    diag, lf = _kept_failure(s, pod("a", cpu="2"))
    assert [lf.status(i) for i in range(len(nodes))] == [diag.status(i) for i in range(len(nodes))]


def test_fit_answers_alike_are_one_status():
    s = Scheduler(None, [node("n1", cpu="1"), node("n2", cpu="1")], GATES)
    p = pod("a", cpu="2")
    fit = _filter_of(s, "NodeResourcesFit")
    wanted, seen = wanted_resources(s.cluster, p, fit, None), {}
    first, second = (node_resources_fit_on(s.cluster, fit, i, wanted, seen) for i in (0, 1))
    assert first is second
    assert first.reasons == ("Insufficient cpu",)


def test_a_patched_histogram_follows_reasons_that_change_twice():
    nodes = [node("n1", cpu="2", pods=2), node("n2", cpu="2"), node("n3", cpu="1")]
    slow = Scheduler(None, nodes, GATES, reuse_verdicts=False)
    s = Scheduler(None, nodes, GATES)
    steps = [lambda sc: sc.bind(pod("x", cpu="1"), "n1"), lambda sc: sc.bind(pod("y", cpu="1"), "n1"),
             lambda sc: sc.remove(pod("x", cpu="1"))]
    for sched in (s, slow):
        assert sched.schedule(pod("a", cpu="3")).node is None
    for k, step in enumerate(steps):
        step(s)
        step(slow)
        again = pod(f"b{k}", cpu="3")
        assert s.schedule(again).message == slow.schedule(again).message
    assert s.patched_cycles == len(steps)


def test_fit_on_one_node_is_unresolvable_only_beyond_its_allocatable():
    s = Scheduler(None, [node("n1", cpu="2")], GATES)
    s.bind(pod("x", cpu="1"), "n1")
    fit = _filter_of(s, "NodeResourcesFit")
    for cpu, unresolvable in (("2", False), ("3", True)):
        p = pod("a", cpu=cpu)
        st = node_resources_fit_on(s.cluster, fit, 0, wanted_resources(s.cluster, p, fit, None), {})
        assert st.reasons == ("Insufficient cpu",)
        assert (st.code == Code.UnschedulableAndUnresolvable) is unresolvable
    assert node_resources_fit_on(s.cluster, fit, 0, wanted_resources(s.cluster, pod("a"), fit, None), {}) is None


def test_lowest_bound_priority_is_read_again_after_binds_and_removals():
    s = Scheduler(None, [node("n1")], GATES)
    cs = s.cluster
    assert not cs.any_priority_below(10)
    low = pod("low", priority=5)
    s.bind(low, "n1")
    assert cs.any_priority_below(10) and not cs.any_priority_below(5)
    s.remove(low)
    assert not cs.any_priority_below(10)


def test_a_pods_shape_is_all_of_it_but_its_name():
    s = Scheduler(None, [node("n1")], GATES)
    a = pod("a", labels={"app": "x"})
    assert s.signature(pod("b", labels={"app": "x"})) == s.signature(a)
    assert s.signature(pod("c", labels={"app": "y"})) != s.signature(a)
    assert s.signature(pod("d", cpu="2", labels={"app": "x"})) != s.signature(a)
    assert s.signature(a, a.uid) == s.signature(a)


def test_nodes_changed_since_a_generation_are_one_nodes_own_or_none():
    s = Scheduler(None, [node("n1"), node("n2")], GATES)
    cs = s.cluster
    start = cs.generation
    s.bind(pod("x"), "n2")
    assert cs.changed_since(start) == {1}
    s.bind(pod("y"), "n1")
    assert cs.changed_since(start) == {0, 1}
    cs.touch(-1)
    assert cs.changed_since(start + 2) is None and cs.changed_since(start) is None


def test_a_kept_failures_post_filter_message_is_preemptions_own():
    from kubetwin.scheduler.fastpath.verdicts import PREEMPT_OFF
    from kubetwin.scheduler.plugins.defaultpreemption.default_preemption import (
        PREEMPT_NEVER,
        PREEMPT_NO_DRY_RUN,
        DefaultPreemption,
    )
    from kubetwin.scheduler.plugins.defaultpreemption.preemption import NEVER, message_without_dry_run

    assert DefaultPreemption.message_without_dry_run(PREEMPT_OFF, 5, 2) == ""
    assert DefaultPreemption.message_without_dry_run(PREEMPT_NEVER, 5, 2) == "preemption: " + NEVER
    assert DefaultPreemption.message_without_dry_run(PREEMPT_NO_DRY_RUN, 5, 2) == message_without_dry_run(5, 2)


def test_kept_answers_patch_a_shape_behind_the_cluster_as_one_by_one_cycles_would():
    nodes = [node("n1", cpu="2"), node("n2", cpu="2")]
    s = Scheduler(None, nodes, GATES)
    slow = Scheduler(None, nodes, GATES, reuse_verdicts=False)
    for sched in (s, slow):
        assert sched.schedule(pod("a", cpu="3")).node is None
        sched.bind(pod("x", cpu="1"), "n1")
    batch = [pod("b", cpu="3"), pod("c", cpu="3")]
    got = s.kept_answers(batch)
    assert got is not None and s.patched_cycles == 1
    assert [r.message for r in got] == [slow.schedule(p).message for p in batch]
    assert s.next_start == slow.next_start


def test_kept_answers_leave_a_batch_to_real_cycles_once_a_changed_node_fits():
    nodes = [node("n1", cpu="2"), node("n2", cpu="4")]
    s = Scheduler(None, nodes, GATES)
    big = pod("big", cpu="4")
    s.bind(big, "n2")
    assert s.schedule(pod("a", cpu="3")).node is None
    s.remove(big)
    assert s.kept_answers([pod("b", cpu="3")]) is None
    assert s.schedule(pod("b", cpu="3")).node == "n2"


def test_kept_again_counts_later_cycles_as_kept_answers_with_times_would():
    nodes = [node("n1", cpu="2"), node("n2", cpu="2")]
    batch = [pod("b", cpu="3"), pod("c", cpu="3")]
    looked_up, counted = Scheduler(None, nodes, GATES), Scheduler(None, nodes, GATES)
    for s in (looked_up, counted):
        assert s.schedule(pod("a", cpu="3")).node is None
    advances: list[int] = []
    first = counted.kept_answers(batch, advances=advances)
    assert first is not None and advances == [0, 0]   # a shape's answer never moves the rotation
    counted.kept_again(5, sum(3 * a for a in advances))
    assert looked_up.kept_answers(batch) is not None and looked_up.kept_answers(batch, [2, 3]) is not None
    assert (counted.reused_cycles, counted.next_start) == (looked_up.reused_cycles, looked_up.next_start)
