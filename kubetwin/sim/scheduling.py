"""One kube-scheduler cycle per pod, over compact per-node arrays.

An adapter over :mod:`kubetwin.scheduler`: the plugins whose verdict depends only on the
pod's constraints and the node's labels and taints (NodeUnschedulable, NodeName,
TaintToleration, NodeAffinity) run once per distinct constraint set and are cached as masks;
NodeResourcesFit, LeastAllocated/MostAllocated and BalancedAllocation are the same integer
formulas evaluated on numpy arrays; plugins that read other pods (InterPodAffinity,
PodTopologySpread, NodePorts) run through the framework's own plugin objects, only for pods
that need them. Node sampling (``percentageOfNodesToScore``, rotation of ``nextStartNodeIndex``),
the FitError message and DefaultPreemption follow kube-scheduler; host selection among equal
scores is a seeded random choice (upstream is random too).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Sequence

import msgspec
import numpy as np

from ..model.node import Node
from ..model.pod import Pod
from ..scheduler.framework.interface import CycleState, Handle, plugin_class
from ..scheduler.framework.resources import pod_non_zero_amounts, pod_request_amounts
from ..scheduler.framework.status import Code, Status
from ..scheduler.framework.types import NodeInfo, PodInfo, ResourceAccounting, Snapshot, host_ports
from ..scheduler.plugins.resource_allocation import is_scalar_resource_name
from .gpushare import GPUShare, gpu_request
from .profile import SchedulerProfile

_FIXED = ("cpu", "memory", "ephemeral-storage")
_STATIC = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity")
_SLOW = ("NodePorts", "PodTopologySpread", "InterPodAffinity", "NodeResourceTopologyMatch")
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """``numFeasibleNodesToFind`` of ``schedule_one.go`` (adaptive when ``percentage`` is 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND or percentage >= 100:
        return num_all_nodes
    if percentage <= 0:
        percentage = 50 - num_all_nodes // 125
        if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            percentage = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


def node_tree_order(nodes: Sequence[Node]) -> list[int]:
    """The cache's node tree: nodes interleaved zone by zone (region + zone labels)."""
    zones: dict[str, list[int]] = {}
    for i, n in enumerate(nodes):
        labels = n.metadata.labels
        key = labels.get("topology.kubernetes.io/region", "") + ":\x00:" + labels.get("topology.kubernetes.io/zone", "")
        zones.setdefault(key, []).append(i)
    lists = list(zones.values())
    out: list[int] = []
    depth = 0
    while len(out) < len(nodes):
        for lst in lists:
            if depth < len(lst):
                out.append(lst[depth])
        depth += 1
    return out


@dataclass(slots=True)
class PodShape:
    """A pod's requests in array form, computed once per pod."""

    req: np.ndarray            # effective requests over the resource index
    missing: tuple[str, ...]   # requested resources no node has
    nz_cpu: int
    nz_mem: int
    static_key: bytes
    gpu: tuple[int, int, frozenset[str]] | None
    needs_slow: bool


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of one scheduling cycle."""

    node: int                   # index into the scheduler's node list, -1 when unschedulable
    code: Code = Code.Success
    message: str = ""
    plugins: frozenset[str] = frozenset()   # plugins that rejected (queueing hints)
    victims: tuple[Any, ...] = ()           # pods to evict when preemption nominated a node
    nominated: int = -1
    feasible: int = 0


@dataclass
class _Static:
    mask: np.ndarray
    fail: list[Status | None]
    taint_counts: np.ndarray | None
    affinity_counts: np.ndarray | None


class ClusterScheduler:
    """The default-profile scheduler over a fixed list of nodes."""

    def __init__(self, nodes: Sequence[Node], profile: SchedulerProfile, gates: Any, *, seed: int = 0,
                 objects: dict[str, list[Any]] | None = None, gpu: GPUShare | None = None):
        self.profile = profile
        self.gates = gates
        self.rng = random.Random(seed)
        order = node_tree_order(nodes)
        self.nodes = [nodes[i] for i in order]
        self.names = [n.metadata.name for n in self.nodes]
        self.index = {name: i for i, name in enumerate(self.names)}
        self.n = len(self.nodes)
        self.accounting = ResourceAccounting(gates)
        self.infos = [NodeInfo(n, self.accounting) for n in self.nodes]
        self.snapshot = Snapshot(self.infos, {}, [])
        self.handle = Handle(snapshot=self.snapshot, gates=gates, accounting=self.accounting,
                             objects=objects or {})
        self.gpu = gpu.reorder(order) if gpu is not None else None
        names: list[str] = list(_FIXED)
        for n in self.nodes:
            for r in n.status.allocatable:
                if r not in names and r != "pods" and is_scalar_resource_name(r):
                    names.append(r)
        self.resources = names
        self.rindex = {r: i for i, r in enumerate(names)}
        alloc = np.zeros((self.n, len(names)), dtype=np.int64)
        pods_alloc = np.zeros(self.n, dtype=np.int64)
        for i, ni in enumerate(self.infos):
            a = ni.allocatable
            for r, j in self.rindex.items():
                alloc[i, j] = a.get(r, 0)
            pods_alloc[i] = a.get("pods", 0)
        self.alloc = alloc
        self.pods_alloc = pods_alloc
        self.used = np.zeros_like(alloc)
        self.nz_used = np.zeros((self.n, 2), dtype=np.int64)
        self.npods = np.zeros(self.n, dtype=np.int64)
        self.next_start = 0
        self.num_to_find = num_feasible_nodes_to_find(profile.percentage_of_nodes_to_score, self.n)
        self._static: dict[bytes, _Static] = {}
        self._plugins: dict[str, Any] = {}
        self.pods_with_affinity = 0
        self.pods_with_required_anti = 0
        self.fit_args = self._plugin_args("NodeResourcesFit")
        self.balanced_args = self._plugin_args("NodeResourcesBalancedAllocation")

    # --- plugins -----------------------------------------------------------------------------
    def _plugin_args(self, name: str) -> Any:
        if not self.profile.enabled(name):
            return None
        cls = plugin_class(name)
        return cls.parse_args(self.profile.args(name), f"profiles[0].pluginConfig[{name}].args")

    def plugin(self, name: str) -> Any:
        p = self._plugins.get(name)
        if p is None:
            cls = plugin_class(name)
            args = cls.parse_args(self.profile.args(name), f"profiles[0].pluginConfig[{name}].args")
            p = self._plugins[name] = cls(args, self.handle)
        return p

    # --- pods ----------------------------------------------------------------------------------
    def shape(self, pod: Pod) -> PodShape:
        req_map = pod_request_amounts(pod, self.gates, status=False)
        nz = pod_non_zero_amounts(pod, self.gates, status=False)
        req = np.zeros(len(self.resources), dtype=np.int64)
        missing = []
        for r, v in req_map.items():
            j = self.rindex.get(r)
            if j is not None:
                req[j] = v
            elif v and (r in _FIXED or is_scalar_resource_name(r)):
                missing.append(r)
        spec = pod.spec
        aff = spec.affinity
        key = msgspec.json.encode((spec.node_name, spec.node_selector, spec.tolerations,
                                   aff.node_affinity if aff else None))
        g = gpu_request(pod) if self.gpu is not None else None
        if g is not None:
            key += msgspec.json.encode(sorted(g[2]))
        slow = bool(host_ports(pod)) or bool(spec.topology_spread_constraints) or (
            aff is not None and (aff.pod_affinity is not None or aff.pod_anti_affinity is not None))
        return PodShape(req, tuple(missing), nz.get("cpu", 0), nz.get("memory", 0), key, g, slow)

    def _needs_slow(self, pod: Pod, shape: PodShape) -> list[str]:
        names = []
        for name in _SLOW:
            if not self.profile.enabled(name):
                continue
            if name == "NodePorts" and not host_ports(pod):
                continue
            if name == "InterPodAffinity" and not (shape.needs_slow or self.pods_with_required_anti
                                                   or self.pods_with_affinity):
                continue
            if name == "PodTopologySpread" and not (pod.spec.topology_spread_constraints or self._spread_default(pod)):
                continue
            if name == "NodeResourceTopologyMatch" and not self.handle.objects.get("NodeResourceTopology"):
                continue
            names.append(name)
        return names

    def _spread_default(self, pod: Pod) -> bool:
        objs = self.handle.objects
        if not any(objs.get(k) for k in ("Service", "ReplicaSet", "ReplicationController", "StatefulSet")):
            return False
        return self.plugin("PodTopologySpread").args.defaulting_type == "System" or bool(
            getattr(self.plugin("PodTopologySpread").args, "default_constraints", ()))

    def _static_for(self, pod: Pod, shape: PodShape) -> _Static:
        hit = self._static.get(shape.static_key)
        if hit is not None:
            return hit
        mask = np.ones(self.n, dtype=bool)
        fail: list[Status | None] = [None] * self.n
        state = CycleState()
        active = []
        for name in _STATIC:
            if not self.profile.enabled(name):
                continue
            p = self.plugin(name)
            allowed = None
            if hasattr(p, "pre_filter"):
                allowed, st = p.pre_filter(state, pod, self.infos)
                if st.is_skip:
                    continue
                if not st.is_success:
                    for i in range(self.n):
                        if fail[i] is None:
                            fail[i] = st.with_plugin(name)
                            mask[i] = False
                    continue
            active.append((name, p, allowed))
        for i, ni in enumerate(self.infos):
            if fail[i] is not None:
                continue
            for name, p, allowed in active:
                if allowed is not None and ni.name not in allowed:
                    st = Status(Code.UnschedulableAndUnresolvable, (f"node(s) didn't satisfy plugin(s) [{name}]",))
                else:
                    st = p.filter(state, pod, ni)
                if not st.is_success:
                    fail[i] = st.with_plugin(name)
                    mask[i] = False
                    break
        if shape.gpu is not None and self.gpu is not None:
            model_ok = self.gpu.model_mask(shape.gpu[2])
            for i in np.flatnonzero(mask & ~model_ok):
                fail[i] = Status(Code.UnschedulableAndUnresolvable, ("node(s) didn't match the GPU model",), "GPUShare")
            mask &= model_ok
        taint = aff = None
        if self.profile.weight("TaintToleration"):
            p = self.plugin("TaintToleration")
            st = CycleState()
            p.pre_score(st, pod, self.infos)
            taint = np.array([p.score(st, pod, ni)[0] for ni in self.infos], dtype=np.int64)
        if self.profile.weight("NodeAffinity"):
            p = self.plugin("NodeAffinity")
            st = CycleState()
            if not p.pre_score(st, pod, self.infos).is_skip:
                aff = np.array([p.score(st, pod, ni)[0] for ni in self.infos], dtype=np.int64)
        out = _Static(mask, fail, taint, aff)
        if len(self._static) > 4096:
            self._static.clear()
        self._static[shape.static_key] = out
        return out

    # --- accounting ----------------------------------------------------------------------------
    def assume(self, pod: Pod, shape: PodShape, i: int) -> Any:
        """Account ``pod`` on node ``i`` (cache ``AssumePod``); returns the GPU assignment if any."""
        self.used[i] += shape.req
        self.nz_used[i, 0] += shape.nz_cpu
        self.nz_used[i, 1] += shape.nz_mem
        self.npods[i] += 1
        pi = PodInfo(pod)
        self.infos[i].add_pod(pi)
        if pi.has_affinity:
            self.pods_with_affinity += 1
        if pi.has_required_anti_affinity:
            self.pods_with_required_anti += 1
        if shape.gpu is not None and self.gpu is not None:
            return self.gpu.allocate(i, shape.gpu)
        return None

    def forget(self, pod: Pod, shape: PodShape, i: int, gpus: Any = None) -> None:
        """Remove ``pod`` from node ``i`` (deletion, completion, kubelet rejection)."""
        self.used[i] -= shape.req
        self.nz_used[i, 0] -= shape.nz_cpu
        self.nz_used[i, 1] -= shape.nz_mem
        self.npods[i] -= 1
        pi = PodInfo(pod)
        self.infos[i].remove_pod(pod)
        if pi.has_affinity:
            self.pods_with_affinity -= 1
        if pi.has_required_anti_affinity:
            self.pods_with_required_anti -= 1
        if gpus is not None and self.gpu is not None:
            self.gpu.release(i, gpus)

    # --- the cycle -----------------------------------------------------------------------------
    def _fit(self, shape: PodShape, candidates: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """NodeResourcesFit's Filter on every node: (fits, reason -> mask, unresolvable mask)."""
        n = self.n
        fits = np.ones(n, dtype=bool)
        reasons: dict[str, np.ndarray] = {}
        uu = np.zeros(n, dtype=bool)
        if self.fit_args is None:
            return fits, reasons, uu
        too_many = self.npods + 1 > self.pods_alloc
        if too_many.any():
            reasons["Too many pods"] = too_many
            fits &= ~too_many
        args = self.fit_args
        for j in np.flatnonzero(shape.req):
            name = self.resources[j]
            if name not in _FIXED and (name in args.ignored_resources
                                       or name.split("/", 1)[0] in args.ignored_resource_groups):
                continue
            want = shape.req[j]
            short = want > self.alloc[:, j] - self.used[:, j]
            if short.any():
                reasons[f"Insufficient {name}"] = short
                uu |= want > self.alloc[:, j]
                fits &= ~short
        for name in shape.missing:
            if name not in _FIXED and (name in args.ignored_resources
                                       or name.split("/", 1)[0] in args.ignored_resource_groups):
                continue
            reasons[f"Insufficient {name}"] = np.ones(n, dtype=bool)
            uu[:] = True
            fits[:] = False
        if shape.gpu is not None and self.gpu is not None:
            ok = self.gpu.fits(shape.gpu)
            short = ~ok
            if short.any():
                reasons[self.gpu.reason] = short
                fits &= ok
        return fits, reasons, uu

    def schedule(self, pod: Pod, shape: PodShape) -> Decision:
        """``SchedulePod``: filter with sampling, score, select; PostFilter preemption on failure."""
        if self.n == 0:
            return Decision(-1, Code.UnschedulableAndUnresolvable, "no nodes available to schedule pods")
        static = self._static_for(pod, shape)
        fits, reasons, uu = self._fit(shape)
        feasible = static.mask & fits
        slow = self._needs_slow(pod, shape)
        slow_fail: dict[int, Status] = {}
        state = CycleState()
        slow_plugins = []
        prefilter_fail: Status | None = None
        for name in slow:
            p = self.plugin(name)
            if hasattr(p, "pre_filter"):
                _, st = p.pre_filter(state, pod, self.infos)
                if st.is_skip:
                    continue
                if not st.is_success:
                    prefilter_fail = st.with_plugin(name)
                    break
            if hasattr(p, "filter"):
                slow_plugins.append((name, p))
        if prefilter_fail is not None:
            return self._fail(pod, shape, prefilter_fail.message + "." if prefilter_fail.message else "",
                              static, reasons, uu, fits, {}, frozenset({prefilter_fail.plugin}), prefilter=True,
                              code=prefilter_fail.code)
        start = self.next_start
        k = self.num_to_find
        rot = np.concatenate((np.arange(start, self.n), np.arange(0, start)))
        if not slow_plugins:
            fr = feasible[rot]
            cum = np.cumsum(fr)
            total = int(cum[-1]) if self.n else 0
            if total >= k:
                pos = int(np.searchsorted(cum, k))
                processed = pos + 1
                chosen = rot[:processed][fr[:processed]]
            else:
                processed = self.n
                chosen = rot[fr]
        else:
            picked = []
            processed = 0
            for i in rot:
                processed += 1
                if not feasible[i]:
                    continue
                ni = self.infos[i]
                ok = True
                for name, p in slow_plugins:
                    st = p.filter(state, pod, ni)
                    if not st.is_success:
                        slow_fail[int(i)] = st.with_plugin(name)
                        ok = False
                        break
                if ok:
                    picked.append(i)
                    if len(picked) >= k:
                        break
            chosen = np.array(picked, dtype=np.int64)
        self.next_start = (start + processed) % self.n
        if len(chosen) == 0:
            plugins = frozenset(s.plugin for s in slow_fail.values())
            return self._fail(pod, shape, "", static, reasons, uu, fits, slow_fail, plugins)
        if len(chosen) == 1:
            return Decision(int(chosen[0]), feasible=1)
        scores = self._scores(pod, shape, chosen, static, slow, state)
        best = scores.max()
        ties = chosen[scores == best]
        pick = int(ties[0]) if len(ties) == 1 else int(ties[self.rng.randrange(len(ties))])
        return Decision(pick, feasible=len(chosen))

    def _scores(self, pod: Pod, shape: PodShape, chosen: np.ndarray, static: _Static, slow: list[str],
                state: CycleState) -> np.ndarray:
        total = np.zeros(len(chosen), dtype=np.int64)
        w = self.profile.weight("NodeResourcesFit")
        if w and self.fit_args is not None:
            total += w * self._fit_score(pod, shape, chosen)
        w = self.profile.weight("NodeResourcesBalancedAllocation")
        if w and self.balanced_args is not None:
            s = self._balanced_score(shape, chosen)
            if s is not None:
                total += w * s
        w = self.profile.weight("TaintToleration")
        if w and static.taint_counts is not None:
            c = static.taint_counts[chosen]
            m = int(c.max())
            total += w * (100 - (100 * c // m) if m else np.full(len(chosen), 100, dtype=np.int64))
        w = self.profile.weight("NodeAffinity")
        if w and static.affinity_counts is not None:
            c = static.affinity_counts[chosen]
            m = int(c.max())
            if m:
                total += w * (100 * c // m)
        for name in slow:
            w = self.profile.weight(name)
            if not w:
                continue
            p = self.plugin(name)
            if not hasattr(p, "score"):
                continue
            infos = [self.infos[i] for i in chosen]
            if hasattr(p, "pre_score"):
                st = p.pre_score(state, pod, infos)
                if not st.is_success:
                    continue
            sc = {ni.name: p.score(state, pod, ni)[0] for ni in infos}
            if hasattr(p, "normalize_score"):
                p.normalize_score(state, pod, sc)
            total += w * np.array([sc[ni.name] for ni in infos], dtype=np.int64)
        return total

    def _amounts(self, shape: PodShape, chosen: np.ndarray, name: str, use_requested: bool) -> tuple[np.ndarray, np.ndarray, bool]:
        """(allocatable, requested incl. the pod) per chosen node; bypassed when the flag is False."""
        j = self.rindex.get(name)
        if name in ("cpu", "memory"):
            if use_requested:
                return self.alloc[chosen, j], self.used[chosen, j] + shape.req[j], True
            nz = shape.nz_cpu if name == "cpu" else shape.nz_mem
            return self.alloc[chosen, j], self.nz_used[chosen, 0 if name == "cpu" else 1] + nz, True
        if j is None:
            return np.zeros(len(chosen), dtype=np.int64), np.zeros(len(chosen), dtype=np.int64), False
        want = shape.req[j]
        if want == 0 and is_scalar_resource_name(name):
            return np.zeros(len(chosen), dtype=np.int64), np.zeros(len(chosen), dtype=np.int64), False
        return self.alloc[chosen, j], self.used[chosen, j] + want, True

    def _fit_score(self, pod: Pod, shape: PodShape, chosen: np.ndarray) -> np.ndarray:
        args = self.fit_args
        m = len(chosen)
        total = np.zeros(m, dtype=np.int64)
        wsum = np.zeros(m, dtype=np.int64)
        if args.strategy == "RequestedToCapacityRatio":
            return self._plugin_scores("NodeResourcesFit", pod, chosen)
        for spec in args.resources:
            cap, req, used = self._amounts(shape, chosen, spec.name, False)
            if not used:
                continue
            has = cap > 0
            safe = np.where(has, cap, 1)
            if args.strategy == "LeastAllocated":
                s = np.where(req > cap, 0, (cap - req) * 100 // safe)
            else:
                s = np.minimum(req, cap) * 100 // safe
            total += np.where(has, s * spec.weight, 0)
            wsum += np.where(has, spec.weight, 0)
        return np.where(wsum > 0, total // np.maximum(wsum, 1), 0)

    def _plugin_scores(self, name: str, pod: Pod, chosen: np.ndarray) -> np.ndarray:
        p = self.plugin(name)
        st = CycleState()
        infos = [self.infos[i] for i in chosen]
        p.pre_score(st, pod, infos)
        return np.array([p.score(st, pod, ni)[0] for ni in infos], dtype=np.int64)

    def _balanced_score(self, shape: PodShape, chosen: np.ndarray) -> np.ndarray | None:
        specs = self.balanced_args.resources
        wants = []
        for spec in specs:
            j = self.rindex.get(spec.name)
            wants.append(int(shape.req[j]) if j is not None else 0)
        if not any(wants):
            return None  # PreScore Skip: a best-effort pod changes no balance
        fracs = []
        valid = []
        for spec in specs:
            cap, req, used = self._amounts(shape, chosen, spec.name, True)
            if not used:
                continue
            has = cap > 0
            f = np.minimum(req / np.where(has, cap, 1), 1.0)
            fracs.append(f)
            valid.append(has)
        m = len(chosen)
        if not fracs:
            return np.full(m, 100, dtype=np.int64)
        F = np.array(fracs)
        V = np.array(valid)
        cnt = V.sum(axis=0)
        std = np.zeros(m)
        if F.shape[0] == 2:
            two = cnt == 2
            std = np.where(two, np.abs((F[0] - F[1]) / 2), 0.0)
        else:
            Fz = np.where(V, F, 0.0)
            mean = Fz.sum(axis=0) / np.maximum(cnt, 1)
            var = (np.where(V, (F - mean) * (F - mean), 0.0)).sum(axis=0) / np.maximum(cnt, 1)
            std = np.where(cnt > 2, np.sqrt(var), 0.0)
            if (cnt == 2).any():
                idx = np.flatnonzero(cnt == 2)
                for c in idx:
                    vals = F[V[:, c], c]
                    std[c] = abs((vals[0] - vals[1]) / 2)
        return ((1 - std) * 100).astype(np.int64)

    # --- failure -------------------------------------------------------------------------------
    def _fail(self, pod: Pod, shape: PodShape, prefilter_msg: str, static: _Static, reasons: dict[str, np.ndarray],
              uu: np.ndarray, fits: np.ndarray, slow_fail: dict[int, Status], plugins: frozenset[str],
              prefilter: bool = False, code: Code = Code.Unschedulable) -> Decision:
        """The FitError (``0/N nodes are available: ...``), then DefaultPreemption."""
        n = self.n
        hist: dict[str, int] = {}
        plugin_set = set(plugins)
        node_code = np.full(n, int(Code.Unschedulable), dtype=np.int64)
        if prefilter:
            msg = f"0/{n} nodes are available: {prefilter_msg}"
            node_code[:] = int(code)
        else:
            static_ok = static.mask
            for i in np.flatnonzero(~static_ok):
                st = static.fail[i]
                if st is None:
                    continue
                for r in st.reasons:
                    hist[r] = hist.get(r, 0) + 1
                plugin_set.add(st.plugin)
                node_code[i] = int(st.code)
            fit_fail = static_ok & ~fits
            if fit_fail.any():
                gpu_reason = self.gpu.reason if self.gpu is not None else None
                for r, mask in reasons.items():
                    c = int((mask & static_ok).sum())
                    if c:
                        hist[r] = hist.get(r, 0) + c
                        plugin_set.add("GPUShare" if r == gpu_reason else "NodeResourcesFit")
                node_code[fit_fail & uu] = int(Code.UnschedulableAndUnresolvable)
            for i, st in slow_fail.items():
                for r in st.reasons:
                    hist[r] = hist.get(r, 0) + 1
                node_code[i] = int(st.code)
            parts = sorted(f"{c} {r}" for r, c in hist.items())
            msg = f"0/{n} nodes are available: " + ", ".join(parts) + "."
        victims: tuple[Any, ...] = ()
        nominated = -1
        post = self._preempt(pod, shape, static, node_code, slow_fail)
        if post is not None:
            post_msg, nominated, victims = post
            if post_msg:
                msg += " " + post_msg
        return Decision(-1, Code.Unschedulable, msg, frozenset(p for p in plugin_set if p), victims, nominated)

    # --- DefaultPreemption ------------------------------------------------------------------------
    def _preempt(self, pod: Pod, shape: PodShape, static: _Static, node_code: np.ndarray,
                 slow_fail: dict[int, Status]) -> tuple[str, int, tuple[Any, ...]] | None:
        if not self.profile.enabled("DefaultPreemption"):
            return None
        if pod.spec.preemption_policy == "Never":
            return "preemption: not eligible due to preemptionPolicy=Never.", -1, ()
        prio = pod.spec.priority or 0
        candidates = np.flatnonzero(node_code == int(Code.Unschedulable))
        n = self.n
        not_helpful = n - len(candidates)
        best: tuple[tuple, int, list[Any]] | None = None
        no_victims = 0
        lowest = self.lowest_priority()
        if lowest is None or lowest >= prio:
            no_victims, candidates = len(candidates), candidates[:0]
        for i in candidates:
            if i in slow_fail:
                no_victims += 1
                continue
            found = self._victims(i, shape, prio)
            if found is None:
                no_victims += 1
                continue
            victims = found
            if not victims:
                no_victims += 1
                continue
            prios = [v.priority for v in victims]
            key = (max(prios), sum(p + 2 ** 31 for p in prios), len(victims),
                   -max((v.start for v in victims if v.priority == max(prios)), default=0.0))
            if best is None or key < best[0]:
                best = (key, int(i), victims)
        if best is None:
            parts = []
            if no_victims:
                parts.append(f"{no_victims} No preemption victims found for incoming pod")
            if not_helpful:
                parts.append(f"{not_helpful} Preemption is not helpful for scheduling")
            return f"preemption: 0/{n} nodes are available: " + ", ".join(sorted(parts)) + ".", -1, ()
        return "", best[1], tuple(best[2])

    def _victims(self, i: int, shape: PodShape, prio: int) -> list[Any] | None:
        """``selectVictimsOnNode`` on resources: remove all lower-priority pods, reprieve greedily."""
        lower = [p for p in self.residents(i) if p.priority < prio]
        if not lower:
            return None
        used = self.used[i].copy()
        npods = int(self.npods[i])
        for p in lower:
            used -= p.shape.req
            npods -= 1
        alloc = self.alloc[i]

        def fits(u: np.ndarray, k: int) -> bool:
            if self.fit_args is not None and k + 1 > self.pods_alloc[i]:
                return False
            return bool(np.all((shape.req == 0) | (shape.req <= alloc - u))) and not shape.missing

        if not fits(used, npods):
            return None
        victims = []
        for p in sorted(lower, key=lambda p: (-p.priority, p.start)):
            trial = used + p.shape.req
            if fits(trial, npods + 1):
                used, npods = trial, npods + 1
            else:
                victims.append(p)
        if shape.gpu is not None and self.gpu is not None:
            return None  # GPU sharing is not preempted in the simulation
        return victims

    #: set by the simulator: the lowest priority of any running pod (None: no pods)
    lowest_priority: Any = staticmethod(lambda: 0)
    #: set by the simulator: node index -> running pod records (``priority``, ``start``, ``shape``)
    residents: Any = staticmethod(lambda i: [])
