"""The explained one-shot cycle: its answers, its PostFilter without numpy, and the long-running
scheduler's answers for the same first cycle."""

from __future__ import annotations

import msgspec
import pytest

from kubetwin.scheduler.cycle import schedule_one


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

    from .randomcluster import random_node as _node
    from .randomcluster import random_pod as _pod

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
