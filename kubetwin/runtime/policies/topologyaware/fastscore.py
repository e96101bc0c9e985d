"""A fast path for the topology-aware policy's pool scoring: every pool's figures in one pass.

Upstream scores each pool on its own (``supply.GetScore``): the allocatable shared and reserved
CPU walk the pool's ancestors and sum what every pool of its subtree granted, the "a container
without a CPU request sits here" check walks the subtree and, per pool, every allocation of the
policy; the colocated count walks every allocation again. That is quadratic in the pools and
linear in the allocations per pool, for a handful of numbers that are the same for every pool
scored in one request. Here they are computed once per request — the subtree sums bottom-up,
the ancestors' minimums top-down, one pass over the allocations — and each pool's
:class:`.resources.Score` is filled from them, in the same order of pools and with the same
memory offers as :func:`.pools.sort_pools_by_score` (the plain code in
:mod:`.resources`/:mod:`.pools`, which stays as upstream has it). The ranking is the plain
``compareScores`` over these scores. ``tests/runtime/policies/topologyaware/test_fastscore.py``
holds the two equal on random requests and states.

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/topology-aware/policy/{resources,pools}.go``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ... import libmem_offers
from ...cpuallocator import PRIORITY_HIGH, PRIORITY_LOW, PRIORITY_NORMAL
from ...gosort import sort_slice
from ...libmem import MemoryError_, Offer, container_request, mask_of
from ...resmgr.policy import PolicyError
from ...sysfs import EFFICIENT_CORE, PERFORMANCE_CORE
from .pools import affinity_score, compare_scores
from .preferences import CPU_RESERVED, MEMORY_PRESERVE
from .resources import Score

if TYPE_CHECKING:
    from .node import Node
    from .policy import TopologyAwarePolicy

#: score with this module (False: the plain ``supply.get_score`` per pool, for A/B runs and tests)
ENABLED = True


def _zero_cpu_request(g: Any) -> bool:
    """``hasZeroCPUReqContainer``'s test of one grant (its pool is the grant's node)."""
    if g.cpu_type == CPU_RESERVED:
        noderes = g.node.noderes
        if noderes is not None and not noderes.reserved.is_empty():
            return False
    qos = g.container.qos_class
    if qos == "BestEffort":
        return True
    return qos == "Burstable" and (g.container.resource_requirements().cpu_request or 0) == 0


def pool_figures(p: "TopologyAwarePolicy", cpu_type: int) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
    """Per pool id: ``allocatable_reserved_cpu()``, ``allocatable_shared_cpu()`` and the number
    of grants of ``cpu_type`` in the pool, as the plain supply computes them one pool at a time."""
    zero: set[int] = set()
    colocated: dict[int, int] = {}
    for g in p.allocations.values():
        nid = id(g.node)
        if g.cpu_type == cpu_type:
            colocated[nid] = colocated.get(nid, 0) + 1
        if nid not in zero and _zero_cpu_request(g):
            zero.add(nid)
    # ``p.pools`` lists children before parents: subtree sums forward, the ancestors' minimums
    # backward (parents first)
    sub: dict[int, list[Any]] = {}
    for n in p.pools:
        fs = n.freeres
        assert fs is not None
        mine = sub.get(n.id)
        if mine is None:
            mine = sub[n.id] = [0, 0, False]
        mine[0] += fs.granted_reserved
        mine[1] += fs.granted_shared
        mine[2] = mine[2] or id(n) in zero
        if n.parent is not None:
            up = sub.get(n.parent.id)
            if up is None:
                up = sub[n.parent.id] = [0, 0, False]
            up[0] += mine[0]
            up[1] += mine[1]
            up[2] = up[2] or mine[2]
    reserved: dict[int, int] = {}
    shared: dict[int, int] = {}
    colo: dict[int, int] = {}
    least: dict[int, tuple[int, int]] = {}   # per pool: the least of it and its ancestors
    for n in reversed(p.pools):
        fs = n.freeres
        assert fs is not None
        gr, gs, z = sub[n.id]
        res = 1000 * fs.reserved.size() - gr
        sh = 1000 * fs.sharable.size() - gs
        if n.parent is not None:
            pres, psh = least[n.parent.id]
            res, sh = min(res, pres), min(sh, psh)
        least[n.id] = (res, sh)
        reserved[n.id] = -1 if fs.reserved.size() == 0 else res
        shared[n.id] = sh - 1 if z else sh
        colo[n.id] = colocated.get(id(n), 0)
    return reserved, shared, colo


def _offers(p: "TopologyAwarePolicy", req: Any) -> Callable[["Node"], Offer]:
    """``p.get_mem_offer(pool, req)`` for the pools of one request, the allocator's free memory
    summed once (:mod:`...libmem_offers`)."""
    free = libmem_offers.FreeMemory(p.mem_allocator)
    c = req.container
    amount = req.mem_amount_to_allocate()

    def offer(pool: "Node") -> Offer:
        if req.mem_type == MEMORY_PRESERVE:
            zone = mask_of(pool.memset(7))
            mtyp = p.mem_allocator.zone_type(zone)
        else:
            zone = mask_of(pool.memset(req.mem_type))
            mtyp = req.mem_type
        r = container_request(c.id, c.pretty_name(), c.qos_class, amount, zone, mtyp)
        try:
            return free.get_offer(r)
        except MemoryError_ as exc:
            raise PolicyError(str(exc)) from None

    return offer


def sort_pools_by_score(p: "TopologyAwarePolicy", req: Any, aff: dict[int, int]
                        ) -> tuple[dict[int, Score], list["Node"]]:
    """:func:`.pools.sort_pools_by_score`, the pools' figures computed once."""
    reserved, shared, colocated = pool_figures(p, req.cpu_type)
    full, part = req.full, req.fraction
    if full == 0 and part == 0:
        part = 1
    prio_sets: tuple[tuple[int, Any], ...] = ()
    if req.cpu_type != CPU_RESERVED:
        prios = p.cpu_allocator.cpu_priorities()
        sys = p.sys
        low = sys.core_kind_cpus(EFFICIENT_CORE) or prios[PRIORITY_LOW]
        high = sys.core_kind_cpus(PERFORMANCE_CORE) or prios[PRIORITY_HIGH]
        prio_sets = ((PRIORITY_LOW, low), (PRIORITY_HIGH, high), (PRIORITY_NORMAL, prios[PRIORITY_NORMAL]))
    hints = req.container.topology_hints
    root = p.root_pool()
    mem_root = req.mem_type == 8   # memoryPreserve: the offer comes from the root
    scores: dict[int, Score] = {}
    mem_offer = _offers(p, req) if libmem_offers.ENABLED else None

    def score(n: "Node") -> bool:
        supply = n.free_supply()
        s = Score(supply, req)
        s.reserved = reserved[n.id]
        s.shared = s.allocatable_shared = shared[n.id]
        if req.cpu_type == CPU_RESERVED:
            s.reserved -= part
        else:
            if req.isolate:
                s.isolated = supply.isolated.size() - full
            if not req.isolate or s.isolated < 0:
                s.shared -= 1000 * full
            s.shared -= part
            taken = 1000 * full + part
            for prio, cpus in prio_sets:
                s.prio[prio] = (cpus & supply.sharable).size() * 1000 - taken
        s.colocated = colocated[n.id]
        for provider, hint in hints.items():
            s.hints[provider] = n.hint_score(hint)
        try:
            s.mem = mem_offer(root if mem_root else n) if mem_offer is not None else p.get_mem_offer(
                root if mem_root else n, req)
        except PolicyError as exc:
            s.mem = None
            s.mem_error = str(exc)
        scores[n.id] = s
        return False

    root.depth_first(score)
    pools = list(p.pools)
    # without affinities every pool's affinity score is 0.0
    aff_scores = {n.id: affinity_score(aff, n) for n in pools} if aff else dict.fromkeys((n.id for n in pools), 0.0)
    sort_slice(pools, lambda n1, n2: compare_scores(p, req, scores, aff_scores, n1, n2))
    return scores, pools
