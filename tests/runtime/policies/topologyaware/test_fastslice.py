"""The topology-aware policy's no-exclusive-CPUs fast path (``fastslice``): it applies only to
requests of no exclusive CPUs, not isolated, from a pool that does not refuse them; random runs
place as the plain slicing and accounting do."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kubetwin.runtime.policies.topologyaware import fastslice

from ... import fastpath_runs as runs


def _supply(shared: int) -> SimpleNamespace:
    return SimpleNamespace(allocatable_shared_cpu=lambda: shared)


def test_only_requests_of_no_exclusive_cpus_from_a_pool_with_shared_cpu_take_nothing() -> None:
    shared = SimpleNamespace(isolate=False)
    assert fastslice.takes_nothing(_supply(0), shared, 0)
    assert not fastslice.takes_nothing(_supply(4000), shared, 1)          # exclusive CPUs asked
    assert not fastslice.takes_nothing(_supply(4000), SimpleNamespace(isolate=True), 0)   # isolated
    assert not fastslice.takes_nothing(_supply(-1), shared, 0)            # the plain code refuses


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_run_without_slicing_for_shared_grants_places_as_the_plain_one(machine: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(32, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    fast = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    monkeypatch.setattr(fastslice, "ENABLED", False)
    assert fast == runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
