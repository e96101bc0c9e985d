"""libmem's offers made in one allocator state (``libmem_offers.FreeMemory``) against the plain
``Allocator.get_offer``: random states (requests of every QoS class committed over the
conformance machines' NUMA nodes, up to overcommit) and random requests give the same offer,
the same error, and leave the allocator as the plain offer leaves it."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.runtime.libmem import Allocator, MemoryError_, container_request
from kubetwin.runtime.libmem_offers import FreeMemory
from kubetwin.runtime.sysfs import System

from . import fastpath_runs as runs

GI = 1 << 30


def _request(rng: random.Random, a: Allocator, k: int) -> Any:
    ids = list(a.nodes)
    affinity = 0
    for nid in rng.sample(ids, rng.randint(1, min(3, len(ids)))):
        affinity |= 1 << nid
    qos = rng.choice(("Guaranteed", "Burstable", "BestEffort"))
    limit = 0 if qos == "BestEffort" else rng.choice((GI // 4, GI, 4 * GI, 16 * GI, 64 * GI))
    return container_request(f"r{k}", f"c{k}", qos, limit, affinity, rng.choice((0, 1, 2, 3, 4, 7)))


def _state(a: Allocator) -> Any:
    return ({z: (zone.types, zone.capacity, sorted(zone.users)) for z, zone in a.zones.items()},
            sorted(a.requests), sorted(a.users.items()), a.version)


def _offer(make: Any, req: Any) -> Any:
    try:
        o = make(req)
    except MemoryError_ as exc:
        return "error", str(exc)
    return o.updates, o.node_mask(), o.version, req.zone, req.types


@pytest.mark.parametrize("machine", runs.MACHINES)
@pytest.mark.parametrize("seed", (51, 52, 53))
def test_offers_in_one_state_are_the_plain_allocators(machine: str, seed: int) -> None:
    rng = random.Random(seed)
    a = Allocator(System(load_machine(str(runs.SHARED / "machines" / machine)), CPUSet()))
    compared = 0
    for k in range(60):
        plain_a = copy.deepcopy(a)
        free = FreeMemory(a)
        for j in range(4):   # several offers in the same state, as a policy scoring its pools makes them
            req = _request(rng, a, 1000 * k + j)
            assert _offer(free.get_offer, copy.deepcopy(req)) == _offer(plain_a.get_offer, copy.deepcopy(req))
            assert _state(a) == _state(plain_a)
            compared += 1
        req = _request(rng, a, 1000 * k + 999)
        try:
            a.get_offer(req).commit()
        except MemoryError_:
            pass
        if a.requests and rng.random() < 0.2:
            a.release(rng.choice(sorted(a.requests)))
    assert compared == 240


@pytest.mark.parametrize("machine", runs.MACHINES)
@pytest.mark.parametrize("seed", (54, 55))
def test_offers_of_requests_resolved_once_per_machine_are_the_plain_allocators(machine: str, seed: int) -> None:
    """``get_resolved_offer`` with the zone, types, zone type and capacity the topology-aware
    fast scorer keeps per machine (``fastscore._Machine.resolve``) for each affinity and types."""
    from kubetwin.runtime.policies.topologyaware.fastscore import _Machine

    rng = random.Random(seed)
    system = System(load_machine(str(runs.SHARED / "machines" / machine)), CPUSet())
    a = Allocator(system)
    known = _Machine(system)
    compared = 0
    for k in range(60):
        plain_a = copy.deepcopy(a)
        free = FreeMemory(a)
        for j in range(4):
            req = _request(rng, a, 1000 * k + j)
            resolved = known.resolve(a, req.affinity, req.types)

            def fast(r: Any, free: FreeMemory = free, resolved: Any = resolved) -> Any:
                return free.get_offer(r) if resolved is None else free.get_resolved_offer(r, *resolved)

            assert _offer(fast, copy.deepcopy(req)) == _offer(plain_a.get_offer, copy.deepcopy(req))
            assert _state(a) == _state(plain_a)
            compared += resolved is not None
        req = _request(rng, a, 1000 * k + 999)
        try:
            a.get_offer(req).commit()
        except MemoryError_:
            pass
        if a.requests and rng.random() < 0.2:
            a.release(rng.choice(sorted(a.requests)))
    assert compared > 100


@pytest.mark.parametrize("machine", runs.MACHINES)
@pytest.mark.parametrize("seed", (56, 57))
def test_offers_checked_by_fits_and_made_when_read_are_the_plain_allocators(machine: str, seed: int) -> None:
    """``fits`` says yes exactly when the fast offer is "the request in its zone", and then
    ``resolved_offer`` made afterwards is that offer; otherwise the offer is made the plain way
    over the same free memory. The allocator is left as the plain offers leave it."""
    from kubetwin.runtime.libmem_offers import resolved_offer
    from kubetwin.runtime.policies.topologyaware.fastscore import _Machine

    rng = random.Random(seed)
    system = System(load_machine(str(runs.SHARED / "machines" / machine)), CPUSet())
    a = Allocator(system)
    known = _Machine(system)
    fitted = refused = 0
    for k in range(60):
        plain_a = copy.deepcopy(a)
        free = FreeMemory(a)
        node = max(n.capacity for n in a.nodes.values())
        limit = int(node * rng.choice((0, 0.01, 0.2, 0.6, 0.9, 1.5)))   # one request, offers for several pools
        for j in range(4):
            req = _request(rng, a, 1000 * k + j)
            req.limit = limit
            resolved = known.resolve(a, req.affinity, req.types)
            plain = _offer(plain_a.get_offer, copy.deepcopy(req))
            if resolved is not None and free.fits(resolved[1], resolved[2], resolved[3], limit):
                fast = _offer(lambda r, got=resolved: resolved_offer(a, r, got[0], got[1]), copy.deepcopy(req))
                assert fast == plain and plain[0] == {req.id: resolved[1]}
                fitted += 1
            elif resolved is not None:
                fast = _offer(lambda r, free=free, got=resolved: free.get_resolved_offer(r, *got), copy.deepcopy(req))
                assert fast == plain
                refused += 1
            assert _state(a) == _state(plain_a)
        req = _request(rng, a, 1000 * k + 999)
        try:
            a.get_offer(req).commit()
        except MemoryError_:
            pass
        if a.requests and rng.random() < 0.2:
            a.release(rng.choice(sorted(a.requests)))
    assert fitted > 50 and refused > 0


@pytest.mark.parametrize("machine", runs.MACHINES)
@pytest.mark.parametrize("seed", (58, 59))
def test_all_fit_says_yes_only_where_fits_says_yes_in_every_zone_asked(machine: str, seed: int) -> None:
    """``all_fit`` (every request's limit, plus this one, within every zone's capacity) answers
    yes only where ``fits`` says yes for every zone of at least that capacity, and changes
    nothing; random states up to overcommit reach both answers."""
    from kubetwin.runtime.libmem_offers import all_fit
    from kubetwin.runtime.policies.topologyaware.fastscore import _Machine

    rng = random.Random(seed)
    system = System(load_machine(str(runs.SHARED / "machines" / machine)), CPUSet())
    a = Allocator(system)
    known = _Machine(system)
    yes = no = 0
    for k in range(60):
        node = max(n.capacity for n in a.nodes.values())
        limit = int(node * rng.choice((0, 0.01, 0.2, 0.6, 0.9, 1.5)))
        asked = [known.resolve(a, r.affinity, r.types) for r in (_request(rng, a, 1000 * k + j) for j in range(4))]
        resolved = [r for r in asked if r is not None and r[1]]
        if resolved:
            before = _state(a)
            if all_fit(a, limit, min(r[3] for r in resolved)):
                free = FreeMemory(copy.deepcopy(a))
                assert all(free.fits(r[1], r[2], r[3], limit) for r in resolved)
                yes += 1
            else:
                no += 1
            assert _state(a) == before
        req = _request(rng, a, 1000 * k + 999)
        try:
            a.get_offer(req).commit()
        except MemoryError_:
            pass
        if a.requests and rng.random() < 0.2:
            a.release(rng.choice(sorted(a.requests)))
    assert yes > 5 and no > 0
