"""The topology-aware policy backend: reserve, build pools, place and release containers.

``setup`` resolves the reserved and available CPUs (``reservedResources`` as a cpuset or a
quantity rounded up to whole CPUs picked by the CPU allocator away from isolated CPUs;
``availableResources`` as a cpuset or ``exclude-cpuset:``), builds the pool tree and registers
the implicit pod and namespace colocation affinities. ``allocate_resources`` picks a pool
(reserved and ``cpu.preserve`` requests go to the root; the others to the best-ranked pool),
allocates CPUs and a memory zone from it, pins the container (``cpuset.cpus`` with
hyperthreads hidden on request, ``cpuset.mems``, CPU shares, scheduling class) and re-pins the
shared containers whose pool shrank; ``release_resources`` gives everything back and re-pins
the shared containers whose pool grew.

Upstream: containers/nri-plugins v0.14.0 ``cmd/plugins/topology-aware/policy/
{topology-aware-policy,pools,affinity,libmem,cpu-class,coldstart}.go``.
"""

from __future__ import annotations

from typing import Any

from ....diagnostics import warn
from ....model.cpuset import CPUSet
from ....model.quantity import Quantity, parse_quantity
from ...config import TOPOLOGY_LEVEL_VALUES, TopologyAwareConfig
from ...cpuallocator import PRIORITY_NONE, PRIORITY_NORMAL, AllocationError, CPUAllocator
from ...kubernetes import milli_cpu_to_shares
from ...libmem import Allocator, MemoryError_, container_request, mask_of, memset_string
from ...resmgr.cache import UNLIMITED_BURSTABLE_KEY, Affinity, Cache, CachedContainer
from ...resmgr.expression import ALWAYS_TRUE, EQUALS, Expression
from ...resmgr.policy import PolicyError, TopologyZone, ZoneResource, sync_allocations
from ...sysfs import System
from . import fastpin, fastrequest, fastscore
from .node import Node
from .pools import build_pools, sort_pools_by_score
from .preferences import (
    CPU_NORMAL,
    CPU_PRESERVE,
    CPU_RESERVED,
    DEFAULT_MEMORY_TYPE,
    MEMORY_DRAM,
    MEMORY_HBM,
    MEMORY_PMEM,
    MEMORY_PRESERVE,
    MEMORY_UNSPEC,
    PRIO_BY_NAME,
    cold_start_preference,
    cpu_allocation_preferences,
    cpu_class_preference,
    hide_hyperthreads_preference,
    memory_allocation_preference,
    pick_by_hints_preference,
    scheduling_class_preference,
)
from .resources import Grant, Request

NAME = "topology-aware"
COLD_START_DONE = "cold-start-done"


class TopologyAwarePolicy:
    """``policy`` of cmd/plugins/topology-aware."""

    name = NAME
    description = "A policy for prototyping memory tiering."

    def __init__(self) -> None:
        self.sys: System
        self.cache: Cache
        self.cfg: TopologyAwareConfig
        self.allowed = CPUSet()
        self.reserved = CPUSet()
        self.isolated = CPUSet()
        self.root: Node | None = None
        self.pools: list[Node] = []
        self.nodes: dict[str, Node] = {}
        self.depth = 0
        self.allocations: dict[str, Grant] = {}
        self.cpu_allocator: CPUAllocator
        self.mem_allocator: Allocator
        self.default_prio = PRIORITY_NONE
        self.unlimited_burstable = "package"
        self.last_scores: dict[str, Any] = {}
        #: keep each placement's pool scores in ``last_scores`` for :meth:`explain` (kubetwin's
        #: own; ``simulate``'s untraced nodes never explain, so they keep none)
        self.explaining = True
        self.cpu_class_of: dict[int, str] = {}

    # --- setup ---------------------------------------------------------------------------------
    def setup(self, system: System, cache: Cache, config: TopologyAwareConfig) -> None:
        self.sys, self.cache, self.cfg = system, cache, config
        self.cpu_allocator = CPUAllocator(system)
        try:
            self.mem_allocator = Allocator(system)
        except MemoryError_ as exc:
            raise PolicyError(f"failed to initialize {NAME} policy: {exc}") from None
        self.default_prio = PRIO_BY_NAME.get(config.default_cpu_priority.lower(), PRIORITY_NONE)
        self._check_constraints()
        build_pools(self)
        self.unlimited_burstable = self.find_existing_topology_level(config.unlimited_burstable)
        if config.cpu_classes:
            for cpu in self.allowed:
                self.cpu_class_of[cpu] = config.shared_pool_cpu_class
            if config.reserved_pool_cpu_class:
                for cpu in self.reserved:
                    self.cpu_class_of[cpu] = config.reserved_pool_cpu_class
        self._register_implicit_affinities()

    def start(self) -> None:
        return None

    def _check_constraints(self) -> None:
        cfg, sys = self.cfg, self.sys
        amount = cfg.available_resources.get("cpu")
        if amount is None:
            self.allowed = sys.cpu_set
        elif amount.startswith("cpuset:"):
            self.allowed = _cpuset(amount[len("cpuset:"):], "availableResources.cpu")
        elif amount.startswith("exclude-cpuset:"):
            self.allowed = sys.cpu_set - _cpuset(amount[len("exclude-cpuset:"):], "availableResources.cpu")
        else:
            raise PolicyError(f"can't handle CPU resources given as resource.Quantity ({amount})")
        self.allowed = self.allowed & sys.online_cpus
        self.isolated = sys.isolated & self.allowed
        amount = cfg.reserved_resources.get("cpu")
        if amount is None:
            raise PolicyError("cannot start without CPU reservation")
        if amount.startswith("cpuset:") or amount.startswith("exclude-cpuset:"):
            exclude = amount.startswith("exclude-cpuset:")
            cset = _cpuset(amount.split(":", 1)[1], "reservedResources.cpu")
            self.reserved = self.allowed - cset if exclude else cset
            if self.reserved - self.allowed:
                raise PolicyError(f"invalid reserved cpuset {self.reserved}, some CPUs ({self.reserved - self.allowed})"
                                  f" are not part of the online allowed cpuset ({self.allowed})")
            iso = self.reserved & self.isolated
            if iso:
                if self.reserved != iso:
                    raise PolicyError(f"invalid reserved cpuset {self.reserved}, mixes isolated ({iso}) and "
                                      f"normal ({self.reserved - iso})")
                if iso.size() > 1:
                    raise PolicyError(f"invalid reserved cpuset {self.reserved}, multiple isolated CPUs ({iso})")
        else:
            try:
                q = parse_quantity(amount, "reservedResources.cpu")
            except Exception as exc:  # noqa: BLE001
                raise PolicyError(f"failed to parse reserved CPU quantity '{amount}': {exc}") from None
            cnt = (q.milli_value() + 999) // 1000
            frm = self.allowed - self.isolated
            try:
                cset, _ = self.cpu_allocator.allocate_cpus(frm, cnt, PRIORITY_NORMAL)
            except AllocationError as exc:
                raise PolicyError(f"cannot reserve {q.milli_value()}m CPUs for ReservedResources from "
                                  f"AvailableResources: {exc}") from None
            self.reserved = cset
        if self.reserved.is_empty():
            raise PolicyError("cannot start without CPU reservation")

    def find_existing_topology_level(self, level: str) -> str:
        value = TOPOLOGY_LEVEL_VALUES.get(level, 0)
        for pool in self.pools:
            lv = pool.topology_level()
            if TOPOLOGY_LEVEL_VALUES.get(lv, 0) == value:
                return lv
            if TOPOLOGY_LEVEL_VALUES.get(lv, 0) < value:
                return lv
        return "package"

    def unlimited_burstable_preference(self, c: CachedContainer) -> str:
        value, ok = c.effective_annotation(UNLIMITED_BURSTABLE_KEY)
        if not ok:
            return self.unlimited_burstable
        if TOPOLOGY_LEVEL_VALUES.get(value, 0) == 0:
            return self.unlimited_burstable
        return self.find_existing_topology_level(value)

    def _register_implicit_affinities(self) -> None:
        names = (f"{NAME}:colocate-pods", f"{NAME}:colocate-namespaces")
        for n in names:
            self.cache.implicit.pop(n, None)
        if self.cfg.colocate_pods:
            def colocate_pods(c: CachedContainer, has_explicit: bool) -> Affinity | None:
                if has_explicit:
                    return None
                return Affinity(c.pod.scope_expression(), Expression(op=ALWAYS_TRUE), 10)
            self.cache.implicit[names[0]] = colocate_pods
        if self.cfg.colocate_namespaces:
            def colocate_ns(c: CachedContainer, has_explicit: bool) -> Affinity | None:
                if has_explicit:
                    return None
                return Affinity(Expression(op=ALWAYS_TRUE), Expression(key="namespace", op=EQUALS,
                                                                      values=[c.namespace]), 10)
            self.cache.implicit[names[1]] = colocate_ns

    # --- the Backend ---------------------------------------------------------------------------
    def sync(self, add: list[CachedContainer], delete: list[CachedContainer]) -> None:
        sync_allocations(self, add, delete)

    def allocate_resources(self, c: CachedContainer, pool_hint: str = "") -> None:
        try:
            grant = self.allocate_pool(c, pool_hint)
        except PolicyError as exc:
            raise PolicyError(f"failed to allocate resources for {c.pretty_name()}: {exc}") from None
        self.apply_grant(grant)
        self.update_shared_allocations(grant)

    def release_resources(self, c: CachedContainer) -> None:
        grant = self.release_pool(c)
        if grant is not None:
            self.update_shared_allocations(grant)

    def update_resources(self, c: CachedContainer) -> None:
        grant = self.release_pool(c)
        if grant is None:
            self.allocate_resources(c)
            return
        self.update_shared_allocations(grant)
        self.allocate_resources(c, grant.node.name)

    def handle_event(self, event: str, data: Any) -> bool:
        if event == "container-started":
            g = self.allocations.get(data.id)
            if g is not None and g.cold_start > 0:
                warn(f"{data.pretty_name()}: the {g.cold_start:g}s cold start ends later (DRAM is then added to "
                     f"its memory): no time passes between kubetwin's steps, so its memory stays as at start")
        return False

    def export_resource_data(self, c: CachedContainer) -> dict[str, str] | None:
        g = self.allocations.get(c.id)
        if g is None:
            return None
        out: dict[str, str] = {}
        shared = g.shared_cpus()
        isolated = g.exclusive & g.node.get_supply().isolated
        exclusive = g.exclusive - isolated
        if g.shared_portion() > 0 and shared:
            out["SHARED_CPUS"] = str(shared)
        if isolated:
            out["ISOLATED_CPUS"] = str(isolated)
        if exclusive:
            out["EXCLUSIVE_CPUS"] = str(exclusive)
        out["ALL_MEMS"] = memset_string(g.mem_zone)
        for name, t in (("DRAM_MEMS", 1), ("PMEM_MEMS", 2), ("HBM_MEMS", 4)):
            m = g.mem_zone & self.mem_allocator.nodes_by_types(t)
            if m:
                out[name] = memset_string(m)
        return out

    # --- placing -------------------------------------------------------------------------------
    def new_request(self, c: CachedContainer) -> Request:
        if fastrequest.ENABLED:
            req = fastrequest.new_request(self, c)
            if req is not None:
                return req
        return self.plain_new_request(c)

    def plain_new_request(self, c: CachedContainer) -> Request:
        """``newRequest``: the container's CPU and memory preferences."""
        pod = c.pod
        full, fraction, limit, isolate, cpu_type, prio = cpu_allocation_preferences(self.cfg, pod, c,
                                                                                    self.default_prio)
        mreq, mlim, mtype = memory_allocation_preference(pod, c)
        cpu_class, scoped = self._resolve_cpu_class(c)
        if full == 0 and scoped and cpu_class:
            raise PolicyError(f'CPU class ("{cpu_class}") invalid without exclusive CPUs')
        if mtype == MEMORY_UNSPEC:
            mtype = DEFAULT_MEMORY_TYPE & ~MEMORY_HBM
        cold = 0.0
        if mtype != MEMORY_PRESERVE:
            mtype &= self.mem_allocator.types
            if self._cold_start_off():
                if mtype == MEMORY_PMEM:
                    mtype |= MEMORY_DRAM
            else:
                try:
                    cold = cold_start_preference(pod, c)
                except ValueError as exc:
                    raise PolicyError(f"failed to parse coldstart preference: {exc}") from None
                if cold > 0:
                    mtype &= ~MEMORY_DRAM
        return Request(c, full, fraction, limit, isolate, cpu_type, cpu_class, prio, mreq, mlim, mtype, cold,
                       pick_by_hints_preference(pod, c))

    def _cold_start_off(self) -> bool:
        """Cold start is forced off when a PMEM node has no normal memory (never in the model)."""
        return False

    def _resolve_cpu_class(self, c: CachedContainer) -> tuple[str, bool]:
        if not self.cfg.cpu_classes:
            return "", False
        try:
            cls, scoped = cpu_class_preference(self.cfg, c)
        except ValueError as exc:
            raise PolicyError(f"failed to resolve CPU class: {exc}") from None
        if cls == "":
            return "", False
        if cls not in {cc["name"] for cc in self.cfg.cpu_classes}:
            raise PolicyError(f'failed to resolve CPU class: unknown CPU class "{cls}"')
        return cls, scoped

    def root_pool(self) -> Node:
        """The root of the pool tree (built by ``setup``)."""
        if self.root is None:
            raise PolicyError("the pool tree is not built")
        return self.root

    def allocate_pool(self, c: CachedContainer, pool_hint: str = "") -> Grant:
        req = self.new_request(c)
        if self.root_pool().free_supply().reserved.is_empty() and req.cpu_type == CPU_RESERVED:
            req.cpu_type = CPU_NORMAL
        if req.cpu_type in (CPU_RESERVED, CPU_PRESERVE):
            pool = self.root_pool()
            try:
                offer = self.get_mem_offer(pool, req)
            except PolicyError as exc:
                raise PolicyError(f"failed to get offer for request {req.describe()}: {exc}") from None
            if self.explaining:
                self.last_scores[c.id] = {"request": req.describe(), "pool": pool.name, "reason": "reserved/preserve"}
        else:
            try:
                aff = {} if fastrequest.ENABLED and fastrequest.no_affinities(self, c) else \
                    self.calculate_pool_affinities(c)
            except Exception as exc:  # noqa: BLE001 - malformed affinity annotations
                raise PolicyError(f"failed to calculate affinity for container {c.pretty_name()}: {exc}") from None
            if fastscore.ENABLED and not self.explaining and not pool_hint:
                scores, pool = fastscore.best_pool(self, req, aff)   # the first of the order alone
            else:
                scores, pools = (fastscore.sort_pools_by_score if fastscore.ENABLED else sort_pools_by_score)(
                    self, req, aff)
                hinted = next((p for p in pools if p.name == pool_hint), None) if pool_hint else None
                pool = hinted if hinted is not None else pools[0]
            if self.explaining:
                self.last_scores[c.id] = {
                    "request": req.describe(),
                    "pools": [{"pool": p.name, "rank": i + 1, "affinity": aff.get(p.id, 0), **scores[p.id].describe()}
                              for i, p in enumerate(pools)],
                    "pool": pool.name,
                }
            offer = fastscore.chosen_offer(scores, pool.id)
            if offer is None:
                raise PolicyError(f"failed to get offer for request {req.describe()}")
        supply = pool.free_supply()
        try:
            grant, updates = supply.allocate(req, offer)
        except PolicyError as exc:
            raise PolicyError(f"failed to allocate {req.describe()} from {pool.name}: {exc}") from None
        for cid, zone in updates.items():
            g = self.allocations.get(cid)
            if g is not None:
                g.mem_zone = zone
                if self.cfg.pin_memory:
                    g.container.set_cpuset_mems(memset_string(zone))
        self.allocations[c.id] = grant
        fastscore.granted(self, grant)
        fastpin.granted(self, grant)
        return grant

    def get_mem_offer(self, pool: Node, req: Request):
        if req.mem_type == MEMORY_PRESERVE:
            zone = mask_of(pool.memset(7))
            mtyp = self.mem_allocator.zone_type(zone)
        else:
            zone = mask_of(pool.memset(req.mem_type))
            mtyp = req.mem_type
        c = req.container
        r = container_request(c.id, c.pretty_name(), c.qos_class, req.mem_amount_to_allocate(), zone, mtyp)
        try:
            return self.mem_allocator.get_offer(r)
        except MemoryError_ as exc:
            raise PolicyError(str(exc)) from None

    def pool_zone_capacity(self, pool: Node, mtype: int) -> int:
        return self.mem_allocator.zone_capacity(mask_of(pool.memset(mtype)))

    def calculate_pool_affinities(self, c: CachedContainer) -> dict[int, int]:
        weights: dict[str, int] = {}
        for a in c.affinity():
            for cid, w in self.cache.evaluate_affinity(a).items():
                weights[cid] = weights.get(cid, 0) + w
        weights.pop(c.id, None)
        out: dict[int, int] = {}
        for cid, w in weights.items():
            g = self.allocations.get(cid)
            if g is None:
                continue
            out[g.node.id] = out.get(g.node.id, 0) + w
        return out

    def take_cpus(self, frm: CPUSet, cnt: int, prio: int, req: Request) -> tuple[CPUSet, CPUSet]:
        """``takeCPUs`` (picking by pod-resource hints needs the PodResources API: never here)."""
        return self.cpu_allocator.allocate_cpus(frm, cnt, prio)

    def has_zero_cpu_req_container(self, pool: Node) -> bool:
        for g in self.allocations.values():
            if g.node is not pool:
                continue
            if g.cpu_type == CPU_RESERVED and not g.reserved_cpus().is_empty():
                continue
            qos = g.container.qos_class
            if qos == "BestEffort":
                return True
            if qos == "Burstable" and (g.container.resource_requirements().cpu_request or 0) == 0:
                return True
        return False

    def _set_preferred_cpuset(self, c: CachedContainer, cpus: CPUSet) -> None:
        if fastpin.ENABLED:
            g = self.allocations.get(c.id)
            if g is not None and g.container is c:
                c.set_cpuset_cpus(fastpin.cpuset_text(self.sys, cpus, fastpin.hides_hyperthreads(g)))
                return
        allow = cpus
        if hide_hyperthreads_preference(c):
            allow = self.sys.single_thread_for_cpus(cpus)
        c.set_cpuset_cpus(str(allow))

    def apply_grant(self, grant: Grant) -> None:
        if fastpin.ENABLED:
            fastpin.apply_grant(self, grant)
            return
        c = grant.container
        cpu_type, exclusive, portion = grant.cpu_type, grant.exclusive, grant.shared_portion()
        shared = grant.shared_cpus()
        cpus = CPUSet()
        if cpu_type == CPU_NORMAL:
            cpus = shared if exclusive.is_empty() else (exclusive | shared if portion > 0 else exclusive)
        elif cpu_type == CPU_RESERVED:
            cpus = grant.reserved_cpus()
            portion = grant.reserved_portion()
        elif cpu_type != CPU_PRESERVE:
            return
        mems = grant.mem_zone if self.cfg.pin_memory else 0
        if self.cfg.pin_cpu:
            if cpu_type != CPU_PRESERVE:
                if cpus:
                    self._set_preferred_cpuset(c, cpus)
                else:
                    c.set_cpuset_cpus("")
            milli = portion if portion else 1000 * grant.exclusive.size()
            c.set_cpu_shares(milli_cpu_to_shares(milli))
            if exclusive and grant.cpu_class:
                for cpu in exclusive:
                    self.cpu_class_of[cpu] = grant.cpu_class
        if grant.mem_type != MEMORY_PRESERVE:
            c.set_cpuset_mems(memset_string(mems))
        try:
            sc = scheduling_class_preference(self.cfg, c)
        except ValueError:
            sc = None  # upstream logs the unknown class and applies none
        if sc is not None:
            self._apply_scheduling_class(c, sc)

    def _apply_scheduling_class(self, c: CachedContainer, sc: Any) -> None:
        values: dict[str, Any] = {}
        if sc.policy:
            values["policy"] = "SCHED_" + sc.policy.upper().replace("-", "_")
        if sc.priority is not None:
            values["priority"] = sc.priority
        if sc.flags:
            values["flags"] = ["SCHED_FLAG_" + f.upper().replace("-", "_") for f in sc.flags]
        if sc.nice is not None:
            values["nice"] = sc.nice
        for attr in ("runtime", "deadline", "period"):
            if getattr(sc, attr) is not None:
                values[attr] = getattr(sc, attr)
        if values:
            c.set_scheduling(**values)
        io: dict[str, Any] = {}
        if sc.io_class:
            io["class_"] = "IOPRIO_CLASS_" + sc.io_class.upper()
        if sc.io_priority is not None:
            io["priority"] = sc.io_priority
        if io:
            c.set_io_priority(**io)

    def release_pool(self, c: CachedContainer) -> Grant | None:
        grant = self.allocations.get(c.id)
        if grant is None:
            return None
        grant.node.free_supply().release_cpu(grant)
        try:
            self.mem_allocator.release(c.id)
        except MemoryError_:
            pass
        del self.allocations[c.id]
        fastscore.released(self, grant)
        fastpin.released(self, grant)
        if self.cfg.cpu_classes:
            for cpu in grant.exclusive:
                self.cpu_class_of[cpu] = self.cfg.shared_pool_cpu_class
        return grant

    def update_shared_allocations(self, grant: Grant | None) -> None:
        if fastpin.ENABLED:
            fastpin.update_shared_allocations(self, grant)
            return
        if grant is not None and grant.cpu_type == CPU_RESERVED:
            return
        for other in list(self.allocations.values()):
            if grant is not None and other.container.id == grant.container.id:
                continue
            if other.cpu_type in (CPU_RESERVED, CPU_PRESERVE):
                continue
            if other.shared_portion() == 0 and not other.exclusive.is_empty():
                continue
            if self.cfg.pin_cpu:
                shared = other.node.free_supply().sharable
                cpus = shared if other.exclusive.is_empty() else other.exclusive | shared
                self._set_preferred_cpuset(other.container, cpus)

    # --- reporting -----------------------------------------------------------------------------
    def describe_container(self, c: CachedContainer) -> dict[str, Any] | None:
        g = self.allocations.get(c.id)
        return None if g is None else g.describe()

    def container_placement(self, c: CachedContainer) -> tuple[str, CPUSet] | None:
        """The grant's pool and its exclusive and isolated CPUs (``exclusive`` and ``isolated`` of
        :meth:`describe_container`)."""
        g = self.allocations.get(c.id)
        return None if g is None else (g.node.name, g.exclusive)

    def explain(self, cid: str) -> dict[str, Any] | None:
        return self.last_scores.get(cid)

    def reserved_cpus(self) -> CPUSet:
        """The reserved CPUs (``reserved`` of :meth:`describe`)."""
        return self.reserved

    def describe(self) -> dict[str, Any]:
        pools = []
        for n in self.pools:
            entry: dict[str, Any] = {"name": n.name, "id": n.id, "kind": n.kind, "depth": n.depth}
            if n.parent is not None:
                entry["parent"] = n.parent.name
            entry["capacity"] = n.get_supply().describe()
            entry["free"] = n.free_supply().describe()
            entry["allocatableShared"] = f"{n.free_supply().allocatable_shared_cpu()}m"
            entry["memory"] = {"DRAM": sorted(n.mem), "PMEM": sorted(n.pmem), "HBM": sorted(n.hbm)}
            entry["memoryFree"] = self.mem_allocator.zone_free(mask_of(n.memset(7)))
            pools.append(entry)
        out: dict[str, Any] = {"policy": NAME, "reserved": str(self.reserved), "allowed": str(self.allowed),
                               "pools": pools}
        if self.isolated:
            out["isolated"] = str(self.isolated)
        if self.cpu_class_of:
            classes: dict[str, list[int]] = {}
            for cpu, cls in sorted(self.cpu_class_of.items()):
                classes.setdefault(cls, []).append(cpu)
            out["cpuClasses"] = {k: str(CPUSet(v)) for k, v in classes.items()}
        return out

    def topology_zones(self) -> list[TopologyZone]:
        """``GetTopologyZones``: one zone per pool (NodeResourceTopology export)."""
        zones = []
        for pool in self.pools:
            total, free = pool.get_supply(), pool.free_supply()
            zone_mask = mask_of(pool.memset(7))
            cap = self.mem_allocator.zone_capacity(zone_mask)
            avail = self.mem_allocator.zone_free(zone_mask)
            cpu_total = 1000 * (total.sharable | total.reserved).size()
            z = TopologyZone(pool.name, pool.kind, pool.parent.name if pool.parent is not None else "")
            # resource.NewQuantity(bytes, DecimalSI): "32G" when a multiple of 10^9, else the bytes
            z.resources.append(ZoneResource("memory", str(Quantity.from_int(cap)), str(Quantity.from_int(cap)),
                                            str(Quantity.from_int(avail))))
            z.resources.append(ZoneResource("cpu", _milli(cpu_total), _milli(cpu_total),
                                            _milli(free.allocatable_shared_cpu())))
            z.attributes.append(("memory set", memset_string(zone_mask)))
            z.attributes.append(("shared cpuset", str(free.sharable)))
            if total.reserved:
                z.attributes.append(("reserved cpuset", str(total.reserved)))
            if free.isolated:
                z.attributes.append(("isolated cpuset", str(total.isolated)))
            zones.append(z)
        return zones


def _milli(v: int) -> str:
    return str(v // 1000) if v % 1000 == 0 else f"{v}m"


def _cpuset(text: str, path: str) -> CPUSet:
    try:
        return CPUSet.parse(text)
    except Exception:  # noqa: BLE001
        raise PolicyError(f"failed to parse {path} cpuset '{text}'") from None

