"""Failed cycles kept per pod, answered again without re-running the whole cycle.

kube-scheduler retries an unschedulable pod whenever one of its rejecting plugins' events
fires, and every ``podMaxInUnschedulablePodsDuration`` regardless (``flushUnschedulablePodsLeftover``).
Most such retries in a simulation meet a cluster that has barely moved. Two shortcuts give the
retry's exact answer:

* **Same generation** — nothing the cycle reads has changed (no bind, removal, node update or
  nomination since): the cycle's answer is the same, down to the message.
* **Only some nodes changed** — when the failed cycle read nothing but each node's own state
  (plugins marked ``node_local``, PreFilters whose Skip is re-checked cheaply, a PostFilter that
  answered without a dry run), the per-node verdicts of the untouched nodes stand. Only the
  changed nodes are filtered again; their old reasons are taken out of the FitError histogram and
  the new ones put in. A changed node that now fits ends the shortcut: the real cycle runs.

The rotation of ``nextStartNodeIndex`` moves as the real cycle would have moved it.
Not an upstream module: it reads the framework runtime, the cache and the plugins' vectorised twins
through their public methods.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Protocol, runtime_checkable

import numpy as np

from ...model.pod import Pod
from ..framework.diagnosis import Diagnosis, fit_error_message
from ..framework.interface import CycleState
from ..framework.status import Code, Status
from ..schedule_one import ScheduleResult
from .cycle import VectorCycle, VectorDiagnosis

if TYPE_CHECKING:
    from ..backend.cache import ClusterState

#: more changed nodes than this and the real cycle is cheaper than filtering them one by one
MAX_PATCHED_NODES = 32
#: the profile has no preemption plugin: PostFilter adds no message of its own
PREEMPT_OFF = 0


@runtime_checkable
class Preemptor(Protocol):
    """What a kept verdict asks the profile's preemption plugin."""

    name: ClassVar[str]

    def answered_without_dry_run(self, pod: Pod, diagnosis: Diagnosis) -> int | None: ...

    def kept_answer_holds(self, kind: int, pod: Pod, potential: int) -> bool: ...

    def message_without_dry_run(self, kind: int, num_nodes: int, potential: int) -> str: ...


@dataclass
class Verdict:
    """A failed cycle's answer and what it was computed from."""

    pod: Pod
    generation: int
    result: ScheduleResult
    advance: int                      # how far the cycle moved ``nextStartNodeIndex``
    local: "LocalFailure | None" = None   # set for verdicts kept per pod shape


NodeFilter = Callable[[int], "Status | None"]


@dataclass(frozen=True)
class FilterChain:
    """The kept cycle's Filters (its skipped ones left out), as a changed node is filtered again.

    A kept rejection by one of the node-object Filters that run before all others (``settled``)
    stands after pods came or went there. Any other kept rejection means those passed, and still
    pass: only the Filters after them (``after``) run again. A Filter with a one-node twin reads
    the cache's columns instead of the NodeInfo."""

    state: CycleState                 # PreFilter state for node-by-node Filter calls
    settled: frozenset[str]
    after: tuple[tuple[Any, NodeFilter | None], ...]
    full: tuple[tuple[Any, NodeFilter | None], ...]   # for a node without a kept status


@dataclass
class LocalFailure:
    """What a node-local failed cycle needs to be brought up to date node by node."""

    diag: Diagnosis
    skipped: frozenset[str]
    preempt: int
    hist: Counter[str]
    plugin_nodes: Counter[str]          # nodes each plugin rejected
    potential: int                      # nodes rejected as Unschedulable (preemption candidates)
    rechecked: tuple[Any, ...]          # skipped plugins whose Skip is re-checked per patch
    #: ``rechecked`` with each one's known Skip ``(cache, pod, plugin) -> bool``, looked up once
    skip_checks: tuple[tuple[Callable[..., Any], Any], ...] = ()
    changed: dict[int, Status] = field(default_factory=dict)   # newer statuses than ``diag``'s
    chain: FilterChain | None = None    # built at the first patch
    _deciders: list[int] | None = None  # per node, the ``diag.vector`` entry that rejected it (-1: none)
    _kept: dict[tuple[int, int, int], Status] = field(default_factory=dict)

    def status(self, i: int) -> Status | None:
        """Node ``i``'s latest rejection: a newer one, else the kept cycle's."""
        st = self.changed.get(i)
        if st is None:
            st = self.diag.node_to_status.get(i)
            if st is None:
                st = self._vector_status(i)
        return st

    def _vector_status(self, i: int) -> Status | None:
        """``Diagnosis.status`` for a node the vector Filters decided: the first verdict whose mask
        holds it (a node-local failure has no PreFilter rejection and no absent nodes). One Status
        per verdict, code and reason key, shared by the nodes that have it."""
        diag = self.diag
        if not isinstance(diag, VectorDiagnosis):
            return None
        deciders = self._deciders
        if deciders is None:
            vector = diag.vector
            first = np.full(diag.n, -1, dtype=np.int32)
            for k in range(len(vector) - 1, -1, -1):
                first[vector[k][1]] = k
            deciders = self._deciders = first.tolist()
        k = deciders[i]
        if k < 0:
            return None
        verdict = diag.vector[k][0]
        key = verdict.key
        memo = (k, verdict.code.item(i), 0 if key is None else key.item(i))
        st = self._kept.get(memo)
        if st is None:
            st = self._kept[memo] = Status(Code(memo[1]), verdict.reasons_of(memo[2]), verdict.plugin)
        return st


class KeptVerdicts:
    """The kept-verdict logic over a framework, its cache and its vectorised twins."""

    def __init__(self, cycle: VectorCycle, preemptor: Preemptor | None, vectorised: bool):
        self.cycle = cycle
        self.fwk = cycle.fwk
        self.cs: "ClusterState" = cycle.cs
        self.preemptor = preemptor
        #: read Filters from the cache's columns where a twin can (off: the plain reference)
        self.vectorised = vectorised

    def preemption_kind(self, pod: Pod, diag: Diagnosis) -> int | None:
        """How PostFilter answered the failed cycle without a dry run, or None if it may have run one."""
        if self.preemptor is None:
            return PREEMPT_OFF
        return self.preemptor.answered_without_dry_run(pod, diag)

    def rechecks_skip(self, plugin: Any) -> bool:
        tw = self.cycle.twins.get(plugin.name)
        return tw is not None and tw.pre_filter_is_skip is not None

    def local_failure(self, pod: Pod, diag: Diagnosis, preempt: int | None,
                      other_messages: bool) -> LocalFailure | None:
        """The node-local description of a failed cycle, or None when it read more than that."""
        if preempt is None or other_messages or diag.all_nodes is not None or diag.absent is not None:
            return None
        if pod.status.nominated_node_name or self.cs.nominated:
            return None
        fwk = self.fwk
        for plugin in fwk.filter_plugins:
            if plugin.name in diag.skipped:
                if not plugin.node_local and not self.rechecks_skip(plugin):
                    return None
            elif not plugin.node_local:
                return None
        for pre in fwk.pre_filter_plugins:
            if pre.name not in diag.skipped and not pre.node_local and not self.rechecks_skip(pre):
                return None
        plugin_nodes: Counter[str] = Counter()
        if isinstance(diag, VectorDiagnosis):
            for verdict, mask in diag.vector:
                m = int(mask.sum())
                if m:
                    plugin_nodes[verdict.plugin] += m
        for st in diag.node_to_status.values():
            plugin_nodes[st.plugin] += 1
        potential = len(diag.nodes_with_code(Code.Unschedulable))
        checks: list[tuple[Callable[..., Any], Any]] = []   # what ``rechecks_skip`` finds, kept
        for p in fwk.pre_filter_plugins:
            tw = self.cycle.twins.get(p.name)
            if p.name in diag.skipped and tw is not None and tw.pre_filter_is_skip is not None:
                checks.append((tw.pre_filter_is_skip, p))
        return LocalFailure(diag, frozenset(diag.skipped), preempt, diag.histogram(), plugin_nodes, potential,
                            tuple(p for _, p in checks), tuple(checks))

    def _skips_hold(self, pod: Pod, lf: LocalFailure) -> bool:
        """The plugins skipped in the kept cycle would be skipped again (``VectorCycle.pre_filter_is_skip``
        of each, its known Skip looked up when the failure was kept)."""
        cs = self.cs
        for is_skip, plugin in lf.skip_checks:
            if not is_skip(cs, pod, plugin):
                return False
        return True

    def filter_chain(self, pod: Pod, skipped: frozenset[str]) -> FilterChain | None:
        """PreFilter state and Filters for node-by-node calls; None when a PreFilter now rejects."""
        state = CycleState()
        fwk, cs = self.fwk, self.cs
        for plugin in fwk.pre_filter_plugins:
            if plugin.name in skipped:
                continue
            _, st = plugin.pre_filter(state, pod, cs.infos)
            if not st.is_success:
                return None
        full = tuple(p for p in fwk.filter_plugins if p.name not in skipped)
        k = 0
        while k < len(full) and full[k].reads_node_object_only:
            k += 1
        steps: list[tuple[Any, NodeFilter | None]] = []
        for p in full:
            fn = None
            if self.vectorised:
                tw = self.cycle.twins.get(p.name)
                if tw is not None and tw.node_filter is not None:
                    fn = tw.node_filter(cs, pod, p, state)
            steps.append((p, fn))
        return FilterChain(state, frozenset(p.name for p in full[:k]), tuple(steps[k:]), tuple(steps))

    def _filter_node(self, chain: FilterChain, pod: Pod, i: int, old: Status | None) -> Status | None:
        """Node ``i``'s first rejection (None: it fits) after pods came or went there, its kept
        rejection being ``old``."""
        if old is not None and old.plugin in chain.settled:
            return old
        ni = None
        for plugin, fn in chain.after if old is not None else chain.full:
            if fn is not None:
                st = fn(i)
                if st is not None:
                    return st
                continue
            if ni is None:
                ni = self.cs.infos[i]
            got = plugin.filter(chain.state, pod, ni)
            if not got.is_success:
                return got.with_plugin(plugin.name)
        return None

    def patch(self, kept: Verdict, nodes: set[int]) -> ScheduleResult | None:
        """The kept failure with ``nodes`` filtered again; None when the real cycle must run.

        The kept histogram, plugin counts and statuses are brought up to date in place: a None
        answer ends the verdict (the scheduler forgets it and runs the real cycle), so nothing
        half-updated is ever read again."""
        lf = kept.local
        cs = self.cs
        pod = kept.pod
        if lf is None or len(nodes) > MAX_PATCHED_NODES or cs.nominated:
            return None
        if lf.skip_checks and not self._skips_hold(pod, lf):
            return None
        chain = lf.chain
        if chain is None:
            chain = lf.chain = self.filter_chain(pod, lf.skipped)
            if chain is None:
                return None
        changed = lf.changed
        moved: list[tuple[Status | None, Status]] = []   # (kept, new) rejections that differ
        for i in nodes:
            old = changed.get(i)   # what ``lf.status`` reads first
            if old is None:
                old = lf.status(i)
            st = self._filter_node(chain, pod, i, old)
            if st is None:
                return None   # a changed node fits now: the real cycle runs
            if st is not old:
                changed[i] = st   # the next comparison reads a dict, not the diagnosis arrays
                if st != old:
                    moved.append((old, st))
        preemptor = self.preemptor
        if not moved and lf.diag.n == cs.n:
            # every changed node rejects the pod as before: histogram, plugins and preemption
            # candidates are as kept, and so is the message — unless victims have appeared since
            if preemptor is not None and not preemptor.kept_answer_holds(lf.preempt, pod, lf.potential):
                return None
            return kept.result
        potential = _move_reasons(lf, moved)
        if preemptor is not None and not preemptor.kept_answer_holds(lf.preempt, pod, potential):
            return None   # the preemption plugin would look for victims now: the real cycle runs
        r = kept.result
        post = preemptor.message_without_dry_run(lf.preempt, cs.n, potential) if preemptor is not None else ""
        message = fit_error_message(cs.n, lf.hist, "", post)
        return ScheduleResult(pod, None, Code.Unschedulable, message, 0, r.evaluated,
                              frozenset(p for p in lf.plugin_nodes if p))


def _move_reasons(lf: LocalFailure, moved: list[tuple[Status | None, Status]]) -> int:
    """Takes the kept rejections' reasons out of the FitError histogram and the plugin counts
    and puts the new ones in (counts that reach zero leave, as in a histogram built afresh);
    returns the preemption candidates now."""
    hist, plugin_nodes, potential = lf.hist, lf.plugin_nodes, lf.potential
    emptied: set[str] = set()
    for old, new in moved:
        if old is not None:
            for r in old.reasons:
                hist[r] -= 1
                emptied.add(r)
            plugin_nodes[old.plugin] -= 1
            potential -= old.code == Code.Unschedulable
        for r in new.reasons:
            hist[r] += 1
        plugin_nodes[new.plugin] += 1
        potential += new.code == Code.Unschedulable
    for r in emptied:
        if hist[r] <= 0:
            del hist[r]
    for p in [p for p, v in plugin_nodes.items() if v <= 0]:
        del plugin_nodes[p]
    lf.potential = potential
    return potential
