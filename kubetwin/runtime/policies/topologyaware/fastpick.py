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
(another request object).
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
