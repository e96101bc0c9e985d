"""Per-node figures at the end of a run (:mod:`kubetwin.sim.metrics`)."""

from __future__ import annotations

import dataclasses

from kubetwin.sim.kubelets import kubelet_for
from kubetwin.sim.loop import Simulator
from kubetwin.sim.metrics import node_reports, numa_report


def test_a_node_no_pod_reached_reports_its_kubelet_as_it_starts_each_its_own_copy(tmp_path, kit):
    cfg = {"cpuManagerPolicy": "static", "memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node",
           "kubeReserved": {"cpu": "2", "memory": "2Gi"},
           "reservedMemory": [{"numaNode": 0, "limits": {"memory": "2148Mi"}}]}
    groups = [{"name": "a", "count": 3, "machine": "2s2n4c2t", "kubeletConfig": cfg},
              {"name": "b", "count": 2, "machine": "1s1n4c1t", "kubeletConfig": {"cpuManagerPolicy": "none"}}]
    sc = kit.scenario(tmp_path, {"kubeletAdmission": False, "nodeGroups": groups,
                                 "workloads": [kit.workload("w", 2, cpu="2", limits=True)]})
    sim = Simulator(sc)
    sim.run()
    reports = node_reports(sim)
    for i, rep in enumerate(reports):
        expected = numa_report(kubelet_for(sim.sim_nodes[i]))
        assert ([dataclasses.asdict(r) for r in rep.numa], rep.stranded_cpus) == \
            ([dataclasses.asdict(r) for r in expected[0]], expected[1])
    assert reports[0].numa is not reports[1].numa and reports[0].numa[0] is not reports[1].numa[0]
    assert reports[0].numa[0].memory_allocatable is not None   # the Static Memory Manager's table
