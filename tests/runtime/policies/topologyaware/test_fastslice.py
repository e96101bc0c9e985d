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


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_shared_grant_with_the_ranking_figures_is_the_plain_grant(machine: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from kubetwin.model.cpuset import EMPTY
    from kubetwin.runtime.policies.topologyaware import fastscore
    from kubetwin.runtime.policies.topologyaware.preferences import CPU_NORMAL

    real = fastslice.allocate_shared
    made: list[int] = []

    def checked(supply: object, r: object) -> object:
        s: object = supply
        monkeypatch.setattr(fastscore, "ENABLED", False)   # the plain supply's own figure
        try:
            plain_shared = s.allocatable_shared_cpu()  # type: ignore[attr-defined]
        finally:
            monkeypatch.setattr(fastscore, "ENABLED", True)
        granted = s.granted_shared  # type: ignore[attr-defined]
        got = real(supply, r)
        if got is not None:
            fraction = r.fraction  # type: ignore[attr-defined]
            assert plain_shared >= 0 and plain_shared >= fraction
            assert s.granted_shared == granted + fraction  # type: ignore[attr-defined]
            assert got.exclusive is EMPTY and got.cpu_type == CPU_NORMAL and got.cpu_portion == fraction
            made.append(fraction)
        else:
            assert s.granted_shared == granted  # type: ignore[attr-defined]
        return got

    monkeypatch.setattr(fastslice, "allocate_shared", checked)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()),
                      runs.arrivals(47, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert runs.placed(result) > 0 and sum(1 for f in made if f > 0) > 10 and 0 in made


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_run_with_shared_grants_from_the_ranking_figures_places_as_the_plain_one(
        machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(48, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    fast = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    monkeypatch.setattr(fastslice, "allocate_shared", lambda supply, r: None)
    plain = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    assert fast == plain and runs.placed(plain) > 0
