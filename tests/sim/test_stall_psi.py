"""Memory / I/O pressure bookkeeping: the kernel's averages per container (kernel/sched/psi.c via
kubetwin.sim.psi), a pod as its worst container, a node's full line, figures kept when a pod goes."""

from __future__ import annotations

from kubetwin.sim.stall_psi import NodeStalls, Stall, psi_stats


def stall(pod, container, share):
    return Stall(f"default/{pod}", pod, container, share, share, "why")


def test_a_node_is_tracked_only_from_its_first_stall():
    s = NodeStalls("io", 10.0)
    s.step("n", 10.0, [])
    assert s.nodes == {}
    s.step("n", 20.0, [stall("a", "c", 0.5)])
    assert set(s.nodes) == {"n"}


def test_a_pod_reports_its_worst_container():
    s = NodeStalls("memory", 10.0)
    for t in (10.0, 20.0, 30.0):
        s.step("n", t, [stall("a", "x", 0.2), stall("a", "y", 0.9)])
    some, _ = s.lines("n", "a")
    assert some == s.lines("n", "a", "y")[0] and some.avg10 > s.lines("n", "a", "x")[0].avg10


def test_the_node_full_line_is_the_node_wide_share_not_the_worst_container():
    s = NodeStalls("memory", 10.0)
    s.step("n", 10.0, [stall("a", "c", 1.0)], node_full=0.0)
    some, full = s.node_lines("n")
    assert some.total_us > 0 and full.total_us == 0


def test_a_pod_that_left_keeps_its_last_figures_in_the_results():
    s = NodeStalls("io", 10.0)
    s.step("n", 10.0, [stall("a", "c", 1.0)])
    s.forget("n", "a")
    s.end_sample(10.0)
    got = s.result()["pods"]["default/a"]["containers"][0]
    assert got["container"] == "c" and got["io.pressure"]["some"]["total"] == 10_000_000
    assert s.lines("n", "a") is None


def test_a_group_that_never_stalled_reports_zeros_in_the_summary_api():
    stats = psi_stats(None)
    assert (stats.some.total, stats.some.avg10, stats.full.avg300) == (0, 0.0, 0.0)
