"""The balloons policy backend: balloons of CPUs that inflate and deflate with their containers.

``setup`` resolves the allowed and reserved CPUs, adds the built-in ``reserved`` (kube-system
and ``reservedPoolNamespaces``, first in the list) and ``default`` (last) balloon types unless
the configuration defines them, and creates each type's ``minBalloons`` balloons in
``allocatorPriority`` order. ``allocate_resources`` picks the container's balloon type (the
``balloon.balloons.resource-policy.nri.io`` annotation, else the first type whose
``matchExpressions`` or ``namespaces`` match, else ``default``), picks an instance with the
fill-method chain (same ``groupBy`` group, same pod unless ``preferSpreadingPods``, same namespace with
``preferPerNamespaceBalloon``, new balloons first with ``preferNewBalloons``, else the balloon
with the most free mCPU and then fewest containers), inflates it to ``ceil(Σ requests)`` CPUs
(between ``minCPUs`` and ``maxCPUs``) and pins every container of the balloon to its CPUs plus
the idle CPUs it shares (``shareIdleCPUsInSame``), one hyperthread per core where hidden, and
its memory to the closest nodes (``pinMemory``). ``release_resources`` deflates the balloon
and frees it when empty and more than ``minBalloons`` exist.

CPU classes (``cpuClass``, ``idleCPUClass``) set CPU frequencies, never which CPUs are
picked (no PCT/SST hints are modelled), so they are recorded for reports only.

Upstream: containers/nri-plugins v0.14.0 ``cmd/plugins/balloons/policy/balloons-policy.go``,
``fillmethod.go``, ``flags.go``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ....errors import InputError
from ....model.cpuset import CPUSet
from ....model.quantity import parse_quantity
from ...config import BalloonsConfig
from ...cpuallocator import PRIORITY_HIGH, PRIORITY_LOW, PRIORITY_NONE, PRIORITY_NORMAL, AllocationError, CPUAllocator
from ...gomatch import BadPattern, match
from ...kubernetes import milli_cpu_to_shares
from ...libmem import Allocator, MemoryError_, container_request, mask_of, memset_string, parse_type_mask
from ...resmgr.cache import Cache, CachedContainer
from ...resmgr.expression import Expression, parse_expression
from ...resmgr.policy import PolicyError, TopologyZone, ZoneResource, sync_allocations
from ...sysfs import System
from .cputree import CpuTreeAllocator, TreeError, cpu_tree_from_system, cpus_in_level
from .expand import ExpandError, expand

NAME = "balloons"
RESERVED = "reserved"
DEFAULT = "default"
NO_LIMIT = 0
BALLOON_KEY = "balloon.balloons.resource-policy.nri.io"
HIDE_HYPERTHREADS_KEY = "hide-hyperthreads.resource-policy.nri.io"
SCHEDULING_CLASS_KEY = "scheduling-class.resource-policy.nri.io"
MEMORY_TYPE_KEY = "memory-type.resource-policy.nri.io"
PRIORITIES = {"high": PRIORITY_HIGH, "normal": PRIORITY_NORMAL, "low": PRIORITY_LOW, "none": PRIORITY_NONE}

# balloon-type and policy fields kubetwin reads but does not model: refused, never ignored
_TYPE_NOT_MODELLED = {
    "components": "composite balloons", "componentCreation": "composite balloons",
    "loads": "load classes",
    "preferCloseToDevices": "device locality (sysfs devices, PodResources API)",
    "preferCoreType": "hybrid core types", "preferIsolCpus": "isolated CPU preference",
    "preferSpreadOnPhysicalCores": "spreading on physical cores", "irqClaim": "IRQ affinity",
    "irqMode": "IRQ affinity", "memoryTypes": "memory types",
}
_POLICY_NOT_MODELLED = {
    "loadClasses": "load classes",
    "preferSpreadOnPhysicalCores": "spreading on physical cores",
}


@dataclass(eq=False)
class BalloonDef:
    """``BalloonDef``: one balloon type."""

    name: str
    namespaces: list[str] = field(default_factory=list)
    match_expressions: list[Expression] = field(default_factory=list)
    min_cpus: int = 0
    max_cpus: int = NO_LIMIT
    min_balloons: int = 0
    max_balloons: int = NO_LIMIT
    allocator_priority: str = "high"
    allocator_topology_balancing: bool | None = None
    prefer_spreading_pods: bool = False
    prefer_new_balloons: bool = False
    prefer_per_namespace_balloon: bool = False
    share_idle_cpus_in_same: str = ""
    hide_hyperthreads: bool | None = None
    pin_memory: bool | None = None
    cpu_class: str = ""
    scheduling_class: str = ""
    group_by: str = ""
    close_to_reserved: bool = False
    show_containers_in_nrt: bool | None = None

    @property
    def priority(self) -> int:
        return PRIORITIES[self.allocator_priority]

    def __deepcopy__(self, memo: dict[int, Any]) -> "BalloonDef":
        return self   # fixed once the policy is set up: copies of a runtime node share the types


@dataclass(eq=False)
class Balloon:
    """``Balloon``: one instance of a type, its CPUs and its containers by pod."""

    defn: BalloonDef
    instance: int
    tree: CpuTreeAllocator
    cpus: CPUSet = field(default_factory=CPUSet)
    mems: int = 0
    shared_idle_cpus: CPUSet = field(default_factory=CPUSet)
    pod_ids: dict[str, list[str]] = field(default_factory=dict)
    groups: dict[str, int] = field(default_factory=dict)

    def pretty_name(self) -> str:
        return f"{self.defn.name}[{self.instance}]"

    def container_ids(self) -> list[str]:
        return [cid for ids in self.pod_ids.values() for cid in ids]

    def container_count(self) -> int:
        return sum(len(ids) for ids in self.pod_ids.values())

    def avail_milli_cpus(self) -> int:
        return self.cpus.size() * 1000

    def max_avail_milli_cpus(self, free: CPUSet) -> int:
        n = free.size()
        if self.defn.max_cpus == NO_LIMIT or self.defn.max_cpus > n:
            return (self.cpus.size() + n) * 1000
        return self.defn.max_cpus * 1000


def _error(msg: str) -> PolicyError:
    return PolicyError(f"{NAME}: {msg}")


def _largest(values: Sequence[int]) -> list[int]:
    """``largest``: indices of the largest values, in order."""
    best: list[int] = []
    top = 0
    for i, v in enumerate(values):
        if not best or v > top:
            best, top = [i], v
        elif v == top:
            best.append(i)
    return best


class BalloonsPolicy:
    """``balloons`` of cmd/plugins/balloons."""

    name = NAME
    description = "Flexible pools with per-pool CPU parameters"
    #: the tree allocator each balloon gets (:mod:`.fast` puts its own here)
    tree_allocator: type[CpuTreeAllocator] = CpuTreeAllocator

    def __init__(self) -> None:
        self.sys: System
        self.cache: Cache
        self.spec: dict[str, Any] = {}
        self.allowed = CPUSet()
        self.reserved = CPUSet()
        self.free_cpus = CPUSet()
        #: ``ifreeCpus``: the free CPUs once the pre-created balloons took theirs
        self.ifree_cpus = CPUSet()
        self.defs: list[BalloonDef] = []
        self.reserved_def: BalloonDef
        self.default_def: BalloonDef
        self.balloons: list[Balloon] = []
        self.pin_cpu = True
        self.pin_memory = True
        self.topology_balancing = False
        self.preserve: list[Expression] = []

    # --- setup ---------------------------------------------------------------------------------
    def setup(self, system: System, cache: Cache, config: BalloonsConfig) -> None:
        self.sys, self.cache, self.spec = system, cache, dict(config.spec)
        self.cpu_allocator = CPUAllocator(system)
        self.tree = cpu_tree_from_system(system)
        try:
            self.mem_allocator = Allocator(system)
        except MemoryError_ as exc:
            raise _error(f"failed to create memory allocator: {exc}") from None
        self._refuse_not_modelled()
        self._set_config()

    def start(self) -> None:
        return None

    def _refuse_not_modelled(self) -> None:
        for key, what in _POLICY_NOT_MODELLED.items():
            if self.spec.get(key) not in (None, False, [], {}):
                raise InputError(f"{what} are not modelled by kubetwin's balloons policy", path=f"spec.{key}",
                                 fix="remove the field")
        for i, bt in enumerate(self.spec.get("balloonTypes") or []):
            for key, what in _TYPE_NOT_MODELLED.items():
                if bt.get(key) not in (None, False, [], {}, ""):
                    raise InputError(f"{what} are not modelled by kubetwin's balloons policy",
                                     path=f"spec.balloonTypes[{i}].{key}", fix="remove the field")

    def _set_config(self) -> None:
        spec = self.spec
        amount = (spec.get("availableResources") or {}).get("cpu")
        if amount is None:
            allowed = self.sys.cpu_set
        elif amount.startswith("cpuset:"):
            allowed = _cpuset(amount[len("cpuset:"):], "available")
        elif amount.startswith("exclude-cpuset:"):
            allowed = self.sys.cpu_set - _cpuset(amount[len("exclude-cpuset:"):], "available")
        else:
            raise _error(f"failed to create {NAME} policy: can't handle CPU resources given as "
                         f"resource.Quantity ({amount})")
        self.allowed = allowed & self.sys.online_cpus
        self.pin_cpu = spec.get("pinCPU", True) is not False
        self.pin_memory = spec.get("pinMemory", True) is not False
        self.topology_balancing = bool(spec.get("allocatorTopologyBalancing", False))
        self.preserve = [parse_expression(e) for e in (spec.get("preserve") or {}).get("matchExpressions") or []]
        self.defs = [self._balloon_def(bt) for bt in spec.get("balloonTypes") or []]
        self._fill_builtin_defs()
        self._validate()
        self.balloons = []
        self.free_cpus = self.allowed
        for prio in range(PRIORITY_NONE + 1):
            for d in self.defs:
                if d.priority != prio:
                    continue
                for _ in range(d.min_balloons):
                    self.balloons.append(self._new_balloon(d))
        self.ifree_cpus = self.free_cpus
        self._update_pinning(self._share_idle_cpus(self.free_cpus, CPUSet()))

    @staticmethod
    def _balloon_def(bt: dict[str, Any]) -> BalloonDef:
        return BalloonDef(
            name=bt.get("name", ""), namespaces=list(bt.get("namespaces") or []),
            match_expressions=[parse_expression(e) for e in bt.get("matchExpressions") or []],
            min_cpus=bt.get("minCPUs", 0), max_cpus=bt.get("maxCPUs", NO_LIMIT),
            min_balloons=bt.get("minBalloons", 0), max_balloons=bt.get("maxBalloons", NO_LIMIT),
            allocator_priority=bt.get("allocatorPriority", "high"),
            allocator_topology_balancing=bt.get("allocatorTopologyBalancing"),
            prefer_spreading_pods=bool(bt.get("preferSpreadingPods")),
            prefer_new_balloons=bool(bt.get("preferNewBalloons")),
            prefer_per_namespace_balloon=bool(bt.get("preferPerNamespaceBalloon")),
            share_idle_cpus_in_same=bt.get("shareIdleCPUsInSame", "") or "",
            hide_hyperthreads=bt.get("hideHyperthreads"), pin_memory=bt.get("pinMemory"),
            cpu_class=bt.get("cpuClass", "") or "", scheduling_class=bt.get("schedulingClass", "") or "",
            group_by=bt.get("groupBy", "") or "", show_containers_in_nrt=bt.get("showContainersInNrt"))

    def _fill_builtin_defs(self) -> None:
        """``fillBuiltinBalloonDefs``."""
        reserved = next((d for d in self.defs if d.name == RESERVED), None)
        default = next((d for d in self.defs if d.name == DEFAULT), None)
        if reserved is None:
            reserved = BalloonDef(RESERVED, min_balloons=1, allocator_priority="low")
            self.defs.insert(0, reserved)
        if default is None:
            default = BalloonDef(DEFAULT, min_balloons=1, max_balloons=1, allocator_priority="low")
            self.defs.append(default)
        amount = (self.spec.get("reservedResources") or {}).get("cpu")
        if amount is None:
            raise _error("failed to create balloons policy: invalid configuration: no CPUs reserved "
                         "(reservedResources.cpu)")
        if amount.startswith("cpuset:") or amount.startswith("exclude-cpuset:"):
            cset = _cpuset(amount.split(":", 1)[1], "reserved")
            if amount.startswith("exclude-cpuset:"):
                cset = self.allowed - cset
            if cset - self.allowed:
                raise _error(f"ReservedResources cpus {cset} contains CPUs not in AllowedResources {self.allowed}, "
                             f"namely {cset - self.allowed}")
            self.reserved = self.allowed & cset
            if reserved.min_cpus == 0:
                reserved.min_cpus = min(self.reserved.size(), reserved.max_cpus)
            reserved.allocator_priority = "normal"
            reserved.close_to_reserved = True
        else:
            try:
                q = parse_quantity(amount, "spec.reservedResources.cpu")
            except Exception as exc:  # noqa: BLE001
                raise _error(f"failed to parse reserved CPU quantity '{amount}': {exc}") from None
            cnt = (q.milli_value() + 999) // 1000
            if reserved.min_cpus == 0:
                reserved.min_cpus = cnt
                if reserved.max_cpus != 0 and reserved.max_cpus < reserved.min_cpus:
                    raise _error(f"mismatching reserved balloon maxCpus: {reserved.max_cpus} and ReservedResources "
                                 f"cpus: {q.milli_value()} mCPU (implies minCpu {reserved.min_cpus})")
            if reserved.min_cpus != cnt:
                raise _error(f"mismatching reserved balloon minCpus: {reserved.min_cpus} and ReservedResources cpus: "
                             f"{q.milli_value()} mCPU")
            self.reserved = CPUSet()
        reserved.min_balloons = reserved.max_balloons = 1
        namespaces = self.spec.get("reservedPoolNamespaces")
        reserved.namespaces = reserved.namespaces + ["kube-system"] + list(namespaces or [])
        self.reserved_def, self.default_def = reserved, default

    def _validate(self) -> None:
        seen: set[str] = set()
        for d in self.defs:
            if d.name == "":
                raise _error("invalid configuration: missing or empty name in a balloon type")
            if d.name in seen:
                raise _error(f'invalid configuration: two balloon types with the same name: "{d.name}"')
            seen.add(d.name)
            if d.max_cpus != NO_LIMIT and d.min_cpus > d.max_cpus:
                raise _error(f'invalid configuration: MinCpus ({d.min_cpus}) > MaxCpus ({d.max_cpus}) in balloon '
                             f'type "{d.name}"')
            if d.max_balloons != NO_LIMIT and d.min_balloons > d.max_balloons:
                # upstream prints the CPU limits in this message
                raise _error(f'invalid configuration: MinBalloons ({d.min_cpus}) > MaxBalloons ({d.max_cpus}) in '
                             f'balloon type "{d.name}"')
            for pat in d.namespaces:
                try:
                    match(pat, "")
                except BadPattern:
                    pass  # upstream: a bad pattern never matches
            if d.scheduling_class and not any(sc.get("name") == d.scheduling_class
                                              for sc in self.spec.get("schedulingClasses") or []):
                raise _error(f'invalid configuration: undefined scheduling class "{d.scheduling_class}" in '
                             f'balloon type "{d.name}"')

    # --- balloons ------------------------------------------------------------------------------
    def _balloons_of(self, d: BalloonDef) -> list[Balloon]:
        return [b for b in self.balloons if b.defn is d]

    def _new_balloon(self, d: BalloonDef) -> Balloon:
        """``newBalloon``: the first free instance index, inflated to ``minCPUs``."""
        of_def = self._balloons_of(d)
        if d.max_balloons > NO_LIMIT and d.max_balloons <= len(of_def):
            raise _error(f'cannot create new "{d.name}" balloon, MaxBalloons limit ({d.max_balloons}) reached')
        used = {b.instance for b in of_def}
        instance = next(i for i in range(len(of_def) + 1) if i not in used)
        bln = Balloon(d, instance, self._new_tree_allocator(d))
        self._resize(bln, d.min_cpus * 1000)
        bln.mems = self._closest_mems(bln.cpus)
        return bln

    def _new_tree_allocator(self, d: BalloonDef) -> CpuTreeAllocator:
        """A new balloon's ``cpuTreeAllocator``: the type's topology balancing, close to the
        reserved CPUs or far from them."""
        balancing = self.topology_balancing if d.allocator_topology_balancing is None \
            else d.allocator_topology_balancing
        close = [[self.reserved]] if d.close_to_reserved else []
        return self.tree_allocator(self.tree, balancing, close, self._far_from(d))

    def _far_from(self, d: BalloonDef) -> list[list[CPUSet]]:
        """``fillFarFromDevices``: every type keeps away from the isolated CPUs and from the
        reserved CPUs (when reserved as a cpuset) unless it prefers to be close to them."""
        far: list[list[CPUSet]] = []
        if self.sys.isolated:
            far.append([self.sys.isolated])
        if any(x.close_to_reserved for x in self.defs) and not d.close_to_reserved:
            far.append([self.reserved])
        return far

    def _delete_balloon(self, bln: Balloon) -> None:
        self.balloons = [b for b in self.balloons if b is not bln]
        self.free_cpus = self.free_cpus | bln.cpus

    def _free_balloon(self, bln: Balloon) -> None:
        bln.pod_ids = {}
        if len(self._balloons_of(bln.defn)) > bln.defn.min_balloons:
            self._delete_balloon(bln)

    def _resize(self, bln: Balloon, milli: int) -> None:
        """``resizeBalloon``: inflate or deflate to fit ``milli`` mCPU within the type's limits."""
        d = bln.defn
        old = bln.cpus.size()
        new = (milli + 999) // 1000
        if d.max_cpus > NO_LIMIT and new > d.max_cpus:
            new = d.max_cpus
        if d.min_cpus > 0 and new < d.min_cpus:
            new = d.min_cpus
        if old == new:
            return
        delta = new - old
        prio = d.priority
        if delta > 0:
            try:
                add_from, _ = bln.tree.resize_cpus(bln.cpus, self.free_cpus, delta)
            except TreeError as exc:
                raise _error(f"resize/inflate: failed to choose a cpuset for allocating additional {delta} CPUs: "
                             f"{exc}") from None
            try:
                added, _ = self.cpu_allocator.allocate_cpus(add_from, delta, prio)
            except AllocationError as exc:
                raise _error(f"resize/inflate: allocating {delta} CPUs for {bln.pretty_name()} failed: {exc}") from None
            self.free_cpus = self.free_cpus - added
            bln.cpus = bln.cpus | added
            self._update_pinning(self._share_idle_cpus(self.free_cpus, added))
        else:
            try:
                _, remove_from = bln.tree.resize_cpus(bln.cpus, self.free_cpus, delta)
            except TreeError as exc:
                raise _error(f"resize/deflate: failed to choose a cpuset for releasing {-delta} CPUs: {exc}") from None
            try:
                _, released = self.cpu_allocator.release_cpus(remove_from, -delta, prio)
            except AllocationError as exc:
                raise _error(f"resize/deflate: releasing {-delta} CPUs from {bln.pretty_name()} failed: "
                             f"{exc}") from None
            # upstream keeps the CPUs left in ``removeFromCpus`` after ReleaseCpus took the
            # ones to keep: the released CPUs
            self.free_cpus = self.free_cpus | released
            bln.cpus = bln.cpus - released
            self._update_pinning(self._share_idle_cpus(released, CPUSet()))
        self._pin_resized(bln)

    def _pin_resized(self, bln: Balloon) -> None:
        """The end of ``resizeBalloon``: the balloon's containers pinned to its new CPUs."""
        self._update_pinning([bln])

    def _share_idle_cpus(self, add: CPUSet, remove: CPUSet) -> list[Balloon]:
        """``shareIdleCpus``: balloons whose shared idle CPUs changed (in balloon order)."""
        changed: set[int] = set()
        if remove:
            for i, b in enumerate(self.balloons):
                if b.shared_idle_cpus & remove:
                    b.shared_idle_cpus = b.shared_idle_cpus - remove
                    changed.add(i)
        add = add - self.sys.isolated
        if add:
            for i, b in enumerate(self.balloons):
                level = b.defn.share_idle_cpus_in_same
                if not level:
                    continue
                idle = cpus_in_level(self.tree, level, b.cpus, add)
                if not idle:
                    continue
                before = b.shared_idle_cpus.size()
                b.shared_idle_cpus = b.shared_idle_cpus | idle
                if b.shared_idle_cpus.size() != before:
                    changed.add(i)
        return [self.balloons[i] for i in sorted(changed)]

    def _closest_mems(self, cpus: CPUSet) -> int:
        """``CPUSetAffinity``: the memory nodes local to any of ``cpus``."""
        return mask_of(n.id for n in self.sys.nodes.values() if n.cpus & cpus)

    # The texts and sets pinning writes, one hook each (the fast policy remembers them per mask).
    def _cpus_text(self, cpus: CPUSet) -> str:
        return str(cpus)

    def _mems_text(self, mask: int) -> str:
        return memset_string(mask)

    def _single_threads(self, cpus: CPUSet) -> CPUSet:
        return self.sys.single_thread_for_cpus(cpus)

    def _pin_options(self, c: CachedContainer, bln: Balloon) -> tuple[bool, bool, int]:
        """What the container's annotations say about pinning it: one hyperthread per core
        (``runWithoutHyperthreads``), memory preserved, its memory types (0: the balloon's)."""
        value, ok = c.effective_annotation(MEMORY_TYPE_KEY)
        types = 0
        if ok:
            try:
                types = parse_type_mask(value)
            except Exception:  # noqa: BLE001 - upstream logs the bad annotation and uses the balloon's types
                types = 0
        return _without_hyperthreads(c, bln), c.preserve_memory_resources(), types

    def _update_pinning(self, blns: list[Balloon]) -> None:
        for bln in blns:
            pinnable = bln.cpus | bln.shared_idle_cpus
            bln.mems = self._closest_mems(pinnable)
            for cid in bln.container_ids():
                c = self.cache.lookup_container(cid)
                if c is None:
                    continue
                single, preserve, types = self._pin_options(c, bln)
                cpus = self._single_threads(pinnable) if single else pinnable
                self._pin_cpu_mem(c, cpus, bln.mems, bln.defn.pin_memory, preserve, types)

    def _pin_cpu_mem(self, c: CachedContainer, cpus: CPUSet, mems: int, def_pin_memory: bool | None,
                     preserve: bool, types: int) -> None:
        if self.pin_cpu:
            c.set_cpuset_cpus(self._cpus_text(cpus))
            req = c.resource_requirements().cpu_request
            if req is not None:
                c.set_cpu_shares(milli_cpu_to_shares(req))
        pin = self.pin_memory if def_pin_memory is None else def_pin_memory
        if not pin:
            return
        if preserve:
            raise _error(f"{c.pretty_name()}: memory.preserve is not modelled by kubetwin's balloons policy")
        c.set_cpuset_mems(self._mems_text(self._alloc_mem(c, mems, types)))

    def _alloc_mem(self, c: CachedContainer, nodes: int, types: int) -> int:
        """``allocMem``: the container's memory zone, falling back to ``nodes`` on failure."""
        limit = c.resource_requirements().memory_limit or 0
        try:
            if self.mem_allocator.assigned_zone(c.id) is None:
                req = container_request(c.id, c.pretty_name(), c.qos_class, limit, nodes, types)
                zone, updates = self.mem_allocator.get_offer(req).commit()
            else:
                zone, updates = self.mem_allocator.realloc(c.id, nodes, types)
        except MemoryError_:
            return nodes
        for oid, oz in updates.items():
            other = self.cache.lookup_container(oid)
            if other is not None:
                other.set_cpuset_mems(memset_string(oz))
        return zone

    # --- choosing ------------------------------------------------------------------------------
    def _choose_def(self, c: CachedContainer) -> BalloonDef:
        name, ok = c.effective_annotation(BALLOON_KEY)
        if ok:
            d = next((d for d in self.defs if d.name == name), None)
            if d is None:
                raise _error(f'no balloon for annotation "{name}"')
            return d
        for d in self.defs:
            for e in d.match_expressions:
                if e.evaluate(c):
                    return d
            if _namespace_matches(c.namespace, d.namespaces):
                return d
        return self.default_def

    def _requested(self, cid: str) -> int:
        c = self.cache.lookup_container(cid)
        if c is None:
            return 0
        return c.resource_requirements().cpu_request or 0

    def _requested_in(self, bln: Balloon) -> int:
        return sum(self._requested(cid) for cid in bln.container_ids())

    def _free_milli(self, bln: Balloon) -> int:
        return bln.avail_milli_cpus() - self._requested_in(bln)

    def _max_free_milli(self, bln: Balloon) -> int:
        return bln.max_avail_milli_cpus(self.free_cpus) - self._requested_in(bln)

    def _fillable(self, d: BalloonDef, method: str, c: CachedContainer) -> list[Balloon]:
        """``fillableBalloonInstances``."""
        req = self._requested(c.id)
        if method == "same-group":
            try:
                group = expand(d.group_by, c, True)
            except ExpandError:
                return []  # upstream logs the error and tries the next fill method
            return [b for b in self.balloons if b.groups.get(group, 0) > 0 and b.defn is d
                    and self._max_free_milli(b) >= req]
        if method == "new":
            for b in self._balloons_of(d):
                if not b.pod_ids:
                    return [b]
            if self.free_cpus.size() == 0 or self.free_cpus.size() < d.min_cpus:
                return []
            saved_free = self.free_cpus
            try:
                bln = self._new_balloon(d)
            except PolicyError:
                self.free_cpus = saved_free
                return []
            if bln.max_avail_milli_cpus(self.free_cpus) < req:
                self.free_cpus = self.free_cpus | bln.cpus
                return []
            self.balloons.append(bln)
            if bln.cpus:
                self._update_pinning(self._share_idle_cpus(self.free_cpus, bln.cpus))
            return [bln]
        if method == "same-namespace":
            return [b for b in self.balloons if b.defn is d and self._in_namespace(b, c.namespace)
                    and self._max_free_milli(b) >= req]
        if method == "same-pod":
            return [b for b in self.balloons if b.defn is d and c.pod_id in b.pod_ids
                    and self._max_free_milli(b) >= req]
        blns = self._balloons_of(d)
        if method == "balanced":
            return [b for b in blns if self._free_milli(b) >= req]
        return [b for b in blns if self._max_free_milli(b) >= req]  # balanced-inflate

    def _in_namespace(self, bln: Balloon, namespace: str) -> bool:
        for pod_id, ids in bln.pod_ids.items():
            if not ids:
                continue
            pod = self.cache.pods.get(pod_id)
            if pod is not None and pod.namespace == namespace:
                return True
        return False

    def _allocate_balloon(self, c: CachedContainer, d: BalloonDef) -> Balloon:
        """``allocateBalloonOfDef``."""
        chain: list[str] = []
        if d.group_by:
            chain.append("same-group")
        if not d.prefer_spreading_pods:
            chain.append("same-pod")
        if d.prefer_per_namespace_balloon:
            chain += ["same-namespace", "new"]
        if d.prefer_new_balloons:
            chain += ["new", "balanced", "balanced-inflate"]
        else:
            chain += ["balanced", "balanced-inflate", "new"]
        for method in chain:
            blns = self._fillable(d, method, c)
            if not blns:
                continue
            by = self._max_free_milli if method == "balanced-inflate" else self._free_milli
            room = [by(b) for b in blns]
            most_room = _largest(room)
            counts = [-blns[i].container_count() for i in most_room]
            fewest = _largest(counts)
            return blns[most_room[fewest[0]]]
        raise _error("no suitable balloon instance available")

    # --- the Backend ---------------------------------------------------------------------------
    def sync(self, add: list[CachedContainer], delete: list[CachedContainer]) -> None:
        sync_allocations(self, add, delete)

    def allocate_resources(self, c: CachedContainer) -> None:
        if c.preserve_cpu_resources():
            return
        if any(e.evaluate(c) for e in self.preserve):
            return  # ``preserve.matchExpressions``: the container keeps what the runtime gave it
        try:
            d = self._choose_def(c)
            pin = self.pin_memory if d.pin_memory is None else d.pin_memory
            if pin and c.preserve_memory_resources():
                raise _error(f"{c.pretty_name()}: memory.preserve.resource-policy.nri.io with pinMemory is not "
                             f"modelled by kubetwin's balloons policy")
            bln = self._allocate_balloon(c, d)
        except PolicyError as exc:
            raise _error(f"balloon allocation for container {c.pretty_name()} failed: {exc}") from None
        req = self._requested(c.id) + self._requested_in(bln)
        if bln.avail_milli_cpus() < max(1, req):
            try:
                self._resize(bln, max(1, req))
            except PolicyError as exc:
                raise _error(f"resizing balloon {bln.pretty_name()} failed: {exc}") from None
        bln.pod_ids.setdefault(c.pod_id, []).append(c.id)
        self._update_groups(bln, c, 1)
        self._update_pinning([bln])
        self._apply_scheduling_class(c, bln)

    def release_resources(self, c: CachedContainer) -> None:
        bln = self._balloon_of(c)
        if bln is None:
            return
        try:
            self.mem_allocator.release(c.id)
        except MemoryError_:
            pass
        ids = bln.pod_ids.get(c.pod_id, [])
        if c.id in ids:
            ids.remove(c.id)
        if not ids:
            bln.pod_ids.pop(c.pod_id, None)
        self._update_groups(bln, c, -1)
        if bln.container_count() == 0:
            try:
                self._resize(bln, 0)
            except PolicyError:
                pass  # upstream logs the failed deflate and frees the balloon anyway
            self._free_balloon(bln)
        else:
            try:
                self._resize(bln, max(1, self._requested_in(bln)))
            except PolicyError as exc:
                raise _error(f"resizing balloon {bln.pretty_name()} failed: {exc}") from None

    def update_resources(self, c: CachedContainer) -> None:
        return None  # upstream: "(not) updating container"

    def handle_event(self, event: str, data: Any) -> bool:
        return False

    def export_resource_data(self, c: CachedContainer) -> dict[str, str] | None:
        return None

    @staticmethod
    def _update_groups(bln: Balloon, c: CachedContainer, delta: int) -> None:
        """``updateGroups``: the multiset of the balloon's containers' ``groupBy`` values."""
        if bln.defn.group_by:
            try:
                group = expand(bln.defn.group_by, c, False)
            except ExpandError:
                group = ""  # upstream ignores the error and counts the empty result
            bln.groups[group] = bln.groups.get(group, 0) + delta

    def _balloon_of(self, c: CachedContainer) -> Balloon | None:
        for b in self.balloons:
            if c.id in b.pod_ids.get(c.pod_id, ()):
                return b
        return None

    def _apply_scheduling_class(self, c: CachedContainer, bln: Balloon) -> None:
        name = bln.defn.scheduling_class
        value, ok = c.effective_annotation(SCHEDULING_CLASS_KEY)
        if ok:
            name = value
        if not name:
            return
        for sc in self.spec.get("schedulingClasses") or []:
            if sc.get("name") == name:
                _apply_scheduling(c, sc)
                return

    # --- reporting -----------------------------------------------------------------------------
    def describe_container(self, c: CachedContainer) -> dict[str, Any] | None:
        b = self._balloon_of(c)
        if b is None:
            return None
        return {"pool": b.pretty_name(), "cpus": self._cpus_text(b.cpus),
                "sharedIdleCpus": self._cpus_text(b.shared_idle_cpus), "pods": len(b.pod_ids)}

    def container_placement(self, c: CachedContainer) -> tuple[str, CPUSet] | None:
        """The balloon (``pool`` of :meth:`describe_container`) and the CPUs the container holds
        alone: its balloon's CPUs when the balloon holds its pod only (not a reserved balloon)."""
        b = self._balloon_of(c)
        if b is None:
            return None
        pool = b.pretty_name()
        alone = len(b.pod_ids) == 1 and not b.cpus.is_empty() and not pool.startswith("reserved[")
        return pool, b.cpus if alone else CPUSet()

    def reserved_cpus(self) -> CPUSet:
        """The reserved CPUs as :meth:`describe` reports them: ``reservedResources``, or the
        reserved balloons' CPUs when none are set aside."""
        return self.reserved or CPUSet().union(*(b.cpus for b in self._balloons_of(self.reserved_def)))

    def describe(self) -> dict[str, Any]:
        """The balloons as the report's pools: CPUs, their free mCPU and the idle CPUs shared."""
        pools = []
        for b in self.balloons:
            free = self._free_milli(b)
            pools.append({"name": b.pretty_name(), "depth": 0, "type": b.defn.name,
                          "capacity": {"cpu": f"{str(b.cpus) or '-'} ({b.cpus.size()})",
                                       "memory": memset_string(b.mems) or "-"},
                          "free": {"cpu": _milli(free)}, "allocatableShared": str(b.shared_idle_cpus) or "-",
                          "cpuClass": b.defn.cpu_class, "containers": b.container_count()})
        return {"policy": NAME, "reserved": str(self.reserved_cpus()), "allowed": str(self.allowed),
                "idle": str(self.free_cpus), "pools": pools}

    def topology_zones(self) -> list[TopologyZone]:
        """``GetTopologyZones``: one ``balloon`` zone per balloon — ``cpu`` capacity: every CPU of the
        system; allocatable: the largest balloon this type can grow to (``maxCPUs``, or the CPUs free
        once the pre-created balloons took theirs, plus its own ``minCPUs`` when the type pre-creates
        balloons); available: the largest request that fits now, inflating the balloon —; attributes
        ``cpuset``, ``shared cpuset`` (the idle CPUs it shares) and ``excess cpus``. With
        ``showContainersInNrt`` (the policy's, overridden per balloon type) each container of the
        balloon follows as an ``allocation for container`` zone under it: its CPU limit capped by the
        CPUs it may run on (capacity), its request (allocatable), nothing available."""
        show = bool(self.spec.get("showContainersInNrt"))
        sys_milli = 1000 * self.tree.cpus.size()
        zones = []
        for b in self.balloons:
            zone = TopologyZone(b.pretty_name(), "balloon")
            largest = self.ifree_cpus.size()
            if b.defn.min_balloons > 0:
                largest += b.defn.min_cpus
            if b.defn.max_cpus != NO_LIMIT and b.defn.max_cpus <= largest:
                largest = b.defn.max_cpus
            requested = self._requested_in(b)
            zone.resources.append(ZoneResource("cpu", _milli(sys_milli), _milli(1000 * largest),
                                               _milli(b.max_avail_milli_cpus(self.free_cpus) - requested)))
            zone.attributes.append(("cpuset", str(b.cpus)))
            zone.attributes.append(("shared cpuset", str(b.shared_idle_cpus)))
            zone.attributes.append(("excess cpus", f"{b.avail_milli_cpus() - requested}m"))
            zones.append(zone)
            if not (b.defn.show_containers_in_nrt if b.defn.show_containers_in_nrt is not None else show):
                continue
            for cids in b.pod_ids.values():
                for cid in cids:
                    c = self.cache.lookup_container(cid)
                    if c is None:
                        continue
                    req = c.resource_requirements()
                    limit, request = req.cpu_limit or 0, req.cpu_request or 0
                    cpus = c.cpuset_cpus()
                    allowed = 1000 * CPUSet.parse(cpus).size() if cpus else sys_milli
                    capacity = allowed if limit == 0 or limit > allowed else limit
                    czone = TopologyZone(c.pretty_name(), "allocation for container", zone.name)
                    czone.resources.append(ZoneResource("cpu", _milli(capacity), _milli(request), "0"))
                    czone.attributes.append(("cpuset", cpus))
                    czone.attributes.append(("memory set", c.cpuset_mems()))
                    zones.append(czone)
        return zones

def _without_hyperthreads(c: CachedContainer, bln: Balloon) -> bool:
    """``runWithoutHyperthreads``: the annotation, when it parses as a Go bool, overrides the type."""
    value, ok = c.effective_annotation(HIDE_HYPERTHREADS_KEY)
    if ok:
        parsed = _go_bool(value)
        if parsed is not None:
            return parsed
    return bool(bln.defn.hide_hyperthreads)


def _go_bool(value: str) -> bool | None:
    """``strconv.ParseBool``."""
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def _namespace_matches(namespace: str, patterns: list[str]) -> bool:
    for pat in patterns:
        try:
            if match(pat, namespace):
                return True
        except BadPattern:
            continue
    return False


def _apply_scheduling(c: CachedContainer, sc: dict[str, Any]) -> None:
    values: dict[str, Any] = {}
    if sc.get("policy"):
        values["policy"] = "SCHED_" + sc["policy"].upper().replace("-", "_")
    if sc.get("priority") is not None:
        values["priority"] = sc["priority"]
    if sc.get("flags"):
        values["flags"] = ["SCHED_FLAG_" + f.upper().replace("-", "_") for f in sc["flags"]]
    if sc.get("nice") is not None:
        values["nice"] = sc["nice"]
    for attr in ("runtime", "deadline", "period"):
        if sc.get(attr) is not None:
            values[attr] = sc[attr]
    if values:
        c.set_scheduling(**values)
    io: dict[str, Any] = {}
    if sc.get("ioClass"):
        io["class_"] = "IOPRIO_CLASS_" + sc["ioClass"].upper()
    if sc.get("ioPriority") is not None:
        io["priority"] = sc["ioPriority"]
    if io:
        c.set_io_priority(**io)


def _milli(v: int) -> str:
    return str(v // 1000) if v % 1000 == 0 else f"{v}m"


def _cpuset(text: str, what: str) -> CPUSet:
    try:
        return CPUSet.parse(text)
    except Exception:  # noqa: BLE001
        raise _error(f"failed to parse {what} CPU cpuset '{text}'") from None
