"""The topology-aware policy's re-pinning fast path (``fastpin``) against the plain
``update_shared_allocations`` / ``_set_preferred_cpuset``: cpuset texts as the plain code
formats them, and random runs (every QoS class, hide-hyperthreads and the other annotations,
creations and deletions) that end with the same containers, NRI updates and placements."""

from __future__ import annotations

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.runtime.policies.topologyaware import fastpin
from kubetwin.runtime.sysfs import System

from ... import fastpath_runs as runs


@pytest.mark.parametrize("hide", (False, True))
def test_cpuset_texts_are_the_plain_texts(hide: bool) -> None:
    sys = System(load_machine(str(runs.SHARED / "machines" / runs.MACHINES[0])), CPUSet())
    for text in ("0-3", "1,3,5,33", "0-63", "4,36"):
        cpus = CPUSet.parse(text)
        want = str(sys.single_thread_for_cpus(cpus) if hide else cpus)
        assert fastpin.cpuset_text(sys, cpus, hide) == want
        assert fastpin.cpuset_text(sys, cpus, hide) == want   # remembered


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_run_re_pinned_by_the_fast_path_ends_as_the_plain_one(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(31, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    fast = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    monkeypatch.setattr(fastpin, "ENABLED", False)
    assert fast == runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
