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
:mod:`.resources`/:mod:`.pools`, which stays as upstream has it).

The ranking is ``compareScores``'s chain of tie-breakers over the same scores (:func:`_less`,
built once per request: what it reads of the request, each offer's zone and type and each
pool's zone capacity looked up once), sorted by Go's insertion sort as ``sort.Slice`` does for
the few pools of a machine. What never changes on a machine — each pool's memory nodes by type,
zone types and capacities, the zone and types the memory allocator resolves a pool's affinity
to — is kept per :class:`...sysfs.System` (:class:`_Machine`), so an offer is the free-memory
check of :mod:`...libmem_offers` alone. A supply's own ``allocatable_shared_cpu`` (the CPU
slicing and shared portions ask it) comes from :func:`allocatable_shared_cpu`: subtree sums
built once, one pass over the grants, each grant's zero-CPU-request test kept on it.
A placement without a pool hint and without ``--explain`` reads only the first pool of the
order: :func:`best_pool` finds it without the sort where that is exact (:func:`_first`: one
comparison per pool where the chain of tie-breakers is a strict total order, the strictly
least key of the tie-breakers before the non-order ones otherwise; ``FIRST = False`` sorts).
Where no zone can be overcommitted — every request's memory limit, plus this one, within the
capacity of every zone the allocator holds and of every zone the pools' offers resolve to
(:func:`...libmem_offers.all_fit`) — every pool's offer is "the request in its zone", read
without the free-memory sums and ``fits`` per pool (``ALL_FIT = False``: per pool).
``COMPARE = False`` ranks with the plain ``compareScores``; ``ENABLED = False`` runs all of the
plain code. ``tests/runtime/policies/topologyaware/test_fastscore.py`` holds scores, rankings
and every pool's allocatable shared CPU equal to the plain ones on random requests and states.

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/topology-aware/policy/{resources,pools}.go``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ... import libmem_offers
from ...config import TOPOLOGY_LEVEL_VALUES
from ...cpuallocator import PRIORITY_HIGH, PRIORITY_LOW, PRIORITY_NORMAL
from ...gosort import sort_slice
from ...libmem import Allocator, MemoryError_, Offer, Zone, container_request, mask_of
from ...libmem import Request as MemRequest
from ...resmgr.policy import PolicyError
from ...sysfs import EFFICIENT_CORE, PERFORMANCE_CORE
from . import fastpick
from .pools import affinity_score, combine_hint_scores, compare_scores
from .preferences import CPU_NORMAL, CPU_RESERVED, MEMORY_PRESERVE, MEMORY_UNSPEC, UNLIMITED_CPU
from .resources import Score, go_div

if TYPE_CHECKING:
    from .node import Node
    from .policy import TopologyAwarePolicy

#: score with this module (False: the plain ``supply.get_score`` per pool, for A/B runs and tests)
ENABLED = True


def _zero_cpu_request(g: Any) -> bool:
    """``hasZeroCPUReqContainer``'s test of one grant (its pool is the grant's node). It reads
    only what a grant keeps for its life (its CPU type and pool, the container's QoS class and
    CPU request: an update releases the grant first), so the answer is kept on the grant."""
    known = g.__dict__.get("_zero_cpu_request")
    if known is not None:
        return bool(known)
    zero = False
    reserved = False
    if g.cpu_type == CPU_RESERVED:
        noderes = g.node.noderes
        reserved = noderes is not None and not noderes.reserved.is_empty()
    if not reserved:
        qos = g.container.qos_class
        zero = qos == "BestEffort" or (qos == "Burstable" and (g.container.resource_requirements().cpu_request or 0) == 0)
    g.__dict__["_zero_cpu_request"] = zero
    return zero


def allocatable_shared_cpu(supply: Any) -> int:
    """``supply.allocatable_shared_cpu()`` (:class:`.resources.Supply`): each ancestor's subtree
    sum of granted shares built from its children's, and one pass over the grants (each one's
    zero-CPU-request test kept on it) instead of one per pool of the subtree."""
    node = supply.node
    sub = _granted_shared(node)
    shared = 1000 * supply.sharable.size() - sub
    prev, n = node, node.parent
    while n is not None:
        fs = n.freeres
        sub += fs.granted_shared + sum(_granted_shared(c) for c in n.children if c is not prev)
        p = 1000 * fs.sharable.size() - sub
        if p < shared:
            shared = p
        prev, n = n, n.parent
    for g in node.policy.allocations.values():
        z = g.__dict__.get("_zero_cpu_request")
        if z is None:
            z = _zero_cpu_request(g)
        if z:
            m = g.node
            while m is not None and m is not node:
                m = m.parent
            if m is node:
                return shared - 1
    return shared


def _granted_shared(n: Any) -> int:
    """``n.granted_shared_cpu()``: the shares granted in the pool and below it."""
    total = n.freeres.granted_shared
    for c in n.children:
        total += _granted_shared(c)
    return total


def pool_figures(p: "TopologyAwarePolicy", cpu_type: int) -> tuple[list[int], list[int], list[int]]:
    """Indexed by pool id: ``allocatable_reserved_cpu()``, ``allocatable_shared_cpu()`` and the
    number of grants of ``cpu_type`` in the pool, as the plain supply computes them one pool at
    a time. One pass over the grants and two over the pools' supplies (their CPU masks read
    directly), the tree's shape from :func:`_parents`."""
    pools = p.pools
    k = len(pools)
    counts = _counts(p) if COUNTED else None
    if counts is not None:
        colocated = list(counts[1][cpu_type]) if 0 <= cpu_type < len(counts[1]) else [0] * k
        zero = [z > 0 for z in counts[2]]
    else:
        colocated = [0] * k
        zero = [False] * k   # per pool: a grant without a CPU request in it or below it
        for g in p.allocations.values():
            i = g.node.id
            if g.cpu_type == cpu_type:
                colocated[i] += 1
            if not zero[i]:
                z = g.__dict__.get("_zero_cpu_request")
                if z is None:
                    z = _zero_cpu_request(g)
                if z:
                    zero[i] = True
    # ``p.pools`` lists children before parents (ids in that order): subtree sums forward, the
    # ancestors' minimums backward (parents first)
    parents = _parents(p)
    supplies: list[Any] = [n.freeres for n in pools]
    granted_reserved = [0] * k
    granted_shared = [0] * k
    for i in range(k):
        fs = supplies[i]
        gr = granted_reserved[i] = granted_reserved[i] + fs.granted_reserved
        gs = granted_shared[i] = granted_shared[i] + fs.granted_shared
        j = parents[i]
        if j >= 0:
            granted_reserved[j] += gr
            granted_shared[j] += gs
            if zero[i]:
                zero[j] = True
    reserved = [0] * k
    shared = [0] * k
    for i in range(k - 1, -1, -1):
        fs = supplies[i]
        size = fs.reserved._mask.bit_count()
        res = 1000 * size - granted_reserved[i]
        sh = 1000 * fs.sharable._mask.bit_count() - granted_shared[i]
        j = parents[i]
        if j >= 0:
            # the least of the pool's and its ancestors' (the parent's own already so)
            lr, ls = granted_reserved[j], granted_shared[j]
            if lr < res:
                res = lr
            if ls < sh:
                sh = ls
        # kept in the subtree sums' places: no pool reads its own sum again
        granted_reserved[i] = res
        granted_shared[i] = sh
        reserved[i] = -1 if size == 0 else res
        shared[i] = sh - 1 if zero[i] else sh
    return reserved, shared, colocated


#: keep each pool's count of grants per CPU type and of grants without a CPU request on the
#: policy, changed by every grant and release (:func:`granted`, :func:`released`), so a ranking
#: reads no grant (False: one pass over the grants per ranking)
COUNTED = True

#: the CPU types counted (``CPU_NORMAL``, ``CPU_RESERVED``, ``CPU_PRESERVE``: 0, 1, 2)
_TYPES = 3


def _counts(p: "TopologyAwarePolicy") -> tuple[int, tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """The policy's grant counts: (the number of grants counted, per CPU type each pool's grants
    of that type, each pool's grants without a CPU request), taken from the policy where they
    were kept for its grants as they are, else counted in one pass and kept. Tuples of ints:
    copies of the node share them, and each change makes new ones."""
    got = p.__dict__.get("_grant_counts")
    if got is not None and got[0] == len(p.allocations):
        return got
    k = len(p.pools)
    by_type = [[0] * k for _ in range(_TYPES)]
    zero = [0] * k
    for g in p.allocations.values():
        i = g.node.id
        t = g.cpu_type
        if 0 <= t < _TYPES:
            by_type[t][i] += 1
        z = g.__dict__.get("_zero_cpu_request")
        if z is None:
            z = _zero_cpu_request(g)
        if z:
            zero[i] += 1
    got = p.__dict__["_grant_counts"] = (len(p.allocations), tuple(tuple(c) for c in by_type), tuple(zero))
    return got


def granted(p: "TopologyAwarePolicy", g: Any) -> None:
    """``g`` was just added to ``p.allocations``: the kept counts (if they were those of the
    grants before it) count it too; otherwise they are dropped (counted again when read)."""
    _changed(p, g, 1)


def released(p: "TopologyAwarePolicy", g: Any) -> None:
    """``g`` was just removed from ``p.allocations``: the kept counts (if they were those of
    the grants before) no longer count it; otherwise they are dropped."""
    _changed(p, g, -1)


def _changed(p: "TopologyAwarePolicy", g: Any, d: int) -> None:
    d_ = p.__dict__
    got = d_.get("_grant_counts")
    if got is None:
        return
    if not (ENABLED and COUNTED) or got[0] != len(p.allocations) - d:
        del d_["_grant_counts"]   # not the counts of the grants before this change
        return
    i = g.node.id
    t = g.cpu_type
    by_type = got[1]
    if 0 <= t < _TYPES:
        row = list(by_type[t])
        row[i] += d
        by_type = by_type[:t] + (tuple(row),) + by_type[t + 1:]
    zero = got[2]
    z = g.__dict__.get("_zero_cpu_request")
    if z is None:
        z = _zero_cpu_request(g)
    if z:
        row = list(zero)
        row[i] += d
        zero = tuple(row)
    d_["_grant_counts"] = (got[0] + d, by_type, zero)


def _parents(p: "TopologyAwarePolicy") -> tuple[int, ...]:
    """Per pool id its parent's id (-1 for the root), kept on the policy (the tree is fixed; a
    tuple of ints, which copies of the node share)."""
    parents = p.__dict__.get("_parent_ids")
    if parents is None or len(parents) != len(p.pools):
        assert all(n.id == i for i, n in enumerate(p.pools))
        parents = p.__dict__["_parent_ids"] = tuple(-1 if n.parent is None else n.parent.id for n in p.pools)
    return parents


class _Machine:
    """What the offers and the ranking read of a machine that never changes: each pool's memory
    nodes by type (``mask_of(pool.memset(t))``), a zone's type, and the zone and types the
    memory allocator resolves a request's affinity and types to (``_validate_request``,
    ``_find_initial_zone``, ``_ensure_normal_memory``: functions of the machine's NUMA nodes
    alone). Kept per :class:`...sysfs.System` (the pool tree and the allocator's nodes are built
    from it), shared by every node of a ``simulate`` group."""

    __slots__ = ("sys", "masks", "resolved", "zone_types", "prios")

    def __init__(self, sys: Any):
        self.sys = sys
        self.masks: dict[str, tuple[int, ...]] = {}
        self.resolved: dict[tuple[int, int], tuple[int, int, int, int] | None] = {}
        #: ``a.zone_type(zone)`` per zone (the types of the zone's NUMA nodes)
        self.zone_types: dict[int, int] = {}
        self.prios: tuple[tuple[int, int], ...] | None = None

    def prio_masks(self, p: "TopologyAwarePolicy") -> tuple[tuple[int, int], ...]:
        """The CPUs a score counts per priority, as masks: low (the E-cores, else the
        low-priority CPUs), high (the P-cores, else the high-priority CPUs), normal (the CPU
        allocator's priorities: a function of the machine)."""
        if self.prios is None:
            prios = p.cpu_allocator.cpu_priorities()
            sys = p.sys
            low = sys.core_kind_cpus(EFFICIENT_CORE) or prios[PRIORITY_LOW]
            high = sys.core_kind_cpus(PERFORMANCE_CORE) or prios[PRIORITY_HIGH]
            self.prios = ((PRIORITY_LOW, low.mask), (PRIORITY_HIGH, high.mask),
                          (PRIORITY_NORMAL, prios[PRIORITY_NORMAL].mask))
        return self.prios

    def pool_masks(self, n: "Node") -> tuple[int, ...]:
        """``mask_of(n.memset(t))`` for t = 0..7."""
        m = self.masks.get(n.name)
        if m is None:
            m = self.masks[n.name] = tuple(mask_of(n.memset(t)) for t in range(8))
        return m

    def resolve(self, a: Allocator, affinity: int, types: int) -> tuple[int, int, int, int] | None:
        """(types, zone) of a request of ``affinity`` and ``types`` as the allocator resolves it
        before making an offer, and the zone's type and capacity; None when it refuses the
        request."""
        key = (affinity, types)
        if key in self.resolved:
            return self.resolved[key]
        r = MemRequest("", "", 0, affinity, types=types)
        try:
            a._validate_request(r)
            a._find_initial_zone(r)
            a._ensure_normal_memory(r)
            got: tuple[int, int, int, int] | None = (r.types, r.zone, a._zone_type(r.zone), a._zone_capacity(r.zone))
        except MemoryError_:
            got = None
        self.resolved[key] = got
        return got


_MACHINES: dict[int, _Machine] = {}


def _machine(p: "TopologyAwarePolicy") -> _Machine:
    m = _MACHINES.get(id(p.sys))
    if m is None or m.sys is not p.sys:
        if len(_MACHINES) > 64:
            _MACHINES.clear()
        m = _MACHINES[id(p.sys)] = _Machine(p.sys)
    return m


class _Figures:
    """Every pool's score figures for one request, indexed by pool id (what
    :class:`.resources.Score` holds, without making one per pool), and each pool's memory
    offer: made at once when it is not "the request in its zone" (the plain offer, which may
    move other requests or fail), else made when read (:meth:`offer`)."""

    __slots__ = ("p", "req", "isolated", "reserved", "shared", "allocatable_shared", "prio", "taken", "colocated",
                 "hints", "combined", "zone", "offers", "errors", "lazy", "ztype", "planned")

    def __init__(self, p: "TopologyAwarePolicy", req: Any) -> None:
        self.p, self.req = p, req
        k = len(p.pools)
        self.isolated = [0] * k
        self.reserved: list[int] = []
        self.shared: list[int] = []
        self.allocatable_shared: list[int] = []
        #: per priority, each pool's ``prio`` figure (none for a reserved request), made when read
        self.prio: dict[int, list[int]] | None = None
        #: the CPU the request takes, in milli-CPU (None: a reserved request, no ``prio`` figures)
        self.taken: int | None = None
        self.colocated: list[int] = []
        self.hints: list[dict[str, float]] | None = None
        #: per pool ``combine_hint_scores`` of its hint scores
        self.combined: list[tuple[float, float]] = []
        #: per pool the offer's zone (None: no offer)
        self.zone: list[int | None] = [None] * k
        self.offers: list[Offer | None] = [None] * k
        self.errors = [""] * k
        #: per pool (affinity, types asked, types and zone resolved) of an offer made when read
        self.lazy: list[tuple[int, int, int, int] | None] = [None] * k
        #: per pool the type of its offer's zone (0: no offer), made when first read (:func:`_zone_types`)
        self.ztype: list[int] | None = None
        #: every pool's offer is "the request in its zone" of the offer plan (:func:`_offer_plan`,
        #: answered at once by :func:`...libmem_offers.all_fit`): the zones are the plan's
        self.planned = False

    def offer(self, i: int) -> Offer | None:
        o = self.offers[i]
        lazy = self.lazy[i]
        if o is None and lazy is not None:
            affinity, mtyp, types, zone = lazy
            c, req = self.req.container, self.req
            r = container_request(c.id, c.pretty_name(), c.qos_class, req.mem_amount_to_allocate(), affinity, mtyp)
            o = self.offers[i] = libmem_offers.resolved_offer(self.p.mem_allocator, r, types, zone)
            self.lazy[i] = None
        return o

    def prio_figures(self) -> dict[int, list[int]]:
        """Per priority, each pool's CPUs of that priority left after the request (milli-CPU)."""
        if self.prio is None:
            self.prio = {}
            if self.taken is not None:
                taken = self.taken
                sharables = [_free(n).sharable.mask for n in self.p.pools]
                for prio, cpus in _machine(self.p).prio_masks(self.p):
                    self.prio[prio] = [(cpus & m).bit_count() * 1000 - taken for m in sharables]
        return self.prio

    def score(self, i: int) -> Score:
        """The pool's :class:`.resources.Score`, as ``supply.get_score`` makes it."""
        n = self.p.pools[i]
        assert n.id == i and n.freeres is not None
        s = Score(n.freeres, self.req)
        s.isolated, s.reserved, s.shared = self.isolated[i], self.reserved[i], self.shared[i]
        s.allocatable_shared = self.allocatable_shared[i]
        for prio, figures in self.prio_figures().items():
            s.prio[prio] = figures[i]
        s.colocated = self.colocated[i]
        if self.hints is not None:
            s.hints = dict(self.hints[i])
        s.mem = self.offer(i)
        s.mem_error = self.errors[i]
        return s


class _Scores(dict[int, Score]):
    """Pool id → :class:`.resources.Score` of one request, each made when first read (a
    placement reads the chosen pool's, ``--explain`` every pool's)."""

    def __init__(self, figures: _Figures) -> None:
        super().__init__()
        self.figures = figures

    def __missing__(self, i: int) -> Score:
        s = self[i] = self.figures.score(i)
        return s


def _free(n: "Node") -> Any:
    """The pool's free supply (``n.free_supply()``)."""
    return n.freeres


def _figures(p: "TopologyAwarePolicy", req: Any) -> _Figures:
    """Every pool's figures and offers, in ``p.pools`` order (the order upstream scores in, and
    so makes its offers in)."""
    f = _Figures(p, req)
    reserved, shared, colocated = pool_figures(p, req.cpu_type)
    f.allocatable_shared, f.colocated = shared, colocated
    if fastpick.ENABLED:
        fastpick.remember(p, req, shared)   # for the pick of the chosen pool's exclusive CPUs
    full, part = req.full, req.fraction
    if full == 0 and part == 0:
        part = 1
    pools = p.pools
    if req.cpu_type == CPU_RESERVED:
        f.reserved = [r - part for r in reserved]
        f.shared = shared
    else:
        f.reserved = reserved
        f.taken = 1000 * full + part   # the ``prio`` figures: made when read (:meth:`_Figures.prio_figures`)
        if req.isolate:
            iso = f.isolated = [_free(n).isolated._mask.bit_count() - full for n in pools]
            f.shared = [sh - part - (1000 * full if iso[i] < 0 else 0) for i, sh in enumerate(shared)]
        else:
            f.shared = [sh - 1000 * full - part for sh in shared]
    hints = req.container.topology_hints
    if hints:
        f.hints = [{provider: n.hint_score(hint) for provider, hint in hints.items()} for n in pools]
        f.combined = [combine_hint_scores(h) for h in f.hints]
    root = p.root_pool()
    mem_root = req.mem_type == 8   # memoryPreserve: the offer comes from the root
    if not libmem_offers.ENABLED:
        for n in pools:
            try:
                o = f.offers[n.id] = p.get_mem_offer(root if mem_root else n, req)
                f.zone[n.id] = o.node_mask()
            except PolicyError as exc:
                f.errors[n.id] = str(exc)
        return f
    a = p.mem_allocator
    machine = _machine(p)
    amount = req.mem_amount_to_allocate()
    known = req.container.id in a.requests   # an update: the allocator's own way
    lazy, zones = f.lazy, f.zone
    plan = _offer_plan(p, machine, req.mem_type, mem_root)
    if ALL_FIT and not known:
        floor = _plan_floor(p, req.mem_type, mem_root, plan)
        if floor is not None and libmem_offers.all_fit(a, amount, floor):
            # every pool's offer is "the request in its zone": what ``fits`` leaves behind (each
            # new zone, empty, in the allocator, in the pools' order) left here too
            held = a.zones
            if PLANNED:
                planned_lazy, planned_zones, distinct = _planned(p, req.mem_type, mem_root, plan)
                for zone, zone_type, capacity in distinct:
                    if zone not in held:
                        held[zone] = Zone(zone, zone_type, capacity)
                f.lazy, f.zone = list(planned_lazy), list(planned_zones)
                f.planned = True
                return f
            for i, (affinity, mtyp, resolved) in enumerate(plan):
                assert resolved is not None
                types, zone, zone_type, capacity = resolved
                if zone not in held:
                    held[zone] = Zone(zone, zone_type, capacity)
                lazy[i] = (affinity, mtyp, types, zone)
                zones[i] = zone
            f.planned = True
            return f
    free = libmem_offers.FreeMemory(a)
    fits = free.fits
    plain_offer: Callable[["Node"], Offer] | None = None
    for n, (affinity, mtyp, resolved) in zip(pools, plan):
        i = n.id
        if resolved is not None and not known and fits(resolved[1], resolved[2], resolved[3], amount):
            lazy[i] = (affinity, mtyp, resolved[0], resolved[1])
            zones[i] = resolved[1]
            continue
        if plain_offer is None:
            plain_offer = _offer_from(a, free, machine, req, known)
        try:
            o = f.offers[i] = plain_offer(root if mem_root else n)
            zones[i] = o.node_mask()
        except PolicyError as exc:
            f.errors[i] = str(exc)
    return f


def _offer_plan(p: "TopologyAwarePolicy", machine: _Machine, mem_type: int, mem_root: bool
                ) -> tuple[tuple[int, int, tuple[int, int, int, int] | None], ...]:
    """Per pool (in ``p.pools`` order) the affinity and types of its memory request and how the
    allocator resolves them (:meth:`_Machine.resolve`): functions of the machine and the pool
    tree, kept on the policy per memory type."""
    plans = p.__dict__.get("_offer_plans")
    if plans is None:
        plans = p.__dict__["_offer_plans"] = {}
    key = (mem_type, mem_root)
    got = plans.get(key)
    if got is None:
        a = p.mem_allocator
        root = p.root_pool()
        plan = []
        for n in p.pools:
            pool = root if mem_root else n
            if mem_type == MEMORY_PRESERVE:
                affinity = machine.pool_masks(pool)[7]
                mtyp = a.zone_type(affinity)
            else:
                affinity = machine.pool_masks(pool)[mem_type]
                mtyp = mem_type
            plan.append((affinity, mtyp, machine.resolve(a, affinity, mtyp)))
        plans[key] = got = tuple(plan)   # of ints: copies of the node share it
    return got


#: answer every pool's offer at once where no zone can be overcommitted (:func:`_plan_floor`,
#: :func:`...libmem_offers.all_fit`; False: :meth:`...libmem_offers.FreeMemory.fits` per pool)
ALL_FIT = True


#: read the offers made at once from tuples kept per plan (:func:`_planned`; False: built per request)
PLANNED = True


def _planned(p: "TopologyAwarePolicy", mem_type: int, mem_root: bool,
             plan: tuple[tuple[int, int, tuple[int, int, int, int] | None], ...]
             ) -> tuple[tuple[tuple[int, int, int, int], ...], tuple[int, ...], tuple[tuple[int, int, int], ...]]:
    """What the offers made at once (:func:`...libmem_offers.all_fit`) leave per pool — the
    offer to make when read (affinity, types asked, types and zone resolved) and its zone — and
    the zones they add to the allocator where it lacks them (zone, type, capacity, each once, in
    the order the pools first name them): functions of the plan, kept on the policy with it."""
    kept = p.__dict__.get("_planned")
    if kept is None:
        kept = p.__dict__["_planned"] = {}
    key = (mem_type, mem_root)
    got = kept.get(key)
    if got is None or got[0] is not plan:
        lazy = []
        zones = []
        distinct: dict[int, tuple[int, int, int]] = {}
        for affinity, mtyp, resolved in plan:
            assert resolved is not None
            types, zone, zone_type, capacity = resolved
            lazy.append((affinity, mtyp, types, zone))
            zones.append(zone)
            distinct.setdefault(zone, (zone, zone_type, capacity))
        got = kept[key] = (plan, tuple(lazy), tuple(zones), tuple(distinct.values()))
    return got[1], got[2], got[3]


def _plan_floor(p: "TopologyAwarePolicy", mem_type: int, mem_root: bool,
                plan: tuple[tuple[int, int, tuple[int, int, int, int] | None], ...]) -> int | None:
    """The least capacity of the zones an offer plan resolves to; None when some pool's request
    is not resolved (the allocator refuses it) or resolves to no zone (``fits``' plain test).
    Kept on the policy with the plan (a function of it)."""
    floors = p.__dict__.get("_plan_floors")
    if floors is None:
        floors = p.__dict__["_plan_floors"] = {}
    key = (mem_type, mem_root)
    if key in floors:
        got: int | None = floors[key]
        return got
    got = None
    if all(r is not None and r[1] for _, _, r in plan):
        got = min(r[3] for _, _, r in plan if r is not None)
    floors[key] = got
    return got


def _offer_from(a: Allocator, free: "libmem_offers.FreeMemory", machine: _Machine, req: Any, known: bool
                ) -> Callable[["Node"], Offer]:
    """``p.get_mem_offer(pool, req)`` for the pools of one request, made at once over the same
    free memory (:mod:`...libmem_offers`), each pool's zone resolved once per machine."""
    c = req.container
    amount = req.mem_amount_to_allocate()
    cid, name, qos = c.id, c.pretty_name(), c.qos_class
    preserve = req.mem_type == MEMORY_PRESERVE

    def offer(pool: "Node") -> Offer:
        if preserve:
            zone = machine.pool_masks(pool)[7]
            mtyp = a.zone_type(zone)
        else:
            zone = machine.pool_masks(pool)[req.mem_type]
            mtyp = req.mem_type
        r = container_request(cid, name, qos, amount, zone, mtyp)
        try:
            resolved = None if known else machine.resolve(a, zone, mtyp)
            return free.get_offer(r) if resolved is None else free.get_resolved_offer(r, *resolved)
        except MemoryError_ as exc:
            raise PolicyError(str(exc)) from None

    return offer


def chosen_offer(scores: dict[int, Score], i: int) -> Offer | None:
    """``scores[i].mem``: of fast scores the pool's offer alone (its :class:`.resources.Score`,
    with the per-priority figures, is made only when read: ``--explain``)."""
    if isinstance(scores, _Scores) and i not in scores:
        return scores.figures.offer(i)
    return scores[i].mem


def sort_pools_by_score(p: "TopologyAwarePolicy", req: Any, aff: dict[int, int]
                        ) -> tuple[dict[int, Score], list["Node"]]:
    """:func:`.pools.sort_pools_by_score`, the pools' figures computed once; the scores are
    made when read."""
    f = _figures(p, req)
    scores = _Scores(f)
    pools = p.pools
    if COMPARE:
        # without affinities every pool's affinity score is 0.0
        aff_list = [affinity_score(aff, n) for n in pools] if aff else [0.0] * len(pools)
        ids = list(range(len(pools)))   # ``p.pools`` is in id order
        _sort(ids, _less(p, req, f, aff_list))
        return scores, [pools[i] for i in ids]
    ranked = list(pools)
    aff_scores = {n.id: affinity_score(aff, n) for n in ranked} if aff else dict.fromkeys((n.id for n in ranked), 0.0)
    sort_slice(ranked, lambda n1, n2: compare_scores(p, req, scores, aff_scores, n1, n2))
    return scores, ranked


#: rank with :func:`_less` (False: the plain ``compare_scores``; for tests)
COMPARE = True

#: find the first pool without sorting where that is exact (:func:`best_pool`; False: always sort)
FIRST = True


def best_pool(p: "TopologyAwarePolicy", req: Any, aff: dict[int, int]) -> tuple[dict[int, Score], "Node"]:
    """The scores and the first pool of :func:`sort_pools_by_score` (a placement without a pool
    hint reads no other; ``--explain`` reads the whole order), found without the sort where
    that gives the same pool (:func:`_first`)."""
    if not COMPARE or not FIRST:
        scores, ranked = sort_pools_by_score(p, req, aff)
        return scores, ranked[0]
    f = _figures(p, req)
    scores = _Scores(f)
    pools = p.pools
    aff_list = [affinity_score(aff, n) for n in pools] if aff else [0.0] * len(pools)
    i = _first(p, req, f, aff_list)
    if i is None:
        ids = list(range(len(pools)))
        _sort(ids, _less(p, req, f, aff_list))
        i = ids[0]
    return scores, pools[i]


def _first(p: "TopologyAwarePolicy", req: Any, f: _Figures, aff: list[float]) -> int | None:
    """The pool id Go's insertion sort (:func:`_sort`, up to 12 pools) puts first under
    :func:`_less`, where it can be found without sorting; None elsewhere (requests with
    topology hints, whose tie-breakers are not all keys, go to the sort).

    - Requests that are not unlimited burstable: every tie-breaker of the chain compares a
      per-pool key, ending in the pool id — except, for isolated requests, the first one
      ("enough isolated or enough shared CPU"), which is no order when some pools have enough
      isolated CPUs and others not. Where all pools agree on that, :func:`_less` is a strict
      total order and the first of the sort is its minimum, found with one comparison per pool.
      Where they do not, the pools with enough of both beat every other pool in both
      directions and are ordered among themselves, so the least of them comes first; without
      such a pool, the sort decides.
    - Unlimited burstable requests: their last tie-breakers (the topology level, upstream's
      "sic" branch) are no order, but the ones before them are keys (enough shared CPU,
      affinity, an offer, its zone's type, the zone's capacity). When one pool has the strictly
      least such key, it beats every other pool in both directions.

    Go's insertion sort puts a pool that beats every other pool in both directions first,
    whatever the order it meets the pools in: it moves to the front when inserted, and no pool
    inserted later moves past it.
    """
    n = len(f.zone)
    if n > 12 or (f.hints is not None and req.container.topology_hints):
        return None
    if req.container.qos_class == "Burstable" and req.limit == UNLIMITED_CPU:
        return None if req.isolate or req.cpu_type != CPU_NORMAL else _first_unlimited(p, req, f, aff)
    candidates: list[int] | range = range(n)
    if req.isolate:
        iso, sh = f.isolated, f.shared
        short = sum(1 for x in iso if x < 0)
        if 0 < short < n:
            candidates = [i for i in range(n) if iso[i] >= 0 and sh[i] >= 0]
            if not candidates:
                return None
    if KEYED:
        got = _first_keyed(p, req, f, aff, candidates)
        if got is not None:
            return got
    less = _less(p, req, f, aff)
    best = candidates[0]
    for i in candidates[1:]:
        if less(i, best):
            best = i
    return best


#: find the first pool of the common requests by their keys (:func:`_first_keyed`; False: by
#: :func:`_less`, one comparison per pool)
KEYED = True


def _first_keyed(p: "TopologyAwarePolicy", req: Any, f: _Figures, aff: list[float],
                 candidates: list[int] | range) -> int | None:
    """:func:`_first`'s least pool under :func:`_less` for the common requests — normal CPU, not
    burstable, no CPU priority preferred, no affinity, every pool's offer in its planned zone
    (:attr:`_Figures.planned`), no pool with isolated CPUs to spare — without the comparison's
    closure; None for any other request.

    For such a request the chain of tie-breakers reads, in order: whether the pool has enough
    shared CPU (the isolated half of that test never decides among ``candidates``: see
    :func:`_first`), its zone's type, the zone capacity against the memory limit (when request
    and limit differ), the zone's size, whether the pool has the request's memory type, the
    pool's depth — all functions of the pool tree and the request's memory type and limit,
    ranked once per policy (:func:`_static_ranks`) — then the shared CPU left (when whole CPUs
    are asked and either pool has some left) or the colocated grants and the shared CPU left,
    then the pool id. Each step compares a per-pool key, so the first of the sort is the least
    pool, found here with the same steps in one scan."""
    if req.cpu_type != CPU_NORMAL or not f.planned or req.prio in _PRIOS or req.container.qos_class == "Burstable":
        return None
    for a in aff:
        if a:
            return None
    if req.isolate:
        for x in f.isolated:
            if x > 0:
                return None
    rank = _static_ranks(p, req, f)
    sh, coloc = f.shared, f.colocated
    whole = req.full > 0
    best = -1
    for i in candidates:
        if best < 0:
            best = i
            continue
        s1, s2 = sh[i], sh[best]
        if (s1 < 0) != (s2 < 0):
            if s2 < 0:
                best = i
            continue
        r1, r2 = rank[i], rank[best]
        if r1 != r2:
            if r1 < r2:
                best = i
            continue
        if whole and (s1 > 0 or s2 > 0):
            if s1 > s2:
                best = i
            continue   # equal: the lower id, ``best``
        c1, c2 = coloc[i], coloc[best]
        if c1 != c2:
            if c1 < c2:
                best = i
            continue
        if s1 > s2:
            best = i
    return best if best >= 0 else None


_PRIOS = (PRIORITY_LOW, PRIORITY_HIGH, PRIORITY_NORMAL)


def _static_ranks(p: "TopologyAwarePolicy", req: Any, f: _Figures) -> tuple[int, ...]:
    """Per pool id the rank of its key of :func:`_less`'s tie-breakers that read only the pool
    tree and the request's memory (the planned zone's type against the request's, the zone
    capacity against the limit when request and limit differ, the zone's size, the pool's
    memory types, its depth; equal keys, equal ranks). The planned zones are a function of the
    memory type (:func:`_offer_plan`), so the ranks are kept on the policy per memory type and
    limit (tuples of ints: copies of the node share them)."""
    mt = req.mem_type
    lim = req.mem_lim
    capped = req.mem_amount_to_allocate() != lim
    key = (mt, capped, lim if capped else 0)
    table = p.__dict__.get("_static_ranks")
    if table is None:
        table = p.__dict__["_static_ranks"] = {}
    got: tuple[int, ...] | None = table.get(key)
    if got is None:
        zone = f.zone
        ztype = _zone_types(p, f)
        cap = _capacities(p, mt) if capped else ()
        depth, _, _, mem_types = _tree(p)
        typed = mt not in (MEMORY_UNSPEC, MEMORY_PRESERVE)
        keys = []
        for i, m in enumerate(zone):
            assert m is not None
            c = 0 if not capped else ((1 if cap[i] < lim else 0) if lim != 0 else -cap[i])
            keys.append((0 if ztype[i] == mt else 1, c, m.bit_count(),
                         (0 if mem_types[i] & mt == mt else 1) if typed else 0, -depth[i]))
        order = sorted(set(keys))
        got = table[key] = tuple(order.index(k) for k in keys)
    return got


def _first_unlimited(p: "TopologyAwarePolicy", req: Any, f: _Figures, aff: list[float]) -> int | None:
    """:func:`_first` of an unlimited burstable request: the pool with the strictly least key of
    the tie-breakers before the burstable ones, None when several share it."""
    sh, zone, mt = f.shared, f.zone, req.mem_type
    ztype = _zone_types(p, f)
    amount, lim = req.mem_amount_to_allocate(), req.mem_lim
    cap = _capacities(p, mt) if amount != lim else None
    best_key: tuple[Any, ...] | None = None
    best, ties = -1, 0
    for i in range(len(zone)):
        m = zone[i]
        if m is None:
            key: tuple[Any, ...] = (sh[i] < 0, -aff[i], True, False, 0)
        else:
            c = 0 if cap is None else ((cap[i] < lim) if lim != 0 else -cap[i])
            key = (sh[i] < 0, -aff[i], False, ztype[i] != mt, c)
        if best_key is None or key < best_key:
            best_key, best, ties = key, i, 0
        elif key == best_key:
            ties += 1
    return best if ties == 0 else None


def _sort(ids: list[int], less: Callable[[int, int], bool]) -> None:
    """``sort.Slice``: Go's insertion sort for the few pools of a machine (up to 12), else
    :func:`...gosort.sort_slice`."""
    n = len(ids)
    if n > 12:
        sort_slice(ids, less)
        return
    for i in range(1, n):
        j = i
        while j > 0 and less(ids[j], ids[j - 1]):
            ids[j], ids[j - 1] = ids[j - 1], ids[j]
            j -= 1


def _tree(p: "TopologyAwarePolicy") -> tuple[tuple[int, ...], tuple[str, ...], tuple[int, ...], tuple[int, ...]]:
    """Per pool id its depth, topology level, the level's value and memory types: functions of
    the pool tree (fixed once built), kept on the policy as tuples of atoms (copies of the
    node share them)."""
    got = p.__dict__.get("_tree_figures")
    if got is None or len(got[0]) != len(p.pools):
        assert all(n.id == i for i, n in enumerate(p.pools))
        levels = tuple(n.topology_level() for n in p.pools)
        got = p.__dict__["_tree_figures"] = (
            tuple(n.depth for n in p.pools), levels, tuple(TOPOLOGY_LEVEL_VALUES.get(lv, 0) for lv in levels),
            tuple(n.memory_type() for n in p.pools))
    return got


def _capacities(p: "TopologyAwarePolicy", mt: int) -> tuple[int, ...]:
    """Per pool id ``p.pool_zone_capacity(pool, mt)`` (a sum of the machine's memory), kept on
    the policy per memory type."""
    caps = p.__dict__.get("_zone_capacities")
    if caps is None:
        caps = p.__dict__["_zone_capacities"] = {}
    got = caps.get(mt)
    if got is None or len(got) != len(p.pools):
        got = caps[mt] = tuple(p.pool_zone_capacity(n, mt) for n in p.pools)
    return got


def _zone_types(p: "TopologyAwarePolicy", f: _Figures) -> list[int]:
    """Per pool the type of its offer's zone (``a.zone_type``, remembered per machine; 0 where
    the pool has no offer), kept on the figures."""
    ztype = f.ztype
    if ztype is None:
        types = _machine(p).zone_types
        ztype = f.ztype = [0] * len(f.zone)
        for i, m in enumerate(f.zone):
            if m is not None:
                t = types.get(m)
                if t is None:
                    t = types[m] = p.mem_allocator.zone_type(m)
                ztype[i] = t
    return ztype


def _less(p: "TopologyAwarePolicy", request: Any, f: _Figures, aff: list[float]) -> Callable[[int, int], bool]:
    """:func:`.pools.compare_scores` for one request, over pool ids: what it reads of the
    request and of each pool's figures looked up once (the pool tree's from :func:`_tree` and
    :func:`_capacities`), then the same chain of tie-breakers over them."""
    cpu_type = request.cpu_type
    normal, reserved = cpu_type == CPU_NORMAL, cpu_type == CPU_RESERVED
    mt = request.mem_type
    req_amount, lim = request.mem_amount_to_allocate(), request.mem_lim
    burstable = request.container.qos_class == "Burstable"
    limit = request.limit
    unlimited = burstable and limit == UNLIMITED_CPU
    target = p.unlimited_burstable_preference(request.container) if unlimited else ""
    vt = TOPOLOGY_LEVEL_VALUES.get(target, 0)
    prio = request.prio
    prio_tiebreak = prio in (PRIORITY_LOW, PRIORITY_HIGH)
    typed = mt not in (MEMORY_UNSPEC, MEMORY_PRESERVE)
    isolate, full = request.isolate, request.full
    iso, res, sh, coloc, b = f.isolated, f.reserved, f.shared, f.colocated, f.allocatable_shared
    zeros = [0] * len(iso)
    figures = f.prio_figures() if prio_tiebreak or (normal and prio == PRIORITY_NORMAL) else {}
    prio_fig = figures.get(prio, zeros)
    normal_fig = figures.get(PRIORITY_NORMAL, zeros)
    combined = f.combined if f.hints is not None and request.container.topology_hints else None
    # per pool: the offer's zone and type, the zone capacity of the request's type (read when
    # the memory request and limit differ)
    zone = f.zone
    ztype = _zone_types(p, f)
    cap = _capacities(p, mt) if req_amount != lim else ()
    # per pool its depth, topology level, the level's value (read by unlimited burstable
    # requests) and memory types
    depth, levels, values, mem_types = _tree(p)

    def less(id1: int, id2: int) -> bool:
        iso1, res1, sh1 = iso[id1], res[id1], sh[id1]
        iso2, res2, sh2 = iso[id2], res[id2], sh[id2]
        if normal:
            if (iso2 < 0 <= iso1) or (sh2 < 0 <= sh1):
                return True
            if (iso1 < 0 <= iso2) or (sh1 < 0 <= sh2):
                return False
        elif reserved:
            if res2 < 0 <= res1:
                return True
            if res1 < 0 <= res2:
                return False
        a1, a2 = aff[id1], aff[id2]
        if a1 > a2:
            return True
        if a2 > a1:
            return False
        depth1, depth2 = depth[id1], depth[id2]
        if combined is not None:
            hs1, nz1 = combined[id1]
            hs2, nz2 = combined[id2]
            if hs1 > hs2:
                return True
            if hs2 > hs1:
                return False
            if hs1 == 0:
                if nz1 > nz2:
                    return True
                if nz2 > nz1:
                    return False
            if hs1 == hs2 and nz1 == nz2 and (hs1 != 0 or nz1 != 0):
                if depth1 > depth2:
                    return True
                if depth1 < depth2:
                    return False
                return id1 < id2
        m1, m2 = zone[id1], zone[id2]
        if m1 is not None and m2 is None:
            return True
        if m1 is None and m2 is not None:
            return False
        if m1 is not None and m2 is not None:
            t1, t2 = ztype[id1], ztype[id2]
            if t1 == mt and t2 != mt:
                return True
            if t1 != mt and t2 == mt:
                return False
            if req_amount != lim:
                c1, c2 = cap[id1], cap[id2]
                if (lim != 0 and c1 >= lim and c2 < lim) or (lim == 0 and c1 > c2):
                    return True
                if (lim != 0 and c1 < lim and c2 >= lim) or (lim == 0 and c2 > c1):
                    return False
        if burstable:
            b1, b2 = b[id1], b[id2]
            if not unlimited:
                r1, r2 = b1 - limit, b2 - limit
                if r1 >= 0 and r2 < 0:
                    return True
                if r2 >= 0 and r1 < 0:
                    return False
            else:
                level1, level2 = levels[id1], levels[id2]
                if level1 == target and level2 != target:
                    return True
                if level2 == target and level1 != target:
                    return False
                if level1 == target and level2 == target:
                    if b1 > b2:
                        return True
                    if b2 > b1:
                        return False
                    return id1 < id2
                v1, v2 = values[id1], values[id2]
                if v1 > vt and v2 < vt:
                    return True
                if v2 > vt and v1 < vt:
                    return True  # sic: upstream returns true here as well
                return id1 < id2
        if m1 is not None and m2 is not None:
            n1, n2 = m1.bit_count(), m2.bit_count()
            if n1 < n2:
                return True
            if n2 < n1:
                return False
        if typed:
            h1, h2 = mem_types[id1] & mt == mt, mem_types[id2] & mt == mt
            if h1 and not h2:
                return True
            if not h1 and h2:
                return False
        if prio_tiebreak:
            l1, l2 = prio_fig[id1], prio_fig[id2]
            if l1 != l2:
                if l1 >= 0 > l2:
                    return True
                if l1 < 0 <= l2:
                    return False
        if depth1 > depth2:
            return True
        if depth1 < depth2:
            return False
        if reserved:
            q1 = go_div(res1, coloc[id1] + 1)
            q2 = go_div(res2, coloc[id2] + 1)
            if q1 > q2:
                return True
            if q2 > q1:
                return False
        elif normal:
            if isolate and (iso1 > 0 or iso2 > 0):
                if iso1 > iso2:
                    return True
                if iso2 > iso1:
                    return False
                return id1 < id2
            if prio == PRIORITY_NORMAL:
                np1, np2 = normal_fig[id1], normal_fig[id2]
                if np1 != np2:
                    if np1 >= 0 > np2:
                        return True
                    if np1 < 0 <= np2:
                        return False
            if full > 0 and (sh1 > 0 or sh2 > 0):
                if sh1 > sh2:
                    return True
                if sh2 > sh1:
                    return False
                return id1 < id2
            if coloc[id1] < coloc[id2]:
                return True
            if coloc[id2] < coloc[id1]:
                return False
            if sh1 > sh2:
                return True
            if sh2 > sh1:
                return False
        return id1 < id2

    return less
