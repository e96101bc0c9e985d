"""Failed cycles kept per pod, answered again without re-running the whole cycle.

kube-scheduler retries an unschedulable pod whenever one of its rejecting plugins' events
fires, and every ``podMaxInUnschedulablePodsDuration`` regardless (``flushUnschedulablePodsLeftover``).
Most such retries in a simulation meet a cluster that has barely moved. Two shortcuts give the
retry's exact answer:

* **Same generation** — nothing the cycle reads has changed (no bind, removal, node update or
  nomination since): the cycle's answer is the same, down to the message.
* **Only some nodes changed** — when the failed cycle read nothing but each node's own state
  (node-local Filters, PreFilters that read only the pod, DefaultPreemption settled without a dry
  run), the per-node verdicts of the untouched nodes stand. Only the changed nodes are filtered
  again; their old reasons are taken out of the FitError histogram and the new ones put in. A
  changed node that now fits ends the shortcut: the real cycle runs.

The rotation of ``nextStartNodeIndex`` moves as the real cycle would have moved it.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model.pod import Pod
from .framework.interface import CycleState, Plugin
from .framework.status import Code, Status
from .preemption import NEVER, message_without_dry_run
from .state import ClusterState
from .vector import Wanted, node_resources_fit_on, wanted_resources

if TYPE_CHECKING:
    from .scheduler import Diagnosis, Scheduler, ScheduleResult

#: in-tree Filters that read only the node being filtered and whose PreFilter reads only the pod
NODE_LOCAL_FILTERS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                                "NodeResourcesFit"})
#: in-tree Filters that read only the Node object (spec, labels, name) besides the pod: a bind or a
#: removal on a node (``ClusterState.touch(i)``) leaves their verdict there as it was — node
#: updates touch every node (``touch(-1)``) and end the patching
NODE_OBJECT_FILTERS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"})
#: plugins whose PreFilter Skip is re-checked cheaply (their state would read other nodes' pods)
_RECHECKED_SKIPS = frozenset({"InterPodAffinity", "PodTopologySpread", "DynamicResources"})
#: more changed nodes than this and the real cycle is cheaper than filtering them one by one
MAX_PATCHED_NODES = 32

#: how DefaultPreemption ended the kept cycle without a dry run
PREEMPT_OFF, PREEMPT_NEVER, PREEMPT_NO_DRY_RUN = range(3)


@dataclass
class Verdict:
    """A failed cycle's answer and what it was computed from."""

    pod: Pod
    generation: int
    result: "ScheduleResult"
    advance: int                      # how far the cycle moved ``nextStartNodeIndex``
    local: "LocalFailure | None" = None   # set for verdicts kept per pod shape


@dataclass(frozen=True)
class FilterChain:
    """The kept cycle's Filters (its skipped ones left out), as a changed node is filtered again.

    A kept rejection by one of the node-object Filters that run before all others (``settled``)
    stands after pods came or went there. Any other kept rejection means those passed, and still
    pass: only the Filters after them (``after``) run again."""

    state: CycleState                 # PreFilter state for node-by-node Filter calls
    settled: frozenset[str]
    after: tuple[Plugin, ...]
    full: tuple[Plugin, ...]          # for a node without a kept status
    fit: Plugin | None                # NodeResourcesFit, read from the cluster's arrays (vectorised)
    wanted: tuple[Wanted, ...]        # what ``fit`` checks: the pod's requests, worked out once
    fit_statuses: dict[tuple[bool, int], Status] = field(default_factory=dict)   # ``fit``'s answers, per shortfall


@dataclass
class LocalFailure:
    """What a node-local failed cycle needs to be brought up to date node by node."""

    diag: "Diagnosis"
    skipped: frozenset[str]
    preempt: int
    hist: Counter[str]
    plugin_nodes: Counter[str]          # nodes each plugin rejected
    potential: int                      # nodes rejected as Unschedulable (preemption candidates)
    rechecked: tuple[tuple[str, Any], ...]   # skipped PreFilters re-checked per patch, with their plugin
    changed: dict[int, Status] = field(default_factory=dict)   # newer statuses than ``diag``'s
    chain: FilterChain | None = None    # built at the first patch
    _deciders: list[int] | None = None  # per node, the ``diag.vector`` entry that rejected it (-1: none)
    _kept: dict[tuple[int, int, int], Status] = field(default_factory=dict)

    def status(self, i: int) -> Status | None:
        """Node ``i``'s latest rejection: a newer one, else the kept cycle's."""
        st = self.changed.get(i)
        if st is None:
            st = self.diag.per_node.get(i)
            if st is None:
                st = self._vector_status(i)
        return st

    def _vector_status(self, i: int) -> Status | None:
        """``Diagnosis.status`` for a node the vector Filters decided: the first verdict whose mask
        holds it (a node-local failure has no PreFilter rejection and no absent nodes). One Status
        per verdict, code and reason key, shared by the nodes that have it."""
        deciders = self._deciders
        if deciders is None:
            vector = self.diag.vector
            first = np.full(self.diag.n, -1, dtype=np.int32)
            for k in range(len(vector) - 1, -1, -1):
                first[vector[k][1]] = k
            deciders = self._deciders = first.tolist()
        k = deciders[i]
        if k < 0:
            return None
        verdict = self.diag.vector[k][0]
        key = verdict.key
        memo = (k, verdict.code.item(i), 0 if key is None else key.item(i))
        st = self._kept.get(memo)
        if st is None:
            st = self._kept[memo] = Status(Code(memo[1]), verdict.reasons_of(memo[2]), verdict.plugin)
        return st


def is_node_local(sched: "Scheduler", plugin: Any) -> bool:
    return plugin.name in NODE_LOCAL_FILTERS or bool(getattr(plugin, "node_local", False))


def local_failure(sched: "Scheduler", pod: Pod, diag: "Diagnosis", preempt: int | None,
                  other_messages: bool) -> LocalFailure | None:
    """The node-local description of a failed cycle, or None when it read more than that."""
    if preempt is None or other_messages or diag.all_nodes is not None or diag.absent_mask is not None:
        return None
    if pod.status.nominated_node_name or sched.cluster.nominated:
        return None
    for plugin in sched.filters:
        if plugin.name in diag.skipped:
            if not is_node_local(sched, plugin) and plugin.name not in _RECHECKED_SKIPS:
                return None
        elif not is_node_local(sched, plugin):
            return None
    for plugin in sched.pre_filters:
        if plugin.name not in diag.skipped and not is_node_local(sched, plugin) and plugin.name not in _RECHECKED_SKIPS:
            return None
    plugin_nodes: Counter[str] = Counter()
    potential = 0
    for verdict, mask in diag.vector:
        m = int(mask.sum())
        if m:
            plugin_nodes[verdict.plugin] += m
    for st in diag.per_node.values():
        plugin_nodes[st.plugin] += 1
    potential = int((diag.codes() == int(Code.Unschedulable)).sum())
    rechecked = tuple((name, sched.pre_filter_named(name)) for name in diag.skipped & _RECHECKED_SKIPS)
    return LocalFailure(diag, frozenset(diag.skipped), preempt, diag.histogram(), plugin_nodes, potential,
                        rechecked)


def _skips_hold(sched: "Scheduler", pod: Pod, rechecked: tuple[tuple[str, Any], ...]) -> bool:
    """The plugins skipped in the kept cycle would be skipped again."""
    for name, plugin in rechecked:
        if name == "DynamicResources":
            if pod.spec.resource_claims or sched.handle.objects.get("DeviceClass"):
                return False
            continue
        if plugin is not None and not sched._pre_filter_is_skip(plugin, pod):
            return False
    return True


def filter_chain(sched: "Scheduler", pod: Pod, skipped: frozenset[str]) -> FilterChain | None:
    """PreFilter state and Filters for node-by-node calls; None when a PreFilter now rejects."""
    state = CycleState()
    for plugin in sched.pre_filters:
        if plugin.name in skipped:
            continue
        _, st = plugin.pre_filter(state, pod, sched.cluster.infos)
        if not st.is_success:
            return None
    full = tuple(p for p in sched.filters if p.name not in skipped)
    k = 0
    while k < len(full) and full[k].name in NODE_OBJECT_FILTERS:
        k += 1
    fit = next((p for p in full if p.name == "NodeResourcesFit"), None) if sched.vectorised else None
    wanted = wanted_resources(sched.cluster, pod, fit, state.get(fit.name)) if fit is not None else ()
    return FilterChain(state, frozenset(p.name for p in full[:k]), full[k:], full, fit, wanted)


def _filter_node(cs: ClusterState, chain: FilterChain, pod: Pod, i: int, old: Status | None) -> Status | None:
    """Node ``i``'s first rejection (None: it fits) after pods came or went there, its kept
    rejection being ``old``. NodeResourcesFit is read from the cluster's arrays rather than
    the NodeInfo's resource maps."""
    if old is not None and old.plugin in chain.settled:
        return old
    fit = chain.fit
    for plugin in chain.after if old is not None else chain.full:
        if plugin is fit:
            st = node_resources_fit_on(cs, plugin, i, chain.wanted, chain.fit_statuses)
            if st is not None:
                return st
            continue
        st = plugin.filter(chain.state, pod, cs.infos[i])
        if not st.is_success:
            return st.with_plugin(plugin.name)
    return None


def patch(sched: "Scheduler", kept: Verdict, nodes: set[int]) -> "ScheduleResult | None":
    """The kept failure with ``nodes`` filtered again; None when the real cycle must run.

    The kept histogram, plugin counts and statuses are brought up to date in place: a None
    answer ends the verdict (the scheduler forgets it and runs the real cycle), so nothing
    half-updated is ever read again."""
    lf = kept.local
    cs = sched.cluster
    pod = kept.pod
    if lf is None or len(nodes) > MAX_PATCHED_NODES or cs.nominated:
        return None
    if lf.rechecked and not _skips_hold(sched, pod, lf.rechecked):
        return None
    chain = lf.chain
    if chain is None:
        chain = lf.chain = filter_chain(sched, pod, lf.skipped)
        if chain is None:
            return None
    changed = lf.changed
    moved: list[tuple[Status | None, Status]] = []   # (kept, new) rejections that differ
    for i in nodes:
        old = changed.get(i)   # what ``lf.status`` reads first
        if old is None:
            old = lf.status(i)
        st = _filter_node(cs, chain, pod, i, old)
        if st is None:
            return None   # a changed node fits now: the real cycle runs
        if st is not old:
            changed[i] = st   # the next comparison reads a dict, not the diagnosis arrays
            if st != old:
                moved.append((old, st))
    if not moved and lf.diag.n == cs.n:
        # every changed node rejects the pod as before: histogram, plugins and preemption
        # candidates are as kept, and so is the message — unless victims have appeared since
        if lf.preempt == PREEMPT_NO_DRY_RUN and lf.potential and cs.any_priority_below(pod.spec.priority or 0):
            return None
        return kept.result
    potential = _move_reasons(lf, moved)
    if lf.preempt == PREEMPT_NO_DRY_RUN and potential and cs.any_priority_below(pod.spec.priority or 0):
        return None   # DefaultPreemption would look for victims now: the real cycle runs
    r = kept.result
    message = _scheduler.fit_error(cs.n, lf.hist, "", _post_filter_message(lf.preempt, cs.n, potential))
    return _scheduler.ScheduleResult(pod, None, Code.Unschedulable, message, 0, r.evaluated,
                                     frozenset(p for p in lf.plugin_nodes if p))


@functools.lru_cache(maxsize=4096)
def _post_filter_message(preempt: int, num_nodes: int, potential: int) -> str:
    """DefaultPreemption's message for a kept failure that needed no dry run: a function of
    the node counts alone, worked out once per pair."""
    if preempt == PREEMPT_NEVER:
        return "preemption: " + NEVER
    if preempt == PREEMPT_NO_DRY_RUN:
        return message_without_dry_run(num_nodes, potential)
    return ""


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


# the scheduler imports this module first: its names are read when a patch runs
from . import scheduler as _scheduler  # noqa: E402
