"""Supplies, requests, grants and scores: the topology-aware policy's CPU and memory accounting.

A pool's free :class:`Supply` holds its isolated, reserved and sharable CPUs and the milli-CPU
already granted from its shared and reserved sets. Exclusive CPUs are sliced off the sharable
set (never below what the shared containers of the pool and its descendants hold), taken from
every ancestor and descendant supply too, and given back the same way. A :class:`Score`
collects what a pool would have left after a request, which the pool comparison ranks.

Integer division is Go's (truncating toward zero) where upstream divides.

Upstream: containers/nri-plugins v0.14.0 ``cmd/plugins/topology-aware/policy/resources.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ....model.cpuset import EMPTY, CPUSet
from ...cpuallocator import PRIORITY_HIGH, PRIORITY_LOW, PRIORITY_NONE, PRIORITY_NORMAL, AllocationError
from ...libmem import Offer
from ...resmgr.cache import CachedContainer
from ...resmgr.policy import PolicyError
from ...sysfs import EFFICIENT_CORE, PERFORMANCE_CORE
from . import fastpick, fastrequest, fastslice
from .preferences import CPU_NORMAL, CPU_RESERVED, CPU_TYPE_NAMES, memory_type_str

if TYPE_CHECKING:
    from .node import Node


def go_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


class Supply:
    """A pool's CPU supply: capacity (``noderes``) or what is free (``freeres``)."""

    __slots__ = ("node", "isolated", "reserved", "sharable", "granted_reserved", "granted_shared")

    def __init__(self, node: "Node", isolated: CPUSet, reserved: CPUSet, sharable: CPUSet,
                 granted_reserved: int = 0, granted_shared: int = 0):
        self.node = node
        self.isolated = isolated
        self.reserved = reserved
        self.sharable = sharable
        self.granted_reserved = granted_reserved
        self.granted_shared = granted_shared

    def clone(self) -> "Supply":
        return Supply(self.node, self.isolated, self.reserved, self.sharable, self.granted_reserved,
                      self.granted_shared)

    # --- accounting ----------------------------------------------------------------------------
    def account_allocate_cpu(self, g: "Grant") -> None:
        if self.node is g.node:
            return
        self.isolated = self.isolated - g.exclusive
        self.sharable = self.sharable - g.exclusive

    def account_release_cpu(self, g: "Grant") -> None:
        if self.node is g.node:
            return
        ncs = self.node.get_supply()
        nodecpus = ncs.isolated | ncs.sharable
        grantcpus = g.exclusive & nodecpus
        self.isolated = self.isolated | (grantcpus & ncs.isolated)
        self.sharable = self.sharable | (grantcpus & ncs.sharable)

    def allocatable_reserved_cpu(self) -> int:
        if self.reserved.size() == 0:
            return -1
        reserved = 1000 * self.reserved.size() - self.node.granted_reserved_cpu()
        for n in self.node.ancestors():
            ps = n.free_supply()
            p = 1000 * ps.reserved.size() - n.granted_reserved_cpu()
            if p < reserved:
                reserved = p
        return reserved

    def allocatable_shared_cpu(self) -> int:
        from . import fastscore  # (it imports this module)

        if fastscore.ENABLED:
            return fastscore.allocatable_shared_cpu(self)
        shared = 1000 * self.sharable.size() - self.node.granted_shared_cpu()
        for n in self.node.ancestors():
            ps = n.free_supply()
            p = 1000 * ps.sharable.size() - n.granted_shared_cpu()
            if p < shared:
                shared = p
        policy = self.node.policy
        found = [False]

        def visit(n: "Node") -> bool:
            if policy.has_zero_cpu_req_container(n):
                found[0] = True
            return found[0]

        self.node.breadth_first(visit)
        if found[0]:
            shared -= 1
        return shared

    def sliceable_cpus(self) -> CPUSet:
        """The shared CPUs exclusive ones may be sliced off, leaving every pool of the subtree
        enough whole CPUs for its shared allocations."""
        out = CPUSet()
        errors: list[str] = []
        node = self.node

        def visit(n: "Node") -> bool:
            nonlocal out
            if n is node and not n.is_leaf():
                return False
            ns = n.free_supply()
            free = go_div(ns.allocatable_shared_cpu(), 1000)
            try:
                cset, _ = node.policy.cpu_allocator.allocate_cpus(ns.sharable, free, PRIORITY_NONE)
            except AllocationError as exc:
                errors.append(str(exc))
                return False
            out = out | cset
            return False

        node.depth_first(visit)
        if errors:
            raise PolicyError("\n".join(errors))
        return out

    # --- allocation ----------------------------------------------------------------------------
    def allocate(self, r: "Request", o: Offer | None) -> tuple["Grant", dict[str, int]]:
        if o is None:
            raise PolicyError("nil libmem offer")
        grant = self.allocate_cpu(r)
        if not (fastrequest.ENABLED and fastrequest.no_strict_preferences(r)):
            try:
                r.verify_strict_preferences(grant)
            except PolicyError:
                self.release_cpu(grant)
                raise
        try:
            zone, updates = o.commit()
        except Exception as exc:  # noqa: BLE001 - libmem errors
            self.release_cpu(grant)
            raise PolicyError(f"failed to commit memory offer: {exc}") from None
        grant.mem_size = r.mem_amount_to_allocate()
        grant.mem_type = r.mem_type
        grant.mem_zone = zone
        grant.cold_start = r.cold_start
        return grant, updates

    def allocate_cpu(self, r: "Request") -> "Grant":
        if fastslice.ENABLED:
            fast: Grant | None = fastslice.allocate_shared(self, r)
            if fast is not None:
                return fast
        full, fraction, cpu_type = r.full, r.fraction, r.cpu_type
        if cpu_type == CPU_RESERVED and full > 0:
            fraction += full * 1000
            full = 0
        if cpu_type == CPU_RESERVED and fraction > 0 and self.allocatable_reserved_cpu() < fraction:
            cpu_type = CPU_NORMAL  # "possible misconfiguration of reserved resources": fall back
        exclusive = self.pick_exclusive_cpus(r, full, dry_run=False)
        grant = Grant(self.node, r.container, cpu_type, r.cpu_class, exclusive)
        grant.account_allocate_cpu()
        if fraction > 0:
            try:
                self.pick_shared_fraction(fraction, cpu_type)
            except PolicyError:
                self.release_cpu(grant)
                raise
            grant.cpu_portion = fraction
        return grant

    def cpu_offer(self, r: "Request") -> CPUSet:
        return self.pick_exclusive_cpus(r, r.full, dry_run=True)

    def pick_exclusive_cpus(self, r: "Request", cnt: int, dry_run: bool) -> CPUSet:
        scored = fastpick.scored(self, r) if fastpick.ENABLED else None
        if fastslice.ENABLED and fastslice.takes_nothing(self, r, cnt, scored):
            return EMPTY
        if scored is not None:
            picked = fastpick.pick(self, r, cnt, scored)
            if picked is not None:
                if not dry_run:
                    self.sharable = self.sharable - picked
                return picked
        policy = self.node.policy
        if r.isolate and self.isolated.size() >= cnt:
            frm = self.isolated
            try:
                pick, rest = policy.take_cpus(frm, cnt, r.prio, r)
            except AllocationError as exc:
                raise PolicyError(f"internal error: {self.node.name}: can't take {cnt} exclusive isolated CPUs "
                                  f"from {frm}: {exc}") from None
            if not dry_run:
                self.isolated = rest
            return pick
        if self.allocatable_shared_cpu() >= 1000 * cnt:
            try:
                sliceable = self.sliceable_cpus()
            except PolicyError as exc:
                raise PolicyError(f"internal error: {self.node.name}: can't take {cnt} exclusive CPUs from shared "
                                  f"{self.sharable}: {exc}") from None
            try:
                pick, _ = policy.take_cpus(sliceable, cnt, r.prio, r)
            except AllocationError as exc:
                raise PolicyError(f"internal error: {self.node.name}: can't take {cnt} exclusive CPUs from "
                                  f"{sliceable}: {exc}") from None
            if not dry_run:
                self.sharable = self.sharable - pick
            return pick
        raise PolicyError(f"internal error: {self.node.name}: can't slice {cnt} exclusive CPUs from {self.sharable}, "
                          f"{self.allocatable_shared_cpu()}m available")

    def pick_shared_fraction(self, fraction: int, cpu_type: int) -> None:
        if fraction <= 0:
            return
        if cpu_type == CPU_NORMAL:
            if self.allocatable_shared_cpu() < fraction:
                raise PolicyError(f"internal error: {self.node.name}: not enough {fraction}m sharable CPU for "
                                  f"{fraction}m, {self.allocatable_shared_cpu()}m available")
            self.granted_shared += fraction
        elif cpu_type == CPU_RESERVED:
            if self.allocatable_reserved_cpu() < fraction:
                raise PolicyError(f"internal error: {self.node.name}: not enough reserved CPU: {fraction}m "
                                  f"requested, {self.allocatable_reserved_cpu()}m available")
            self.granted_reserved += fraction

    def release_cpu(self, g: "Grant") -> None:
        isolated = g.exclusive & self.node.get_supply().isolated
        sharable = g.exclusive - isolated
        self.isolated = self.isolated | isolated
        self.sharable = self.sharable | sharable
        self.granted_reserved -= g.reserved_portion()
        self.granted_shared -= g.shared_portion()
        g.account_release_cpu()

    # --- scoring -------------------------------------------------------------------------------
    def get_score(self, req: "Request") -> "Score":
        score = Score(self, req)
        full, part = req.full, req.fraction
        if full == 0 and part == 0:
            part = 1
        score.reserved = self.allocatable_reserved_cpu()
        score.shared = score.allocatable_shared = self.allocatable_shared_cpu()
        policy = self.node.policy
        if req.cpu_type == CPU_RESERVED:
            score.reserved -= part
        else:
            if req.isolate:
                score.isolated = self.isolated.size() - full
            if not req.isolate or score.isolated < 0:
                score.shared -= 1000 * full
            score.shared -= part
            prios = policy.cpu_allocator.cpu_priorities()
            sys = policy.sys
            # low priority: the E-cores, else the low-priority CPUs; high: the P-cores (every CPU
            # of a non-hybrid machine), else the high-priority CPUs; normal: normal-priority CPUs
            low = sys.core_kind_cpus(EFFICIENT_CORE) or prios[PRIORITY_LOW]
            high = sys.core_kind_cpus(PERFORMANCE_CORE) or prios[PRIORITY_HIGH]
            for prio, cpus in ((PRIORITY_LOW, low), (PRIORITY_HIGH, high), (PRIORITY_NORMAL, prios[PRIORITY_NORMAL])):
                score.prio[prio] = (cpus & self.sharable).size() * 1000 - (1000 * full + part)
        for g in policy.allocations.values():
            if req.cpu_type == g.cpu_type and g.node is self.node:
                score.colocated += 1
        for provider, hint in req.container.topology_hints.items():
            score.hints[provider] = self.node.hint_score(hint)
        node = policy.root_pool() if req.mem_type == 8 else self.node  # memoryPreserve: offer from the root
        try:
            score.mem = policy.get_mem_offer(node, req)
        except PolicyError as exc:
            score.mem = None
            score.mem_error = str(exc)
        return score

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.isolated:
            out["isolated"] = str(self.isolated)
        if self.reserved:
            out["reserved"] = str(self.reserved)
        out["sharable"] = str(self.sharable)
        if self.granted_shared:
            out["grantedShared"] = f"{self.granted_shared}m"
        if self.granted_reserved:
            out["grantedReserved"] = f"{self.granted_reserved}m"
        return out


@dataclass(eq=False, slots=True)
class Request:
    """What a container asks for (``request``)."""

    container: CachedContainer
    full: int
    fraction: int
    limit: int
    isolate: bool
    cpu_type: int
    cpu_class: str
    prio: int
    mem_req: int
    mem_lim: int
    mem_type: int
    cold_start: float = 0.0
    pick_by_hints: bool = False

    def mem_amount_to_allocate(self) -> int:
        return self.mem_req if self.mem_req != 0 else self.mem_lim

    def verify_strict_preferences(self, g: "Grant") -> None:
        c = self.container
        if c.strict_topology_hints() and c.topology_hints:
            raise PolicyError("strict topology hints are not modelled")
        if self.full < 1 or not self.isolate:
            return
        from .preferences import strict_isolated_cpus_preference

        if not strict_isolated_cpus_preference(c.pod, c):
            return
        if g.isolated_cpus().size() < self.full:
            raise PolicyError(f'granted isolated CPUs "{g.isolated_cpus()}" less than requested {self.full}')

    def describe(self) -> str:
        prio = {PRIORITY_HIGH: "high", PRIORITY_NORMAL: "normal", PRIORITY_LOW: "low"}.get(self.prio, "none")
        iso = "isolated " if self.isolate else ""
        if self.full == 0 and self.fraction == 0:
            cpu = "none"
        elif self.full > 0 and self.fraction > 0:
            cpu = f"{iso}exclusive: {self.full}, shared: {self.fraction}"
        elif self.full > 0:
            cpu = f"{iso}exclusive: {self.full}"
        else:
            cpu = f"shared {self.fraction}"
        return f"{prio} {CPU_TYPE_NAMES[self.cpu_type]} CPU request: {cpu}"


@dataclass(eq=False)
class Grant:
    """CPU and memory granted to a container from a pool (``grant``)."""

    node: "Node"
    container: CachedContainer
    cpu_type: int
    cpu_class: str
    exclusive: CPUSet
    cpu_portion: int = 0
    mem_type: int = 0
    mem_size: int = 0
    mem_zone: int = 0
    cold_start: float = 0.0

    def reserved_cpus(self) -> CPUSet:
        return self.node.get_supply().reserved

    def reserved_portion(self) -> int:
        return self.cpu_portion if self.cpu_type == CPU_RESERVED else 0

    def shared_cpus(self) -> CPUSet:
        return self.node.free_supply().sharable

    def shared_portion(self) -> int:
        return self.cpu_portion if self.cpu_type == CPU_NORMAL else 0

    def isolated_cpus(self) -> CPUSet:
        return self.node.get_supply().isolated & self.exclusive

    def account_allocate_cpu(self) -> None:
        if fastslice.ENABLED and not self.exclusive:
            return   # no pool changes
        if fastpick.ENABLED and fastpick.ACCOUNTED:
            fastpick.account_allocate(self)
            return
        def allocate(n: Node) -> bool:
            n.free_supply().account_allocate_cpu(self)
            return False

        self.node.depth_first(allocate)
        for n in self.node.ancestors():
            n.free_supply().account_allocate_cpu(self)

    def account_release_cpu(self) -> None:
        if fastslice.ENABLED and not self.exclusive:
            return   # no pool changes
        def release(n: Node) -> bool:
            n.free_supply().account_release_cpu(self)
            return False

        self.node.depth_first(release)
        for n in self.node.ancestors():
            n.free_supply().account_release_cpu(self)

    def describe(self) -> dict[str, Any]:
        from ...libmem import memset_string

        out: dict[str, Any] = {"pool": self.node.name, "cpuType": CPU_TYPE_NAMES[self.cpu_type]}
        iso = self.isolated_cpus()
        if iso:
            out["isolated"] = str(iso)
        if self.exclusive - iso:
            out["exclusive"] = str(self.exclusive - iso)
        if self.cpu_type == CPU_RESERVED:
            out["reserved"] = str(self.node.free_supply().reserved)
            out["reservedPortion"] = f"{self.reserved_portion()}m"
        elif self.shared_portion() > 0 or self.exclusive.is_empty():
            out["shared"] = str(self.node.free_supply().sharable)
            out["sharedPortion"] = f"{self.shared_portion()}m"
        if self.cpu_class:
            out["cpuClass"] = self.cpu_class
        out["memory"] = {"zone": memset_string(self.mem_zone), "size": self.mem_size,
                         "types": memory_type_str(self.mem_type)}
        if self.cold_start:
            out["coldStart"] = f"{self.cold_start:g}s"
        return out


@dataclass(eq=False, slots=True)
class Score:
    """How a pool's supply fits a request (``score``)."""

    supply: Supply
    req: Request
    mem: Offer | None = None
    mem_error: str = ""
    cpu: CPUSet = EMPTY
    isolated: int = 0
    reserved: int = 0
    shared: int = 0
    prio: dict[int, int] = field(default_factory=dict)
    colocated: int = 0
    hints: dict[str, float] = field(default_factory=dict)
    #: the supply's ``allocatable_shared_cpu()`` when scored (the burstable comparison reads it
    #: again: nothing changes while the pools are sorted)
    allocatable_shared: int = 0

    def describe(self) -> dict[str, Any]:
        from ...libmem import memset_string

        out: dict[str, Any] = {"isolated": self.isolated, "reserved": self.reserved, "shared": self.shared,
                               "colocated": self.colocated}
        if self.hints:
            out["hints"] = dict(self.hints)
        out["memoryOffer"] = memset_string(self.mem.node_mask()) if self.mem is not None else None
        if self.mem_error:
            out["memoryOfferError"] = self.mem_error
        return out
