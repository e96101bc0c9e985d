"""NodeResourceTopologyMatch (kubernetes-sigs/scheduler-plugins ``pkg/noderesourcetopology``:
``filter.go``, ``score.go``, ``least_numa.go``): would the node's kubelet,
with its topology manager policy and scope, find NUMA cells for the pod — and how good a fit.

NUMA cells come from the node's NodeResourceTopology zones of type ``Node``; their resources
are the ``available`` amounts. Filter acts only for ``single-numa-node``. Scores are raw
(no NormalizeScore).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Mapping

from ....model.pod import Pod, is_hugepage_resource, is_native_resource
from ....model.quantity import Quantity
from ...framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, Plugin
from ...framework.status import SUCCESS, Code, Status, unschedulable
from ...framework.types import NodeInfo
from . import NAME
from .args import NodeResourceTopologyMatchArgs, parse_node_resource_topology_match_args
from .nrt import NodeResourceTopology, nrt_from_dict, numa_id, topology_manager_config

HIGHEST_NUMA_ID = 8
MAX_DISTANCE = 255
_ZERO = Quantity.from_int(0)


@dataclass
class NUMANode:
    numa_id: int
    resources: dict[str, Quantity]
    costs: dict[int, int]


def numa_nodes(nrt: NodeResourceTopology) -> list[NUMANode]:
    """``createNUMANodeList``: cells in zone order, resources = available, costs by NUMA id.

    The cells of one (immutable) object are worked out once; each call gets its own copies, as
    Filter takes resources off them."""
    key = id(nrt)
    got = _CELLS.get(key)
    if got is None or got[0] is not nrt:
        if len(_CELLS) > 4096:
            _CELLS.clear()
        got = _CELLS[key] = (nrt, _cells(nrt))
    return [NUMANode(nid, dict(res), costs) for nid, res, costs in got[1]]


#: id(object) -> (object, its cells): the object is kept so its id is not reused while cached
_CELLS: dict[int, tuple[NodeResourceTopology, list[tuple[int, dict[str, Quantity], dict[int, int]]]]] = {}


def _cells(nrt: NodeResourceTopology) -> list[tuple[int, dict[str, Quantity], dict[int, int]]]:
    out = []
    for zone in nrt.zones:
        if zone.type != "Node":
            continue
        nid = numa_id(zone.name)
        if nid is None:
            continue
        res = {r.name: (r.available if r.available is not None else _ZERO) for r in zone.resources}
        costs = {}
        for c in zone.costs:
            cid = numa_id(c.name)
            if cid is not None:
                costs[cid] = c.value
        out.append((nid, res, costs))
    return out


def pod_effective_request(pod: Pod) -> dict[str, Quantity]:
    """scheduler-plugins ``util.GetPodEffectiveRequest``: max(Σ app containers, max init container)."""
    init: dict[str, Quantity] = {}
    for c in pod.spec.init_containers:
        for name, q in c.resources.requests.items():
            if name in init and q.cmp(init[name]) <= 0:
                continue
            init[name] = q
    out: dict[str, Quantity] = {}
    for c in pod.spec.containers:
        for name, q in c.resources.requests.items():
            out[name] = out[name] + q if name in out else q
    for name, q in init.items():
        if name in out and q.cmp(out[name]) <= 0:
            continue
        out[name] = q
    return out


def is_host_level_resource(name: str) -> bool:
    return name in ("ephemeral-storage", "storage") or not is_native_resource(name)


def is_numa_affine_resource(name: str) -> bool:
    return name in ("cpu", "memory") or is_hugepage_resource(name)


def suitable(qos: str, name: str, want: Quantity, have: Quantity) -> bool:
    """``isResourceSetSuitable``: non-Guaranteed pods get cpu/memory/hugepages from the shared pool."""
    if qos != "Guaranteed" and is_numa_affine_resource(name):
        return True
    return have.cmp(want) >= 0


def _node_allocatable_names(node: NodeInfo) -> set[str]:
    """Keys of ``util.ResourceList(nodeInfo.Allocatable)``: the fixed four always, scalars if present
    (worked out once per allocatable map: callers only read the set)."""
    allocatable = node.node.allocatable
    got = _NAMES.get(id(allocatable))
    if got is not None and got[0] is allocatable:
        return got[1]
    from ...framework.resources import is_scalar_resource_name

    names = {"cpu", "memory", "pods", "ephemeral-storage"}
    names.update(n for n in allocatable if is_scalar_resource_name(n))
    if len(_NAMES) > 65536:
        _NAMES.clear()
    _NAMES[id(allocatable)] = (allocatable, names)
    return names


_NAMES: dict[int, tuple[Any, set[str]]] = {}


def available_in_any_numa(cells: list[NUMANode], resources: Mapping[str, Quantity], qos: str,
                          node_names: set[str]) -> tuple[int, bool]:
    """``resourcesAvailableInAnyNUMANodes``: the lowest cell that fits everything."""
    mask = set(range(64))
    for name, q in resources.items():
        if q.is_zero():
            continue
        if name not in node_names:
            return HIGHEST_NUMA_ID, False
        has_affinity = False
        fits = set()
        for cell in cells:
            have = cell.resources.get(name)
            if have is None:
                continue
            has_affinity = True
            if suitable(qos, name, q, have):
                fits.add(cell.numa_id)
        if not has_affinity and is_host_level_resource(name):
            continue
        mask &= fits
        if not mask:
            return HIGHEST_NUMA_ID, False
    return min(mask), True


def subtract_from_cell(cells: list[NUMANode], nid: int, qos: str, requests: Mapping[str, Quantity]) -> bool:
    for cell in cells:
        if cell.numa_id != nid:
            continue
        for name, q in requests.items():
            if qos != "Guaranteed" and is_numa_affine_resource(name):
                continue
            if q.is_zero() or name not in cell.resources:
                continue
            left = cell.resources[name] - q
            if left.sign() < 0:
                return False
            cell.resources[name] = left
    return True


# --- scoring strategies ---------------------------------------------------------------------


def _least(req: Quantity, cap: Quantity) -> int:
    if cap.is_zero() or req.cmp(cap) > 0:
        return 0
    return (cap.value() - req.value()) * MAX_NODE_SCORE // cap.value()


def _most(req: Quantity, cap: Quantity) -> int:
    if cap.is_zero() or req.cmp(cap) > 0:
        return 0
    return req.value() * MAX_NODE_SCORE // cap.value()


def _weighted(fn, args: NodeResourceTopologyMatchArgs):
    def score(requested: Mapping[str, Quantity], available: Mapping[str, Quantity]) -> int:
        total = wsum = 0
        for name, q in requested.items():
            w = args.weight(name)
            total += fn(q, available.get(name, _ZERO)) * w
            wsum += w
        return _go_div(total, wsum) if wsum else 0

    return score


def _go_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _balanced(requested: Mapping[str, Quantity], available: Mapping[str, Quantity]) -> int:
    fractions = []
    for name, q in requested.items():
        cap = available.get(name, _ZERO).value()
        f = 1.0 if cap == 0 else q.value() / cap
        if f > 1:
            return 0
        fractions.append(f)
    n = len(fractions)
    if n < 2:
        return -(2**63)  # gonum's sample variance of one value is NaN; int64(NaN) on amd64
    mean = sum(fractions) / n
    variance = sum((f - mean) ** 2 for f in fractions) / (n - 1)
    return int((1 - variance) * MAX_NODE_SCORE)


def score_each_numa(requested: Mapping[str, Quantity], cells: list[NUMANode], fn) -> int:
    """``scoreForEachNUMANode``: the smallest non-zero cell score."""
    low = 0
    for cell in cells:
        s = fn(requested, cell.resources)
        if low == 0 or (s != 0 and s < low):
            low = s
    return low


def _normalize_least_numa(count: int, min_avg_distance: bool) -> int:
    per = MAX_NODE_SCORE // HIGHEST_NUMA_ID
    score = MAX_NODE_SCORE - count * per
    return score + per // 2 if min_avg_distance else score


def _avg_distance(cells: list[NUMANode], combo: tuple[int, ...]) -> float:
    if not combo:
        return float(MAX_DISTANCE)
    acc = 0
    for a in combo:
        for b in combo:
            acc += cells[a].costs.get(cells[b].numa_id, MAX_DISTANCE)
    return _f32(acc / (len(combo) * len(combo)))


def _f32(x: float) -> float:
    import struct

    return struct.unpack("f", struct.pack("f", x))[0]


def numa_nodes_required(qos: str, cells: list[NUMANode],
                        resources: Mapping[str, Quantity]) -> tuple[list[int] | None, bool]:
    """The fewest cells (lowest ids first) that together fit; and whether their distance is minimal."""
    for k in range(1, len(cells) + 1):
        combos = list(itertools.combinations(range(len(cells)), k))
        min_avg = min((_avg_distance(cells, c) for c in combos), default=float(MAX_DISTANCE))
        min_avg = min(min_avg, float(MAX_DISTANCE))
        best, best_d = None, 256.0
        for combo in combos:
            if not all(name in cells[i].resources for i in combo for name in resources):
                continue
            combined: dict[str, Quantity] = {}
            for i in combo:
                for name, q in cells[i].resources.items():
                    combined[name] = combined[name] + q if name in combined else q
            if not all(q.is_zero() or suitable(qos, name, q, combined.get(name, _ZERO))
                       for name, q in resources.items()):
                continue
            d = _avg_distance(cells, combo)
            if d == min_avg:
                return [cells[i].numa_id for i in combo], True
            if d < best_d:
                best, best_d = combo, d
        if best is not None:
            return [cells[i].numa_id for i in best], False
    return None, False


def _only_non_numa(cells: list[NUMANode], resources: Mapping[str, Quantity]) -> bool:
    return not any(name in cell.resources for name in resources for cell in cells)


def _subtract_from_numas(resources: Mapping[str, Quantity], cells: list[NUMANode], ids: list[int]) -> None:
    for name, q in resources.items():
        want = q
        for nid in ids:
            if want.is_zero():
                break
            if nid >= len(cells):
                continue
            res = cells[nid].resources
            if name not in res:
                continue
            have = res[name]
            c = want.cmp(have)
            if c >= 0:
                want = want - have
                res[name] = _ZERO
            else:
                res[name] = have - want
                want = _ZERO


class NodeResourceTopologyMatch(Plugin):
    name = NAME
    #: scheduler-plugins decodes its plugins' args in its own config group
    args_api_version = "kubescheduler.config.x-k8s.io/v1"

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any] | None, path: str,
                   file: str | None = None) -> NodeResourceTopologyMatchArgs:
        return parse_node_resource_topology_match_args(raw, path, file)

    def __init__(self, args: NodeResourceTopologyMatchArgs, handle: Any):
        super().__init__(args, handle)
        self._nrts: dict[str, NodeResourceTopology] | None = None
        self._cache: Any = None
        self._last_qos: tuple[Pod, str] | None = None
        #: the vectorised twin's NUMA cells across nodes (:mod:`.columns`), made by :mod:`.vector`
        self.columns: Any = None

    def _object(self, node_name: str) -> NodeResourceTopology | None:
        """A node's NodeResourceTopology: the one its runtime policy publishes live (``handle.live_nrt``,
        simulated NRI nodes), else the objects given as input (the API server's, never updated)."""
        live = self.handle.live_nrt
        if live is not None and (got := live(node_name)) is not None:
            return got
        if self._nrts is None:
            self._nrts = {}
            objs = self.handle.objects.get("NodeResourceTopology", [])
            where = (getattr(self.handle, "origins", None) or {}).get("NodeResourceTopology") or []
            for i, obj in enumerate(objs):
                nrt = nrt_from_dict(obj, where[i] if i < len(where) else None)
                self._nrts[nrt.metadata.name] = nrt
        return self._nrts.get(node_name)

    @property
    def cache(self) -> Any:
        """The NRT cache the args choose (:mod:`.cache`), over the input objects unless a node
        agent publishes them (:meth:`use_source`)."""
        if self._cache is None:
            self._object("")
            self.use_source(self._object, sorted(self._nrts or ()))
        return self._cache

    def use_source(self, source: Any, node_names: Any) -> None:
        """Read NodeResourceTopology objects from ``source`` (node name → object or None), e.g. a
        simulated topology-updater; the cache starts over (OverReserve copies them now)."""
        from .cache import new_cache

        self._cache = new_cache(self.args, source, node_names)

    def _qos(self, pod: Pod) -> str:
        """The pod's QoS class (asked once per node: the last pod's answer is kept)."""
        last = self._last_qos
        if last is not None and last[0] is pod:
            return last[1]
        from ....kubelet.qos import get_pod_qos

        qos = get_pod_qos(pod, self.handle.gates)
        self._last_qos = (pod, qos)
        return qos

    # --- filter --------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        qos = self._qos(pod)
        if qos == "BestEffort" and not any(not is_native_resource(n) for c, _ in pod.all_containers()
                                           for n in c.resources.requests):
            return SUCCESS
        nrt, fresh = self.cache.get_cached_nrt_copy(node.name, pod)
        if not fresh:
            return unschedulable("invalid node topology data")
        if nrt is None:
            return SUCCESS
        status = self._filter(pod, node, nrt, qos)
        if not status.is_success:
            self.cache.node_maybe_over_reserved(node.name, pod)
        return status

    def _filter(self, pod: Pod, node: NodeInfo, nrt: NodeResourceTopology, qos: str) -> Status:
        policy, scope = topology_manager_config(nrt)
        if policy != "single-numa-node":
            return SUCCESS
        names = _node_allocatable_names(node)
        if scope == "pod":
            _, ok = available_in_any_numa(numa_nodes(nrt), pod_effective_request(pod), qos, names)
            return SUCCESS if ok else unschedulable("cannot align pod")
        cells = numa_nodes(nrt)
        for c in pod.spec.init_containers:
            _, ok = available_in_any_numa(cells, c.resources.requests, qos, names)
            if not ok:
                return unschedulable("cannot align init container")
        for c in pod.spec.containers:
            nid, ok = available_in_any_numa(cells, c.resources.requests, qos, names)
            if not ok:
                return unschedulable("cannot align container")
            if not subtract_from_cell(cells, nid, qos, c.resources.requests):
                return Status(Code.Error, ("inconsistent resource accounting",))
        return SUCCESS

    # --- score ---------------------------------------------------------------------------------

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]:
        qos = self._qos(pod)
        if qos != "Guaranteed":
            return MAX_NODE_SCORE, SUCCESS
        nrt, fresh = self.cache.get_cached_nrt_copy(node.name, pod)
        if not fresh or nrt is None:
            return 0, SUCCESS
        policy, scope = topology_manager_config(nrt)
        args: NodeResourceTopologyMatchArgs = self.args
        if args.strategy == "LeastNUMANodes":
            return (self._least_numa_pod(pod, nrt, qos) if scope == "pod"
                    else self._least_numa_containers(pod, nrt, qos)), SUCCESS
        if policy != "single-numa-node":
            return 0, SUCCESS
        fn = {"LeastAllocated": _weighted(_least, args), "MostAllocated": _weighted(_most, args),
              "BalancedAllocation": _balanced}[args.strategy]
        cells = numa_nodes(nrt)
        if scope == "pod":
            return score_each_numa(pod_effective_request(pod), cells, fn), SUCCESS
        containers = list(pod.spec.init_containers) + list(pod.spec.containers)
        if not containers:
            return 0, SUCCESS
        scores = [score_each_numa(c.resources.requests, cells, fn) for c in containers]
        return int(sum(float(s) for s in scores) / len(scores)), SUCCESS

    # --- reserve / postbind ----------------------------------------------------------------------

    def reserve(self, pod: Pod, node: str) -> None:
        """``Reserve`` then ``PostBind``: kubetwin binds at once, so both run together."""
        cache = self.cache
        cache.reserve_node_resources(node, pod)
        cache.post_bind(node, pod)

    def unreserve(self, pod: Pod) -> None:
        """The pod left its node: the NRT cache is not told (upstream's Unreserve is a failed
        bind, which kubetwin never has)."""

    def _least_numa_pod(self, pod: Pod, nrt: NodeResourceTopology, qos: str) -> int:
        cells = numa_nodes(nrt)
        resources = pod_effective_request(pod)
        if _only_non_numa(cells, resources):
            return MAX_NODE_SCORE
        ids, min_dist = numa_nodes_required(qos, cells, resources)
        if ids is None:
            return MIN_NODE_SCORE
        return _normalize_least_numa(len(ids), min_dist)

    def _least_numa_containers(self, pod: Pod, nrt: NodeResourceTopology, qos: str) -> int:
        cells = numa_nodes(nrt)
        max_count = 0
        all_min = True
        for c in list(pod.spec.init_containers) + list(pod.spec.containers):
            req = c.resources.requests
            if _only_non_numa(cells, req):
                continue
            ids, min_dist = numa_nodes_required(qos, cells, req)
            if ids is None:
                return MIN_NODE_SCORE
            all_min &= min_dist
            max_count = max(max_count, len(ids))
            _subtract_from_numas(req, cells, sorted(ids))
        if max_count == 0:
            return MAX_NODE_SCORE
        return _normalize_least_numa(max_count, all_min)
