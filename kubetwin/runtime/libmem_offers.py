"""A fast path for libmem's offers: the overcommit check of many offers in one allocator state.

A policy scoring its pools asks the memory allocator for an offer per pool, all in the same
state. Each plain ``GetOffer`` assigns the request to its zone, looks for overcommitted zones
(every zone overlapping it: its capacity less the limits of every request in it and its
subzones) and reverts. When no zone would be overcommitted — the common case — the offer is
just "the request in its zone", and whether a zone would be is read off each zone's free
memory, summed once per state (:class:`FreeMemory`). The request is validated and its initial
zone found by the allocator's own code, an offer that would overcommit is made by the plain
``get_offer``, and what a plain offer leaves behind is left too (the zone it made, empty, until
the next commit; the request's zone reset). When the limits of every request the allocator holds,
plus the new one, are within every zone's capacity, no zone can be overcommitted at all:
:func:`all_fit` says so without the sums. ``tests/runtime/test_libmem_offers.py`` holds the
offers and the allocator states equal to the plain ones.

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``pkg/resmgr/lib/memory`` (:mod:`.libmem`).
"""

from __future__ import annotations

from .libmem import Allocator, Offer, Request, Zone

#: make offers here (False: every offer from the plain ``Allocator.get_offer``)
ENABLED = True


class FreeMemory:
    """The free memory of every zone of an allocator (capacity less the limits of the requests
    in the zone and its subzones), for offers made before the allocator changes."""

    __slots__ = ("a", "version", "used", "free", "limit", "negative", "short")

    def __init__(self, a: Allocator):
        self.a = a
        self._sum()

    def _sum(self) -> None:
        a = self.a
        self.version = a.version
        self.used: dict[int, int] = {}
        used = self.used
        for nodes, z in a.zones.items():
            u = 0
            for r in z.users.values():
                u += r.limit
            used[nodes] = u
        self.free: dict[int, int] = {}
        free = self.free
        for nodes, z in a.zones.items():
            f = z.capacity
            for sub, u in used.items():
                if nodes & sub == sub:
                    f -= u
            free[nodes] = f
        #: for :meth:`fits`, per request limit: the nodes of the zones already overcommitted,
        #: and the zones with less free memory than the limit
        self.limit = -1
        self.negative = 0
        self.short: list[int] = []

    def get_offer(self, req: Request) -> Offer:
        """``a.get_offer(req)``, the same offer and the same allocator afterwards."""
        a = self.a
        if a.version != self.version or len(a.zones) != len(self.free) or a.journal is not None:
            return a.get_offer(req)   # the allocator changed under us: the plain way
        asked = (req.types, req.zone)
        a._validate_request(req)
        a._find_initial_zone(req)
        a._ensure_normal_memory(req)
        zone = req.zone
        return self._offer(req, asked, a._zone_type(zone), a._zone_capacity(zone))

    def get_resolved_offer(self, req: Request, types: int, zone: int, zone_type: int, capacity: int) -> Offer:
        """:meth:`get_offer` for a request the allocator resolves (``_validate_request``,
        ``_find_initial_zone``, ``_ensure_normal_memory``) to ``types`` and ``zone``, as the
        caller knows from an earlier request of the same affinity and types on the same
        machine, with the zone's type and capacity (``_zone_type``, ``_zone_capacity``: the
        machine's)."""
        a = self.a
        if a.version != self.version or len(a.zones) != len(self.free) or a.journal is not None:
            return a.get_offer(req)
        asked = (req.types, req.zone)
        req.types, req.zone = types, zone
        return self._offer(req, asked, zone_type, capacity)

    def fits(self, zone: int, zone_type: int, capacity: int, limit: int) -> bool:
        """Whether :meth:`get_resolved_offer` of a request of ``limit`` resolved to ``zone`` would
        be "the request in its zone" (no zone overcommitted, the allocator unchanged since the
        sums); if so, what that offer leaves behind is left (the new zone, empty), and the offer
        itself is :func:`resolved_offer`, made when it is wanted. False: nothing is changed, and
        the offer is to be asked for the plain way."""
        a = self.a
        if a.version != self.version or len(a.zones) != len(self.free) or a.journal is not None:
            return False
        free = self.free
        if limit < 0 or not zone:   # never asked for (amounts and zones are not empty): the plain test
            for nodes, f in free.items():
                if nodes & zone and f - (limit if zone & nodes == zone else 0) < 0:
                    return False
        elif limit != self.limit:
            # a zone overlapping the request's fails if already overcommitted, or if it holds
            # the request's zone and has less free than the limit (zones added since hold more)
            self.limit = limit
            self.negative = negative = 0
            self.short = short = []
            for nodes, f in free.items():
                if f < 0:
                    negative |= nodes
                if f < limit:
                    short.append(nodes)
            self.negative = negative
        if limit >= 0 and zone:
            if zone & self.negative:
                return False
            for nodes in self.short:
                if zone & nodes == zone:
                    return False
        new = zone not in a.zones
        free_here = 0
        if new:
            free_here = capacity
            for sub, u in self.used.items():
                if zone & sub == sub:
                    free_here -= u
            if free_here - limit < 0:
                return False
        if new:
            a.zones[zone] = Zone(zone, zone_type, capacity)
            free[zone] = free_here
        return True

    def _offer(self, req: Request, asked: tuple[int, int], zone_type: int, capacity: int) -> Offer:
        a = self.a
        zone = req.zone
        free = self.free
        new = zone not in a.zones
        free_here = 0
        if new:   # its usage: the requests of the zones inside it (``_zone_usage``)
            free_here = capacity - sum(u for sub, u in self.used.items() if zone & sub == sub)
            if free_here - req.limit < 0:
                return self._plain(req, asked)
        for nodes, f in free.items():
            if nodes & zone and f - (req.limit if zone & nodes == zone else 0) < 0:
                return self._plain(req, asked)
        if new:   # as the plain offer's assignment makes it, and its revert leaves it
            a.zones[zone] = Zone(zone, zone_type, capacity)
            free[zone] = free_here
        req.zone = 0
        return Offer(a, req, {req.id: zone})

    def _plain(self, req: Request, asked: tuple[int, int]) -> Offer:
        """An offer that would overcommit a zone: the allocator's own (from the request as
        asked), which resolves the overcommit or fails."""
        req.types, req.zone = asked
        try:
            return self.a.get_offer(req)
        finally:
            self._sum()


def all_fit(a: Allocator, limit: int, floor: int) -> bool:
    """Whether :meth:`FreeMemory.fits` would say yes for a request of ``limit`` in every zone of
    capacity at least ``floor`` (the least of the zones asked about), without the sums: when
    the limits of every request the allocator holds, plus this one, are within the capacity of
    every zone it holds and of every zone asked about, no zone is or would be overcommitted (a
    zone's free memory is its capacity less the limits of some of those requests). False: ask
    :meth:`FreeMemory.fits` zone by zone (nothing is changed here)."""
    if limit < 0 or a.journal is not None:
        return False
    total = limit
    least = floor
    for z in a.zones.values():
        c = z.capacity
        if c < least:
            least = c
        for r in z.users.values():
            u = r.limit
            if u < 0:
                return False
            total += u
    return total <= least


def resolved_offer(a: Allocator, req: Request, types: int, zone: int) -> Offer:
    """The offer :meth:`FreeMemory.get_resolved_offer` makes for ``req`` when
    :meth:`FreeMemory.fits` said it fits (made later, the allocator unchanged meanwhile)."""
    req.types = types
    req.zone = 0
    return Offer(a, req, {req.id: zone})
