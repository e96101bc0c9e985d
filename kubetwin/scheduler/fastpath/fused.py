"""One routine per scheduling cycle for the common case of a node-local profile: PreFilter's
known answers, every Filter's verdict over the nodes, the first ``numFeasibleNodesToFind``
feasible nodes from ``nextStartNodeIndex``, the weighted scores and ``selectHost`` — without the
framework's per-plugin dispatch, diagnosis and verdict objects of :mod:`.cycle`.

Covered (:meth:`FusedCycle.cycle` answers; anything else returns None and the cycle runs the
vectorised path, :class:`.cycle.VectorCycle`, unchanged):

- the profile's PreFilter and Filter plugins are among :data:`PRE_FILTERS` and :data:`FILTERS`
  (the default profile's) or say which nodes they reject in one call (``fused_fail``: the
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
- fewer nodes than :attr:`.cycle.VectorCycle.window_min_nodes` (above, the windowed search reads
  fewer nodes; its answers are the same).

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

from ...model.pod import Pod
from ..framework.interface import CycleState
from ..framework.types import host_ports
from ..schedule_one import num_feasible_nodes_to_find
from .cycle import first_feasible, select_host_vector
from .vector import SKIPPED

if TYPE_CHECKING:
    from ..backend.cache import ClusterState
    from .cycle import VectorCycle

#: the fused cycle answers where the profile allows (tests turn it off to compare)
ENABLED = True

#: PreFilter plugins the fused cycle knows the answer of (for the pods it covers)
PRE_FILTERS = frozenset({"NodeAffinity", "NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity",
                         "DynamicResources"})
#: Filter plugins it computes: node-object Filters once per spec, NodeResourcesFit per cycle; the
#: others Skip for the pods it covers
FILTERS = PRE_FILTERS | {"NodeUnschedulable", "NodeName", "TaintToleration"}
#: Filters that read only the node objects (kept per pod spec)
_STATIC = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity")
#: PreFilters whose known Skip is asked each cycle
_MUST_SKIP = ("PodTopologySpread", "InterPodAffinity", "DynamicResources")
FIT = "NodeResourcesFit"


class _SpecPlan:
    """What the fused cycle reads of one pod spec: covered or not, the Fit requests, and the
    node-object Filters' failures (kept while no node object changes)."""

    __slots__ = ("spec", "covered", "wanted", "static_fail", "static_at")

    def __init__(self, spec: Any, covered: bool, wanted: tuple[tuple[int, int], ...]):
        self.spec = spec
        self.covered = covered
        #: (amount, column of ``cs.free``) per resource NodeResourcesFit checks
        self.wanted = wanted
        self.static_fail: np.ndarray | None = None
        #: ``len(cs.changes)`` when ``static_fail`` was made
        self.static_at = -1


class FusedCycle:
    """The fused cycle over one :class:`.cycle.VectorCycle` (its framework and cache)."""

    def __init__(self, vc: "VectorCycle"):
        self.vc = vc
        self.cs: "ClusterState" = vc.cs
        fwk = vc.fwk
        by_name = {p.name: p for p, _ in fwk.plugins}
        self.fit = by_name[FIT]
        #: Filters of plugins outside the default profile that say which nodes they reject for a
        #: pod in one call (``fused_fail(pod) -> bool array | None``: GPUShare), in profile order
        self.own: list[Any] = [p.fused_fail for p, name, _, _ in vc.filters if name not in FILTERS]
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
        #: ``len(cs.changes)`` last looked at, and whether a non-node change came since
        self._scanned = 0
        self._static_epoch = 0
        #: cycles answered here (the trace's cycles are counted by the benchmark)
        self.cycles = 0

    @staticmethod
    def covers(vc: "VectorCycle") -> bool:
        """Is the profile one the fused cycle answers for (some of its pods)?"""
        fwk = vc.fwk
        pre = {p.name for p in fwk.pre_filter_plugins}
        filters = {p.name for p in fwk.filter_plugins}
        if not pre <= PRE_FILTERS or FIT not in filters:
            return False
        if any(fp.name not in FILTERS and not hasattr(fp, "fused_fail") for fp in fwk.filter_plugins):
            return False
        if any(twin is None for *_, twin in vc.scores) or any(twin is None for _, _, twin, _ in vc.filters):
            return False
        for k, p in enumerate(fwk.pre_filter_plugins):
            if p.name in _MUST_SKIP and vc.pre_filter_shortcuts[k][0] is None:
                return False
        return True

    # --- per pod spec ---------------------------------------------------------------------------

    def _plan(self, pod: Pod) -> _SpecPlan:
        spec = pod.spec
        got = self._plans.get(id(spec))
        if got is not None and got.spec is spec:
            return got
        if len(self._plans) >= 4096:
            self._plans.clear()
        plan = self._plans[id(spec)] = self._make_plan(pod)
        return plan

    def _make_plan(self, pod: Pod) -> _SpecPlan:
        from ..plugins.dynamicresources.extended import device_class_for
        from ..plugins.noderesources.vector import wanted_resources

        spec = pod.spec
        covered = (spec.affinity is None and not spec.topology_spread_constraints and not spec.resource_claims
                   and not host_ports(pod))
        wanted: list[tuple[int, int]] = []
        if covered:
            cs = self.cs
            for name, want, fixed, j in wanted_resources(cs, pod, self.fit, cs.amounts(pod).requests):
                if j is None or (not fixed and self.dra_extended and device_class_for(cs.handle, name) is not None):
                    covered = False
                    break
                wanted.append((want, j))
        return _SpecPlan(spec, covered, tuple(wanted))

    def _static_fail(self, pod: Pod, plan: _SpecPlan) -> np.ndarray:
        """The node-object Filters' failures ORed (their twins' own arrays)."""
        if plan.static_at == self._static_epoch and plan.static_fail is not None:
            return plan.static_fail
        cs = self.cs
        state = CycleState()
        fail = None
        for plugin, twin in self.static:
            f = twin(cs, pod, plugin, state).fail
            if f is cs.no_fail:
                continue
            fail = f if fail is None else fail | f   # never written to: the cycle ORs it into its own
        plan.static_fail = cs.no_fail if fail is None else fail
        plan.static_at = self._static_epoch
        return plan.static_fail

    # --- the cycle ------------------------------------------------------------------------------

    def cycle(self, pod: Pod, start: int, rng: random.Random) -> tuple[int, int, int] | None:
        """(node index, feasible nodes, nodes examined) of the cycle, or None where it is not
        covered (nothing changed then: the caller runs the vectorised cycle)."""
        cs = self.cs
        n = cs.n
        if cs.nominated or pod.status.nominated_node_name or n >= self.vc.window_min_nodes:
            return None
        plan = self._plan(pod)
        if not plan.covered:
            return None
        for plugin, skip in self.must_skip:
            if not skip(pod, plugin):
                return None
        changes = cs.changes
        if len(changes) != self._scanned:
            if -1 in changes[self._scanned:]:
                self._static_epoch += 1
            self._scanned = len(changes)
        # Filters: NodeResourcesFit (pods, then each resource asked for), GPUShare, node objects
        fail = cs.npods >= cs.pods_alloc
        free = cs.free
        for want, j in plan.wanted:
            fail |= want > free[:, j]
        for own in self.own:
            f = own(pod)
            if f is not None:
                fail |= f
        static = self._static_fail(pod, plan)
        if static is not cs.no_fail:
            fail |= static
        to_find = self._to_find.get(n)
        if to_find is None:
            to_find = self._to_find[n] = (num_feasible_nodes_to_find(self.vc.fwk.profile.percentage_of_nodes_to_score, n)
                                          if self.vc.has_score_plugins else 1)
        got = first_feasible(fail, start % n, to_find, n)
        if got is None:
            return None
        feasible, processed = got
        if len(feasible) == 1:
            self.cycles += 1
            return int(feasible[0]), 1, processed
        totals = self._totals(pod, feasible)
        if totals is None:
            return None
        self.cycles += 1
        return int(feasible[select_host_vector(totals, rng)]), len(feasible), processed

    def _totals(self, pod: Pod, feasible: np.ndarray) -> np.ndarray | None:
        """:meth:`.cycle.VectorCycle.prioritize_nodes`'s totals, or None where a scorer needs the
        node-by-node path."""
        cs = self.cs
        totals: np.ndarray | None = None
        for how, pw, qw in self.joint:
            got = how(cs, pod, pw, qw, feasible)
            if got is None:
                return None
            totals = got if totals is None else totals + got
        for plugin, weight, twin in self.scores:
            sv = twin(cs, pod, plugin, feasible)
            if sv is SKIPPED:
                continue
            if sv is None:
                return None
            part = sv.normalized * weight if weight != 1 else sv.normalized
            if totals is None:
                totals = part.astype(np.int64, copy=True)
            else:
                totals += part
        return totals if totals is not None else np.zeros(len(feasible), dtype=np.int64)


def for_cycle(vc: "VectorCycle") -> FusedCycle | None:
    """The fused cycle for ``vc``'s profile, or None when the profile is not one it covers."""
    return FusedCycle(vc) if FusedCycle.covers(vc) else None
