"""A node whose kubelet would hang in takeByTopology admits nothing after it (docs/upstream-bugs.md)."""

from __future__ import annotations

from kubetwin.sim.loop import Simulator

HANG_KUBELET = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,3,6,9",
                "cpuManagerPolicyOptions": {"full-pcpus-only": "true", "distribute-cpus-across-numa": "true"}}


def test_pods_after_a_hang_are_not_admitted_and_say_so(tmp_path, kit) -> None:
    spec = {"kubeletAdmission": True, "maxRecreations": 0,
            "nodeGroups": [{"name": "n", "count": 1, "machine": "1s4n3c2t", "kubeletConfig": HANG_KUBELET}],
            "workloads": [kit.workload("big", count=1, cpu="14", limits=True, arrival={"at": "1s"}),
                          kit.workload("small", count=2, cpu="2", limits=True, arrival={"start": "10s", "interval": "5s"})]}
    result = Simulator(kit.scenario(tmp_path, spec)).run()
    reasons = {p.name: p.reason for p in result.pods}
    assert reasons["big-0"] == "KubeletHang"
    assert reasons["small-0"] == "KubeletHang" and reasons["small-1"] == "KubeletHang"
