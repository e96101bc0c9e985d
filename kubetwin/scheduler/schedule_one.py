"""One scheduling cycle, the plain way: ``schedulePod`` and its parts, node by node through the
framework runtime (``pkg/scheduler/schedule_one.go``).

:func:`find_nodes_that_fit_pod` runs PreFilter, tries a nominated node first, then
:func:`find_nodes_that_pass_filters` walks the nodes from the sampling start until
:func:`num_feasible_nodes_to_find` nodes fit; :func:`prioritize_nodes` runs PreScore, Score and
NormalizeScore with the weights; :func:`select_host` picks the highest total, breaking ties
uniformly at random. This is the reference the vectorised cycle (:mod:`.fastpath.cycle`) is
tested against, the path of the explained one-shot cycle (:mod:`.cycle`, which records every
plugin's answer) and of :class:`.scheduler.Scheduler` with ``vectorised=False``. It needs no numpy.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Sequence

from ..model.pod import Pod
from .framework.diagnosis import Diagnosis
from .framework.interface import CycleState
from .framework.runtime import Framework, PluginScores, plugin_list
from .framework.status import Code, Status
from .framework.types import NodeInfo

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
#: the message of a cycle with no nodes at all (``ErrNoNodesAvailable``)
NO_NODES = "no nodes available to schedule pods"


@dataclass(frozen=True)
class ScheduleResult:
    """One cycle's answer. ``node`` is None when the pod is unschedulable (``message`` says why)."""

    pod: Pod
    node: str | None
    code: Code = Code.Success
    message: str = ""
    #: feasible nodes found / nodes whose filters ran (sampling)
    feasible: int = 0
    evaluated: int = 0
    #: plugins that rejected the pod on some node (what queueing hints key on)
    unschedulable_plugins: frozenset[str] = frozenset()
    #: PostFilter's (preemption's) answer: the node nominated for the pod and the pods to evict there
    nominated_node: str | None = None
    victims: tuple[Pod, ...] = ()

    @property
    def scheduled(self) -> bool:
        return self.node is not None

    @classmethod
    def placed(cls, pod: Pod, node: str, feasible: int, evaluated: int) -> "ScheduleResult":
        """A cycle that found a node: built without the frozen dataclass's field-by-field
        ``__init__`` (a simulation makes one per pod)."""
        out = object.__new__(cls)
        d = out.__dict__
        d.update(_PLACED)
        d["pod"], d["node"], d["feasible"], d["evaluated"] = pod, node, feasible, evaluated
        return out

    def for_pod(self, pod: Pod) -> "ScheduleResult":
        """The same answer for another pod of the same shape: a kept verdict handed out to
        thousands of pods, so copied without ``dataclasses.replace``'s field-by-field rebuild."""
        out = object.__new__(ScheduleResult)
        d = out.__dict__
        d.update(self.__dict__)
        d["pod"] = pod
        return out


#: the fields of a placed pod's result besides its pod, node and counts (the defaults)
_PLACED = {"code": Code.Success, "message": "", "unschedulable_plugins": frozenset(), "nominated_node": None,
           "victims": ()}


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """``numFeasibleNodesToFind``: all nodes below 100, else an adaptive share (at least 100)."""
    pct = percentage or 0
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND or pct >= 100:
        return num_all_nodes
    if pct <= 0:
        pct = 50 - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    return max(num_all_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


class CycleRecorder:
    """What an explained cycle wants to see besides the answer (all no-ops here)."""

    def pre_filter(self, plugin: str, status: Status) -> None:
        pass

    def filter(self, node: str, plugin: str, status: Status) -> None:
        pass

    def left_out(self, node: str, status: Status) -> None:
        """A node a PreFilterResult left out."""

    def scores(self, scores: list[PluginScores]) -> None:
        pass

    # the vectorised cycle (:mod:`.fastpath.cycle`) hands over what it computed instead
    def filter_stages(self, names: Sequence[str], stages: Sequence[tuple[str, object, int]], examined: object,
                      statuses: dict[int, Status], walk_ns: int) -> None:
        """Filter over the nodes ``examined`` (positions in ``names``, in sampling order): per plugin in order
        its name, its vectorised verdict over all nodes (None: it ran node by node) and the time
        its twin took; ``statuses``: the rejections of the nodes walked node by node, which took
        ``walk_ns`` in all."""

    def score_parts(self, names: Sequence[str], feasible: object, parts: Sequence[tuple[str, int, str, object]]) -> None:
        """Score over the ``feasible`` positions (in ``names``): per plugin its name, weight, how it was scored
        (``vector``: a ScoreVector; ``skipped``: its PreScore skips, or its score is the same on
        every node, so it is left out; ``plain``: its PluginScores)."""


@dataclass(slots=True)
class FeasibleNodes:
    """``findNodesThatFitPod``'s answer: the nodes that fit (positions in the node list, in the
    order found), how many nodes the filters ran on, and the diagnosis of the others."""

    nodes: Sequence[int]
    processed: int
    diagnosis: Diagnosis
    #: the pod's nominated node passed the filters and was taken as is
    nominated: bool = False


def find_nodes_that_fit_pod(fwk: Framework, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], *,
                            start: int = 0, recorder: CycleRecorder | None = None) -> FeasibleNodes:
    """PreFilter, then the nominated node, then the filters over the nodes from ``start`` on
    (sampling). ``nodes``: the cluster in the cache's node-tree order."""
    n = len(nodes)
    diagnosis = Diagnosis(n)
    pre = fwk.run_pre_filter_plugins(state, pod, nodes, record=recorder.pre_filter if recorder is not None else None)
    diagnosis.skipped = pre.skipped
    if not pre.status.is_success:
        diagnosis.all_nodes = pre.status
        return FeasibleNodes([], 0, diagnosis)
    nnn = pod.status.nominated_node_name
    if nnn:
        i = next((k for k, ni in enumerate(nodes) if ni.name == nnn), None)
        if i is not None and fwk.run_filter_plugins_with_nominated_pods(
                state, pod, nodes[i], skipped=diagnosis.skipped) is None:
            return FeasibleNodes([i], 1, diagnosis, nominated=True)
    candidates = list(range(n))
    if pre.allowed is not None:
        diagnosis.absent = Status(Code.UnschedulableAndUnresolvable,
                                  (f"node(s) didn't satisfy plugin(s) {plugin_list(pre.restricting)}",))
        inside = [i for i in candidates if nodes[i].name in pre.allowed]
        diagnosis.absent_nodes = frozenset(set(candidates) - set(inside))
        if recorder is not None:
            for i in sorted(diagnosis.absent_nodes):
                recorder.left_out(nodes[i].name, diagnosis.absent)
        candidates = inside
    to_find = num_feasible_nodes_to_find(fwk.profile.percentage_of_nodes_to_score, len(candidates)) \
        if fwk.has_score_plugins else 1
    feasible, processed = find_nodes_that_pass_filters(fwk, state, pod, nodes, candidates, diagnosis,
                                                       start=start, to_find=to_find, recorder=recorder)
    return FeasibleNodes(feasible, processed, diagnosis)


def find_nodes_that_pass_filters(fwk: Framework, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                                 candidates: Sequence[int], diagnosis: Diagnosis, *, start: int, to_find: int,
                                 recorder: CycleRecorder | None = None) -> tuple[list[int], int]:
    """``findNodesThatPassFilters``: the candidates in turn from ``start`` (modulo their number),
    each through ``RunFilterPluginsWithNominatedPods``, until ``to_find`` fit. Rejections go to
    the diagnosis. Returns the feasible nodes and how many nodes were examined."""
    m = len(candidates)
    if m == 0:
        return [], 0
    first = start % m
    feasible: list[int] = []
    processed = m
    for k in range(m):
        i = candidates[(first + k) % m]
        ni = nodes[i]
        record = (lambda plugin, st, name=ni.name: recorder.filter(name, plugin, st)) \
            if recorder is not None else None
        st = fwk.run_filter_plugins_with_nominated_pods(state, pod, ni, skipped=diagnosis.skipped, record=record)
        if st is None:
            feasible.append(i)
            if len(feasible) >= to_find:
                processed = k + 1
                break
        else:
            diagnosis.node_to_status[i] = st
    return feasible, processed


def prioritize_nodes(fwk: Framework, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[PluginScores]:
    """``prioritizeNodes``: PreScore, then every weighted score plugin's normalised scores."""
    skipped = fwk.run_pre_score_plugins(state, pod, nodes)
    return fwk.run_score_plugins(state, pod, nodes, skipped)


def totals_of(nodes: Sequence[NodeInfo], scores: list[PluginScores]) -> list[int]:
    """Each node's weighted sum over the plugins."""
    totals = [0] * len(nodes)
    for ps in scores:
        for k, ni in enumerate(nodes):
            totals[k] += ps.normalized[ni.name] * ps.weight
    return totals


def select_host(totals: Sequence[int], rng: random.Random) -> int:
    """``selectHost``: the position of the highest total; among equal totals one picked
    uniformly at random. Upstream draws by reservoir sampling, so only the distribution can be
    matched; one draw per tie keeps it cheap and seeded."""
    best = max(totals)
    top = [k for k, t in enumerate(totals) if t == best]
    return top[0] if len(top) == 1 else top[rng.randrange(len(top))]
