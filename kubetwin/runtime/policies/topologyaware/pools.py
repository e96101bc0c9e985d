"""Building the pool tree and ranking pools for a request.

The tree: a virtual root when there is more than one socket; under it the sockets; under a
socket its dies (left out when it has one die, or when its dies are not split into clusters),
under a die or socket its NUMA nodes when there are several (memory-less NUMA nodes with CPUs
are folded into the parent), and L3 cache groups where a socket, die or NUMA node has several.
Each pool gets the CPUs of its entity and the memory nodes closest to them; memory-only nodes
(HBM, PMEM/CXL) go to the pools whose DRAM node is their closest; the root gets all memory.

The ranking (``compareScores``) is a chain of tie-breakers: enough capacity, affinity, topology
hints, the memory offer (fits, matches the type, burstable limit fits, tighter), burstable CPU
headroom and the unlimited-burstable topology level, memory type, CPU priority, depth (lower in
the tree wins), then per request type (reserved, isolated, exclusive: more sliceable capacity;
shared: fewer colocated containers, then more shared capacity), then the lower pool id. It is
sorted with Go's ``sort.Slice``.

Upstream: containers/nri-plugins v0.14.0 ``cmd/plugins/topology-aware/policy/pools.go``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ...config import TOPOLOGY_LEVEL_VALUES
from ...gosort import sort_slice
from ...resmgr.policy import PolicyError
from ...sysfs import (
    HBM,
    NODE_HAS_LOCAL_CPUS,
    NODE_HAS_MEMORY,
    NODE_HAS_NO_LOCAL_CPUS,
    NODE_OF_DRAM,
    NODE_OF_HBM,
    NODE_OF_PMEM,
    PMEM,
)
from .node import DIE, L3CACHE, NUMA, SOCKET, VIRTUAL, Node  # noqa: F401 - the kinds a pool has
from .preferences import CPU_NORMAL, CPU_RESERVED, MEMORY_PRESERVE, MEMORY_UNSPEC
from .resources import Score, Supply

if TYPE_CHECKING:
    from .policy import TopologyAwarePolicy


# --- the tree ----------------------------------------------------------------------------------
def build_pools(p: "TopologyAwarePolicy") -> None:
    sys = p.sys
    for a in sys.node_ids():
        for b in sys.node_ids():
            if sys.node_distance(a, b) != sys.node_distance(b, a):
                raise PolicyError(f"asymmetric NUMA distance (#{a}, #{b}): {sys.node_distance(a, b)} != "
                                  f"{sys.node_distance(b, a)}")
    p.root = None
    root = None
    if sys.socket_count() > 1:
        root = Node(p, "root", VIRTUAL, None)
        p.root = root
        _supplies(p, root, sys.cpu_set)
    for sid in sys.package_ids():
        _build_socket(p, sid, root)
    pid = 0
    pools: list[Node] = []

    def number(n: Node) -> bool:
        nonlocal pid
        n.id = pid
        pid += 1
        pools.append(n)
        return False

    p.root_pool().depth_first(number)
    p.pools = pools
    p.nodes = {n.name: n for n in pools}
    p.depth = max(n.depth for n in pools)


def _supplies(p: "TopologyAwarePolicy", node: Node, cpus) -> None:
    allowed = cpus & p.allowed
    isolated = allowed & p.isolated
    reserved = allowed & p.reserved
    sharable = allowed - isolated - reserved
    node.noderes = Supply(node, isolated, reserved, sharable)
    node.freeres = node.noderes.clone()
    node.mem, node.pmem, node.hbm = _mem_supply(p, node, cpus)


def _build_socket(p: "TopologyAwarePolicy", sid: int, root: Node | None) -> None:
    sys = p.sys
    pkg = sys.package(sid)
    socket = Node(p, f"socket #{sid}", SOCKET, root, sid)
    if p.root is None:
        p.root = socket
    _supplies(p, socket, pkg.cpus)
    dies = pkg.die_ids()
    omit_dies = len(dies) <= 1
    if all(len(pkg.die_cluster_ids(d)) <= 1 for d in dies):
        omit_dies = True  # dies are the same as clusters
    if not omit_dies:
        for d in dies:
            die = Node(p, f"die #{sid}/{d}", DIE, socket, d)
            dcpus = pkg.die_cpuset(d)
            _supplies(p, die, dcpus)
            nids = pkg.die_node_ids(d)
            if len(nids) > 1:
                for nid in nids:
                    _build_numa(p, sid, nid, die)
            else:
                _build_l3(p, sid, dcpus, die)
        return
    nids = pkg.node_ids()
    if len(nids) > 1:
        for nid in nids:
            _build_numa(p, sid, nid, socket)
    else:
        _build_l3(p, sid, pkg.cpus, socket)


def _build_numa(p: "TopologyAwarePolicy", sid: int, nid: int, parent: Node) -> None:
    sysnode = p.sys.node(nid)
    if sysnode.memory == 0:
        return  # no memory attached: its CPUs fold into the parent
    node = Node(p, f"NUMA node #{nid}", NUMA, parent, nid)
    _supplies(p, node, sysnode.cpus)
    _build_l3(p, sid, sysnode.cpus, node)


def _build_l3(p: "TopologyAwarePolicy", sid: int, cpus, parent: Node) -> None:
    pkg = p.sys.package(sid)
    ids = [cid for cid in pkg.l3_cache_ids() if (cpus & pkg.l3_cache_cpuset(cid)) == pkg.l3_cache_cpuset(cid)]
    if len(ids) > 1:
        for cid in ids:
            l3cpus = pkg.l3_cache_cpuset(cid)
            node = Node(p, f"{parent.name}/L3 cache #{cid}", L3CACHE, parent, cid, l3cpus)
            _supplies(p, node, l3cpus)


def _mem_supply(p: "TopologyAwarePolicy", node: Node, cpus) -> tuple[set[int], set[int], set[int]]:
    sys = p.sys
    if p.root is node:
        mems = sys.filter_nodes(sys.node_ids(), NODE_HAS_MEMORY)
        return _split_by_type(p, mems)
    mems = {nid for nid in sys.node_ids() if sys.node(nid).cpus & cpus}
    dram, pmem, hbm = _split_by_type(p, mems)
    dm, pm, hm = _split_by_type(p, _closest_special_mem(p, mems))
    return dram | dm, pmem | pm, hbm | hm


def _split_by_type(p: "TopologyAwarePolicy", ids) -> tuple[set[int], set[int], set[int]]:
    dram: set[int] = set()
    pmem: set[int] = set()
    hbm: set[int] = set()
    for nid in ids:
        t = p.sys.node(nid).memory_type
        (pmem if t == PMEM else hbm if t == HBM else dram).add(nid)
    return dram, pmem, hbm


def _closest_special_mem(p: "TopologyAwarePolicy", mems: set[int]) -> set[int]:
    sys = p.sys
    out: set[int] = set()
    for kind in (NODE_OF_PMEM, NODE_OF_HBM):
        for nid in sorted(sys.filter_nodes(sys.node_ids(), kind, NODE_HAS_MEMORY, NODE_HAS_NO_LOCAL_CPUS)):
            closest = sys.closest_nodes(nid, NODE_OF_DRAM, NODE_HAS_LOCAL_CPUS)
            if closest and closest[0] & mems:
                out.add(nid)
    return out


# --- ranking -----------------------------------------------------------------------------------
def affinity_score(affinities: dict[int, int], node: Node) -> float:
    q = 0.75
    score = 0.0
    qq = q
    for n in node.ancestors():
        score += qq * affinities.get(n.id, 0)
        qq *= q

    def visit(n: Node) -> bool:
        nonlocal score
        score += math.pow(q, n.depth - node.depth) * affinities.get(n.id, 0)
        return False

    node.breadth_first(visit)
    return score


def combine_hint_scores(scores: dict[str, float]) -> tuple[float, float]:
    if not scores:
        return 0.0, 0.0
    combined, filtered = 1.0, 0.0
    for s in scores.values():
        combined *= s
        if s != 0.0:
            filtered = s if filtered == 0.0 else filtered * s
    return combined, filtered


def sort_pools_by_score(p: "TopologyAwarePolicy", req, aff: dict[int, int]) -> tuple[dict[int, Score], list[Node]]:
    scores: dict[int, Score] = {}

    def score(n: Node) -> bool:
        scores[n.id] = n.free_supply().get_score(req)
        return False

    p.root_pool().depth_first(score)
    pools = list(p.pools)
    aff_scores = {n.id: affinity_score(aff, n) for n in pools}
    sort_slice(pools, lambda n1, n2: compare_scores(p, req, scores, aff_scores, n1, n2))
    return scores, pools


def compare_scores(p: "TopologyAwarePolicy", request, scores: dict[int, Score], aff: dict[int, float],
                   node1: Node, node2: Node) -> bool:
    """``compareScores``: True when ``node1`` ranks before ``node2``."""
    depth1, depth2 = node1.depth, node2.depth
    id1, id2 = node1.id, node2.id
    s1, s2 = scores[id1], scores[id2]
    cpu_type = request.cpu_type
    iso1, res1, sh1 = s1.isolated, s1.reserved, s1.shared
    iso2, res2, sh2 = s2.isolated, s2.reserved, s2.shared
    a1, a2 = aff[id1], aff[id2]
    o1, o2 = s1.mem, s2.mem

    if cpu_type == CPU_NORMAL and ((iso2 < 0 <= iso1) or (sh2 < 0 <= sh1)):
        return True
    if cpu_type == CPU_NORMAL and ((iso1 < 0 <= iso2) or (sh1 < 0 <= sh2)):
        return False
    if cpu_type == CPU_RESERVED and res2 < 0 <= res1:
        return True
    if cpu_type == CPU_RESERVED and res1 < 0 <= res2:
        return False

    if a1 > a2:
        return True
    if a2 > a1:
        return False

    if s1.hints:
        hs1, nz1 = combine_hint_scores(s1.hints)
        hs2, nz2 = combine_hint_scores(s2.hints)
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

    if o1 is not None and o2 is None:
        return True
    if o1 is None and o2 is not None:
        return False
    if o1 is not None and o2 is not None:
        m1, m2 = o1.node_mask(), o2.node_mask()
        t1, t2 = p.mem_allocator.zone_type(m1), p.mem_allocator.zone_type(m2)
        mt = request.mem_type
        if t1 == mt and t2 != mt:
            return True
        if t1 != mt and t2 == mt:
            return False
        req, lim = request.mem_amount_to_allocate(), request.mem_lim
        if req != lim:
            c1, c2 = p.pool_zone_capacity(node1, mt), p.pool_zone_capacity(node2, mt)
            if (lim != 0 and c1 >= lim and c2 < lim) or (lim == 0 and c1 > c2):
                return True
            if (lim != 0 and c1 < lim and c2 >= lim) or (lim == 0 and c2 > c1):
                return False

    if request.container.qos_class == "Burstable":
        limit = request.limit
        b1, b2 = s1.allocatable_shared, s2.allocatable_shared   # Supply().AllocatableSharedCPU() when scored
        r1, r2 = b1 - limit, b2 - limit
        from .preferences import UNLIMITED_CPU

        if limit != UNLIMITED_CPU:
            if r1 >= 0 and r2 < 0:
                return True
            if r2 >= 0 and r1 < 0:
                return False
        else:
            level1, level2 = node1.topology_level(), node2.topology_level()
            target = p.unlimited_burstable_preference(request.container)
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
            v1, v2, vt = (TOPOLOGY_LEVEL_VALUES.get(level1, 0), TOPOLOGY_LEVEL_VALUES.get(level2, 0),
                          TOPOLOGY_LEVEL_VALUES.get(target, 0))
            if v1 > vt and v2 < vt:
                return True
            if v2 > vt and v1 < vt:
                return True  # sic: upstream returns true here as well
            return id1 < id2

    if o1 is not None and o2 is not None:
        n1, n2 = o1.node_mask().bit_count(), o2.node_mask().bit_count()
        if n1 < n2:
            return True
        if n2 < n1:
            return False

    mt = request.mem_type
    if mt not in (MEMORY_UNSPEC, MEMORY_PRESERVE):
        if node1.has_memory_type(mt) and not node2.has_memory_type(mt):
            return True
        if not node1.has_memory_type(mt) and node2.has_memory_type(mt):
            return False

    # CPU class hints need Priority Core Turbo (SST): none in the machine model

    from ...cpuallocator import PRIORITY_HIGH, PRIORITY_LOW, PRIORITY_NORMAL

    if request.prio in (PRIORITY_LOW, PRIORITY_HIGH):
        l1, l2 = s1.prio.get(request.prio, 0), s2.prio.get(request.prio, 0)
        if l1 != l2:
            if l1 >= 0 > l2:
                return True
            if l1 < 0 <= l2:
                return False

    if depth1 > depth2:
        return True
    if depth1 < depth2:
        return False

    if cpu_type == CPU_RESERVED:
        q1 = _go_div(res1, s1.colocated + 1)
        q2 = _go_div(res2, s2.colocated + 1)
        if q1 > q2:
            return True
        if q2 > q1:
            return False
    elif cpu_type == CPU_NORMAL:
        if request.isolate and (iso1 > 0 or iso2 > 0):
            if iso1 > iso2:
                return True
            if iso2 > iso1:
                return False
            return id1 < id2
        if request.prio == PRIORITY_NORMAL:
            np1, np2 = s1.prio.get(PRIORITY_NORMAL, 0), s2.prio.get(PRIORITY_NORMAL, 0)
            if np1 != np2:
                if np1 >= 0 > np2:
                    return True
                if np1 < 0 <= np2:
                    return False
        if request.full > 0 and (sh1 > 0 or sh2 > 0):
            if sh1 > sh2:
                return True
            if sh2 > sh1:
                return False
            return id1 < id2
        if s1.colocated < s2.colocated:
            return True
        if s2.colocated < s1.colocated:
            return False
        if sh1 > sh2:
            return True
        if sh2 > sh1:
            return False
    return id1 < id2


def _go_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q

