"""A fast path for the topology-aware policy's choice of pool: rankings remembered per state.

Placing a container, the policy scores every pool (its free CPUs, what the pool and its
ancestors granted, the containers without a CPU request below it, a memory offer from the pool's
NUMA nodes) and ranks the pools (``compareScores``); it takes the first. That ranking is a
function of a few figures — the request's CPU and memory figures, and per pool its free CPU
sets and the figures :func:`.fastscore.pool_figures` computes, and the memory allocator's zones
with what their users hold — not of the pods' names. In ``simulate`` thousands of nodes of a
group pass through the same states, so the pool a state and request gave is remembered (per
machine) and, when they come again, only that pool's memory offer is
made. The CPUs and memory are then allocated by the plain code as always.

Only rankings that can be replayed are remembered: no affinities, no topology hints, no
``--explain`` scores kept, no pool hint (a container update), and every memory offer made by
:mod:`...libmem_offers` without an overcommit (then each pool's offer zone is the pool's
resolved zone, whichever pools were offered before); the allocation of the first run must have
succeeded. A remembered ranking makes one memory request instead of one per pool: the
allocator's creation stamps advance less, in the same order. ``tests/runtime/test_fast_paths.py``
holds whole runs equal with it on and off.

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/topology-aware/policy/pools.go`` (``sortPoolsByScore``, ``compareScores``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ... import libmem_offers
from ...libmem import Offer
from ...resmgr.policy import PolicyError
from . import fastscore
from .pools import sort_pools_by_score
from .preferences import UNLIMITED_CPU, strict_isolated_cpus_preference

if TYPE_CHECKING:
    from .node import Node
    from .policy import TopologyAwarePolicy

#: remember rankings (False: every placement scores and ranks every pool)
ENABLED = True

#: rankings kept per machine and configuration before the table starts over
MAX_ENTRIES = 1 << 16

_TABLES: dict[int, tuple[Any, dict[tuple[Any, ...], int]]] = {}


def _table(p: "TopologyAwarePolicy") -> dict[tuple[Any, ...], int]:
    """The rankings remembered for the policy's machine. The pool tree is the machine's, and
    what the policy's configuration changes in it (reserved and available CPUs, the unlimited
    burstable level) is part of each state's key."""
    got = _TABLES.get(id(p.sys))
    if got is None or got[0] is not p.sys:
        if len(_TABLES) > 64:
            _TABLES.clear()
        got = _TABLES[id(p.sys)] = (p.sys, {})
    return got[1]


def state_key(p: "TopologyAwarePolicy", req: Any, aff: dict[int, int]) -> tuple[Any, ...] | None:
    """What the ranking of the pools for ``req`` reads, or None when it cannot be remembered."""
    c = req.container
    a = p.mem_allocator
    if aff or c.topology_hints or a.journal is not None or c.id in a.requests:
        return None
    reserved, shared, colocated = fastscore.pool_figures(p, req.cpu_type)
    pools = []
    for n in p.pools:
        fs = n.freeres
        assert fs is not None
        i = n.id
        pools.append((reserved[i], shared[i], colocated[i], fs.isolated.mask, fs.sharable.mask))
    zones = tuple((nodes, sum(r.limit for r in z.users.values())) for nodes, z in a.zones.items())
    qos = c.qos_class
    target = p.unlimited_burstable_preference(c) if qos == "Burstable" and req.limit == UNLIMITED_CPU else ""
    # the strict isolation check after the CPUs are picked (``verify_strict_preferences``)
    strict = req.full >= 1 and req.isolate and strict_isolated_cpus_preference(c.pod, c)
    return (req.cpu_type, req.full, req.fraction, req.limit, req.isolate, req.prio, req.mem_type, req.mem_req,
            req.mem_lim, qos, target, strict, tuple(pools), zones)


def choose(p: "TopologyAwarePolicy", req: Any, aff: dict[int, int]
           ) -> tuple["Node", Offer | None, Callable[[], None] | None]:
    """The pool ``allocate_pool`` takes for ``req`` (the first of the ranking), its memory
    offer (None: the pool has none), and what to call once the allocation succeeded (to
    remember the ranking; None when it is not to be remembered)."""
    if not (fastscore.ENABLED and libmem_offers.ENABLED):
        scores, pools = sort_pools_by_score(p, req, aff)
        return pools[0], scores[pools[0].id].mem, None
    key = state_key(p, req, aff)
    table = _table(p)
    if key is not None:
        pid = table.get(key)
        if pid is not None:
            pool = p.pools[pid]
            offer, _ = fastscore._offers(p, req)
            try:
                return pool, offer(p.root_pool() if req.mem_type == 8 else pool), None
            except PolicyError:   # as the ranking's own offer: none
                return pool, None, None
    scores, ranked, exact = fastscore.rank(p, req, aff)
    pool = ranked[0]
    if key is None or not exact:
        return pool, scores[pool.id].mem, None

    def learn() -> None:
        if len(table) >= MAX_ENTRIES:
            table.clear()
        table[key] = pool.id

    return pool, scores[pool.id].mem, learn
