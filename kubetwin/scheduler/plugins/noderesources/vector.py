"""NodeResourcesFit's Filter and Score and NodeResourcesBalancedAllocation's Score over every node
at once (the twins of :mod:`.fit`, :mod:`.balanced_allocation` and :mod:`.resource_allocation`),
from the cache's allocatable/requested columns.

The two plugins of the default profile read the same cpu and memory columns and every cycle that
places a pod scores both: :func:`score_resources_together` does it from one gather. A failing
cycle's Fit reasons are worked out only when no node fits; a kept verdict re-reads single nodes
with :func:`node_resources_fit_on`.

Not an upstream module: upstream has only the plain plugin (``pkg/scheduler/framework/plugins/noderesources/fit.go``, ``balanced_allocation.go``); this is its vectorised twin."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from ....model.pod import Pod, is_extended_resource
from ...backend.cache import ClusterState
from ...backend.columns import FIXED_RESOURCES
from ...fastpath.nodescores import node_local_scores
from ...fastpath.vector import SKIPPED, UU, FilterVerdict, ScoreVector, U, Vectorised, codes
from ...framework.interface import MAX_NODE_SCORE, CycleState
from ...framework.resources import is_scalar_resource_name
from ...framework.status import SUCCESS, Code, Status
from ..dynamicresources.extended import device_class_for
from . import BALANCED_ALLOCATION, fit_kept
from . import resource_allocation as ra
from .args import LEAST_ALLOCATED, MOST_ALLOCATED

Wanted = tuple[str, int, bool, "int | None"]


def _wanted(cs: ClusterState, req: dict[str, int], args: Any) -> tuple[Wanted, ...]:
    out: list[Wanted] = []
    for name in FIXED_RESOURCES:
        want = req.get(name, 0)
        if want > 0:
            out.append((name, want, True, cs.rindex.get(name)))
    for name, want in req.items():
        if name in FIXED_RESOURCES or not is_scalar_resource_name(name) or want == 0:
            continue
        if is_extended_resource(name) and (
                name in args.ignored_resources or name.split("/", 1)[0] in args.ignored_resource_groups):
            continue
        out.append((name, want, False, cs.rindex.get(name)))
    return tuple(out)


def score_requests(cs: ClusterState, pod: Pod, resources: Any, use_requested: bool) -> list[int]:
    """``calculatePodResourceRequestList`` for the scored resources, once per pod shape."""
    a = cs.amounts(pod)
    # keyed by the resources' identity (the plugin's args, fixed while it runs), held in the entry:
    # hashing the specs themselves costs more than the lookup
    k = (id(resources), use_requested)
    got = a.memo.get(k)
    if got is None or got[0] is not resources:
        got = a.memo[k] = (resources, ra.pod_request_list(pod, cs.gates, resources, use_requested))
    return got[1]


def wanted_resources(cs: ClusterState, pod: Pod, plugin: Any, req: dict[str, int] | None = None) -> tuple[Wanted, ...]:
    """The requests ``fitsRequest`` checks, in the order of its reasons: the fixed resources asked
    for, then the scalar ones NodeResourcesFit does not ignore. ``req``: the pod's requests as
    PreFilter computed them. Kept with the pod shape's amounts (resource columns and the plugin's
    args are fixed when the scheduler starts)."""
    a = cs.amounts(pod)
    if req is None:
        req = a.requests
    args = plugin.args
    if a.requests is not req:
        return _wanted(cs, req, args)
    k = ("fit", id(args))
    got = a.memo.get(k)
    if got is None or got[0] is not args:
        got = a.memo[k] = (args, _wanted(cs, req, args))
    return got[1]


def filter_node_resources_fit(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> FilterVerdict:
    """``fitsRequest`` over all nodes. Which nodes fail is all a successful cycle reads; the
    reasons (a bitmask per node: bit 0 'Too many pods', then one bit per resource) are worked
    out only when the cycle fails."""
    plan = _plan(cs, pod, plugin, state)
    fail = fit_kept.fit_fail(cs, plan, _fit_fail) if fit_kept.ENABLED else None   # kept per shape
    if fail is None:
        fail = _fit_fail(cs, plan, _unindexed(cs, plan), 0, cs.n)
    return FilterVerdict(plugin.name, fail, explain=lambda: _fit_reasons(cs, plan))


def window_node_resources_fit(cs: ClusterState, pod: Pod, plugin: Any,
                              state: CycleState) -> Callable[[int, int], np.ndarray]:
    """:func:`filter_node_resources_fit`'s failures over the nodes ``lo`` to ``hi`` only (the
    windowed Filter of :mod:`...fastpath.cycle`: the cycle stops once enough nodes fit)."""
    plan = _plan(cs, pod, plugin, state)
    unindexed = _unindexed(cs, plan)
    return lambda lo, hi: _fit_fail(cs, plan, unindexed, lo, hi)


def _plan(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> tuple[Wanted, ...]:
    req = state.get(plugin.name)
    if req is None:
        req = cs.amounts(pod).requests
    return wanted_resources(cs, pod, plugin, req)


def _unindexed(cs: ClusterState, plan: Sequence[Wanted]) -> dict[str, np.ndarray]:
    """What pods already bound asked for of the resources no node has (rare: usually empty)."""
    return {name: _unindexed_requested(cs, name) for name, _, _, j in plan if j is None}


def _fit_fail(cs: ClusterState, plan: Sequence[Wanted], unindexed: dict[str, np.ndarray], lo: int,
              hi: int) -> np.ndarray:
    """Nodes ``lo`` to ``hi`` (exclusive) short of pods or of a requested resource."""
    fail = cs.npods[lo:hi] >= cs.pods_alloc[lo:hi]
    dra: bool | None = None
    for name, want, fixed, j in plan:
        if j is None:  # no node has it: only pods already bound may have asked for it
            short = want > -unindexed[name][lo:hi]
        else:
            short = want > cs.free[lo:hi, j]
        if not fixed:
            if dra is None:
                dra = cs.gates.enabled("DRAExtendedResource")
            if dra and device_class_for(cs.handle, name) is not None:
                # a DeviceClass backs it: only nodes that have it as a device plugin's count it here
                short &= cs.alloc[lo:hi, j] > 0 if j is not None else False
        fail |= short
    return fail


def _fit_reasons(cs: ClusterState, plan: Sequence[Wanted]) -> tuple[np.ndarray, np.ndarray, Callable[[int], tuple[str, ...]]]:
    """Codes and reason bitmasks of :func:`filter_node_resources_fit`, from the cluster as it is."""
    n = cs.n
    bits = (cs.npods >= cs.pods_alloc).astype(np.int64)   # bit 0: too many pods
    uu: np.ndarray | None = None
    names = ["Too many pods"]
    dra = cs.gates.enabled("DRAExtendedResource")
    for name, want, fixed, j in plan:
        if j is None:
            alloc = np.zeros(n, dtype=np.int64)
            free = alloc - _unindexed_requested(cs, name)
        else:
            alloc, free = cs.alloc[:, j], cs.free[:, j]
        short = want > free
        if not fixed and dra and device_class_for(cs.handle, name) is not None:
            short &= alloc > 0
        if short.any():
            bits |= np.left_shift(short, len(names), dtype=np.int64)
            beyond = short & (want > alloc)
            uu = beyond if uu is None else uu | beyond
        names.append(f"Insufficient {name}")
    code = codes(n, U) if uu is None else np.where(uu, UU, U).astype(np.int8, copy=False)
    cache: dict[int, tuple[str, ...]] = {}

    def reasons_of(k: int) -> tuple[str, ...]:
        r = cache.get(k)
        if r is None:
            r = cache[k] = tuple(nm for b, nm in enumerate(names) if k >> b & 1)
        return r

    return code, bits, reasons_of


def node_resources_fit_on(cs: ClusterState, plugin: Any, i: int, wanted: Sequence[Wanted],
                          statuses: dict[tuple[bool, int], Status]) -> Status | None:
    """:func:`filter_node_resources_fit` for node ``i`` alone, read from the cluster's arrays
    (None when the pod fits): what a kept verdict needs for the few nodes changed since.
    ``wanted``: the pod's requests Fit checks, as :func:`wanted_resources` lists them once
    per pod — (resource, amount, fixed resource?, column). ``statuses``: the ones returned
    before for this ``wanted``, reused (a kept verdict compares them by identity first) — keyed
    by the shortfalls as a bitmask (bit 0 'Too many pods', then one bit per wanted resource), so
    the reasons are spelled out only for a combination not met before."""
    short = 0
    unresolvable = False
    if cs.npods.item(i) >= cs.pods_alloc.item(i):
        short = 1
    dra = None
    free, alloc_of = cs.free, cs.alloc
    bit = 1
    for name, want, fixed, j in wanted:
        bit <<= 1
        if j is None:
            ni = cs.infos[i]
            if want <= -(ni.requested.get(name, 0) if ni.pods else 0):
                continue
            alloc = 0
        else:
            if want <= free.item(i, j):
                continue
            alloc = alloc_of.item(i, j)   # read only for a shortfall: it says why
        if not fixed and alloc <= 0:
            if dra is None:
                dra = cs.gates.enabled("DRAExtendedResource")
            if dra and device_class_for(cs.handle, name) is not None:
                continue
        short |= bit
        unresolvable |= want > alloc
    if not short:
        return None
    memo = (unresolvable, short)
    st = statuses.get(memo)
    if st is None:
        reasons = ["Too many pods"] if short & 1 else []
        reasons += [f"Insufficient {w[0]}" for k, w in enumerate(wanted) if short >> (k + 1) & 1]
        st = statuses[memo] = Status(Code.UnschedulableAndUnresolvable if unresolvable else Code.Unschedulable,
                                     tuple(reasons), plugin=plugin.name)
    return st


def _unindexed_requested(cs: ClusterState, name: str) -> np.ndarray:
    out = np.zeros(cs.n, dtype=np.int64)
    for i, ni in enumerate(cs.infos):
        v = ni.requested.get(name, 0) if ni.pods else 0
        if v:
            out[i] = v
    return out


def _amounts(cs: ClusterState, reqs: Sequence[int], resources: Sequence[ra.ResourceSpec], use_requested: bool,
             idx: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
    """``calculateResourceAllocatableRequest`` per scored resource: (allocatable, requested)."""
    zeros = np.zeros(len(idx), dtype=np.int64)
    allocs, requested = [], []
    for r, want, scalar in zip(resources, reqs, _scalar_flags(resources)):
        name = r.name
        j = cs.rindex.get(name)
        if (want == 0 and scalar) or j is None:
            if j is None and scalar and want != 0 and cs.gates.enabled("DRAExtendedResource") \
                    and device_class_for(cs.handle, name) is not None:
                return None
            allocs.append(zeros)
            requested.append(zeros)
            continue
        if name in ("cpu", "memory"):
            base = cs.requested[:, j].take(idx) if use_requested else cs.non_zero[:, 0 if name == "cpu" else 1].take(idx)
        elif name == "ephemeral-storage" or scalar:
            base = cs.requested[:, j].take(idx)
        else:
            allocs.append(zeros)
            requested.append(zeros)
            continue
        a = cs.alloc[:, j].take(idx)
        if scalar and cs.gates.enabled("DRAExtendedResource") and device_class_for(cs.handle, name) is not None \
                and not all(name in cs.infos[i].allocatable for i in idx):
            return None
        allocs.append(a)
        base += want
        requested.append(base if cs.alloc_nonzero[j] else np.where(a == 0, 0, base))
    return allocs, requested


_SCALAR_FLAGS: dict[Any, tuple[bool, ...]] = {}


def _scalar_flags(resources: Sequence[ra.ResourceSpec]) -> tuple[bool, ...]:
    got = _SCALAR_FLAGS.get(resources)
    if got is None:
        got = _SCALAR_FLAGS[resources] = tuple(is_scalar_resource_name(r.name) for r in resources)
    return got


def _least(resources, allocs, reqs) -> np.ndarray:
    n = len(allocs[0]) if allocs else 0
    if all(bool(cap.all()) for cap in allocs):  # every node has every scored resource
        total = np.zeros(n, dtype=np.int64)
        for r, cap, req in zip(resources, allocs, reqs):
            s = (cap - req) * MAX_NODE_SCORE // cap
            s[req > cap] = 0
            total += s * r.weight if r.weight != 1 else s
        wsum = sum(r.weight for r in resources)
        return total // wsum if wsum else total
    total = np.zeros(n, dtype=np.int64)
    wsum = np.zeros(n, dtype=np.int64)
    for r, cap, req in zip(resources, allocs, reqs):
        valid = cap != 0
        s = np.where(req > cap, 0, (cap - req) * MAX_NODE_SCORE // np.where(valid, cap, 1))
        total += np.where(valid, s * r.weight, 0)
        wsum += np.where(valid, r.weight, 0)
    return np.where(wsum > 0, total // np.maximum(wsum, 1), 0)


def _most(resources, allocs, reqs) -> np.ndarray:
    n = len(allocs[0]) if allocs else 0
    total = np.zeros(n, dtype=np.int64)
    wsum = np.zeros(n, dtype=np.int64)
    for r, cap, req in zip(resources, allocs, reqs):
        valid = cap != 0
        s = np.minimum(req, cap) * MAX_NODE_SCORE // np.where(valid, cap, 1)
        total += np.where(valid, s * r.weight, 0)
        wsum += np.where(valid, r.weight, 0)
    return np.where(wsum > 0, total // np.maximum(wsum, 1), 0)


def _rtcr(resources, shape, allocs, reqs) -> np.ndarray:
    scale = MAX_NODE_SCORE // ra.MAX_CUSTOM_PRIORITY_SCORE
    fn = ra.broken_linear([(u, s * scale) for u, s in shape])
    table = np.array([fn(p) for p in range(ra.MAX_UTILIZATION + 1)], dtype=np.int64)
    n = len(allocs[0]) if allocs else 0
    total = np.zeros(n, dtype=np.int64)
    wsum = np.zeros(n, dtype=np.int64)
    for r, cap, req in zip(resources, allocs, reqs):
        valid = cap != 0
        util = np.where(req > cap, ra.MAX_UTILIZATION, req * ra.MAX_UTILIZATION // np.where(valid, cap, 1))
        s = table[np.clip(util, 0, ra.MAX_UTILIZATION)]
        take = valid & (s > 0)
        total += np.where(take, s * r.weight, 0)
        wsum += np.where(take, r.weight, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / np.where(wsum > 0, wsum, 1)
    return np.where(wsum > 0, np.floor(mean + 0.5), 0).astype(np.int64)


def _balanced(allocs, reqs) -> np.ndarray:
    """``balancedResourceScorer``; the same float64 operations, in the same order, per node."""
    n = len(allocs[0]) if allocs else 0
    if len(allocs) == 2 and bool(allocs[0].all()) and bool(allocs[1].all()):
        f0 = np.minimum(reqs[0] / allocs[0], 1.0)
        f1 = np.minimum(reqs[1] / allocs[1], 1.0)
        std = np.abs((f0 - f1) / 2)
        return np.floor((1 - std) * MAX_NODE_SCORE).astype(np.int64)
    cnt = np.zeros(n, dtype=np.int64)
    first = np.zeros(n)
    second = np.zeros(n)
    fracs = []
    s = np.zeros(n)
    for cap, req in zip(allocs, reqs):
        valid = cap != 0
        with np.errstate(invalid="ignore", divide="ignore"):
            f = np.minimum(req / np.where(valid, cap, 1), 1.0)
        first = np.where(valid & (cnt == 0), f, first)
        second = np.where(valid & (cnt == 1), f, second)
        s = np.where(valid, s + f, s)
        fracs.append((valid, f))
        cnt += valid
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s / np.maximum(cnt, 1)
    sq = np.zeros(n)
    for valid, f in fracs:
        d = f - mean
        sq = np.where(valid, sq + d * d, sq)
    std_n = np.sqrt(sq / np.maximum(cnt, 1))
    std = np.where(cnt == 2, np.abs((first - second) / 2), np.where(cnt > 2, std_n, 0.0))
    return np.floor((1 - std) * MAX_NODE_SCORE).astype(np.int64)


def _cpu_memory_columns(cs: ClusterState, resources: Sequence[ra.ResourceSpec]) -> bool:
    """Scoring reads only cpu and memory, which every node has: no per-node zero guards."""
    return (len(resources) == 2 and resources[0].name == "cpu" and resources[1].name == "memory"
            and cs.alloc_nonzero[0] and cs.alloc_nonzero[1])


def _cpu_memory(table: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cpu and memory columns of ``cs.alloc``/``requested``/``non_zero`` over the scored nodes,
    one column at a time: numpy gathers and combines 1-D columns far faster than (m, 2) blocks."""
    return table[:, 0].take(idx), table[:, 1].take(idx)


def _least_cpu_memory(resources: Sequence[ra.ResourceSpec], caps: Sequence[np.ndarray],
                      used: Sequence[np.ndarray], reqs: Sequence[int]) -> np.ndarray:
    """``leastResourceScorer`` on cpu and memory (columns over the scored nodes: allocatable,
    non-zero requested): (free after the pod) × 100 / allocatable per resource (0 when it does
    not fit), weighted mean rounded down."""
    total = None
    for k, r in enumerate(resources):
        left = caps[k] - used[k]
        left -= reqs[k]
        np.maximum(left, 0, out=left)
        left *= MAX_NODE_SCORE
        left //= caps[k]
        if r.weight != 1:
            left *= r.weight
        if total is None:
            total = left
        else:
            total += left
    assert total is not None
    wsum = resources[0].weight + resources[1].weight
    if wsum:
        total //= wsum
    return total


def _balanced_cpu_memory(caps: Sequence[np.ndarray], requested: Sequence[np.ndarray], reqs: Sequence[int]) -> np.ndarray:
    """``balancedResourceScorer`` on cpu and memory: with two fractions the standard deviation
    is half their distance (the same float64 steps as the plugin)."""
    f0 = requested[0] + reqs[0]
    f0 = f0 / caps[0]
    np.minimum(f0, 1.0, out=f0)
    f1 = requested[1] + reqs[1]
    f1 = f1 / caps[1]
    np.minimum(f1, 1.0, out=f1)
    f0 -= f1
    f0 /= 2
    np.abs(f0, out=f0)
    np.subtract(1, f0, out=f0)
    f0 *= MAX_NODE_SCORE
    np.floor(f0, out=f0)
    return f0.astype(np.int64)


def score_node_resources_fit(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    args = plugin.args
    reqs = score_requests(cs, pod, args.resources, False)
    if args.strategy == LEAST_ALLOCATED and _cpu_memory_columns(cs, args.resources):
        raw = _least_cpu_memory(args.resources, _cpu_memory(cs.alloc, idx), _cpu_memory(cs.non_zero, idx), reqs)
        return ScoreVector(raw, raw)
    got = _amounts(cs, reqs, args.resources, False, idx)
    if got is None:
        return None
    allocs, req_cols = got
    if args.strategy == LEAST_ALLOCATED:
        raw = _least(args.resources, allocs, req_cols)
    elif args.strategy == MOST_ALLOCATED:
        raw = _most(args.resources, allocs, req_cols)
    else:
        raw = _rtcr(args.resources, args.shape, allocs, req_cols)
    if not args.resources:
        raw = np.zeros(len(idx), dtype=np.int64)
    return ScoreVector(raw, raw)


def score_balanced_allocation(cs: ClusterState, pod: Pod, plugin: Any, idx: np.ndarray) -> ScoreVector | None:
    resources = plugin.args.resources
    reqs = score_requests(cs, pod, resources, True)
    if not any(reqs):
        return SKIPPED  # a best-effort pod changes no balance
    if _cpu_memory_columns(cs, resources):
        raw = _balanced_cpu_memory(_cpu_memory(cs.alloc, idx), _cpu_memory(cs.requested, idx), reqs)
        return ScoreVector(raw, raw)
    got = _amounts(cs, reqs, resources, True, idx)
    if got is None:
        return None
    allocs, req_cols = got
    raw = _balanced(allocs, req_cols) if allocs else np.full(len(idx), MAX_NODE_SCORE, dtype=np.int64)
    return ScoreVector(raw, raw)


def score_resources_together(cs: ClusterState, pod: Pod, fit_weighted: tuple[Any, int],
                             balanced_weighted: tuple[Any, int], idx: np.ndarray) -> np.ndarray | None:
    """NodeResourcesFit (LeastAllocated) and NodeResourcesBalancedAllocation on cpu and memory,
    weighted and summed, from one gather of the scored nodes' figures: the two plugins of the
    default profile read the same columns, and every cycle that places a pod scores them. The
    per-node arithmetic is the plugins' own (:func:`_least_cpu_memory`,
    :func:`_balanced_cpu_memory`). None when either reads more (another strategy or resource, a
    node without cpu or memory): each plugin then scores alone."""
    (fit, fit_weight), (balanced, balanced_weight) = fit_weighted, balanced_weighted
    # what depends on the plugins and the pod's shape only is worked out once per shape
    a = cs.amounts(pod)
    k = (_JOINT, id(fit), id(balanced), fit_weight, balanced_weight)
    plan = a.memo.get(k)
    if plan is None or plan.fit is not fit or plan.balanced is not balanced:
        plan = a.memo[k] = _JointPlan(cs, pod, fit, fit_weight, balanced, balanced_weight)
    if not plan.cpu_memory or not (cs.alloc_nonzero[0] and cs.alloc_nonzero[1]):
        return None
    fit_resources, fit_reqs, bal_req = plan.fit.args.resources, plan.fit_reqs, plan.bal_req

    def compute(nodes: np.ndarray) -> np.ndarray:
        if len(nodes) <= _FEW:   # the nodes changed since the last cycle: one at a time
            return np.array([_joint_on(cs, int(i), fit_resources, fit_reqs, fit_weight, bal_req, balanced_weight)
                             for i in nodes.tolist()], dtype=np.int64)
        caps = _cpu_memory(cs.alloc, nodes)
        total = _least_cpu_memory(fit_resources, caps, _cpu_memory(cs.non_zero, nodes), fit_reqs)
        if fit_weight != 1:
            total *= fit_weight
        if any(bal_req):   # else Skip: a best-effort pod changes no balance
            bal = _balanced_cpu_memory(caps, _cpu_memory(cs.requested, nodes), bal_req)
            if balanced_weight != 1:
                bal *= balanced_weight
            total += bal
        return total

    # both scores read the node's own columns only: kept per pod shape until the node changes
    # (the plan is the shape's, memoised with its amounts: its identity names it)
    return node_local_scores(cs, plan, (plan,), idx, compute)


class _JointPlan:
    """:func:`score_resources_together`'s reading of the plugins' args and the pod's requests."""

    __slots__ = ("fit", "balanced", "cpu_memory", "fit_reqs", "bal_req")

    def __init__(self, cs: ClusterState, pod: Pod, fit: Any, fit_weight: int, balanced: Any, balanced_weight: int):
        self.fit, self.balanced = fit, balanced
        fa, ba = fit.args, balanced.args
        #: both plugins read cpu and memory only, Fit with LeastAllocated (the nodes' side —
        #: every node has cpu and memory — is checked per cycle)
        self.cpu_memory = fa.strategy == LEAST_ALLOCATED and _cpu_and_memory(fa.resources) \
            and _cpu_and_memory(ba.resources)
        self.fit_reqs = score_requests(cs, pod, fa.resources, False)
        self.bal_req = score_requests(cs, pod, ba.resources, True)


def _cpu_and_memory(resources: Sequence[ra.ResourceSpec]) -> bool:
    return len(resources) == 2 and resources[0].name == "cpu" and resources[1].name == "memory"


_JOINT = "NodeResourcesFit+NodeResourcesBalancedAllocation"
#: up to this many nodes are scored one by one in Python (fewer calls than the arrays' way)
_FEW = 6


def _joint_on(cs: ClusterState, i: int, resources: Sequence[ra.ResourceSpec], fit_reqs: Sequence[int],
              fit_weight: int, bal_req: Sequence[int], balanced_weight: int) -> int:
    """:func:`score_resources_together` on node ``i`` alone: the operations of
    :func:`_least_cpu_memory` and :func:`_balanced_cpu_memory` in the same order, on Python ints
    and floats (int64 and float64 give the same results: amounts below 2**63, and each float step
    rounds as numpy's does)."""
    alloc, non_zero, requested = cs.alloc, cs.non_zero, cs.requested
    cap0, cap1 = alloc.item(i, 0), alloc.item(i, 1)
    total = 0
    for k, cap in ((0, cap0), (1, cap1)):
        left = cap - non_zero.item(i, k) - fit_reqs[k]
        if left < 0:
            left = 0
        left = left * MAX_NODE_SCORE // cap
        w = resources[k].weight
        total += left * w if w != 1 else left
    wsum = resources[0].weight + resources[1].weight
    if wsum:
        total //= wsum
    if fit_weight != 1:
        total *= fit_weight
    if any(bal_req):
        f0 = float(requested.item(i, 0) + bal_req[0]) / float(cap0)
        f0 = min(f0, 1.0)
        f1 = float(requested.item(i, 1) + bal_req[1]) / float(cap1)
        f1 = min(f1, 1.0)
        bal = math.floor((1 - abs((f0 - f1) / 2)) * MAX_NODE_SCORE)
        total += bal * balanced_weight if balanced_weight != 1 else bal
    return total


def pre_filter_fit(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> Status:
    """PreFilter: the pod's requests (``computePodResourceRequest``), kept with its shape."""
    state[plugin.name] = cs.amounts(pod).requests
    return SUCCESS


def fit_node_filter(cs: ClusterState, pod: Pod, plugin: Any, state: CycleState) -> Callable[[int], Status | None]:
    """Fit on one node at a time from the columns (kept verdicts): the pod's requests worked out
    once, statuses shared by the nodes short of the same resources."""
    wanted = wanted_resources(cs, pod, plugin, state.get(plugin.name))
    statuses: dict[tuple[bool, int], Status] = {}
    return lambda i: node_resources_fit_on(cs, plugin, i, wanted, statuses)


VECTORISED = Vectorised(filter=filter_node_resources_fit, filter_window=window_node_resources_fit,
                        score=score_node_resources_fit, pre_filter=pre_filter_fit,
                        node_filter=fit_node_filter, score_with=(BALANCED_ALLOCATION, score_resources_together))
BALANCED_ALLOCATION_VECTORISED = Vectorised(score=score_balanced_allocation)
