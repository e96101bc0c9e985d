"""Which resource pools a node can allocate from (``GatherPools``), in the allocator's search order.

A pool is all slices of one driver with one pool name. Only the newest generation counts; a
pool missing some of its slices is *incomplete* (skipped for ExactCount, an error for All); a
pool whose newest generation is only visible elsewhere is *obsolete* and silently dropped; a
pool with duplicate device names or broken counter references is *invalid*.

Upstream:
``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/experimental/pools_experimental.go``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..errors import KubetwinError
from .api import CounterSet, Node, ResourceSlice
from .features import AllocatorFeatures
from .nodeselector import NodeSelectorError, node_matches


class PoolError(KubetwinError):
    pass


@dataclass(slots=True)
class Pool:
    driver: str
    name: str
    slices: list[ResourceSlice] = field(default_factory=list)           # relevant for the node
    device_slices: list[ResourceSlice] = field(default_factory=list)    # targeting the node, by name
    other_slices: list[ResourceSlice] = field(default_factory=list)     # same pool, other nodes
    counter_sets: dict[str, CounterSet] = field(default_factory=dict)
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    has_binding_conditions: bool = False

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


class SliceIndex:
    """All slices, split once by node so that each node's gathering touches only its own."""

    def __init__(self, slices: Sequence[ResourceSlice]):
        self.all = tuple(slices)
        self.by_node: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        self.by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        for s in self.all:
            if s.node_name and not s.shared_counters:
                self.by_node.setdefault(s.node_name, []).append(s)
            else:
                self.shared.append(s)
            self.by_pool.setdefault((s.driver, s.pool), []).append(s)

    def for_node(self, node: Node) -> list[ResourceSlice]:
        return self.by_node.get(node.name, []) + self.shared


def _relevant(s: ResourceSlice, node: Node, features: AllocatorFeatures) -> bool:
    if not features.partitionable_devices and (s.per_device_node_selection is not None or s.shared_counters):
        return False
    if s.shared_counters:
        return True
    try:
        if s.node_name or s.all_nodes or s.node_selector is not None:
            return node_matches(node, s.node_name, s.all_nodes, s.node_selector)
        if s.per_device_node_selection:
            return any(node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in s.devices)
    except NodeSelectorError as exc:
        raise PoolError(f"failed to perform node selection for slice {s.name}: {exc}") from None
    return False  # no node selection: some future field we do not know


def gather_pools(index: SliceIndex, node: Node, features: AllocatorFeatures) -> list[Pool]:
    pools: dict[tuple[str, str], Pool] = {}
    for s in index.for_node(node):
        if not _relevant(s, node, features):
            continue
        key = (s.driver, s.pool)
        pool = pools.get(key)
        if pool is None:
            pools[key] = Pool(s.driver, s.pool, [s])
            continue
        current = pool.slices[0].generation
        if s.generation < current:
            continue
        if s.generation > current:
            pool.slices = []
        pool.slices.append(s)

    result: list[Pool] = []
    for key, pool in pools.items():
        first = pool.slices[0]
        complete = len(pool.slices) == first.resource_slice_count
        if not complete:
            obsolete, count = _check_slices_in_pool(index.by_pool.get(key, ()), first.generation)
            if obsolete:
                continue
            complete = count == first.resource_slice_count
        pool.incomplete = not complete
        _build(pool, index, features)
        result.append(pool)
    result.sort(key=lambda p: (p.has_binding_conditions, p.driver, p.name))
    return result


def _check_slices_in_pool(slices: Iterable[ResourceSlice], generation: int) -> tuple[bool, int]:
    count = 0
    for s in slices:
        if s.generation == generation:
            count += 1
        elif s.generation > generation:
            return True, 0
    return False, count


def _build(pool: Pool, index: SliceIndex, features: AllocatorFeatures) -> None:
    pool.slices.sort(key=lambda s: s.name)
    generation = pool.slices[0].generation
    if features.partitionable_devices:
        counter_slices = [s for s in pool.slices if s.shared_counters]
        pool.device_slices = [s for s in pool.slices if not s.shared_counters]
        targeting = {id(s) for s in pool.slices}
        pool.other_slices = sorted(
            (s for s in index.by_pool.get((pool.driver, pool.name), ())
             if s.generation == generation and id(s) not in targeting and not s.shared_counters),
            key=lambda s: s.name)
        for s in counter_slices:
            for cs in s.shared_counters:
                if cs.name in pool.counter_sets:
                    pool.invalid, pool.invalid_reason = True, f"duplicate counter set name {cs.name}"
                pool.counter_sets[cs.name] = cs
    else:
        pool.device_slices = list(pool.slices)
    seen: set[str] = set()
    for s in pool.device_slices:
        for d in s.devices:
            if d.name in seen and not pool.invalid:
                pool.invalid, pool.invalid_reason = True, f"duplicate device name {d.name}"
            seen.add(d.name)
            if d.binding_conditions:
                pool.has_binding_conditions = True
    if features.partitionable_devices and not pool.invalid:
        for s in pool.device_slices + pool.other_slices:
            for d in s.devices:
                for cc in d.consumes_counters:
                    consumed = pool.counter_sets.get(cc.counter_set)
                    if consumed is None:
                        pool.invalid = True
                        pool.invalid_reason = f"device {d.name} consumes counters from unknown counter set " \
                                              f"{cc.counter_set}"
                        return
                    for name in cc.counters:
                        if name not in consumed.counters:
                            pool.invalid = True
                            pool.invalid_reason = f"device {d.name} consumes unknown counter {name} of counter " \
                                                  f"set {cc.counter_set}"
                            return
