"""The preemption evaluator: which pods to evict so an unschedulable pod fits
(``pkg/scheduler/framework/preemption/preemption.go`` with ``plugins/defaultpreemption``'s
``SelectVictimsOnNode``, ``GetOffsetAndNumCandidates`` and ``PodEligibleToPreemptOthers``).

Only nodes whose Filter
verdict was ``Unschedulable`` are candidates; a dry run from a random offset removes every
lower-priority pod from a node and, if the pod then passes the filters (nominated pods
included), reprieves victims in importance order — PDB-violating ones first — keeping each
that can stay. The best candidate is picked by fewest PDB violations, lowest highest-victim
priority, smallest priority sum, fewest victims, latest start of the most important victims.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ....model.pod import Pod
from ...framework.diagnosis import fit_error_message
from ...framework.interface import CycleState
from ...framework.status import Code, Status
from ...framework.types import NodeInfo
from .pdb import PodDisruptionBudget, violating_pods

if TYPE_CHECKING:
    from ...framework.diagnosis import Diagnosis

MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING = "not eligible due to a terminating pod on the nominated node."


@dataclass(frozen=True)
class Victims:
    node: str
    pods: tuple[Pod, ...]
    pdb_violations: int


@dataclass(frozen=True)
class PreemptionOutcome:
    """PostFilter's answer: a nominated node and its victims, or the message why not."""

    node: str | None
    victims: tuple[Pod, ...] = ()
    message: str = ""
    code: Code = Code.Unschedulable


def pod_priority(pod: Pod) -> int:
    return pod.spec.priority or 0


def start_time(pod: Pod) -> float:
    """``GetPodStartTime``: status.startTime, else 'now' (later than any recorded start)."""
    t = pod.status.start_time
    if not t:
        return math.inf
    try:
        return datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return math.inf


def more_important(a: Pod, b: Pod) -> bool:
    """``util.MoreImportantPod``: higher priority, then the earlier start."""
    pa, pb = pod_priority(a), pod_priority(b)
    if pa != pb:
        return pa > pb
    return start_time(a) < start_time(b)


def importance_key(p: Pod) -> tuple[int, float]:
    return (-pod_priority(p), start_time(p))


def terminating_by_preemption(p: Pod) -> bool:
    if p.metadata.deletion_timestamp is None:
        return False
    for c in p.status.conditions:
        if c.type == "DisruptionTarget":
            return c.status == "True" and c.reason == "PreemptionByScheduler"
    return False


def num_candidates(num_nodes: int, min_percentage: int = MIN_CANDIDATE_NODES_PERCENTAGE,
                   min_absolute: int = MIN_CANDIDATE_NODES_ABSOLUTE) -> int:
    """``calculateNumCandidates``: a share of the nodes, at least ``min_absolute``, at most all."""
    n = num_nodes * min_percentage // 100
    return min(max(n, min_absolute), num_nodes)


class DryRunNeedsCache(Exception):
    """A dry run needs the long-running scheduler's cache (a one-shot cycle has none): the
    caller asks a scheduler that keeps one."""


def preempt(handle: Any, pod: Pod, state: CycleState, diag: "Diagnosis", min_percentage: int = 10,
            min_absolute: int = 100) -> PreemptionOutcome:
    """``Evaluator.Preempt``: the node to nominate and its victims, or PostFilter's message.

    ``handle``: the framework handle (its snapshot's nodes are the cycle's, in the same order as
    the diagnosis numbers them; its cache, framework, PDBs and seed)."""
    if pod.spec.preemption_policy == "Never":
        return PreemptionOutcome(None, message="preemption: " + NEVER)
    infos = handle.snapshot.node_infos
    n = len(infos)
    nnn = pod.status.nominated_node_name
    if nnn:
        i = handle.snapshot.index.get(nnn)
        st = diag.status(i) if i is not None else None
        if (st is None or st.code != Code.UnschedulableAndUnresolvable) and i is not None:
            prio = pod_priority(pod)
            for pi in infos[i].pods:
                if pod_priority(pi.pod) < prio and terminating_by_preemption(pi.pod):
                    return PreemptionOutcome(None, message="preemption: " + TERMINATING)
    potential = diag.nodes_with_code(Code.Unschedulable)
    statuses: dict[int, Status] = {}
    candidates: list[Victims] = []
    cache = handle.cache
    if potential and not any_priority_below(handle, pod_priority(pod), potential):
        # no pod has a lower priority: every node's dry run would find no victims
        return PreemptionOutcome(None, message=message_without_dry_run(n, len(potential)))
    if potential:
        if cache is None:
            raise DryRunNeedsCache()
        offset = dry_run_offset(handle.seed, pod, cache.generation, len(potential))
        wanted = num_candidates(len(potential), min_percentage, min_absolute)
        non_violating: list[Victims] = []
        violating: list[Victims] = []
        for k in range(len(potential)):
            i = potential[(offset + k) % len(potential)]
            victims, n_viol, st = select_victims_on_node(handle, pod, state, i, diag.skipped)
            if st.is_success and victims:
                v = Victims(infos[i].name, tuple(victims), n_viol)
                (non_violating if n_viol == 0 else violating).append(v)
                if non_violating and len(non_violating) + len(violating) >= wanted:
                    break
                continue
            if st.is_success:
                st = Status(Code.Error, (f"expected at least one victim pod on node {infos[i].name!r}",))
            statuses[i] = st
        candidates = non_violating[:wanted] + violating[:wanted]
    if not candidates:
        hist: dict[str, int] = {}
        for st in statuses.values():
            for r in st.reasons:
                hist[r] = hist.get(r, 0) + 1
        absent = n - len(statuses)
        if absent:
            hist[NOT_HELPFUL] = hist.get(NOT_HELPFUL, 0) + absent
        return _no_candidates(n, hist)
    best = pick_one_node(candidates)
    return PreemptionOutcome(best.node, best.pods, "", Code.Success)


def any_priority_below(handle: Any, priority: int, nodes: list[int]) -> bool:
    """Might a dry run find a victim: does some bound pod have a lower priority? The cache
    keeps the lowest priority bound; without one, the nodes that failed are looked at."""
    if handle.cache is not None:
        return bool(handle.cache.any_priority_below(priority))
    infos = handle.snapshot.node_infos
    return any(pod_priority(pi.pod) < priority for i in nodes for pi in infos[i].pods)


@functools.lru_cache(maxsize=4096)
def message_without_dry_run(num_nodes: int, potential: int) -> str:
    """PostFilter's message when no node needs a dry run: ``potential`` nodes failed as
    Unschedulable but hold no lower-priority pod, the others preemption cannot help."""
    hist = {NO_VICTIMS: potential} if potential else {}
    if num_nodes > potential:
        hist[NOT_HELPFUL] = num_nodes - potential
    return _no_candidates(num_nodes, hist).message


def dry_run_offset(seed: int, pod: Pod, generation: int, n: int) -> int:
    """``GetOffsetAndNumCandidates``' random start among the ``n`` potential nodes.

    Upstream draws it from a process-wide random source. Here it is a hash of the seed, the
    pod and the cluster's generation: a uniform pick that is the same whenever the same pod
    meets the same cluster, so a repeated failed cycle needs no re-run (and draws nothing
    from the tie-break stream of ``selectHost``)."""
    import hashlib

    h = hashlib.blake2b(f"{seed}/{pod.uid}/{generation}".encode(), digest_size=8)
    return int.from_bytes(h.digest(), "little") % n


def _no_candidates(num_nodes: int, hist: dict[str, int]) -> PreemptionOutcome:
    """PostFilter's answer when no node has victims: the FitError of the dry runs."""
    return PreemptionOutcome(None, message="preemption: " + fit_error_message(num_nodes, hist))


def pick_one_node(candidates: list[Victims]) -> Victims:
    """``pickOneNodeForPreemption``: each criterion narrows the field; the first left wins."""
    def earliest_top(v: Victims) -> float:
        top = pod_priority(v.pods[0])
        return min(start_time(p) for p in v.pods if pod_priority(p) == top)

    criteria = (
        lambda v: -v.pdb_violations,
        lambda v: -pod_priority(v.pods[0]),
        lambda v: -sum(pod_priority(p) + 2**31 for p in v.pods),
        lambda v: -len(v.pods),
        earliest_top,
    )
    field = candidates
    for f in criteria:
        scores = [f(v) for v in field]
        top = max(scores)
        field = [v for v, s in zip(field, scores) if s == top]
        if len(field) == 1:
            break
    return field[0]


def select_victims_on_node(handle: Any, pod: Pod, state: CycleState, i: int,
                           skipped: set[str]) -> tuple[list[Pod], int, Status]:
    """``SelectVictimsOnNode`` on a copy of node ``i``."""
    original = handle.snapshot.node_infos[i]
    prio = pod_priority(pod)
    # a node without lower-priority pods has no victims: no copy needed to find out
    if not any(pod_priority(pi.pod) < prio for pi in original.pods):
        return [], 0, Status(Code.UnschedulableAndUnresolvable, (NO_VICTIMS,))
    ni = original.clone()
    potential = [pi for pi in ni.pods if pod_priority(pi.pod) < prio]
    for pi in potential:
        ni.remove_pod(pi.pod)
    checker = _NodeChecker(handle, pod, state, i, ni, skipped)
    st = checker.check()
    if st is not None:
        return [], 0, st
    potential.sort(key=lambda pi: importance_key(pi.pod))
    violating, non_violating = violating_pods([pi.pod for pi in potential], list(handle.pdbs))
    by_uid = {pi.pod.uid: pi for pi in potential}
    victims: list[Pod] = []
    n_viol = 0

    def reprieve(p: Pod) -> bool:
        ni.add_pod(by_uid[p.uid])
        if checker.check() is None:
            return True
        ni.remove_pod(p)
        victims.append(p)
        return False

    for p in violating:
        if not reprieve(p):
            n_viol += 1
    for p in non_violating:
        reprieve(p)
    if violating and non_violating:
        victims.sort(key=importance_key)
    return victims, n_viol, Status()


class _NodeChecker:
    """Filters on a modified copy of one node, with nominated pods, as ``RunFilterPluginsWithNominatedPods``.

    Plugins whose PreFilter state counts pods on other nodes get it recomputed with the copy
    in place (upstream updates it through the PreFilter extensions AddPod/RemovePod).
    """

    def __init__(self, handle: Any, pod: Pod, state: CycleState, i: int, ni: NodeInfo, skipped: set[str]):
        self.handle, self.pod, self.state, self.i, self.ni = handle, pod, state, i, ni
        self.skipped = skipped
        fwk = handle.framework
        self.recompute = [p for p in fwk.pre_filter_plugins if p.pre_filter_counts_pods and p.name not in skipped]
        self.nominated = fwk.nominated_pods_for(pod, ni.name)

    def check(self) -> Status | None:
        fwk = self.handle.framework
        state = self.state
        if self.recompute:
            state = state.clone()
            snap = self.handle.snapshot
            original = snap.node_infos[self.i]
            snap.node_infos[self.i] = self.ni
            snap.by_name[self.ni.name] = self.ni
            try:
                for p in self.recompute:
                    p.pre_filter(state, self.pod, snap.node_infos)
            finally:
                snap.node_infos[self.i] = original
                snap.by_name[original.name] = original
        return fwk.run_filter_plugins_with_nominated_pods(state, self.pod, self.ni, self.nominated, self.skipped)


__all__ = ["PreemptionOutcome", "Victims", "preempt", "pick_one_node", "select_victims_on_node",
           "PodDisruptionBudget"]
