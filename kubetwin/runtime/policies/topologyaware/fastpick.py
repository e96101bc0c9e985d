"""A fast path for the topology-aware policy's exclusive CPUs: the pool figures of the ranking reused.

Upstream's ``allocateCpu`` asks the chosen pool for its allocatable shared CPU
(``AllocatableSharedCPU``: the pool's and every ancestor's sharable CPUs less what their
subtrees granted, one less when a container without a CPU request sits below) before slicing
exclusive CPUs, and ``sliceableCPUs`` asks it again of every pool of the subtree — each answer a
walk of ancestors, subtrees and every grant of the policy. The ranking that chose the pool has
just computed that figure for every pool in one pass (:func:`.fastscore.pool_figures`), and
nothing changes the CPU accounting between the ranking and the pick (``allocatePool``: rank,
take the chosen pool's memory offer, ``allocate`` → ``allocateCpu`` → ``takeCPUs``). So the
ranking leaves its figures here (:func:`remember`, tied to its policy and request object) and
the pick that follows takes them (:func:`scored`, once): the same CPU allocator calls on the
same sets and counts, the same pick. Anything the fast pick cannot answer exactly — isolated
CPUs, a pool short of shared CPU, an allocator error — goes the plain way, which computes its
own figures and raises its own errors (nothing is changed before). Figures left by a ranking
that did not end in a pick (a refused offer, a reserved request) are dropped by the next pick
(another request object). The grant's exclusive CPUs are then taken from the other pools of its
subtree and its ancestors by masks, over pool ids kept per policy (:func:`account_allocate`),
not by the tree walks with a closure and a supply method per pool.
``tests/runtime/policies/topologyaware/test_fastpick.py`` holds picks, containers and NRI
updates equal with this off (``ENABLED = False``: ``Supply.pick_exclusive_cpus`` as upstream has
it).

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/topology-aware/policy/resources.go`` (``takeCPUs``, ``sliceableCPUs``,
``AllocatableSharedCPU``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ....model.cpuset import CPUSet
from ...cpuallocator import PRIORITY_NONE, AllocationError

if TYPE_CHECKING:
    from .policy import TopologyAwarePolicy

#: pick with the ranking's figures (False: every pick computes its own, as upstream)
ENABLED = True

#: the last ranking's (policy, request, allocatable shared CPU per pool id), until a pick takes it
_SCORED: list[Any] = [None]


def remember(p: "TopologyAwarePolicy", req: Any, shared: list[int]) -> None:
    """The ranking of ``req`` computed ``shared`` (``allocatable_shared_cpu()`` per pool id) in
    the policy's current state."""
    _SCORED[0] = (p, req, shared)


def scored(supply: Any, r: Any) -> list[int] | None:
    """The figures the ranking of ``r`` left for the supply's policy, taken (a later pick
    computes its own: the first pick changes the accounting)."""
    got = _SCORED[0]
    if got is None:
        return None
    _SCORED[0] = None
    p, req, shared = got
    return shared if req is r and supply.node.policy is p else None


def _subtree(p: "TopologyAwarePolicy", i: int) -> tuple[int, ...]:
    """The pools ``sliceableCPUs`` visits from pool ``i``: its subtree in depth-first order,
    without ``i`` itself unless it is a leaf; per policy as tuples of ids (the tree is fixed)."""
    table = p.__dict__.get("_sliced_pools")
    if table is None or len(table) != len(p.pools):
        out = []
        for n in p.pools:
            ids: list[int] = []

            def visit(m: Any, n: Any = n, ids: list[int] = ids) -> bool:
                if m is n and not m.is_leaf():
                    return False
                ids.append(m.id)
                return False

            n.depth_first(visit)
            out.append(tuple(ids))
        table = p.__dict__["_sliced_pools"] = tuple(out)
    got: tuple[int, ...] = table[i]
    return got


def pick(supply: Any, r: Any, cnt: int, shared: list[int]) -> CPUSet | None:
    """``supply.pick_exclusive_cpus(r, cnt, ...)``'s pick from the shared CPUs, each pool's
    allocatable shared CPU read from ``shared``; None when the plain code is to answer
    (isolated CPUs, too little shared CPU, an allocator error)."""
    node = supply.node
    if r.isolate and supply.isolated.size() >= cnt:
        return None
    if shared[node.id] < 1000 * cnt:
        return None
    p = node.policy
    pools = p.pools
    allocate = p.cpu_allocator.allocate_cpus
    mask = 0
    try:
        for i in _subtree(p, node.id):
            free = shared[i]
            free = free // 1000 if free >= 0 else -(-free // 1000)   # Go's division
            cset, _ = allocate(pools[i].freeres.sharable, free, PRIORITY_NONE)
            mask |= cset.mask
        got, _ = p.take_cpus(CPUSet.from_mask(mask), cnt, r.prio, r)
    except AllocationError:
        return None
    result: CPUSet = got
    return result


#: account a grant's exclusive CPUs in the other pools by masks (:func:`account_allocate`;
#: False: ``Grant.account_allocate_cpu``'s walks, as upstream)
ACCOUNTED = True


def _accounted(p: "TopologyAwarePolicy", i: int) -> tuple[int, ...]:
    """The pools ``Grant.account_allocate_cpu`` walks from pool ``i`` that it changes: its
    subtree depth-first, then its ancestors, without ``i`` itself (its own supply skips the
    grant: the pick took the CPUs); per policy as tuples of ids (the tree is fixed)."""
    table = p.__dict__.get("_accounted_pools")
    if table is None or len(table) != len(p.pools):
        out = []
        for n in p.pools:
            ids: list[int] = []

            def visit(m: Any, ids: list[int] = ids) -> bool:
                ids.append(m.id)
                return False

            n.depth_first(visit)
            ids.extend(a.id for a in n.ancestors())
            out.append(tuple(j for j in ids if j != n.id))
        table = p.__dict__["_accounted_pools"] = tuple(out)
    got: tuple[int, ...] = table[i]
    return got


def account_allocate(g: Any) -> None:
    """``g.account_allocate_cpu()`` for a grant with exclusive CPUs: every pool of the grant's
    subtree and every ancestor loses them from its isolated and sharable CPUs (``Supply.
    account_allocate_cpu``), the set kept where it holds none of them (the same value: sets
    are never changed in place)."""
    node = g.node
    p = node.policy
    pools = p.pools
    xm = g.exclusive._mask
    for i in _accounted(p, node.id):
        s = pools[i].freeres
        m = s.isolated._mask
        if m & xm:
            s.isolated = CPUSet.from_mask(m & ~xm)
        m = s.sharable._mask
        if m & xm:
            s.sharable = CPUSet.from_mask(m & ~xm)
