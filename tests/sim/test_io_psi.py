"""I/O stalls in the simulation: the node's disk split by io.weight among the containers wanting
it (the water-filling of kubetwin.sim.cfs.fair_share), io.pressure over time and in the Summary API
(stats/v1alpha1 IOStats.PSI, KubeletPSI)."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.sim import simulate
from kubetwin.sim.disk import parse_disk
from kubetwin.sim.io_psi import io_stalls
from kubetwin.sim.loop import Simulator
from kubetwin.sim.usage import parse_usage


class _Pod:
    def __init__(self, name):
        self.key, self.uid = f"default/{name}", name


class _SimPod:
    def __init__(self, name):
        self.pod = _Pod(name)


def test_a_disk_serving_every_want_stalls_nobody():
    assert io_stalls(100, [(_SimPod("a"), "c", 60.0), (_SimPod("b"), "c", 40.0)]) == ([], 0.0)


def test_a_saturated_disk_is_split_evenly_and_each_waits_for_what_it_did_not_get():
    stalls, full = io_stalls(100, [(_SimPod("a"), "c", 80.0), (_SimPod("b"), "c", 80.0)])
    assert [(s.pod, s.some, s.full) for s in stalls] == [("default/a", 0.375, 0.375), ("default/b", 0.375, 0.375)]
    assert full == 0.375      # both containers of the node wait at once


def test_a_small_want_is_served_whole_and_the_rest_goes_to_the_others():
    stalls, _ = io_stalls(100, [(_SimPod("a"), "c", 20.0), (_SimPod("b"), "c", 200.0)])
    assert [(s.pod, s.some) for s in stalls] == [("default/b", pytest.approx(0.6))]


def test_the_node_is_not_fully_stalled_while_a_container_runs_without_io():
    _, full = io_stalls(100, [(_SimPod("a"), "c", 80.0), (_SimPod("b"), "c", 80.0), (_SimPod("idle"), "c", 0.0)])
    assert full == 0.0


def test_an_io_curve_is_bytes_per_second():
    assert parse_usage({"io": "80Mi"}, "usage").io[0][1].values == (80 << 20,)


def test_a_non_positive_io_bandwidth_is_refused():
    with pytest.raises(InputError, match="must be greater than zero"):
        parse_disk({"nodefs": "100Gi", "ioBandwidth": "0"}, "disk")


def test_a_misspelt_disk_key_names_io_bandwidth():
    with pytest.raises(InputError, match='did you mean "ioBandwidth"'):
        parse_disk({"nodefs": "100Gi", "ioBandwith": "1Gi"}, "disk")


def two_writers(tmp_path, kit, idle=False, **spec):
    ws = [kit.workload(n, cpu="1", memory="1Gi", usage={"io": "80Mi"}, duration="5m") for n in ("a", "b")]
    if idle:
        ws.append(kit.workload("idle", cpu="1", memory="1Gi", duration="5m"))
    return kit.scenario(tmp_path, {"nodeGroups": [kit.group(disk={"nodefs": "100Gi", "ioBandwidth": "100Mi"})],
                                   "sampleInterval": "10s", "workloads": ws, **spec})


def test_containers_contending_for_the_disk_report_io_pressure_over_time(tmp_path, kit):
    r = simulate(two_writers(tmp_path, kit))
    io = r.node_psi["io"]
    c = io["pods"]["default/a-0"]["containers"][0]
    assert c["io.pressure"]["some"]["avg10"] == 37.0          # 37.5 % of each period, a whole percentage
    assert c["io.pressure"]["some"]["total"] == pytest.approx(0.375 * 300e6, rel=0.05)
    assert io["nodes"]["n-0"]["series"][-1][1:] == [37.0, 37.0, 2]
    s = r.summary()["ioPressure"]
    assert s["peakNodeIOSomeAvg10"] == 37.0 and s["stalledPods"] == 2


def test_io_is_not_simulated_on_a_node_without_io_bandwidth(tmp_path, kit):
    w = kit.workload("a", cpu="1", memory="1Gi", usage={"io": "80Mi"}, duration="5m")
    r = simulate(kit.scenario(tmp_path, {"nodeGroups": [kit.group(disk={"nodefs": "100Gi"})],
                                         "sampleInterval": "10s", "workloads": [w]}))
    assert r.node_psi is None


def test_the_summary_api_carries_io_psi_while_kubelet_psi_is_on(tmp_path, kit):
    sim = Simulator(two_writers(tmp_path, kit, idle=True, horizon="2m"))
    sim.run()
    s = sim.pressure.summary(0, sim.now)
    by_name = {p.pod_ref.name: p for p in s.pods}
    assert by_name["a-0"].io.psi.some.avg10 > 0 and by_name["a-0"].containers[0].io.psi.full.avg10 > 0
    assert by_name["idle-0"].io.psi.some.total == 0           # zeros for a group that never stalled
    assert s.node.io.psi.some.avg10 == by_name["a-0"].io.psi.some.avg10
    assert s.node.io.psi.full.total == 0                      # the idle pod runs while the others wait
