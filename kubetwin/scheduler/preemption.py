"""DefaultPreemption (PostFilter): which pods to evict so an unschedulable pod fits.

As ``framework/preemption`` and ``plugins/defaultpreemption``: only nodes whose Filter
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

from ..model.pod import Pod
from .framework.interface import CycleState
from .framework.status import Code, Status
from .framework.types import NodeInfo, PodInfo
from .pdb import PodDisruptionBudget, violating_pods

if TYPE_CHECKING:
    from .scheduler import Diagnosis, Scheduler

MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING = "not eligible due to a terminating pod on the nominated node."
#: plugins whose PreFilter state counts pods across the cluster: recomputed when victims leave
CLUSTER_WIDE_PREFILTER = ("InterPodAffinity", "PodTopologySpread")


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


def num_candidates(num_nodes: int) -> int:
    n = num_nodes * MIN_CANDIDATE_NODES_PERCENTAGE // 100
    return min(max(n, MIN_CANDIDATE_NODES_ABSOLUTE), num_nodes)


def preempt(sched: "Scheduler", pod: Pod, state: CycleState, diag: "Diagnosis") -> PreemptionOutcome:
    import numpy as np  # the one-shot command imports this module's constants without numpy

    cs = sched.cluster
    if pod.spec.preemption_policy == "Never":
        return PreemptionOutcome(None, message="preemption: " + NEVER)
    nnn = pod.status.nominated_node_name
    if nnn:
        i = cs.index.get(nnn)
        st = diag.status(i) if i is not None else None
        if (st is None or st.code != Code.UnschedulableAndUnresolvable) and i is not None:
            prio = pod_priority(pod)
            for pi in cs.infos[i].pods:
                if pod_priority(pi.pod) < prio and terminating_by_preemption(pi.pod):
                    return PreemptionOutcome(None, message="preemption: " + TERMINATING)
    codes = diag.codes()
    potential = np.flatnonzero(codes == np.int8(Code.Unschedulable)).tolist()
    statuses: dict[int, Status] = {}
    candidates: list[Victims] = []
    if potential and not cs.any_priority_below(pod_priority(pod)):
        # no pod anywhere has a lower priority: every node's dry run would find no victims
        return PreemptionOutcome(None, message=message_without_dry_run(cs.n, len(potential)))
    if potential:
        offset = dry_run_offset(sched, pod, len(potential))
        wanted = num_candidates(len(potential))
        non_violating: list[Victims] = []
        violating: list[Victims] = []
        for k in range(len(potential)):
            i = potential[(offset + k) % len(potential)]
            victims, n_viol, st = select_victims_on_node(sched, pod, state, i, diag.skipped)
            if st.is_success and victims:
                v = Victims(cs.names[i], tuple(victims), n_viol)
                (non_violating if n_viol == 0 else violating).append(v)
                if non_violating and len(non_violating) + len(violating) >= wanted:
                    break
                continue
            if st.is_success:
                st = Status(Code.Error, (f"expected at least one victim pod on node {cs.names[i]!r}",))
            statuses[i] = st
        candidates = non_violating[:wanted] + violating[:wanted]
    if not candidates:
        hist: dict[str, int] = {}
        for st in statuses.values():
            for r in st.reasons:
                hist[r] = hist.get(r, 0) + 1
        absent = cs.n - len(statuses)
        if absent:
            hist[NOT_HELPFUL] = hist.get(NOT_HELPFUL, 0) + absent
        return _no_candidates(cs.n, hist)
    best = pick_one_node(candidates)
    return PreemptionOutcome(best.node, best.pods, "", Code.Success)


@functools.lru_cache(maxsize=4096)
def message_without_dry_run(num_nodes: int, potential: int) -> str:
    """PostFilter's message when no node needs a dry run: ``potential`` nodes failed as
    Unschedulable but hold no lower-priority pod, the others preemption cannot help."""
    hist = {NO_VICTIMS: potential} if potential else {}
    if num_nodes > potential:
        hist[NOT_HELPFUL] = num_nodes - potential
    return _no_candidates(num_nodes, hist).message


def dry_run_offset(sched: "Scheduler", pod: Pod, n: int) -> int:
    """``GetOffsetAndNumCandidates``' random start among the ``n`` potential nodes.

    Upstream draws it from a process-wide random source. Here it is a hash of the seed, the
    pod and the cluster's generation: a uniform pick that is the same whenever the same pod
    meets the same cluster, so a repeated failed cycle needs no re-run (and draws nothing
    from the tie-break stream of ``selectHost``)."""
    import hashlib

    h = hashlib.blake2b(f"{sched.handle.seed}/{pod.uid}/{sched.cluster.generation}".encode(), digest_size=8)
    return int.from_bytes(h.digest(), "little") % n


def _no_candidates(num_nodes: int, hist: dict[str, int]) -> PreemptionOutcome:
    """PostFilter's answer when no node has victims: the FitError of the dry runs."""
    from collections import Counter

    from .scheduler import fit_error

    return PreemptionOutcome(None, message="preemption: " + fit_error(num_nodes, Counter(hist)))


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


def select_victims_on_node(sched: "Scheduler", pod: Pod, state: CycleState, i: int,
                           skipped: set[str]) -> tuple[list[Pod], int, Status]:
    """``SelectVictimsOnNode`` on a copy of node ``i``."""
    cs = sched.cluster
    original = cs.infos[i]
    prio = pod_priority(pod)
    # a node without lower-priority pods has no victims: no copy needed to find out
    if not any(pod_priority(pi.pod) < prio for pi in original.pods):
        return [], 0, Status(Code.UnschedulableAndUnresolvable, (NO_VICTIMS,))
    ni = original.clone()
    potential = [pi for pi in ni.pods if pod_priority(pi.pod) < prio]
    for pi in potential:
        ni.remove_pod(pi.pod)
    checker = _NodeChecker(sched, pod, state, i, ni, skipped)
    st = checker.check()
    if st is not None:
        return [], 0, st
    potential.sort(key=lambda pi: importance_key(pi.pod))
    violating, non_violating = violating_pods([pi.pod for pi in potential], sched.pdbs)
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

    Plugins whose PreFilter state counts pods cluster-wide get it recomputed with the copy
    in place (upstream updates it through the PreFilter extensions AddPod/RemovePod).
    """

    def __init__(self, sched: "Scheduler", pod: Pod, state: CycleState, i: int, ni: NodeInfo, skipped: set[str]):
        self.sched, self.pod, self.state, self.i, self.ni = sched, pod, state, i, ni
        self.skipped = skipped
        self.recompute = [p for p in sched.pre_filters if p.name in CLUSTER_WIDE_PREFILTER and p.name not in skipped]

    def check(self) -> Status | None:
        sched, cs = self.sched, self.sched.cluster
        state = self.state
        if self.recompute:
            state = state.clone()
            snap = cs.snapshot
            original = snap.node_infos[self.i]
            snap.node_infos[self.i] = self.ni
            snap.by_name[self.ni.name] = self.ni
            try:
                for p in self.recompute:
                    p.pre_filter(state, self.pod, snap.node_infos)
            finally:
                snap.node_infos[self.i] = original
                snap.by_name[original.name] = original
        nominated = sched._nominated_here(self.pod).get(self.i)
        if nominated:
            clone = self.ni.clone()
            for p in nominated:
                clone.add_pod(PodInfo(p))
            st = sched._chain(state, self.pod, clone, self.skipped)
            if st is not None:
                return st
        return sched._chain(state, self.pod, self.ni, self.skipped)


__all__ = ["PreemptionOutcome", "Victims", "preempt", "pick_one_node", "select_victims_on_node",
           "PodDisruptionBudget"]
