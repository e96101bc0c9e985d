"""NodeResourceTopologyMatch's Filter and Score over many nodes at once (the twin of
:mod:`.plugin`), over the NUMA cells kept as columns by :mod:`.columns`.

Filter (``filter.go``): for ``single-numa-node`` nodes, the lowest cell that fits the pod
(scope ``pod``: its effective request) or each init container, then each app container with its
request taken off the cell it got (scope ``container``); the reasons and codes are the plain
plugin's. A node the Filter rejected is marked "maybe over-reserved" in the cache, as the plain
Filter does — but only if the cycle actually filtered it there, which only the cycle knows: the
verdict's ``on_rejected`` is told the nodes it rejected among those examined.

Score (``score.go``, ``least_numa.go``): ``LeastAllocated`` and ``MostAllocated`` (weighted,
the smallest non-zero cell score; scope ``container``: the mean over the containers);
``LeastNUMANodes`` (the fewest cells that fit, lowest ids first, at the smallest average
distance — subsets tried per group of nodes with one distance matrix, nodes of up to
:data:`MAX_LEAST_NUMA_CELLS` cells; scope ``container``: each container taken off its cells).
Pods not Guaranteed score 100 everywhere (:data:`~kubetwin.scheduler.fastpath.vector.SKIPPED`).
``BalancedAllocation`` (its variance is formed with ``**``, which numpy would round otherwise)
scores node by node through the plugin.

The functions over rows (:func:`filter_rows`, :func:`score_rows`) take any index array of
nodes, so a windowed cycle can ask for a window. The twin steps aside (None: the plugin runs
node by node) for NRI nodes that publish their objects live (``Handle.live_nrt``, computed on
demand) and for requests the arrays cannot hold exactly. Irregular nodes (:mod:`.columns`) are
answered by the plugin's own functions inside the twin.

Not an upstream module: upstream has only the plain plugin (scheduler-plugins
``pkg/noderesourcetopology/filter.go``, ``score.go``); this is its vectorised twin.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ....model.pod import Pod, is_native_resource
from ....model.quantity import Quantity
from ...fastpath.vector import SKIPPED, FilterVerdict, ScoreVector, U, Vectorised, single_reason
from ...framework.interface import CycleState
from ...framework.status import Code
from .columns import NRTColumns, milli
from .plugin import (
    HIGHEST_NUMA_ID,
    MAX_DISTANCE,
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    _avg_distance,
    is_host_level_resource,
    is_numa_affine_resource,
    pod_effective_request,
)

if TYPE_CHECKING:
    from ...backend.cache import ClusterState

#: reason keys (0: the node passes)
STALE, POD, INIT, CONTAINER, INCONSISTENT = 1, 2, 3, 4, 5
REASONS: tuple[tuple[str, ...], ...] = (
    (), ("invalid node topology data",), ("cannot align pod",), ("cannot align init container",),
    ("cannot align container",), ("inconsistent resource accounting",))
_KEY_OF = {r[0]: k for k, r in enumerate(REASONS) if r}
_CODES = np.array([0, U, U, U, U, np.int8(Code.Error)], dtype=np.int8)

Amounts = list[tuple[str, int, int]]   # (name, thousandths, Value())


def _amounts(requests: Mapping[str, Quantity]) -> Amounts | None:
    """A request as exact integers (None: not exact in thousandths, negative or too large)."""
    out = []
    for name, q in requests.items():
        m = milli(q)
        if m is None or m < 0:
            return None
        out.append((name, m, q.value()))
    return out


def columns_of(cs: "ClusterState", plugin: Any) -> NRTColumns | None:
    """The plugin's columns over ``cs`` (None: objects published live, computed on demand)."""
    if plugin.handle.live_nrt is not None:
        return None
    cols: NRTColumns | None = plugin.columns
    if cols is None or cols.cs is not cs:
        cols = plugin.columns = NRTColumns(cs, plugin)
    return cols


# --- Filter ----------------------------------------------------------------------------------------


def _align(cols: NRTColumns, sub: np.ndarray, req: Amounts, guaranteed: bool,
           work: dict[int, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """``resourcesAvailableInAnyNUMANodes`` on rows ``sub``: (fits, lowest cell that fits)."""
    k = len(sub)
    ok = np.ones(k, dtype=bool)
    constrained = np.zeros(k, dtype=bool)
    mask = cols.valid[sub]
    for name, m, _ in req:
        if m == 0:
            continue
        ok &= cols.node_has_name(name)[sub]
        host = is_host_level_resource(name)
        r = cols.rindex.get(name)
        if r is None:
            if not host:
                constrained[:] = True
                mask[:] = False
            continue
        present = cols.present[r][sub]
        if not guaranteed and is_numa_affine_resource(name):
            fits = present
        else:
            have = work[r] if work is not None and r in work else cols.milli[r][sub]
            fits = present & (have >= m)
        if host:
            affine = present.any(axis=1)
            constrained |= affine
            fits = fits | ~affine[:, None]
        else:
            constrained[:] = True
        mask &= fits
    if mask.shape[1]:
        ok &= ~constrained | mask.any(axis=1)
        cell = np.where(constrained, mask.argmax(axis=1), 0)
    else:
        ok &= ~constrained
        cell = np.zeros(k, dtype=np.int64)
    return ok, cell


def _containers_fit(cols: NRTColumns, sub: np.ndarray, pod: Pod, guaranteed: bool) -> np.ndarray | None:
    """Scope ``container`` on rows ``sub``: the reason key of each (0: fits)."""
    k = len(sub)
    key = np.zeros(k, dtype=np.int8)
    alive = np.ones(k, dtype=bool)
    for c in pod.spec.init_containers:
        req = _amounts(c.resources.requests)
        if req is None:
            return None
        ok, _ = _align(cols, sub, req, guaranteed, None)
        key[alive & ~ok] = INIT
        alive &= ok
    work: dict[int, np.ndarray] = {}
    at = np.arange(k)
    for c in pod.spec.containers:
        req = _amounts(c.resources.requests)
        if req is None:
            return None
        ok, cell = _align(cols, sub, req, guaranteed, work)
        key[alive & ~ok] = CONTAINER
        alive &= ok
        if not cols.width:
            continue
        for name, m, _ in req:   # subtractFromNUMA
            if (not guaranteed and is_numa_affine_resource(name)) or m == 0:
                continue
            r = cols.rindex.get(name)
            if r is None:
                continue
            w = work.get(r)
            if w is None:
                w = work[r] = cols.milli[r][sub]
            here = alive & cols.present[r][sub, cell]
            left = w[at, cell] - m
            bad = here & (left < 0)
            if bad.any():
                key[bad] = INCONSISTENT
                alive &= ~bad
                here &= ~bad
            w[at[here], cell[here]] = left[here]
    return key


def filter_rows(cols: NRTColumns, pod: Pod, plugin: Any, qos: str, rows: np.ndarray) -> np.ndarray | None:
    """The reason key of the Filter on each node of ``rows`` (0: passes); None: run the plugin.
    The columns must be synced."""
    key = np.zeros(len(rows), dtype=np.int8)
    key[~cols.fresh[rows]] = STALE
    act = cols.has[rows] & cols.single[rows]
    regular = cols.regular[rows]
    guaranteed = qos == "Guaranteed"
    pod_scope = cols.pod_scope[rows]
    at = np.flatnonzero(act & regular & pod_scope)
    if len(at):
        req = _amounts(pod_effective_request(pod))
        if req is None:
            return None
        ok, _ = _align(cols, rows[at], req, guaranteed, None)
        key[at[~ok]] = POD
    at = np.flatnonzero(act & regular & ~pod_scope)
    if len(at):
        got = _containers_fit(cols, rows[at], pod, guaranteed)
        if got is None:
            return None
        key[at] = got
    infos, views = cols.cs.infos, cols.views
    for j in np.flatnonzero(act & ~regular).tolist():
        i = int(rows[j])
        nrt = views[i]
        assert nrt is not None
        st = plugin._filter(pod, infos[i], nrt, qos)
        if not st.is_success:
            key[j] = _KEY_OF[st.reasons[0]]
    return key


def filter_nrt(cs: "ClusterState", pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict | None:
    qos = plugin._qos(pod)
    if qos == "BestEffort" and not any(not is_native_resource(n) for c, _ in pod.all_containers()
                                       for n in c.resources.requests):
        return single_reason(plugin.name, cs.no_fail, U, REASONS[STALE][0])
    cols = columns_of(cs, plugin)
    if cols is None:
        return None
    cols.sync(pod)
    key = filter_rows(cols, pod, plugin, qos, cs.all_nodes)
    if key is None:
        return None
    fail = key != 0
    names = cs.names
    cache = cols.cache

    def on_rejected(mask: np.ndarray) -> None:
        # the plain Filter marks a node it rejected, unless the data was stale
        for i in np.flatnonzero(mask & (key != STALE)).tolist():
            cache.node_maybe_over_reserved(names[i], pod)

    return FilterVerdict(plugin.name, fail, _CODES[key], key.astype(np.int64), REASONS.__getitem__,
                         on_rejected=on_rejected)


# --- Score ---------------------------------------------------------------------------------------


def _each_numa(cols: NRTColumns, sub: np.ndarray, req: Amounts, most: bool, weight: Any) -> np.ndarray:
    """``scoreForEachNUMANode`` with the weighted Least/MostAllocated cell score, on rows ``sub``."""
    k = len(sub)
    low = np.zeros(k, dtype=np.int64)
    wsum = sum(weight(name) for name, _, _ in req)
    for c in range(cols.width):
        total = np.zeros(k, dtype=np.int64)
        for name, m, v in req:
            r = cols.rindex.get(name)
            if r is None:
                continue
            cap_m = cols.milli[r][sub, c]
            cap_v = cols.value[r][sub, c]
            zero = ~cols.present[r][sub, c] | (cap_m == 0) | (m > cap_m)
            safe = np.where(zero, 1, cap_v)
            s = (v * MAX_NODE_SCORE) // safe if most else ((cap_v - v) * MAX_NODE_SCORE) // safe
            s[zero] = 0
            total += s * weight(name)
        s = total // wsum if wsum else total * 0
        upd = cols.valid[sub, c] & ((low == 0) | ((s != 0) & (s < low)))
        low[upd] = s[upd]
    return low


# --- LeastNUMANodes -------------------------------------------------------------------------------

#: cells above this and LeastNUMANodes goes node by node (the plugin tries every subset of cells)
MAX_LEAST_NUMA_CELLS = 8


class _Combos:
    """A distance group's cell subsets by size, in ``itertools.combinations`` order, with their
    average distances and each size's smallest (the plugin's own ``_avg_distance``)."""

    def __init__(self, cells: list[Any]):
        self.by_size: list[tuple[list[tuple[int, ...]], list[float], float]] = []
        for k in range(1, len(cells) + 1):
            combos = list(itertools.combinations(range(len(cells)), k))
            dists = [_avg_distance(cells, c) for c in combos]
            self.by_size.append((combos, dists, min(min(dists, default=float(MAX_DISTANCE)), float(MAX_DISTANCE))))


def _combos(cols: NRTColumns, g: int) -> _Combos:
    got: _Combos | None = cols.combos.get(g)
    if got is None:
        got = cols.combos[g] = _Combos(cols.group_cells[g])
    return got


def _required(cols: NRTColumns, sub: np.ndarray, req: Amounts, table: _Combos,
              work: dict[int, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``numaNodesRequired`` on rows ``sub`` of one distance group: (found, size, combo index,
    minimal distance) — the first subset of the fewest cells that fits at the size's smallest
    average distance, else the first at the smallest distance found."""
    k = len(sub)
    found = np.zeros(k, dtype=bool)
    size = np.zeros(k, dtype=np.int64)
    which = np.zeros(k, dtype=np.int64)
    minimal = np.zeros(k, dtype=bool)
    cols_of = [(cols.rindex.get(name), m) for name, m, _ in req]
    for s, (subsets, dists, min_avg) in enumerate(table.by_size, start=1):
        first_min = np.full(k, -1, dtype=np.int64)
        best = np.full(k, -1, dtype=np.int64)
        best_d = np.full(k, 256.0)
        for j, combo in enumerate(subsets):
            ok = ~found
            for r, m in cols_of:
                if r is None:
                    ok = ok & False
                    break
                present = cols.present[r][sub]
                amounts = work[r] if r in work else cols.milli[r][sub]
                total = np.zeros(k, dtype=np.int64)
                for c in combo:
                    ok = ok & present[:, c]
                    total += amounts[:, c]
                if m:
                    ok = ok & (total >= m)
            if not ok.any():
                continue
            d = dists[j]
            if d == min_avg:
                first_min[ok & (first_min < 0)] = j
            upd = ok & (d < best_d)
            best[upd] = j
            best_d[upd] = d
        at_min = first_min >= 0
        other = ~at_min & (best >= 0)
        newly = at_min | other
        if newly.any():
            found |= newly
            size[newly] = s
            which[at_min] = first_min[at_min]
            which[other] = best[other]
            minimal[at_min] = True
        if found.all():
            break
    return found, size, which, minimal


def _only_non_numa_rows(cols: NRTColumns, sub: np.ndarray, req: Amounts) -> np.ndarray:
    out = np.ones(len(sub), dtype=bool)
    for name, _, _ in req:
        r = cols.rindex.get(name)
        if r is not None:
            out &= ~cols.present[r][sub].any(axis=1)
    return out


def _subtract_from_numas(cols: NRTColumns, sub: np.ndarray, req: Amounts, cells: tuple[int, ...],
                         work: dict[int, np.ndarray]) -> None:
    """``subtractFromNUMAs`` on rows ``sub`` (all given the same cells, ascending)."""
    for name, m, _ in req:
        r = cols.rindex.get(name)
        if r is None or m == 0:
            continue
        w = work.get(r)
        if w is None:
            w = work[r] = cols.milli[r][sub]
        want = np.full(len(sub), m, dtype=np.int64)
        present = cols.present[r][sub]
        for c in cells:
            here = present[:, c] & (want > 0)
            have = w[:, c]
            take = np.minimum(want, have)
            all_of = here & (want >= have)
            want = np.where(all_of, want - have, np.where(here, 0, want))
            w[:, c] = np.where(all_of, 0, np.where(here, have - take, have))


def _normalize_least_numa(count: np.ndarray, minimal: np.ndarray) -> np.ndarray:
    per = MAX_NODE_SCORE // HIGHEST_NUMA_ID
    return MAX_NODE_SCORE - count * per + np.where(minimal, per // 2, 0)


def _least_numa_group(cols: NRTColumns, sub: np.ndarray, pod: Pod, pod_scope: bool, combos: _Combos) -> np.ndarray | None:
    k = len(sub)
    if pod_scope:
        req = _amounts(pod_effective_request(pod))
        if req is None:
            return None
        out = np.full(k, MAX_NODE_SCORE, dtype=np.int64)
        numa = ~_only_non_numa_rows(cols, sub, req)
        found, size, _, minimal = _required(cols, sub, req, combos, {})
        out[numa & ~found] = MIN_NODE_SCORE
        ok = numa & found
        out[ok] = _normalize_least_numa(size[ok], minimal[ok])
        return out
    alive = np.ones(k, dtype=bool)      # not yet MIN
    max_count = np.zeros(k, dtype=np.int64)
    all_min = np.ones(k, dtype=bool)
    work: dict[int, np.ndarray] = {}
    for c in list(pod.spec.init_containers) + list(pod.spec.containers):
        req = _amounts(c.resources.requests)
        if req is None:
            return None
        act = alive & ~_only_non_numa_rows(cols, sub, req)
        if not act.any():
            continue
        at = np.flatnonzero(act)
        view = {r: w[at] for r, w in work.items()}
        found, size, which, minimal = _required(cols, sub[at], req, combos, view)
        alive[at[~found]] = False
        ok = found
        all_min[at[ok]] &= minimal[ok]
        max_count[at[ok]] = np.maximum(max_count[at[ok]], size[ok])
        for s, j in sorted(set(zip(size[ok].tolist(), which[ok].tolist()))):
            rows = at[ok & (size == s) & (which == j)]
            part = {r: w[rows] for r, w in work.items()}
            _subtract_from_numas(cols, sub[rows], req, combos.by_size[s - 1][0][j], part)
            for r, w in part.items():
                if r not in work:
                    work[r] = cols.milli[r][sub].copy()
                work[r][rows] = w
    out = np.where(max_count == 0, MAX_NODE_SCORE, _normalize_least_numa(max_count, all_min))
    out[~alive] = MIN_NODE_SCORE
    return out


def _least_numa(cols: NRTColumns, pod: Pod, plugin: Any, rows: np.ndarray) -> np.ndarray | None:
    """``leastNUMAContainerScopeScore`` / ``leastNUMAPodScopeScore`` (any policy) on ``rows``."""
    out = np.zeros(len(rows), dtype=np.int64)
    has = cols.has[rows]
    groups = cols.group[rows]
    infos = cols.cs.infos
    plain = has & (~cols.regular[rows] | (cols.ncells[rows] > MAX_LEAST_NUMA_CELLS))
    for j in np.flatnonzero(plain).tolist():
        out[j] = plugin.score(None, pod, infos[int(rows[j])])[0]
    vec = has & ~plain
    pod_scope = cols.pod_scope[rows]
    for g in np.unique(groups[vec]).tolist():
        for scope in (True, False):
            at = np.flatnonzero(vec & (groups == g) & (pod_scope == scope))
            if len(at):
                got = _least_numa_group(cols, rows[at], pod, scope, _combos(cols, g))
                if got is None:
                    return None
                out[at] = got
    empty = has & ~plain & (groups < 0)   # no cells: every request is off the NUMA nodes
    out[empty] = MAX_NODE_SCORE
    return out


def score_rows(cols: NRTColumns, pod: Pod, plugin: Any, rows: np.ndarray) -> np.ndarray | None:
    """The raw Score of a Guaranteed pod on each node of ``rows``; None: run the plugin.
    The columns must be synced."""
    args = plugin.args
    if args.strategy == "LeastNUMANodes":
        return _least_numa(cols, pod, plugin, rows)
    if args.strategy not in ("LeastAllocated", "MostAllocated"):
        return None
    most = args.strategy == "MostAllocated"
    out = np.zeros(len(rows), dtype=np.int64)
    act = cols.has[rows] & cols.single[rows]
    regular = cols.regular[rows]
    pod_scope = cols.pod_scope[rows]
    at = np.flatnonzero(act & regular & pod_scope)
    if len(at):
        req = _amounts(pod_effective_request(pod))
        if req is None:
            return None
        out[at] = _each_numa(cols, rows[at], req, most, args.weight)
    at = np.flatnonzero(act & regular & ~pod_scope)
    if len(at):
        containers = list(pod.spec.init_containers) + list(pod.spec.containers)
        if containers:
            acc = np.zeros(len(at), dtype=np.float64)
            for c in containers:
                req = _amounts(c.resources.requests)
                if req is None:
                    return None
                acc = acc + _each_numa(cols, rows[at], req, most, args.weight).astype(np.float64)
            out[at] = np.trunc(acc / len(containers)).astype(np.int64)
    infos = cols.cs.infos
    for j in np.flatnonzero(act & ~regular).tolist():
        out[j] = plugin.score(None, pod, infos[int(rows[j])])[0]
    return out


def score_nrt(cs: "ClusterState", pod: Pod, plugin: Any, feasible: np.ndarray) -> ScoreVector | None:
    if plugin._qos(pod) != "Guaranteed":
        return SKIPPED   # 100 on every node
    cols = columns_of(cs, plugin)
    if cols is None:
        return None
    cols.sync(pod)
    raw = score_rows(cols, pod, plugin, np.asarray(feasible, dtype=np.int64))
    if raw is None:
        return None
    return ScoreVector(raw, raw)   # no NormalizeScore


VECTORISED = Vectorised(filter=filter_nrt, score=score_nrt)
