"""The vectorised scheduling cycle: :mod:`..schedule_one`'s ``find_nodes_that_fit_pod`` and
``prioritize_nodes`` over the cache's node columns, with the plugins' vectorised twins.

Node-local Filters answer for every node at once (one boolean array each); plugins without a
twin run node by node, only on the nodes the vector stages before them left open and the
sampling actually visits. Scores of the scored nodes are summed as arrays; a plugin whose score
is the same on every node moves every total alike and is left out (its twin says
:data:`~.vector.SKIPPED`). The answers — feasible nodes in the order found, nodes examined,
each rejection's code and reasons, totals — are the plain cycle's, which the property tests
check on random clusters.

Not an upstream module: the vectorised twin of ``pkg/scheduler/schedule_one.go``'s
``findNodesThatFitPod`` and ``prioritizeNodes``."""

from __future__ import annotations

import random
from collections import Counter
from typing import TYPE_CHECKING, Any, Sequence, cast

import numpy as np

from ...model.pod import Pod
from ..framework.diagnosis import Diagnosis
from ..framework.interface import CycleState
from ..framework.runtime import Framework, plugin_list
from ..framework.status import Code, Status
from ..framework.types import NodeInfo, PodInfo
from ..schedule_one import CycleRecorder, FeasibleNodes, num_feasible_nodes_to_find
from .vector import SKIPPED, FilterVerdict, Vectorised, WindowFn, vectorised

if TYPE_CHECKING:
    from ..backend.cache import ClusterState


class VectorDiagnosis(Diagnosis):
    """A :class:`Diagnosis` whose rejections may be whole-cluster verdicts, each with the nodes it
    decided (the first verdict whose nodes hold a node gave its rejection)."""

    def __init__(self, n: int):
        super().__init__(n)
        self.vector: list[tuple[FilterVerdict, np.ndarray]] = []  # (verdict, nodes it decided)
        self.absent_mask: np.ndarray | None = None

    def status(self, i: int) -> Status | None:
        if self.all_nodes is not None:
            return self.all_nodes
        st = self.node_to_status.get(i)
        if st is not None:
            return st
        for verdict, mask in self.vector:
            if mask[i]:
                return verdict.status(i)
        if self.absent_mask is not None and self.absent_mask[i]:
            return self.absent
        return None

    def codes(self) -> np.ndarray:
        """Code per node (0 where no status)."""
        out = np.zeros(self.n, dtype=np.int8)
        if self.all_nodes is not None:
            out[:] = int(self.all_nodes.code)
            return out
        if self.absent_mask is not None and self.absent is not None:
            out[self.absent_mask] = int(self.absent.code)
        for verdict, mask in self.vector:
            out[mask] = verdict.code[mask]
        for i, st in self.node_to_status.items():
            out[i] = int(st.code)
        return out

    def nodes_with_code(self, code: Code) -> list[int]:
        return np.flatnonzero(self.codes() == np.int8(code)).tolist()

    def histogram(self) -> Counter[str]:
        hist: Counter[str] = Counter()
        if self.all_nodes is not None:
            for r in self.all_nodes.reasons:
                hist[r] += self.n
            return hist
        if self.absent_mask is not None and self.absent is not None:
            cnt = int(self.absent_mask.sum())
            for r in self.absent.reasons:
                hist[r] += cnt
        for verdict, mask in self.vector:
            if not mask.any():
                continue
            if verdict.key is None:
                keys, counts = np.array([0]), np.array([int(mask.sum())])
            else:
                keys, counts = np.unique(verdict.key[mask], return_counts=True)
            for k, c in zip(keys.tolist(), counts.tolist()):
                for r in verdict.reasons_of(k):
                    hist[r] += c
        for st in self.node_to_status.values():
            for r in st.reasons:
                hist[r] += 1
        return hist

    def plugins(self) -> frozenset[str]:
        if self.all_nodes is not None:
            return frozenset({self.all_nodes.plugin})
        out = {v.plugin for v, m in self.vector if m.any()}
        out |= {st.plugin for st in self.node_to_status.values()}
        return frozenset(p for p in out if p)


Stage = tuple[Any, "FilterVerdict | None"]
#: a Filter for the windowed search: (plugin, its vectorised Filter, its verdict over every node or
#: None, its windowed Filter or None)
WindowPart = tuple[Any, Any, "FilterVerdict | None", "WindowFn | None"]


class VectorCycle:
    """The cycle's vectorised parts over one framework and the cache its handle holds."""

    #: the windowed Filter runs on clusters of at least this many nodes; below, one pass over
    #: every node costs no more than the windows (the answers are the same either way): the
    #: adaptive share to score is 30 % or more of the nodes there, so a cycle reads most of
    #: them anyway (the Alibaba trace, 1,523 nodes: 2.25 windows and 1,063 nodes a cycle, about
    #: 10 % slower than one pass)
    window_min_nodes = 2500

    def __init__(self, fwk: Framework, cache: "ClusterState"):
        self.fwk = fwk
        self.cs = cache
        self.twins: dict[str, Vectorised | None] = {p.name: vectorised(p.name) for p, _ in fwk.plugins}
        by_name = {p.name: (p, w) for p, w in fwk.score_plugins}
        # dispatch tables, built once per profile: what each cycle would otherwise look up per plugin
        #: each PreFilter plugin's known Skip and vectorised PreFilter, bound to the cache
        self.pre_filter_shortcuts: list[tuple[Any, Any]] = []
        for p in fwk.pre_filter_plugins:
            tw = self.twins.get(p.name)
            skip = _skip_on(tw.pre_filter_is_skip, cache) if tw and tw.pre_filter_is_skip else None
            run = _pre_filter_on(tw.pre_filter, cache) if tw and tw.pre_filter else None
            self.pre_filter_shortcuts.append((skip, run))
        #: each Filter plugin with its name, vectorised Filter (None: node by node) and windowed one
        self.filters: list[tuple[Any, str, Any, Any]] = []
        for fp in fwk.filter_plugins:
            tw = self.twins.get(fp.name)
            self.filters.append((fp, fp.name, tw.filter if tw is not None else None,
                                 tw.filter_window if tw is not None else None))
        #: some Filter has a windowed twin (the cycle may stop before it has read every node)
        self.windowed = any(w is not None for *_, w in self.filters)
        #: each weighted Score plugin with its weight, name and vectorised Score (None: node by node)
        self.scores: list[tuple[Any, int, str, Any]] = []
        for sp, w in fwk.score_plugins:
            tw = self.twins.get(sp.name)
            self.scores.append((sp, w, sp.name, tw.score if tw is not None else None))
        #: (plugin, partner, how) for score plugins scored together with a partner that scores too
        self.joint: list[tuple[tuple[Any, int], tuple[Any, int], Any]] = []
        for sp, w in fwk.score_plugins:
            tw = self.twins.get(sp.name)
            if tw is not None and tw.score_with is not None and tw.score_with[0] in by_name:
                self.joint.append(((sp, w), by_name[tw.score_with[0]], tw.score_with[1]))
        self.has_score_plugins = fwk.has_score_plugins
        #: ``numFeasibleNodesToFind`` per number of candidate nodes
        self._to_find: dict[int, int] = {}
        #: nodes the last windowed search read per feasible node found, × 1024 (its first window's size)
        self._window_per_found = 1024

    # --- PreFilter -----------------------------------------------------------------------------

    def pre_filter_is_skip(self, plugin: Any, pod: Pod) -> bool | None:
        """Would the plugin's PreFilter Skip (None: not known without running it)?"""
        tw = self.twins.get(plugin.name)
        if tw is None or tw.pre_filter_is_skip is None:
            return None
        return bool(tw.pre_filter_is_skip(self.cs, pod, plugin))

    # --- findNodesThatFitPod -------------------------------------------------------------------

    def find_nodes_that_fit_pod(self, state: CycleState, pod: Pod, start: int,
                                recorder: CycleRecorder | None = None) -> FeasibleNodes:
        """``recorder`` (a traced cycle): handed each PreFilter status and, once the sampling is
        done, every Filter stage's verdict over the nodes examined (:meth:`CycleRecorder.filter_stages`)."""
        cs, fwk = self.cs, self.fwk
        diag = VectorDiagnosis(cs.n)
        pre = fwk.run_pre_filter_plugins(state, pod, cs.infos, shortcuts=self.pre_filter_shortcuts,
                                         record=recorder.pre_filter if recorder is not None else None)
        diag.skipped = pre.skipped
        if not pre.status.is_success:
            diag.all_nodes = pre.status
            return FeasibleNodes([], 0, diag)
        skipped = diag.skipped
        # a nominated node that still passes the filters is taken as is
        nnn = pod.status.nominated_node_name
        if nnn and nnn in cs.index:
            i = cs.index[nnn]
            if fwk.run_filter_plugins_with_nominated_pods(state, pod, cs.infos[i], skipped=skipped) is None:
                return FeasibleNodes([i], 1, diag, nominated=True)
        candidates = cs.all_nodes
        if pre.allowed is not None:
            inside = np.zeros(cs.n, dtype=bool)
            for name in pre.allowed:
                k = cs.index.get(name)
                if k is not None:
                    inside[k] = True
            candidates = np.flatnonzero(inside)
            diag.absent = Status(Code.UnschedulableAndUnresolvable,
                                 (f"node(s) didn't satisfy plugin(s) {plugin_list(pre.restricting)}",))
            diag.absent_mask = ~inside
        if recorder is not None:
            from .traced import find_feasible_recorded

            feasible, processed = find_feasible_recorded(self, state, pod, skipped, candidates, diag, start, recorder)
            return FeasibleNodes(cast("Sequence[int]", feasible), processed, diag)
        feasible, processed = self._find_feasible(state, pod, skipped, candidates, diag, start)
        # an int64 array (a sequence of ints): the vectorised scores take it as is
        return FeasibleNodes(cast("Sequence[int]", feasible), processed, diag)

    def _stages(self, state: CycleState, pod: Pod, skipped: set[str],
                parts: list[WindowPart] | None = None) -> list[Stage]:
        """Each Filter's verdict over every node (None: node by node). ``parts``: what
        :meth:`_window_parts` computed already, completed with the windowed Filters' verdicts."""
        cs = self.cs
        if parts is not None:
            return [(plugin, verdict if window is None else twin(cs, pod, plugin, state))
                    for plugin, twin, verdict, window in parts]
        stages: list[Stage] = []
        for plugin, name, twin, _ in self.filters:
            if name in skipped:
                continue
            stages.append((plugin, twin(cs, pod, plugin, state) if twin is not None else None))
        return stages

    def _window_parts(self, state: CycleState, pod: Pod, skipped: set[str]) -> list[WindowPart]:
        """Each Filter as a windowed twin where it has one, else as its verdict over every node."""
        cs = self.cs
        parts: list[WindowPart] = []
        for plugin, name, twin, window in self.filters:
            if name in skipped:
                continue
            w = window(cs, pod, plugin, state) if window is not None else None
            if w is not None:
                parts.append((plugin, twin, None, w))
            else:
                parts.append((plugin, twin, twin(cs, pod, plugin, state) if twin is not None else None, None))
        return parts

    def _nominated_here(self, pod: Pod) -> dict[int, list[Pod]]:
        """Nodes with pods nominated there of priority ≥ the pod's (other than the pod)."""
        out: dict[int, list[Pod]] = {}
        cs = self.cs
        if not cs.nominated:
            return out
        for node in cs.nominated:
            keep = self.fwk.nominated_pods_for(pod, node)
            if keep and node in cs.index:
                out[cs.index[node]] = keep
        return out

    def _node_status(self, state: CycleState, pod: Pod, i: int, skipped: set[str], stages: list[Stage],
                     nominated: list[Pod] | None) -> Status | None:
        """``RunFilterPluginsWithNominatedPods`` on one node, the vector stages read for the node
        as it is: it must pass with and without the nominated pods."""
        ni = self.cs.infos[i]
        fwk = self.fwk
        if nominated:
            clone = ni.clone()
            for p in nominated:
                clone.add_pod(PodInfo(p))
            st = fwk.run_filter_plugins(state, pod, clone, skipped)
            if st is not None:
                return st
        for plugin, verdict in stages:
            if verdict is not None:
                if verdict.fail[i]:
                    return verdict.status(i)
                continue
            st = plugin.filter(state, pod, ni)
            if not st.is_success:
                return st.with_plugin(plugin.name)
        return None

    def _find_feasible(self, state: CycleState, pod: Pod, skipped: set[str], candidates: np.ndarray,
                       diag: VectorDiagnosis, start: int, stages: list[Stage] | None = None,
                       keep_statuses: dict[int, Status] | None = None) -> tuple[np.ndarray, int]:
        """``stages``: the Filter stages already made (a traced cycle times them); ``keep_statuses``
        gets the rejections of the nodes walked node by node also when some node fits."""
        cs = self.cs
        m = len(candidates)
        if m == 0:
            return candidates, 0
        to_find = self._to_find.get(m) if self.has_score_plugins else 1
        if to_find is None:
            to_find = self._to_find[m] = num_feasible_nodes_to_find(self.fwk.profile.percentage_of_nodes_to_score, m)
        start = start % m
        if stages is None:
            # a traced cycle hands its stages in (made over every node): no window then
            parts: list[WindowPart] | None = None
            if self.windowed and m == cs.n and to_find < m and m >= self.window_min_nodes and not cs.nominated:
                parts = self._window_parts(state, pod, skipped)
                if _windowable(parts):
                    got = self._search_window(parts, start, to_find)
                    if got is not None:
                        return got
            stages = self._stages(state, pod, skipped, parts)
        nominated = self._nominated_here(pod)
        per_node = [k for k, (_, v) in enumerate(stages) if v is None]
        tell = any(v is not None and v.on_rejected is not None for _, v in stages)
        if not per_node and not nominated:
            fails = [v.fail for _, v in stages if v is not None and v.fail is not cs.no_fail]
            fail = fails[0] if fails else cs.no_fail
            if len(fails) > 1:
                fail = fail | fails[1]
                for f in fails[2:]:
                    fail |= f
            if m == cs.n:
                quick = first_feasible(fail, start, to_find, m)
                if quick is not None:
                    if tell:
                        tell_rejected(stages, (start + np.arange(quick[1])) % m, cs.n)
                    return quick
            rot = np.concatenate((candidates[start:], candidates[:start])) if start else candidates
            ok = ~fail[rot]
            pos = np.flatnonzero(ok)
            if len(pos) >= to_find:
                processed = int(pos[to_find - 1]) + 1
                pos = pos[:to_find]
            else:
                processed = m
            seen = rot[:processed]
            feasible = rot[pos]
            if len(feasible) == 0:
                record_vector(diag, stages, seen)
            if tell:
                tell_rejected(stages, seen, cs.n)
            return feasible, processed
        # node by node where some plugin needs it; vector stages before the first such plugin
        # settle most nodes in bulk
        rot = np.concatenate((candidates[start:], candidates[:start])) if start else candidates
        first = per_node[0] if per_node else len(stages)
        prefix_fail = np.zeros(cs.n, dtype=bool)
        for _, v in stages[:first]:
            assert v is not None
            prefix_fail |= v.fail
        for i in nominated:
            prefix_fail[i] = False
        found: list[int] = []
        processed = m
        statuses: dict[int, Status] = {}
        open_pos = np.flatnonzero(~prefix_fail[rot])
        for at in open_pos.tolist():
            i = int(rot[at])
            st = self._node_status(state, pod, i, skipped, stages, nominated.get(i))
            if st is None:
                found.append(i)
                if len(found) >= to_find:
                    processed = at + 1
                    break
            else:
                statuses[i] = st
        feasible = np.array(found, dtype=np.int64)
        if keep_statuses is not None:
            keep_statuses.update(statuses)
        if tell:
            tell_rejected(stages, rot[:processed], cs.n, statuses, nominated)
        if len(feasible) == 0:
            seen = rot[:processed]
            prefix_seen = np.zeros(cs.n, dtype=bool)
            prefix_seen[seen] = prefix_fail[seen]
            record_vector(diag, stages[:first], np.flatnonzero(prefix_seen))
            diag.node_to_status.update(statuses)
        return feasible, processed

    def _search_window(self, parts: list[WindowPart], start: int, to_find: int) -> tuple[np.ndarray, int] | None:
        """``findNodesThatPassFilters`` over windows of nodes in rotation order from ``start``
        (every node a candidate): each window is filtered whole, the feasible nodes gathered until
        ``to_find`` fit. The answer is :func:`first_feasible`'s over every node — the first
        ``to_find`` feasible nodes from ``start`` on and how many nodes that examined — while
        reading only about as many nodes as that examined. None when no node fits (the caller
        then records every node's rejection)."""
        cs = self.cs
        m = cs.n
        windows = [w for _, _, _, w in parts if w is not None]
        whole = [v.fail for _, _, v, w in parts if w is None and v is not None and v.fail is not cs.no_fail]
        found: list[np.ndarray] = []
        count = 0
        seen = 0
        # the first window: as many nodes as recent searches took per feasible node (cycles in a
        # row are mostly pods of one shape; the largest recent ratio, decaying), so that one
        # window usually does
        size = to_find * self._window_per_found // 1024 + (to_find >> 3) + 32
        for seg_lo, seg_hi in ((start, m), (0, start)):
            lo = seg_lo
            while lo < seg_hi:
                hi = min(lo + size, seg_hi)
                fail = windows[0](lo, hi)
                for w in windows[1:]:
                    fail |= w(lo, hi)
                for f in whole:
                    fail |= f[lo:hi]
                np.logical_not(fail, out=fail)   # the window's own array: turned into 'fits'
                ok = fail.nonzero()[0]
                if len(ok):
                    ok += lo
                    found.append(ok)
                    count += len(ok)
                    if count >= to_find:
                        feasible = np.concatenate(found) if len(found) > 1 else found[0]
                        feasible = feasible[:to_find]
                        read = seen + hi - lo
                        self._window_per_found = min(max(read * 1024 // count, self._window_per_found * 3 // 4),
                                                     16 * 1024)
                        return feasible, (int(feasible[-1]) - start) % m + 1
                seen += hi - lo
                lo = hi
                # the next window: as many nodes as the rate seen so far takes to find the rest
                need = to_find - count
                size = max(need * seen // count + (need >> 3) + 32 if count else 2 * size, 64)
        if not count:
            return None
        return (np.concatenate(found) if len(found) > 1 else found[0]), m

    # --- prioritizeNodes -------------------------------------------------------------------------

    def prioritize_nodes(self, state: CycleState, pod: Pod, feasible: np.ndarray,
                         recorder: CycleRecorder | None = None) -> np.ndarray:
        """Weighted sum of the normalised scores, only as far as ``selectHost`` reads it (the
        highest total and the ties at it): a plugin whose score is the same on every node —
        taints with no PreferNoSchedule taint anywhere, pod affinity and spreading with nothing to
        count — moves every total alike and is left out (its twin says ``SKIPPED``). ``recorder``
        (a traced cycle) is handed each plugin's part (:meth:`CycleRecorder.score_parts`)."""
        cs = self.cs
        totals: np.ndarray | None = None
        infos: list[NodeInfo] | None = None
        done: set[str] = set()
        # traced: each plugin scored alone by its twin (the joint scores' arithmetic is theirs), so
        # each has its own scores to show
        parts: list[tuple[str, int, str, Any]] | None = [] if recorder is not None else None
        for (plugin, weight), (partner, partner_weight), how in (self.joint if parts is None else ()):
            got = how(cs, pod, (plugin, weight), (partner, partner_weight), feasible)
            if got is not None:
                totals = got if totals is None else totals + got
                done.update((plugin.name, partner.name))
        for plugin, weight, name, twin in self.scores:
            if done and name in done:
                continue
            if twin is not None:
                sv = twin(cs, pod, plugin, feasible)
                if sv is SKIPPED:
                    if parts is not None:
                        parts.append((name, weight, "skipped", None))
                    continue
                if sv is not None:
                    if parts is not None:
                        parts.append((name, weight, "vector", sv))
                    part = sv.normalized * weight if weight != 1 else sv.normalized
                    if totals is None:
                        totals = part.astype(np.int64, copy=True)
                    else:
                        totals += part
                    continue
            if infos is None:
                infos = cs.infos_array[feasible].tolist()
            if self.fwk.run_pre_score_plugin(state, pod, infos, plugin):
                if parts is not None:
                    parts.append((name, weight, "skipped", None))
                continue
            ps = self.fwk.run_score_plugin(state, pod, infos, plugin, weight)
            if parts is not None:
                parts.append((name, weight, "plain", ps))
            part = np.array([ps.normalized[ni.name] for ni in infos], dtype=np.int64) * weight
            if totals is None:
                totals = part
            else:
                totals += part
        if parts is not None and recorder is not None:
            recorder.score_parts(cs.names, feasible, parts)
        return totals if totals is not None else np.zeros(len(feasible), dtype=np.int64)


def _windowable(parts: list[WindowPart]) -> bool:
    """Can the windowed search answer: every Filter a whole-cluster verdict or a window, at least
    one window, and no Filter told of the nodes it rejected (NodeResourceTopologyMatch marking
    nodes maybe over-reserved needs the nodes examined one by one)?"""
    some_window = False
    for _, _, verdict, window in parts:
        if window is not None:
            some_window = True
        elif verdict is None or verdict.on_rejected is not None:
            return False
    return some_window


def first_feasible(fail: np.ndarray, start: int, to_find: int, m: int) -> tuple[np.ndarray, int] | None:
    """Sampling over all nodes without rotating them: the feasible nodes from ``start`` on,
    then those before it, cut at ``to_find``, and how many nodes that examined (None when no
    node is feasible: the caller records why, node by node in rotation order)."""
    ok = (~fail).nonzero()[0]
    n_ok = len(ok)
    if n_ok == 0:
        return None
    k = int(ok.searchsorted(start)) if start else 0
    if n_ok - k >= to_find:   # enough from ``start`` on: no need to rotate them all
        ok = ok[k:k + to_find]
    elif n_ok >= to_find:
        ok = np.concatenate((ok[k:], ok[:to_find - (n_ok - k)]))
    else:
        return (np.concatenate((ok[k:], ok[:k])) if k else ok), m
    return ok, (int(ok[-1]) - start) % m + 1


def record_vector(diag: VectorDiagnosis, stages: list[Stage], seen: np.ndarray) -> None:
    """The vector stages' rejections of the nodes examined: each node goes to the first stage
    that rejects it (its reasons worked out now, while the cluster is as filtered)."""
    undecided = np.zeros(diag.n, dtype=bool)
    undecided[seen] = True
    for _, v in stages:
        assert v is not None
        mask = undecided & v.fail
        if mask.any():
            diag.vector.append((v.settle(), mask))
            undecided &= ~mask


def tell_rejected(stages: list[Stage], seen: np.ndarray, n: int, statuses: dict[int, Status] | None = None,
                  nominated: dict[int, list[Pod]] | None = None) -> None:
    """Tell each vector Filter with an ``on_rejected`` the nodes it rejected among those the cycle
    examined (``seen``): the plain cycle stops at a node's first rejecting Filter. Past the first
    node-by-node stage, the rejections are the per-node ``statuses``; nodes with nominated pods
    ran the plugins themselves (their Filters left their own traces) and are left out."""
    undecided = np.zeros(n, dtype=bool)
    undecided[seen] = True
    if nominated:
        undecided[list(nominated)] = False
    for _, v in stages:
        if v is None:
            break
        mask = undecided & v.fail
        if v.on_rejected is not None and mask.any():
            v.on_rejected(mask)
        undecided &= ~mask
    else:
        return
    told = {v.plugin: v.on_rejected for _, v in stages if v is not None and v.on_rejected is not None}
    for i, st in (statuses or {}).items():
        tell = told.get(st.plugin)
        if tell is not None and not (nominated and i in nominated):
            mask = np.zeros(n, dtype=bool)
            mask[i] = True
            tell(mask)


def select_host_vector(totals: np.ndarray, rng: random.Random) -> int:
    """``selectHost`` over an array of totals (:func:`..schedule_one.select_host`'s twin)."""
    top = (totals == np.maximum.reduce(totals)).nonzero()[0]   # ufunc calls: no Python wrappers
    if len(top) == 1:
        return int(top[0])
    return int(top[rng.randrange(len(top))])



# The shortcuts are Python functions of fixed arity, not ``functools.partial`` objects: the
# interpreter inlines such a call, where a partial goes through C on every cycle.

def _skip_on(fn: Any, cache: "ClusterState") -> Any:
    """A known Skip ``(pod, plugin) -> bool`` over the cache."""
    return lambda pod, plugin: fn(cache, pod, plugin)


def _pre_filter_on(fn: Any, cache: "ClusterState") -> Any:
    """A vectorised PreFilter ``(pod, plugin, state) -> Status | None`` over the cache."""
    return lambda pod, plugin, state: fn(cache, pod, plugin, state)
