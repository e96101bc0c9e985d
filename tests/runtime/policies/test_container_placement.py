"""``container_placement`` (the pool and the CPUs a container holds alone, as the simulation's
figures read them) says what ``describe_container`` says, for every container of random runs
of both nri-plugins policies: topology-aware's exclusive and isolated CPUs, and the CPUs of a
balloon that holds one pod (not a reserved balloon)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetwin.model.cpuset import CPUSet
from kubetwin.sim import runtime_memo
from kubetwin.sim.loop import Simulator
from kubetwin.sim.scenario import Scenario, parse_scheduler_config

from .. import fastpath_runs as runs


def _from_description(grant: dict[str, Any] | None) -> tuple[str, CPUSet] | None:
    if grant is None:
        return None
    exclusive = CPUSet()
    for key in ("exclusive", "isolated"):
        if grant.get(key):
            exclusive = exclusive | CPUSet.parse(grant[key])
    if grant.get("pods") == 1 and grant.get("cpus") and not str(grant.get("pool", "")).startswith("reserved["):
        exclusive = CPUSet.parse(grant["cpus"])
    return grant["pool"], exclusive


@pytest.mark.parametrize("policy", ("topology-aware", "balloons"))
@pytest.mark.parametrize("machine", runs.MACHINES[:2])
def test_container_placement_is_what_describe_container_says(policy: str, machine: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    rp = runs.topology_aware() if policy == "topology-aware" else runs.balloons()
    annotations = runs.TOPOLOGY_AWARE_ANNOTATIONS if policy == "topology-aware" else runs.BALLOONS_ANNOTATIONS
    monkeypatch.setattr(runtime_memo, "ENABLED", False)
    checked = alone = 0
    sim = Simulator(Scenario("placement", runs.nodes(machine, 3, rp), runs.arrivals(31, 60, annotations),
                             profile=parse_scheduler_config(None)))
    policies = sim.runtime

    def record(i: int, rn: Any, sp: Any) -> Any:
        nonlocal checked, alone
        for _, r in rn.running():
            c = rn.resmgr.cache.lookup_container(r.ctr.id)
            got = rn.resmgr.policy.container_placement(c)
            assert got == _from_description(rn.resmgr.policy.describe_container(c))
            checked += 1
            alone += bool(got and got[1])
        return original(i, rn, sp)

    original = policies.record
    monkeypatch.setattr(policies, "record", record)
    sim.run()
    assert checked > 100 and alone > 0
