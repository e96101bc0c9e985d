"""The topology-aware policy's fast pool scorer (``fastscore``) against the plain per-pool
``supply.get_score``: at every placement of random workloads (creations and deletions, all QoS
classes, fractional and whole CPUs, isolated/shared/reserved preferences) over the conformance
machines, the same scores, the same memory offers and the same ranking of pools — and so runs
with and without it give the same placements."""

from __future__ import annotations

from typing import Any

import pytest

from kubetwin.runtime.policies.topologyaware import fastscore, pools

from ... import fastpath_runs as runs


def _compare_every_ranking(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each fast ranking checked against the plain one; returns a list counting them."""
    fast = fastscore.sort_pools_by_score
    seen: list[int] = []

    def both(p: Any, req: Any, aff: dict[int, int]) -> Any:
        fast_scores, fast_pools = fast(p, req, aff)
        fast_shared = [fastscore.allocatable_shared_cpu(n.free_supply()) for n in p.pools]
        fastscore.ENABLED = False   # the plain supplies' own figures
        try:
            plain_scores, plain_pools = pools.sort_pools_by_score(p, req, aff)
            assert fast_shared == [n.free_supply().allocatable_shared_cpu() for n in p.pools]
        finally:
            fastscore.ENABLED = True
        assert [n.id for n in fast_pools] == [n.id for n in plain_pools]
        ids = [n.id for n in p.pools]   # the fast scores are made when read
        assert {i: fast_scores[i].describe() for i in ids} == {i: plain_scores[i].describe() for i in ids}
        assert {i: (fast_scores[i].prio, fast_scores[i].allocatable_shared) for i in ids} == {
            i: (plain_scores[i].prio, plain_scores[i].allocatable_shared) for i in ids}
        seen.append(1)
        return fast_scores, fast_pools

    monkeypatch.setattr(fastscore, "sort_pools_by_score", both)
    monkeypatch.setattr(fastscore, "FIRST", False)   # every placement through the whole ranking
    return seen


@pytest.mark.parametrize("machine", runs.MACHINES)
@pytest.mark.parametrize("seed", (11, 12))
def test_fast_pool_scores_rank_as_the_plain_scores_at_every_placement(machine: str, seed: int,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _compare_every_ranking(monkeypatch)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()),
                      runs.arrivals(seed, 120, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert len(seen) > 50 and runs.placed(result) > 0


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_run_with_the_fast_scorer_places_as_the_plain_scorer(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(13, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    fast = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    monkeypatch.setattr(fastscore, "ENABLED", False)
    plain = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    assert fast == plain


@pytest.mark.parametrize("traced", (True, False))
def test_only_traced_nodes_keep_the_pool_scores_explain_reads(traced: bool) -> None:
    from kubetwin.machine import load_machine
    from kubetwin.model.kubelet_config import load_kubelet_config
    from kubetwin.runtime.config import load_policy
    from kubetwin.runtime.node import RuntimeNode

    from ...test_update_container import guaranteed

    n = RuntimeNode(load_machine("1s1n8c2t"), load_policy("topology-aware"), load_kubelet_config(None, None),
                    traced=traced)
    assert n.create_pod(guaranteed("p", "2")) is None
    assert n.resmgr is not None
    cid = n.pods["default/p"].containers[0].ctr.id
    why = n.resmgr.policy.explain(cid)  # type: ignore[attr-defined]
    assert (why is not None and why["pools"][0]["rank"] == 1) if traced else why is None


@pytest.mark.parametrize("machine", runs.MACHINES)
@pytest.mark.parametrize("seed", (14, 15))
def test_the_first_pool_found_without_sorting_is_the_first_of_the_plain_ranking(
        machine: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    first = fastscore._first
    found = {"unlimited": 0, "isolated": 0, "other": 0, "sorted": 0}

    def checked(p: Any, req: Any, f: Any, aff: list[float]) -> Any:
        got = first(p, req, f, aff)
        fastscore.ENABLED = False
        try:
            _, plain_pools = pools.sort_pools_by_score(p, req, {})  # the runs' pods have no affinities
        finally:
            fastscore.ENABLED = True
        if got is None:
            found["sorted"] += 1
        else:
            assert got == plain_pools[0].id
            found["unlimited" if req.limit == fastscore.UNLIMITED_CPU else "isolated" if req.isolate else "other"] += 1
        return got

    monkeypatch.setattr(fastscore, "_first", checked)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()),
                      runs.arrivals(seed, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert runs.placed(result) > 0
    assert found["unlimited"] > 10 and found["isolated"] > 5 and found["other"] > 10, found


def test_best_pool_with_first_off_is_the_first_of_the_sorted_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(16, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    fast = runs.run(runs.nodes(runs.MACHINES[0], 4, runs.topology_aware()), arrivals)
    monkeypatch.setattr(fastscore, "FIRST", False)
    sorted_ = runs.run(runs.nodes(runs.MACHINES[0], 4, runs.topology_aware()), arrivals)
    assert fast == sorted_ and runs.placed(fast) > 0


@pytest.mark.parametrize("isolated", ("2-5", "2-3,34-35", "0-63"))
def test_isolated_requests_with_isolated_cpus_in_some_pools_find_the_first_of_the_plain_ranking(
        isolated: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    from kubetwin.machine import load_machine
    from kubetwin.model.cpuset import CPUSet
    from kubetwin.model.kubelet_config import KubeletConfiguration
    from kubetwin.model.pod import pod_from_dict
    from kubetwin.runtime.node import RuntimeNode

    first = fastscore._first
    found = {"mixed": 0, "same": 0, "sorted": 0}

    def checked(p: Any, req: Any, f: Any, aff: list[float]) -> Any:
        got = first(p, req, f, aff)
        fastscore.ENABLED = False
        try:
            _, plain_pools = pools.sort_pools_by_score(p, req, {})
        finally:
            fastscore.ENABLED = True
        if got is None:
            found["sorted"] += 1
        else:
            assert got == plain_pools[0].id
            if req.isolate:
                short = sum(1 for x in f.isolated if x < 0)
                found["mixed" if 0 < short < len(f.isolated) else "same"] += 1
        return got

    monkeypatch.setattr(fastscore, "_first", checked)
    machine = load_machine(str(runs.SHARED / "machines" / runs.MACHINES[0]))
    rn = RuntimeNode(machine, runs.topology_aware().resource, KubeletConfiguration.from_dict(runs.NONE),
                     isolated=CPUSet.parse(isolated), traced=False)
    rng = random.Random(17)
    live: list[str] = []
    for k in range(60):
        if live and rng.random() < 0.3:
            rn.delete_pod(live.pop(rng.randrange(len(live))))
            continue
        doc = runs.pod_doc(rng, [{}, {}, {"prefer-isolated-cpus.resource-policy.nri.io/pod": "true"}])
        if rng.random() < 0.5:
            doc["spec"]["containers"] = [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "64Mi"},
                                                                     "limits": {"cpu": "1", "memory": "64Mi"}}}]
        doc["metadata"].update(name=f"p{k}", uid=f"uid-{k}")
        pod = pod_from_dict(doc)
        if rn.create_pod(pod) is None:
            live.append(pod.key)
    assert found["mixed"] + found["same"] > 5, found
    assert found["mixed"] > 0 or isolated == "0-63", found


def _zones(a: Any) -> list[Any]:
    return [(z, zone.types, zone.capacity, sorted(zone.users)) for z, zone in a.zones.items()]


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_offers_all_fitting_at_once_are_the_per_pool_offers(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """At every ranking, the figures made with ``ALL_FIT`` (every pool's offer "the request in
    its zone" at once) equal those made with ``fits`` per pool on a copy of the allocator —
    each pool's zone, offer to be made, error — and the allocator is left the same (the new
    empty zones, in the same order)."""
    import copy

    from kubetwin.runtime import libmem_offers

    fast = fastscore._figures
    all_fit = libmem_offers.all_fit
    seen = {True: 0, False: 0}

    def counted(a: Any, limit: int, floor: int) -> bool:
        got = all_fit(a, limit, floor)
        if fastscore.ALL_FIT:
            seen[got] += 1
        return got

    def both(p: Any, req: Any) -> Any:
        held = p.mem_allocator
        p.mem_allocator = copy.deepcopy(held)
        monkeypatch.setattr(fastscore, "ALL_FIT", False)
        try:
            plain = fast(p, req)
            plain_zones = _zones(p.mem_allocator)
        finally:
            p.mem_allocator = held
            monkeypatch.setattr(fastscore, "ALL_FIT", True)
        got = fast(p, req)
        assert (got.zone, got.lazy, got.errors) == (plain.zone, plain.lazy, plain.errors)
        assert [o and o.node_mask() for o in got.offers] == [o and o.node_mask() for o in plain.offers]
        assert _zones(held) == plain_zones
        return got

    monkeypatch.setattr(fastscore, "_figures", both)
    monkeypatch.setattr(libmem_offers, "all_fit", counted)
    arrivals = runs.arrivals(14, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    assert runs.placed(result) > 0 and seen[True] > 20   # (the refusals: test_libmem_offers.py)


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_run_with_offers_all_fitting_at_once_places_as_with_fits_per_pool(machine: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(15, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    fast = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    monkeypatch.setattr(fastscore, "ALL_FIT", False)
    plain = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    assert fast == plain


@pytest.mark.parametrize("machine", runs.MACHINES)
@pytest.mark.parametrize("seed", (18, 19))
def test_the_first_pool_found_by_keys_is_the_first_of_the_plain_ranking(
        machine: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Wherever ``_first_keyed`` answers (common requests: whole CPUs, fractions, best effort),
    its pool is the first of the plain ranking; other requests it leaves to the comparisons."""
    keyed = fastscore._first_keyed
    found = {"whole": 0, "fraction": 0, "none": 0, "left": 0}

    def checked(p: Any, req: Any, f: Any, aff: list[float], candidates: Any) -> Any:
        got = keyed(p, req, f, aff, candidates)
        fastscore.ENABLED = False
        try:
            _, plain_pools = pools.sort_pools_by_score(p, req, {})  # the runs' pods have no affinities
        finally:
            fastscore.ENABLED = True
        if got is None:
            found["left"] += 1
        else:
            assert got == plain_pools[0].id
            found["whole" if req.full else "fraction" if req.fraction else "none"] += 1
        return got

    monkeypatch.setattr(fastscore, "_first_keyed", checked)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()),
                      runs.arrivals(seed, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert runs.placed(result) > 0
    assert found["whole"] > 10 and found["fraction"] > 5 and found["none"] > 2, found


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_run_with_first_pools_found_by_keys_places_as_by_comparisons(machine: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(20, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    fast = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    monkeypatch.setattr(fastscore, "KEYED", False)
    plain = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    assert fast == plain and runs.placed(fast) > 0


def test_first_pools_by_keys_leave_pools_with_isolated_cpus_to_spare_to_the_comparisons(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An isolated request where some pool has isolated CPUs left over: the comparisons' own
    tie-breaker on them, so the keys do not answer."""
    from kubetwin.machine import load_machine
    from kubetwin.model.cpuset import CPUSet
    from kubetwin.model.kubelet_config import KubeletConfiguration
    from kubetwin.runtime.node import RuntimeNode

    from ...test_update_container import guaranteed

    answers: list[Any] = []
    keyed = fastscore._first_keyed

    def seen(*args: Any) -> Any:
        got = keyed(*args)
        answers.append((args[1].isolate, got))
        return got

    monkeypatch.setattr(fastscore, "_first_keyed", seen)
    machine = load_machine(str(runs.SHARED / "machines" / runs.MACHINES[0]))
    rn = RuntimeNode(machine, runs.topology_aware().resource, KubeletConfiguration.from_dict(runs.NONE),
                     isolated=CPUSet.parse("2-5"), traced=False)
    assert rn.create_pod(guaranteed("p", "1")) is None
    assert any(iso for iso, _ in answers) and all(got is None for iso, got in answers if iso)


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_offers_read_from_the_plan_are_the_offers_built_per_request(machine: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """At every ranking whose offers are made at once, the zones and offers to be made kept per
    plan (``PLANNED``) equal those built for the request, and the allocator gets the same new
    empty zones in the same order; the lists are the figures' own (an offer read clears its
    entry)."""
    import copy

    fast = fastscore._figures
    seen = [0]

    def both(p: Any, req: Any) -> Any:
        held = p.mem_allocator
        p.mem_allocator = copy.deepcopy(held)
        monkeypatch.setattr(fastscore, "PLANNED", False)
        try:
            built = fast(p, req)
            built_zones = _zones(p.mem_allocator)
        finally:
            p.mem_allocator = held
            monkeypatch.setattr(fastscore, "PLANNED", True)
        got = fast(p, req)
        assert (got.zone, got.lazy, got.planned) == (built.zone, built.lazy, built.planned)
        assert _zones(held) == built_zones
        if got.planned:
            seen[0] += 1
            kept = p.__dict__["_planned"][(req.mem_type, req.mem_type == 8)]
            assert got.lazy is not kept[1] and got.zone is not kept[2]
        return got

    monkeypatch.setattr(fastscore, "_figures", both)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()),
                      runs.arrivals(21, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert runs.placed(result) > 0 and seen[0] > 20


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_run_with_offers_read_from_the_plan_places_as_with_offers_built_per_request(
        machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(22, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    fast = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    monkeypatch.setattr(fastscore, "PLANNED", False)
    plain = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    assert fast == plain and runs.placed(fast) > 0


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_grant_counts_kept_on_the_policy_are_those_of_its_grants_at_every_ranking(
        machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """At every ranking of random workloads (grants and releases), the counts the policy kept
    through its grants and releases equal a count of its grants, and most rankings read them
    as kept (not counted again)."""
    counts = fastscore._counts
    seen = {"kept": 0, "counted": 0}

    def checked(p: Any) -> Any:
        kept = p.__dict__.get("_grant_counts")
        got = counts(p)
        seen["kept" if got is kept else "counted"] += 1
        del p.__dict__["_grant_counts"]
        fresh = counts(p)
        assert got == fresh
        return got

    monkeypatch.setattr(fastscore, "_counts", checked)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()),
                      runs.arrivals(24, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert runs.placed(result) > 0 and seen["kept"] > 3 * seen["counted"] > 0, seen


def test_grant_counts_are_dropped_when_not_those_of_the_grants_before_a_change() -> None:
    """A grant or release that finds the kept counts stale (another number of grants) drops
    them, and the next ranking counts again."""
    from types import SimpleNamespace

    p: Any = SimpleNamespace(pools=[0, 1], allocations={})
    g: Any = SimpleNamespace(node=SimpleNamespace(id=1), cpu_type=0, _zero_cpu_request=False)
    fastscore._counts(p)
    assert p.__dict__["_grant_counts"] == (0, ((0, 0), (0, 0), (0, 0)), (0, 0))
    p.allocations["a"] = g
    fastscore.granted(p, g)
    assert p.__dict__["_grant_counts"] == (1, ((0, 1), (0, 0), (0, 0)), (0, 0))
    p.allocations["b"] = g
    p.allocations["c"] = g
    fastscore.granted(p, g)   # two added, one told: stale
    assert "_grant_counts" not in p.__dict__
    assert fastscore._counts(p) == (3, ((0, 3), (0, 0), (0, 0)), (0, 0))
    del p.allocations["c"]
    fastscore.released(p, g)
    assert p.__dict__["_grant_counts"] == (2, ((0, 2), (0, 0), (0, 0)), (0, 0))


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_a_run_with_grant_counts_kept_places_as_with_a_pass_over_the_grants(machine: str,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    arrivals = runs.arrivals(25, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS)
    fast = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    monkeypatch.setattr(fastscore, "COUNTED", False)
    plain = runs.run(runs.nodes(machine, 4, runs.topology_aware()), arrivals)
    assert fast == plain and runs.placed(fast) > 0
