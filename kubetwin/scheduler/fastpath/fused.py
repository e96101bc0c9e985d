"""One routine per scheduling cycle for the common case of a node-local profile: PreFilter's
known answers, every Filter's verdict over the nodes, the first ``numFeasibleNodesToFind``
feasible nodes from ``nextStartNodeIndex``, the weighted scores and ``selectHost`` — without the
framework's per-plugin dispatch, diagnosis and verdict objects of :mod:`.cycle`.

Covered (:meth:`FusedCycle.cycle` answers; anything else returns None and the cycle runs the
vectorised path, :class:`.cycle.VectorCycle`, unchanged):

- the profile's PreFilter and Filter plugins are among :data:`PRE_FILTERS` and :data:`FILTERS`
  (the default profile's) or say which nodes they reject in one call (``fused_filter``: the
  simulator's GPUShare), NodeResourcesFit among them, and its score plugins are
  scored as :meth:`.cycle.VectorCycle.prioritize_nodes` scores them (NodeResourcesFit with
  NodeResourcesBalancedAllocation jointly, every other scorer by its vectorised twin);
- a pod without affinity, topology spread constraints, resource claims or host ports, with no
  nominated node and no pods nominated anywhere, asking only for resources every Fit check
  reads from the columns (no DRA-backed extended resource); nodeSelector, tolerations,
  ``nodeName`` and GPU share annotations are covered;
- PodTopologySpread, InterPodAffinity and DynamicResources Skip their PreFilter (their known
  Skips, asked each cycle: the cluster's objects and bound pods decide them too);
- some node fits (a failed cycle needs the diagnosis: the vectorised path runs it);
- with the pure-Python twin, fewer nodes than :attr:`.cycle.VectorCycle.window_min_nodes` (above,
  the windowed search reads fewer nodes; its answers are the same); the compiled kernel stops
  once enough nodes fit, as the windows do, and answers at any size (:data:`LARGE`).

The Filters that read only node objects (NodeUnschedulable, NodeName, TaintToleration,
NodeAffinity: labels, taints, ``unschedulable``) are ORed once per pod spec and kept until a
change that is not one node's accounting (:meth:`~..backend.cache.Cache.touch` with -1: a node
update, a nomination, nodes joining); per cycle the columns NodeResourcesFit and GPUShare read
are compared. Every array is the one the plugin's twin computes, so the answers — node, feasible
count, nodes examined, the rotation and the random draw of ``selectHost`` — are the vectorised
cycle's: ``tests/scheduler/fastpath/test_fused.py`` compares both on random clusters and pods.

Not an upstream module: upstream runs the framework's plugins one by one
(``pkg/scheduler/schedule_one.go``'s ``schedulePod``, ``findNodesThatFitPod``,
``prioritizeNodes``, ``selectHost``); this is the fast path's shortcut through them.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import _kernel
from ...model.pod import Pod
from ..framework.interface import CycleState
from ..framework.types import host_ports
from ..plugins import (
    dynamicresources,
    interpodaffinity,
    nodeaffinity,
    nodename,
    nodeports,
    noderesources,
    nodeunschedulable,
    podtopologyspread,
    tainttoleration,
)
from ..schedule_one import num_feasible_nodes_to_find
from .cycle import select_host_vector
from .vector import SKIPPED

if TYPE_CHECKING:
    from ..backend.cache import ClusterState
    from .cycle import VectorCycle

#: the fused cycle answers where the profile allows (tests turn it off to compare)
ENABLED = True

#: PreFilter plugins the fused cycle knows the answer of (for the pods it covers)
PRE_FILTERS = frozenset({nodeaffinity.NAME, nodeports.NAME, noderesources.FIT, podtopologyspread.NAME,
                         interpodaffinity.NAME, dynamicresources.NAME})
#: Filter plugins it computes: node-object Filters once per spec, NodeResourcesFit per cycle; the
#: others Skip for the pods it covers
FILTERS = PRE_FILTERS | {nodeunschedulable.NAME, nodename.NAME, tainttoleration.NAME}
#: Filters that read only the node objects (kept per pod spec)
_STATIC = (nodeunschedulable.NAME, nodename.NAME, tainttoleration.NAME, nodeaffinity.NAME)
#: PreFilters whose known Skip is asked each cycle
_MUST_SKIP = (podtopologyspread.NAME, interpodaffinity.NAME, dynamicresources.NAME)
FIT = noderesources.FIT
#: with the compiled kernel, clusters of ``window_min_nodes`` or more too (its loop stops once
#: enough nodes fit, as the windowed search does)
LARGE = True
#: a node-object Filter's twin answered None for the spec (its plugin runs node by node)
_NODE_BY_NODE = np.zeros(0, dtype=bool)


class _SpecPlan:
    """What the fused cycle reads of one pod spec: covered or not, the Fit requests, the joint
    score's constants, and the node-object Filters' failures (kept while no node object changes)."""

    __slots__ = ("spec", "amounts", "covered", "wants", "score", "static_fail", "static_at")

    def __init__(self, spec: Any, amounts: Any, covered: bool, wants: tuple[tuple[int, int], ...],
                 score: tuple[int, ...] | None):
        self.spec = spec
        #: the pod's requests entry (:meth:`~..backend.columns.NodeColumns.amounts`) the plan was
        #: made from: a pod of the spec with other requests (a resize in its status) is not this plan's
        self.amounts = amounts
        self.covered = covered
        #: (amount, column of ``cs.free``) per resource NodeResourcesFit checks
        self.wants = wants
        #: the kernel's score constants (Fit's requests and weights, Balanced on, its requests and
        #: weight), or None: scored by the plugins' twins
        self.score = score
        self.static_fail: np.ndarray | None = None
        #: the static epoch ``static_fail`` was made at
        self.static_at = -1


def _spec_excluded(spec: Any) -> bool:
    """Whether the pod spec alone keeps a pod off the fused cycle: inter-pod affinity, spread
    constraints and resource claims are read by plugins that look beyond one node."""
    return spec.affinity is not None or bool(spec.topology_spread_constraints) or bool(spec.resource_claims)

class FusedCycle:
    """The fused cycle over one :class:`.cycle.VectorCycle` (its framework and cache)."""

    #: cycles answered by every fused cycle of the process (the benchmark's counter)
    answered = 0

    def __init__(self, vc: "VectorCycle"):
        self.vc = vc
        self.cs: "ClusterState" = vc.cs
        fwk = vc.fwk
        by_name = {p.name: p for p, _ in fwk.plugins}
        self.fit = by_name[FIT]
        #: Filters of plugins outside the default profile that say which nodes they reject for a
        #: pod in one call (GPUShare), in profile order: ``fused_filter(pod) -> ((amount,
        #: column), ...), (mask, ...)`` — a node whose column is below an amount, or set in a
        #: mask, is rejected
        self.own: list[Any] = [p.fused_filter for p, name, _, _ in vc.filters if name not in FILTERS]
        #: the node-object Filters' twins with their plugins
        self.static: list[tuple[Any, Any]] = [(p, twin) for p, name, twin, _ in vc.filters if name in _STATIC]
        #: the known Skips asked each cycle: (plugin, skip function)
        self.must_skip: list[tuple[Any, Any]] = []
        for k, p in enumerate(fwk.pre_filter_plugins):
            if p.name in _MUST_SKIP:
                self.must_skip.append((p, vc.pre_filter_shortcuts[k][0]))
        self.dra_extended = self.cs.gates.enabled("DRAExtendedResource")
        self.joint = [(how, pw, qw) for pw, qw, how in vc.joint]
        joint_names = {pw[0].name for pw, _, _ in vc.joint} | {qw[0].name for _, qw, _ in vc.joint}
        #: the other score plugins: (plugin, weight, vectorised Score)
        self.scores = [(p, w, twin) for p, w, name, twin in vc.scores if name not in joint_names]
        self._plans: dict[int, _SpecPlan] = {}
        self._to_find: dict[int, int] = {}
        #: ``len(cs.changes)`` last looked at, and a count of the changes beyond one node's own seen
        self._scanned = 0
        self._static_epoch = 0
        #: the kernel's output buffers and the score columns it reads (views kept while the
        #: cache's tables are the same objects)
        n = self.cs.n
        self._feasible = np.zeros(n, dtype=np.int64)
        self._scores = np.zeros(n, dtype=np.int64)
        self._top = np.zeros(n, dtype=np.int64)
        self._columns: tuple[Any, ...] = ()
        self._tables: tuple[Any, ...] = ()
        #: cycles answered here
        self.cycles = 0

    @staticmethod
    def covers(vc: "VectorCycle") -> bool:
        """Is the profile one the fused cycle answers for (some of its pods)?"""
        fwk = vc.fwk
        pre = {p.name for p in fwk.pre_filter_plugins}
        filters = {p.name for p in fwk.filter_plugins}
        if not pre <= PRE_FILTERS or FIT not in filters:
            return False
        if any(fp.name not in FILTERS and not hasattr(fp, "fused_filter") for fp in fwk.filter_plugins):
            return False
        if any(twin is None for *_, twin in vc.scores) or any(twin is None for _, _, twin, _ in vc.filters):
            return False
        from ..plugins.registry import vectorised as in_tree

        # a Filter of these names replaced from outside (``register_vector_filter``) is its own
        if any(vc.twins.get(name) is not in_tree(name) for name in filters & FILTERS):
            return False
        for k, p in enumerate(fwk.pre_filter_plugins):
            if p.name in _MUST_SKIP and vc.pre_filter_shortcuts[k][0] is None:
                return False
        return True

    # --- per pod spec ---------------------------------------------------------------------------

    def _plan(self, pod: Pod) -> _SpecPlan:
        spec = pod.spec
        got = self._plans.get(id(spec))
        if got is not None and got.spec is spec and got.amounts is self.cs.amounts(pod):
            return got
        if len(self._plans) >= 4096:
            self._plans.clear()
        plan = self._plans[id(spec)] = self._make_plan(pod)
        return plan

    def _make_plan(self, pod: Pod) -> _SpecPlan:
        from ..plugins.dynamicresources.extended import device_class_for
        from ..plugins.noderesources.vector import wanted_resources

        cs = self.cs
        spec = pod.spec
        amounts = cs.amounts(pod)
        covered = not _spec_excluded(spec) and not host_ports(pod)
        wants: list[tuple[int, int]] = []
        if covered:
            for name, want, fixed, j in wanted_resources(cs, pod, self.fit, amounts.requests):
                if j is None or (not fixed and self.dra_extended and device_class_for(cs.handle, name) is not None):
                    covered = False
                    break
                wants.append((want, j))
        return _SpecPlan(spec, amounts, covered, tuple(wants), self._score_constants(pod) if covered else None)

    def _score_constants(self, pod: Pod) -> tuple[int, ...] | None:
        """The kernel's constants of NodeResourcesFit (LeastAllocated) and
        NodeResourcesBalancedAllocation scored jointly on cpu and memory, as
        :func:`~..plugins.noderesources.vector.score_resources_together` scores them; None where
        the profile scores otherwise (the plugins' twins score then)."""
        from ..plugins.noderesources.args import LEAST_ALLOCATED
        from ..plugins.noderesources.vector import score_requests, score_resources_together

        if len(self.joint) != 1:
            return None
        how, (fit, fit_weight), (balanced, balanced_weight) = self.joint[0]
        if how is not score_resources_together or fit is not self.fit:
            return None
        fa, ba = fit.args, balanced.args
        if fa.strategy != LEAST_ALLOCATED or not (_cpu_and_memory(fa.resources) and _cpu_and_memory(ba.resources)):
            return None
        weights = (fa.resources[0].weight, fa.resources[1].weight, fit_weight, balanced_weight)
        if not all(isinstance(w, int) and 0 < w <= 1_000_000 for w in weights):
            return None
        fit_reqs = score_requests(self.cs, pod, fa.resources, False)
        bal_req = score_requests(self.cs, pod, ba.resources, True)
        if not all(isinstance(r, int) and 0 <= r < 2**62 for r in (*fit_reqs, *bal_req)):
            return None
        return (fit_reqs[0], fit_reqs[1], weights[0], weights[1], fit_weight, int(any(bal_req)), bal_req[0],
                bal_req[1], balanced_weight)

    def _static_fail(self, pod: Pod, plan: _SpecPlan) -> np.ndarray | None:
        """The node-object Filters' failures ORed (their twins' own arrays; None: no node fails;
        :data:`_NODE_BY_NODE`: some twin leaves the pod to its plugin)."""
        if plan.static_at == self._static_epoch:
            return plan.static_fail
        cs = self.cs
        state = CycleState()
        fail = None
        plan.static_at = self._static_epoch
        for plugin, twin in self.static:
            verdict = twin(cs, pod, plugin, state)
            if verdict is None:   # the plugin runs node by node for this pod: not covered
                plan.static_fail = _NODE_BY_NODE
                return _NODE_BY_NODE
            f = verdict.fail
            if f is cs.no_fail:
                continue
            fail = f if fail is None else fail | f   # never written to: the kernel reads it
        plan.static_fail = fail
        return fail

    def _score_columns(self) -> tuple[Any, ...]:
        """cpu and memory allocatable, non-zero requested and requested (contiguous views)."""
        cs = self.cs
        tables = (cs.alloc, cs.non_zero, cs.requested)
        if self._tables and all(a is b for a, b in zip(tables, self._tables)):
            return self._columns
        self._tables = tables
        self._columns = tuple(np.ascontiguousarray(t[:, k]) if not t[:, k].flags.c_contiguous else t[:, k]
                              for t in tables for k in (0, 1))
        return self._columns

    # --- the cycle ------------------------------------------------------------------------------

    def cycle(self, pod: Pod, start: int, rng: random.Random) -> tuple[int, int, int] | None:
        """(node index, feasible nodes, nodes examined) of the cycle, or None where it is not
        covered (nothing changed then: the caller runs the vectorised cycle)."""
        cs = self.cs
        n = cs.n
        if cs.nominated or pod.status.nominated_node_name or n != len(self._top) or (
                n >= self.vc.window_min_nodes and not (_kernel.COMPILED and LARGE)):
            return None
        if _spec_excluded(pod.spec):
            return None   # not covered (:meth:`_make_plan`), known before the plan is looked up
        plan = self._plan(pod)
        if not plan.covered:
            return None
        for plugin, skip in self.must_skip:
            if not skip(pod, plugin):
                return None
        changes = cs.changes
        if len(changes) != self._scanned:
            if len(changes) < self._scanned or -1 in changes[self._scanned:]:
                self._static_epoch += 1
            self._scanned = len(changes)
        free = cs.free
        wants = tuple((want, free[:, j]) for want, j in plan.wants)
        own: tuple[np.ndarray, ...] = ()
        for fused_filter in self.own:
            more_wants, masks = fused_filter(pod)
            if more_wants:
                wants += more_wants
            if masks:
                own += masks
        to_find = self._to_find.get(n)
        if to_find is None:
            to_find = self._to_find[n] = (num_feasible_nodes_to_find(self.vc.fwk.profile.percentage_of_nodes_to_score, n)
                                          if self.vc.has_score_plugins else 1)
        const = plan.score
        score = None
        # the compiled kernel scores as it goes; the pure-Python twin leaves the scores to the
        # plugins' memo of them (``node_local_scores``), which costs it less than scoring afresh
        if const is not None and _kernel.COMPILED and to_find > 1 and cs.alloc_nonzero[0] and cs.alloc_nonzero[1]:
            score = self._score_columns() + const
        static = self._static_fail(pod, plan)
        if static is _NODE_BY_NODE:
            return None
        processed, found, ntop = _kernel.pick(n, start % n, to_find, static, cs.npods,
                                              cs.pods_alloc, wants, own, score, self._feasible,
                                              self._scores, self._top)
        if found == 0:
            return None
        if found == 1:
            self.cycles += 1
            FusedCycle.answered += 1
            return int(self._feasible[0]), 1, processed
        feasible = self._feasible[:found].copy()
        parts = self._other_scores(pod, feasible)
        if parts is None:
            return None
        if score is not None and not parts:   # the joint score alone decides: the kernel's top nodes
            best = int(self._top[rng.randrange(ntop)]) if ntop > 1 else int(self._top[0])
            self.cycles += 1
            FusedCycle.answered += 1
            return best, found, processed
        if score is not None:
            totals = self._scores[:found].copy()
        else:
            got = self._joint_totals(pod, feasible)
            if got is None:
                return None
            totals = got
        for part in parts:
            totals += part
        self.cycles += 1
        FusedCycle.answered += 1
        return int(feasible[select_host_vector(totals, rng)]), found, processed

    def _joint_totals(self, pod: Pod, feasible: np.ndarray) -> np.ndarray | None:
        """The jointly scored plugins' weighted totals by their twins (None: node by node needed)."""
        totals: np.ndarray | None = None
        for how, pw, qw in self.joint:
            got = how(self.cs, pod, pw, qw, feasible)
            if got is None:
                return None
            totals = got if totals is None else totals + got
        return totals if totals is not None else np.zeros(len(feasible), dtype=np.int64)

    def _other_scores(self, pod: Pod, feasible: np.ndarray) -> list[np.ndarray] | None:
        """The weighted scores of the plugins not scored jointly, as
        :meth:`.cycle.VectorCycle.prioritize_nodes` adds them; none where each Skips, None where
        one needs the node-by-node path."""
        cs = self.cs
        parts: list[np.ndarray] = []
        for plugin, weight, twin in self.scores:
            sv = twin(cs, pod, plugin, feasible)
            if sv is SKIPPED:
                continue
            if sv is None:
                return None
            parts.append(sv.normalized * weight if weight != 1 else sv.normalized)
        return parts


def _cpu_and_memory(resources: Any) -> bool:
    return len(resources) == 2 and resources[0].name == "cpu" and resources[1].name == "memory"


def for_cycle(vc: "VectorCycle") -> FusedCycle | None:
    """The fused cycle for ``vc``'s profile, or None when the profile is not one it covers."""
    return FusedCycle(vc) if FusedCycle.covers(vc) else None
