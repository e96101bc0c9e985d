"""``SimResult.node_cpu`` built when read (:class:`kubetwin.sim.cpu_result.CPUResult`): the same
data as the plain mapping it stands for, the same summary figures from the tuples, and a result
that crosses process boundaries (``simulate --sweep`` workers)."""

from __future__ import annotations

import json
import pickle

import pytest

from kubetwin.sim import simulate
from kubetwin.sim.cpu import summary_figures


@pytest.fixture
def run(tmp_path, kit):
    hot = kit.workload("hot", count=3, cpu="1", memory="1Gi", limits=True, usage={"cpu": "1500m"}, duration="5m")
    calm = kit.workload("calm", count=2, cpu="500m", memory="1Gi", limits=True, usage={"cpu": "200m"}, duration="5m")
    return simulate(kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu="2", count=2)], "sampleInterval": "10s",
                                            "workloads": [hot, calm]}))


def test_the_mapping_reads_as_its_plain_data(run):
    cpu = run.node_cpu
    assert list(cpu) == ["series", "nodes", "pods"]
    assert {k: cpu[k] for k in cpu} == cpu.to_json()
    assert json.loads(json.dumps(run.to_json()["cpu"])) == cpu.to_json()


def test_every_pod_and_every_throttled_node_is_there(run):
    cpu = run.node_cpu
    assert sorted(cpu["pods"]) == [f"default/calm-{i}" for i in range(2)] + [f"default/hot-{i}" for i in range(3)]
    assert cpu["nodes"] and all(v["series"] for v in cpu["nodes"].values())


def test_the_summary_figures_from_the_tuples_are_those_from_the_plain_data(run):
    assert summary_figures(run.node_cpu) == summary_figures(run.node_cpu.to_json())
    assert summary_figures(run.node_cpu)["throttledPods"] == 3


def test_the_result_pickles_with_its_figures(run):
    again = pickle.loads(pickle.dumps(run.node_cpu))
    assert again.to_json() == run.node_cpu.to_json()


def test_an_unknown_key_is_a_key_error(run):
    with pytest.raises(KeyError):
        run.node_cpu["containers"]
