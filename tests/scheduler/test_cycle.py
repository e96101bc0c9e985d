"""The scheduling cycle: node sampling, node order, tie-breaks, the unschedulable message."""

from __future__ import annotations

import random

import msgspec
import pytest

from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.scheduler.cycle import (fit_error_message, node_tree_order, num_feasible_nodes_to_find,
                                      schedule_one, select_host)
from kubetwin.scheduler.framework.status import Code, Status
from kubetwin.scheduler.framework.types import NodeInfo, ResourceAccounting


def _node(name: str, zone: str) -> NodeInfo:
    node = convert({"metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}}}, Node)
    return NodeInfo(node, ResourceAccounting(None))


def test_small_clusters_are_searched_completely():
    assert num_feasible_nodes_to_find(None, 99) == 99


def test_adaptive_percentage_shrinks_with_cluster_size():
    # 50 - 5000/125 = 10 % of 5000
    assert num_feasible_nodes_to_find(None, 5000) == 500


def test_adaptive_percentage_never_drops_below_five_percent():
    assert num_feasible_nodes_to_find(None, 15000) == 750


def test_at_least_one_hundred_nodes_are_looked_for():
    assert num_feasible_nodes_to_find(10, 200) == 100


def test_node_tree_interleaves_zones_in_order_of_appearance():
    nodes = [_node("a1", "a"), _node("a2", "a"), _node("b1", "b"), _node("a3", "a"), _node("b2", "b")]
    assert [n.name for n in node_tree_order(nodes)] == ["a1", "b1", "a2", "b2", "a3"]


def test_highest_total_score_wins():
    assert select_host([("n1", 10), ("n2", 30), ("n3", 20)], random.Random(0)) == "n2"


def test_ties_are_broken_reproducibly_under_a_seed():
    scored = [("n1", 5), ("n2", 5), ("n3", 5)]
    picks = {select_host(scored, random.Random(seed)) for seed in range(30)}
    assert picks == {"n1", "n2", "n3"}
    assert select_host(scored, random.Random(7)) == select_host(scored, random.Random(7))


def test_unschedulable_message_sorts_reason_counts_as_strings():
    statuses = {f"n{i}": Status(Code.Unschedulable, ("Insufficient cpu",)) for i in range(10)}
    statuses["t1"] = Status(Code.UnschedulableAndUnresolvable, ("node(s) had untolerated taint(s)",))
    statuses["t2"] = Status(Code.UnschedulableAndUnresolvable, ("node(s) had untolerated taint(s)",))
    assert fit_error_message(12, statuses) == (
        "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint(s).")


def test_prefilter_rejection_message_replaces_the_histogram():
    assert fit_error_message(3, {}, pre_filter_msg="pod affinity terms conflict") == (
        "0/3 nodes are available: pod affinity terms conflict.")


def test_unschedulable_pod_without_possible_victims_is_explained_without_numpy(tmp_path):
    import subprocess
    import sys

    (tmp_path / "nodes.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                                         "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '10'}}\n")
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                                       "spec: {containers: [{name: c, resources: {requests: {cpu: '3'}}}]}\n")
    code = ("import sys; from kubetwin.cli.main import main\n"
            "try:\n    main(['schedule', '--nodes', 'nodes.yaml', 'pod.yaml', '-o', 'json'])\n"
            "except SystemExit:\n    pass\n"
            "sys.stderr.write('numpy' if 'numpy' in sys.modules else 'clean')")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert r.stderr.endswith("clean"), r.stderr
    assert "Preemption is not helpful for scheduling" in r.stdout


@pytest.mark.parametrize("seed", range(6))
def test_preemption_message_without_dry_run_equals_the_dry_run(seed):
    import random

    from kubetwin.model.features import gates_for
    from kubetwin.scheduler.inputs import ClusterInputs
    from kubetwin.scheduler.scheduler import Scheduler

    from .test_vector_equivalence import _node, _pod

    rng = random.Random(seed)
    nodes = [_node(rng, i) for i in range(10)]
    def with_priority(p, **extra):
        return msgspec.structs.replace(p, spec=msgspec.structs.replace(p.spec, priority=rng.choice([0, 0, 5]),
                                                                       **extra))

    running = [with_priority(_pod(rng, f"r{k}", f"n{rng.randrange(10)}")) for k in range(15)]
    cluster = ClusterInputs(nodes, running)
    for k in range(12):
        pod = with_priority(_pod(rng, f"p{k}"))
        if rng.random() < 0.3:
            pod = with_priority(pod, preemption_policy="Never")
        explained = schedule_one(cluster, pod, gates_for(), seed=seed)
        fast = Scheduler(None, nodes, gates_for(), seed, pods=running).schedule(pod)
        assert (fast.node is None, fast.message if fast.node is None else "") == (
            explained.node is None, explained.message if explained.node is None else "")
