"""nri-plugins' memory allocator (``pkg/resmgr/lib/memory``): NUMA zones, offers, overcommit.

Memory is accounted per *zone* (a set of NUMA nodes a container may use, its
``cpuset.mems``). A request starts from an affinity (the nodes close to the pool its CPUs
come from) and a memory-type preference (DRAM, PMEM, HBM); its zone is the affinity expanded
to the closest nodes of each missing type, then — if the nodes of a zone are asked for more
than they hold — requests are moved out to wider zones, lowest priority and smallest first
(``defaultHandleOvercommit``). A policy asks for an :class:`Offer` per candidate pool and
commits the one it picks; committing may move other containers' zones (returned as updates
the policy applies to their ``cpuset.mems``).

Creation time stamps order requests of equal priority and size; a counter stands in for
``time.Now()``, giving the same order.

Upstream: containers/nri-plugins v0.14.0 ``pkg/resmgr/lib/memory/{allocator,zones,nodes,
request,types,mask-cache}.go``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ..model.cpuset import CPUSet
from .gosort import sort_func
from .sysfs import DRAM, HBM, PMEM, System

# Type / TypeMask
TYPE_DRAM, TYPE_PMEM, TYPE_HBM = 0, 1, 2
TYPE_MASK_DRAM, TYPE_MASK_PMEM, TYPE_MASK_HBM = 1, 2, 4
TYPE_MASK_ALL = 7
_TYPE_NAMES = {TYPE_DRAM: "DRAM", TYPE_PMEM: "PMEM", TYPE_HBM: "HBM"}
_SYS_TYPES = {DRAM: TYPE_DRAM, PMEM: TYPE_PMEM, HBM: TYPE_HBM}

# Priority
PRIO_BESTEFFORT = 0
PRIO_BURSTABLE = 1 << 10
PRIO_GUARANTEED = 1 << 14
PRIO_PRESERVED = (1 << 15) - 2
PRIO_RESERVATION = (1 << 15) - 1

MAX_NODE_ID = 63


class MemoryError_(Exception):
    """An allocation the allocator refuses (``ErrNoMem``, invalid nodes or types)."""


def type_mask_slice(m: int) -> list[int]:
    return [t for t in (TYPE_DRAM, TYPE_PMEM, TYPE_HBM) if m & (1 << t)]


def type_mask_str(m: int) -> str:
    return ",".join(_TYPE_NAMES[t] for t in type_mask_slice(m))


def parse_type_mask(text: str) -> int:
    """``ParseTypeMask``: ``"DRAM,HBM"`` (case-insensitive)."""
    out = 0
    for part in text.split(","):
        name = part.strip().upper()
        if name not in ("DRAM", "PMEM", "HBM"):
            raise ValueError(f'invalid memory type "{text}"')
        out |= 1 << {"DRAM": TYPE_DRAM, "PMEM": TYPE_PMEM, "HBM": TYPE_HBM}[name]
    return out


def mask_of(ids) -> int:
    m = 0
    for i in ids:
        m |= 1 << i
    return m


def mask_ids(m: int) -> list[int]:
    out = []
    b = 0
    while m:
        if m & 1:
            out.append(b)
        m >>= 1
        b += 1
    return out


def memset_string(m: int) -> str:
    """``NodeMask.MemsetString``: ``0-2,5``."""
    ids = mask_ids(m)
    parts: list[str] = []
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(parts)


def parse_node_mask(text: str) -> int:
    """``ParseNodeMask``: the Linux list format of NUMA node ids."""
    m = 0
    if text == "":
        return 0
    for part in text.split(","):
        lo, dash, hi = part.partition("-")
        a = int(lo)
        b = int(hi) if dash else a
        if b < a or b > MAX_NODE_ID or a < 0:
            raise ValueError(f'invalid node mask "{text}"')
        for i in range(a, b + 1):
            m |= 1 << i
    return m


@dataclass(slots=True)
class MemNode:
    id: int
    type: int
    capacity: int
    normal: bool
    cpus: CPUSet
    vector: tuple[int, ...]
    sorted_dist: list[int] = field(default_factory=list)
    nodes_at: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for i, d in enumerate(self.vector):
            if d not in self.nodes_at:
                self.sorted_dist.append(d)
                self.nodes_at[d] = 1 << i
            else:
                self.nodes_at[d] |= 1 << i
        self.sorted_dist.sort()
        if self.nodes_at[self.sorted_dist[0]] != 1 << self.id:
            raise MemoryError_(f"invalid node: shortest distance not to self #{self.id}")

    @property
    def mask(self) -> int:
        return 1 << self.id

    @property
    def has_memory(self) -> bool:
        return self.capacity > 0


_created = itertools.count(1)


@dataclass(slots=True, eq=False)
class Request:
    """A memory allocation request, typically a container's."""

    id: str
    name: str
    limit: int
    affinity: int
    types: int = 0
    strict: bool = False
    priority: int = 0
    zone: int = 0
    created: int = 0

    def __repr__(self) -> str:
        return f"Request({self.name or self.id}, {self.limit}, zone={memset_string(self.zone)})"


def container_request(rid: str, name: str, qos: str, limit: int, affinity: int, types: int) -> Request:
    """``ContainerWithTypes``: priority from the QoS class, preferred (not strict) types."""
    prio = PRIO_BURSTABLE if limit > 0 else 0
    q = qos.lower()
    if q == "besteffort":
        prio = PRIO_BESTEFFORT
    elif q == "burstable":
        prio = PRIO_BURSTABLE
    elif q == "guaranteed":
        prio = PRIO_GUARANTEED
    else:
        prio = 0
    return Request(rid, name, limit, affinity, types=types, priority=prio, created=next(_created))


@dataclass(slots=True, eq=False)
class Zone:
    nodes: int
    types: int
    capacity: int
    users: dict[str, Request] = field(default_factory=dict)


class _Journal:
    __slots__ = ("updates", "reverts")

    def __init__(self) -> None:
        self.updates: dict[str, int] = {}
        self.reverts: dict[str, int] = {}

    def assign(self, zone: int, rid: str) -> None:
        self.updates[rid] = zone
        self.reverts.setdefault(rid, 0)

    def delete(self, zone: int, rid: str) -> None:
        self.reverts.setdefault(rid, zone)


class Offer:
    """A possible allocation for a request; valid until the allocator changes."""

    __slots__ = ("a", "version", "req", "updates")

    def __init__(self, a: "Allocator", req: Request, updates: dict[str, int]):
        self.a = a
        self.version = a.version
        self.req = req
        self.updates = updates

    def is_valid(self) -> bool:
        return self.version == self.a.version

    def node_mask(self) -> int:
        return self.updates.get(self.req.id, 0)

    def other_updates(self) -> dict[str, int]:
        return {k: v for k, v in self.updates.items() if k != self.req.id}

    def commit(self) -> tuple[int, dict[str, int]]:
        """Turn the offer into an allocation: (the request's zone, other requests' new zones)."""
        a = self.a
        if not self.is_valid():
            raise MemoryError_(f"offer has expired: version {self.version} != {a.version}")
        for rid, zone in self.updates.items():
            if rid == self.req.id:
                a._zone_assign(zone, self.req)
                a.requests[rid] = self.req
            else:
                req = a.requests.get(rid)
                if req is not None:
                    a._zone_move(zone, req)
                    req.zone = zone
        a.version += 1
        a._cleanup_unused_zones()
        return self.node_mask(), self.other_updates()


class Allocator:
    """``libmem.Allocator`` with the machine's NUMA nodes (``WithSystemNodes``)."""

    def __init__(self, sys: System):
        self.nodes: dict[int, MemNode] = {}
        for nid in sys.node_ids():
            n = sys.node(nid)
            self.nodes[nid] = MemNode(nid, _SYS_TYPES[n.memory_type], n.memory, n.normal_memory, n.cpus,
                                      n.distance)
        self.requests: dict[str, Request] = {}
        self.zones: dict[int, Zone] = {}
        self.users: dict[str, int] = {}
        self.version = 0
        #: overcommits handled (for :mod:`kubetwin.sim.runtime_canon`: the one step that reads creation order)
        self.overcommits = 0
        self.journal: _Journal | None = None
        # mask cache
        self.types = 0
        self.all = self.normal = self.movable = self.has_memory = self.no_memory = 0
        self.has_cpu = self.no_cpu = 0
        self.by_types: dict[int, int] = {}
        for mem_node in self.nodes.values():
            self._add_node(mem_node)

    def _add_node(self, n: MemNode) -> None:
        tm, nm = 1 << n.type, n.mask
        self.all |= nm
        if n.has_memory:
            self.types |= tm
            self.has_memory |= nm
            if n.normal:
                self.normal |= nm
            else:
                self.movable |= nm
            self.by_types[tm] = self.by_types.get(tm, 0) | nm
            for combo in (TYPE_MASK_DRAM | TYPE_MASK_PMEM, TYPE_MASK_DRAM | TYPE_MASK_HBM,
                          TYPE_MASK_PMEM | TYPE_MASK_HBM, TYPE_MASK_ALL):
                for t in type_mask_slice(combo):
                    self.by_types[combo] = self.by_types.get(combo, 0) | self.by_types.get(1 << t, 0)
        else:
            self.no_memory |= nm
        if not n.cpus.is_empty():
            self.has_cpu |= nm
        else:
            self.no_cpu |= nm

    def nodes_by_types(self, types: int) -> int:
        return self.by_types.get(types, 0)

    # --- public API ----------------------------------------------------------------------------
    def get_offer(self, req: Request) -> Offer:
        self._allocate(req)
        updates = self._revert_journal(req)
        return Offer(self, req, updates or {})

    def release(self, rid: str) -> None:
        req = self.requests.get(rid)
        if req is None:
            raise MemoryError_(f"unknown request: no request with ID {rid}")
        zone = self.users.get(rid)
        if zone is None:
            raise MemoryError_(f"no zone: no assigned zone for {req}")
        self._zone_remove(zone, rid)
        del self.requests[rid]
        self.version += 1
        self._cleanup_unused_zones()

    def assigned_zone(self, rid: str) -> int | None:
        return self.users.get(rid)

    def realloc(self, rid: str, nodes: int, types: int) -> tuple[int, dict[str, int]]:
        """``Realloc``: widen an allocation by nodes and/or types (cold start's DRAM)."""
        req = self.requests.get(rid)
        if req is None:
            raise MemoryError_(f"unknown request: no request with ID {rid}")
        if nodes == 0 and types == 0:
            return req.zone, {}
        if req.affinity == nodes and req.types == types:
            return req.zone, {}
        if (req.zone & nodes) == nodes and (self.zone_type(req.zone) & types) == types:
            return req.zone, {}
        if types == 0:
            types = self.zone_type(nodes)
        else:
            nodes &= self.by_types.get(types, 0)
        self.journal = _Journal()
        try:
            new_nodes, new_types = self._expand(req.zone | nodes, types)
            if new_nodes == 0:
                raise MemoryError_(f"failed to reallocate, can't find new {type_mask_str(types)} nodes")
            self._zone_move(req.zone | nodes | new_nodes, req)
            try:
                self._handle_overcommit(req.zone | nodes | new_nodes)
            except MemoryError_:
                req.zone = self.users[req.id]
                raise
            req.zone |= nodes | new_nodes
            req.types |= new_types
            return req.zone, self._commit_journal(req)
        except MemoryError_:
            self._revert_journal(None)
            raise

    def zone_type(self, zone: int) -> int:
        return self._zone_type(zone & self.all)

    def zone_capacity(self, zone: int) -> int:
        return self._zone_capacity(zone & self.has_memory)

    def zone_free(self, zone: int) -> int:
        z = zone & self.has_memory
        return self._zone_capacity(z) - self._zone_usage(z)

    def zone_usage(self, zone: int) -> int:
        return self._zone_usage(zone & self.has_memory)

    # --- allocation ----------------------------------------------------------------------------
    def _allocate(self, req: Request) -> None:
        self._validate_request(req)
        self._find_initial_zone(req)
        self._ensure_normal_memory(req)
        if self.journal is not None:
            raise MemoryError_("internal error: allocator journal already active")
        self.journal = _Journal()
        try:
            self.requests[req.id] = req
            self._zone_assign(req.zone, req)
            self._handle_overcommit(req.zone)
        except MemoryError_:
            self._revert_journal(req)
            raise

    def _validate_request(self, req: Request) -> None:
        if req.id in self.requests:
            raise MemoryError_("request already exists")
        if req.affinity & self.all != req.affinity:
            raise MemoryError_(f"invalid node: unknown nodes requested ({memset_string(req.affinity & ~self.all)})")
        if (req.types & self.types) != req.types and req.strict:
            raise MemoryError_(f"invalid type: unavailable types requested ({type_mask_str(req.types & ~self.types)})")
        if req.affinity == 0:
            raise MemoryError_("invalid node mask: request without affinity")
        req.types &= self.types
        if req.types == 0:
            req.types = self._zone_type(req.affinity)

    def _find_initial_zone(self, req: Request) -> None:
        zone = req.affinity & self.all
        miss = req.types & ~self._zone_type(zone)
        if miss:
            nodes, _ = self._expand(zone, miss)
            zone |= nodes
        if req.strict:
            zone &= self.by_types.get(req.types, 0)
            miss = req.types & ~self._zone_type(zone)
            if miss:
                raise MemoryError_(f"no initial nodes of type {type_mask_str(miss)}")
        else:
            prefer = zone & self.by_types.get(req.types, 0)
            if prefer:
                zone = prefer
        req.zone = zone

    def _ensure_normal_memory(self, req: Request) -> None:
        if req.zone & self.normal:
            return
        normal = self._zone_type(self.normal)
        zone = req.zone
        types = req.types & normal
        if types == 0:
            if req.strict:
                raise MemoryError_(f"no normal memory (of {type_mask_str(req.types)} types)")
            for t in (TYPE_MASK_DRAM, TYPE_MASK_PMEM, TYPE_MASK_HBM):
                if normal & t:
                    types = t
                    break
            if types == 0:
                raise MemoryError_("no normal memory (of any type)")
        while True:
            n, _ = self._expand(zone, types)
            if n == 0:
                break
            zone |= n
            if zone & self.normal:
                req.zone = zone
                req.types |= types
                return
        raise MemoryError_(f"no normal memory (of any type {type_mask_str(types)})")

    def _expand(self, zone: int, types: int) -> tuple[int, int]:
        new_nodes = new_types = 0
        for t in type_mask_slice(types):
            n = self._new_close_nodes_of_type(zone, t)
            if n:
                new_nodes |= n
                new_types |= 1 << t
        return new_nodes, new_types

    def _new_close_nodes_of_type(self, zone: int, t: int) -> int:
        close = 0
        best = None
        for nid in mask_ids(zone & self.all):
            node = self.nodes[nid]
            for d in node.sorted_dist[1:]:
                nodes = node.nodes_at[d] & self.by_types.get(1 << t, 0) & ~zone
                if nodes == 0:
                    continue
                if best is None or d <= best:
                    best = d
                    close |= nodes
                break
        return close

    # --- overcommit ----------------------------------------------------------------------------
    def _handle_overcommit(self, nodes: int) -> None:
        oc, spill = self._check_overcommit(nodes)
        if not oc:
            return
        self.overcommits += 1
        allowed_prios = (PRIO_BURSTABLE, PRIO_GUARANTEED, PRIO_PRESERVED)
        expand_types = (0, TYPE_MASK_DRAM, TYPE_MASK_PMEM, TYPE_MASK_HBM)
        while True:
            moved = 0
            for prio in allowed_prios:
                types = 0
                for extra in expand_types:
                    if extra:
                        extra &= self.types
                        if extra == 0:
                            continue
                        types |= extra
                    for z in oc:
                        amount = spill.get(z)
                        if amount is None:
                            continue
                        moved += self._zone_shrink_usage(z, amount, prio, types)
                    oc, spill = self._check_overcommit(nodes)
                    if not oc:
                        return
            if moved == 0:
                break
        total = sum(spill.values())
        zones = ",".join(f"nodes{{{memset_string(z)}}}" for z in spill)
        raise MemoryError_(f"no memory: failed to resolve overcommit, zones {zones} overcommit by "
                           f"{human_readable_size(total)}")

    def _check_overcommit(self, nodes: int) -> tuple[list[int], dict[int, int]]:
        zones: list[int] = []
        spill: dict[int, int] = {}
        for z in self.zones:
            if nodes == 0 or z & nodes:
                free = self._zone_free(z)
                if free < 0:
                    zones.append(z)
                    spill[z] = -free
        sort_func(zones, self._zones_by_users_subzones_first)
        return zones, spill

    def _zones_by_users_subzones_first(self, z1: int, z2: int) -> int:
        a, b = self.zones.get(z1), self.zones.get(z2)
        if a is not None and b is not None and len(b.users) != len(a.users):
            return len(b.users) - len(a.users)
        if z1 & z2 == z1:
            return -1
        if z1 & z2 == z2:
            return 1
        if z2.bit_count() != z1.bit_count():
            return z2.bit_count() - z1.bit_count()
        return z2 - z1

    def _zone_shrink_usage(self, zone: int, amount: int, limit: int, extra: int) -> int:
        z = self.zones.get(zone)
        if z is None or not z.users:
            return 0
        nodes, types = self._expand(zone, z.types | extra)
        if nodes == 0:
            return 0
        candidates = [r for r in z.users.values() if r.priority <= limit]

        def order(r1: Request, r2: Request) -> int:
            if r1.priority != r2.priority:
                return r1.priority - r2.priority
            if r1.limit != r2.limit:
                return r1.limit - r2.limit
            return r2.created - r1.created

        sort_func(candidates, order)
        moved = 0
        for req in candidates:
            if not req.strict or req.types == z.types | types:
                self._zone_move(zone | nodes, req)
                moved += req.limit
                if moved >= amount:
                    break
        return moved

    # --- zones ---------------------------------------------------------------------------------
    def _zone_type(self, zone: int) -> int:
        z = self.zones.get(zone)
        if z is not None:
            return z.types
        out = 0
        for nid in mask_ids(zone & self.all):
            out |= 1 << self.nodes[nid].type
        return out

    def _zone_capacity(self, zone: int) -> int:
        z = self.zones.get(zone)
        if z is not None:
            return z.capacity
        return sum(self.nodes[nid].capacity for nid in mask_ids(zone & self.has_memory))

    def _zone_usage(self, zone: int) -> int:
        usage = 0
        for nodes, z in self.zones.items():
            if zone & nodes == nodes:
                for r in z.users.values():
                    usage += r.limit
        return usage

    def _zone_free(self, zone: int) -> int:
        return self._zone_capacity(zone) - self._zone_usage(zone)

    def _zone_assign(self, zone: int, req: Request) -> None:
        z = self.zones.get(zone)
        if z is None:
            z = self.zones[zone] = Zone(zone, self._zone_type(zone), self._zone_capacity(zone))
        z.users[req.id] = req
        self.users[req.id] = zone
        req.zone = zone
        if self.journal is not None:
            self.journal.assign(zone, req.id)

    def _zone_remove(self, zone: int, rid: str) -> None:
        z = self.zones.get(zone)
        if z is None:
            return
        req = z.users.pop(rid, None)
        if req is None:
            return
        self.users.pop(rid, None)
        if self.journal is not None:
            self.journal.delete(zone, rid)
        req.zone = 0

    def _zone_move(self, zone: int, req: Request) -> None:
        cur = self.users.get(req.id)
        if cur is not None:
            if cur == zone:
                return
            self._zone_remove(cur, req.id)
        self._zone_assign(zone, req)

    def _cleanup_unused_zones(self) -> None:
        for z in [z for z, zone in self.zones.items() if not zone.users]:
            del self.zones[z]

    # --- journal -------------------------------------------------------------------------------
    def _commit_journal(self, req: Request) -> dict[str, int]:
        j, self.journal = self.journal, None
        assert j is not None
        j.updates.pop(req.id, None)
        return j.updates

    def _revert_journal(self, req: Request | None) -> dict[str, int] | None:
        if self.journal is None:
            return None
        j, self.journal = self.journal, None
        for rid, zone in j.reverts.items():
            r = self.requests.get(rid)
            if r is None:
                if req is None or req.id != rid:
                    raise MemoryError_(f"internal error: revert failed, can't find request {rid}")
                r = req
            cur = self.users.get(rid)
            if cur is None:
                raise MemoryError_(f"internal error: revert failed, no zone for request #{rid}")
            self._zone_remove(cur, rid)
            if zone != 0:
                self._zone_assign(zone, r)
        if req is not None:
            self.requests.pop(req.id, None)
        return j.updates

    # --- state (for the state folder and reports) ----------------------------------------------
    def allocations(self) -> dict[str, dict[str, object]]:
        return {rid: {"zone": memset_string(r.zone), "size": r.limit, "types": type_mask_str(r.types)}
                for rid, r in sorted(self.requests.items())}


def human_readable_size(size: int) -> str:
    """``HumanReadableSize``: ``1.5G``, ``100M``, bytes below 1k."""
    if size >= 1024:
        d = 1024
        for unit in ("k", "M", "G", "T"):
            val = size // d
            if 1 <= val < 1024:
                if size % d:
                    return f"{size / d:.3f}".rstrip("0") + unit
                return f"{val}{unit}"
            d <<= 10
    return str(size)
