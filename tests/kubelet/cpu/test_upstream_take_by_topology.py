"""takeByTopology answers recorded from upstream's own Go code on random machines.

Each case in ``data/upstream_take_by_topology.json`` is a disagreement the differential harness
found between kubetwin and upstream (``cpu_assignment.go`` at the named version): the machine
(``[cpu, core, socket, NUMA node, uncore cache]`` rows), the available CPUs, the request, the
static policy options, and upstream's answer — CPUs, an error message, or a hang. Classes:
``shared-slice`` (Go slice sharing in ``iterateCombinations``), ``hang`` (endless remainder loop),
``double-assignment`` / ``whole-unit-check`` (the CPUsPerCore / CPUsPerSocket integer checks).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubetwin.kubelet.cpu.assignment import AllocationError, TakeByTopologyHang, TakeStrategy, take_by_topology
from kubetwin.machine.cputopology import CPUDetails, CPUInfo, CPUTopology, _Index
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.features import default_for

CASES = json.loads((Path(__file__).parent / "data" / "upstream_take_by_topology.json").read_text())


def _topology(rows: list[list[int]]) -> CPUTopology:
    index = _Index({cpu: CPUInfo(numa, socket, core, uncore) for cpu, core, socket, numa, uncore in rows})
    return CPUTopology(num_cpus=len(rows), num_cores=len(index.core), num_sockets=len(index.socket),
                       num_numa_nodes=len(index.numa), num_uncore_cache=len(index.uncore),
                       details=CPUDetails(index, index.all))


def _strategy(case: dict) -> TakeStrategy:
    return TakeStrategy(distribute_across_numa=case["distribute"], group_size=case["groupSize"],
                        spread=case["spread"], prefer_uncore=case["preferUncore"],
                        own_size_check=default_for("cpuManagerFreeUnitCheck", case["version"]) == "ownSize")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_take_by_topology_gives_upstreams_answer(case: dict) -> None:
    topo = _topology(case["machine"])
    available = CPUSet.parse(case["available"])
    answer = case["answer"]
    if answer.get("hang"):
        with pytest.raises(TakeByTopologyHang):
            take_by_topology(topo, available, case["request"], _strategy(case))
    elif "error" in answer:
        with pytest.raises(AllocationError, match=answer["error"]):
            take_by_topology(topo, available, case["request"], _strategy(case))
    else:
        got = take_by_topology(topo, available, case["request"], _strategy(case))
        assert got == CPUSet.parse(answer["cpus"])


def test_every_class_of_disagreement_is_covered() -> None:
    assert {c["class"] for c in CASES} >= {"shared-slice", "hang", "double-assignment", "whole-unit-check"}
