"""The Cluster Autoscaler loop in ``simulate`` (kubetwin/sim/cluster_autoscaler.py): parts
checked on their own; the loop's behaviour over a simulation is in test_autoscaling.py."""

from __future__ import annotations

from types import SimpleNamespace

from kubetwin.sim.cluster_autoscaler import ClusterAutoscalerLoop


# --- FilterOutSchedulable's order: core/podlistprocessor/filter_out_schedulable.go
def test_unschedulable_pods_are_taken_highest_priority_first():
    def pending(i, priority):
        pod = SimpleNamespace(status=SimpleNamespace(nominated_node_name=None))
        return SimpleNamespace(i=i, priority=priority, phase="Pending", reason="Unschedulable", pod=pod)

    loop = ClusterAutoscalerLoop.__new__(ClusterAutoscalerLoop)
    loop.sim = SimpleNamespace(by_uid={k: pending(k, p) for k, p in enumerate([0, 10, 0, 5])})
    assert [sp.i for sp in loop._unschedulable()] == [1, 3, 0, 2]
