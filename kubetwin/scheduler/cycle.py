"""One scheduling cycle with a profile, explained per node and plugin (``kubetwin schedule``).

The cycle is :mod:`.schedule_one`'s, through the framework runtime, with a recorder that keeps
every plugin's answer: PreFilter statuses, each Filter run on each node examined, the nodes a
PreFilterResult left out, raw, normalised and weighted scores. Nodes are visited in the cache's
node-tree order from the first node (a fresh scheduler's ``nextStartNodeIndex``), ties among top
scores broken by a seeded draw. PostFilter (preemption) answers from the snapshot when it
needs no dry run; a dry run needs the long-running scheduler's cache, so the cycle is then asked
of a :class:`~.scheduler.Scheduler` over the same inputs. The result is data
(:class:`CycleOutcome`); the CLI renders it.

Not an upstream module: kubetwin's own explanation of one ``pkg/scheduler/schedule_one.go`` cycle."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from .. import tracing as _tracing
from ..model.features import FeatureGates
from ..model.pod import Pod
from .framework.diagnosis import Diagnosis, fit_error_message
from .framework.interface import CycleState
from .framework.runtime import Framework, PluginScores
from .framework.status import Status
from .inputs import ClusterInputs
from .plugins.defaultpreemption.preemption import DryRunNeedsCache
from .plugins.dynamicresources import NAME as DYNAMIC_RESOURCES
from .profile import Profile, load_profile
from .run import make_handle
from .schedule_one import NO_NODES, CycleRecorder, find_nodes_that_fit_pod, prioritize_nodes, select_host, totals_of

if TYPE_CHECKING:
    from .plugins.dynamicresources.dynamicresources import DynamicResources


@dataclass
class NodeVerdict:
    filter: dict[str, Status] = field(default_factory=dict)
    raw: dict[str, int] = field(default_factory=dict)
    normalized: dict[str, int] = field(default_factory=dict)
    weighted: dict[str, int] = field(default_factory=dict)
    total: int | None = None

    @property
    def status(self) -> Status:
        for st in self.filter.values():
            if not st.is_success:
                return st
        return Status()


@dataclass
class CycleOutcome:
    pod: Pod
    node: str | None
    nodes: dict[str, NodeVerdict]
    message: str = ""
    evaluated: int = 0
    feasible: list[str] = field(default_factory=list)
    skipped_plugins: list[str] = field(default_factory=list)
    not_modelled: list[str] = field(default_factory=list)
    pre_filter: dict[str, Status] = field(default_factory=dict)
    #: what preemption would do for an unschedulable pod
    nominated_node: str | None = None
    victims: list[str] = field(default_factory=list)
    #: what the admission controllers changed (``--admit``)
    admission: list[str] = field(default_factory=list)
    #: the pod's ResourceClaims after PreBind, and the pod status fields PreBind writes
    resource_claims: list[dict[str, Any]] = field(default_factory=list)
    pod_status: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            **({"admission": self.admission} if self.admission else {}),
            **({"preemption": {"nominatedNode": self.nominated_node, "victims": self.victims}}
               if self.nominated_node else {}),
            "pod": self.pod.key,
            "node": self.node,
            **({"resourceClaims": self.resource_claims} if self.resource_claims else {}),
            **({"podStatus": self.pod_status} if self.pod_status else {}),
            "message": self.message,
            "evaluatedNodes": self.evaluated,
            "feasibleNodes": self.feasible,
            "preFilter": {p: s.to_json() for p, s in self.pre_filter.items()},
            "skippedPlugins": self.skipped_plugins,
            "notModelled": self.not_modelled,
            "nodes": {
                name: {
                    "filter": {p: s.to_json() for p, s in v.filter.items()},
                    **({"scores": {p: {"raw": v.raw[p], "normalized": v.normalized[p], "weighted": v.weighted[p]}
                                   for p in v.raw}, "total": v.total} if v.total is not None else {}),
                }
                for name, v in self.nodes.items()
            },
        }


class _Explain(CycleRecorder):
    """Records every plugin's answer into the outcome."""

    def __init__(self, outcome: CycleOutcome):
        self.outcome = outcome

    def pre_filter(self, plugin: str, status: Status) -> None:
        self.outcome.pre_filter[plugin] = status

    def filter(self, node: str, plugin: str, status: Status) -> None:
        self.outcome.nodes[node].filter[plugin] = status

    def left_out(self, node: str, status: Status) -> None:
        self.outcome.nodes[node].filter["PreFilterResult"] = status

    def scores(self, scores: list[PluginScores]) -> None:
        for ps in scores:
            for name in ps.raw:
                v = self.outcome.nodes[name]
                v.raw[ps.plugin] = ps.raw[name]
                v.normalized[ps.plugin] = ps.normalized[name]
                v.weighted[ps.plugin] = ps.weighted(name)


def schedule_one(cluster: ClusterInputs, pod: Pod, gates: FeatureGates, *, config_path: str | None = None,
                 admit: bool = False, seed: int = 0) -> CycleOutcome:
    """The explained cycle (with ``--trace``: also its spans, :mod:`kubetwin.tracing.scheduler`)."""
    if _tracing.ACTIVE is None:
        return _schedule_one(cluster, pod, gates, config_path=config_path, admit=admit, seed=seed)
    from ..tracing.scheduler import traced_schedule_one

    return traced_schedule_one(lambda: _schedule_one(cluster, pod, gates, config_path=config_path, admit=admit,
                                                     seed=seed))


def _schedule_one(cluster: ClusterInputs, pod: Pod, gates: FeatureGates, *, config_path: str | None = None,
                  admit: bool = False, seed: int = 0) -> CycleOutcome:
    admission: list[str] = []
    if admit:
        from .admission import admit_from_objects

        result = admit_from_objects(pod, cluster.objects, cluster.origins, cluster.pods, gates)
        pod, admission = result.pod, result.changes
    profile = load_profile(config_path, pod.spec.scheduler_name)
    handle = make_handle(cluster, gates, seed, tree_order=True)
    fwk = Framework(profile, handle)
    all_nodes = handle.snapshot.node_infos
    outcome = CycleOutcome(pod, None, {ni.name: NodeVerdict() for ni in all_nodes}, not_modelled=fwk.not_modelled,
                           admission=admission)
    gated = fwk.run_pre_enqueue_plugins(pod)
    if not gated.is_success:
        outcome.message = gated.message
        return outcome
    if not all_nodes:
        outcome.message = NO_NODES
        return outcome
    state = CycleState()
    explain = _Explain(outcome)
    found = find_nodes_that_fit_pod(fwk, state, pod, all_nodes, start=0, recorder=explain)
    diag = found.diagnosis
    if diag.all_nodes is not None:
        if diag.all_nodes.plugin:   # a plugin's rejection (not the PreFilterResults' empty intersection)
            for v in outcome.nodes.values():
                v.filter[diag.all_nodes.plugin] = diag.all_nodes
        return _post_filter(outcome, fwk, state, diag, cluster, gates, profile, seed, diag.all_nodes.message)
    outcome.skipped_plugins = sorted(diag.skipped)
    outcome.evaluated = found.processed
    outcome.feasible = [all_nodes[i].name for i in found.nodes]
    if not found.nodes:
        return _post_filter(outcome, fwk, state, diag, cluster, gates, profile, seed, "")
    if found.nominated:
        outcome.node = outcome.feasible[0]
        outcome.message = f"scheduled on {outcome.node} (its nominated node; not scored)"
        return _pre_bind(outcome, fwk, pod)
    if len(found.nodes) == 1:
        outcome.node = outcome.feasible[0]
        outcome.message = f"scheduled on {outcome.node} (the only feasible node; not scored)"
        return _pre_bind(outcome, fwk, pod)
    feasible = [all_nodes[i] for i in found.nodes]
    scores = prioritize_nodes(fwk, state, pod, feasible)
    explain.scores(scores)
    totals = totals_of(feasible, scores)
    for ni, t in zip(feasible, totals):
        outcome.nodes[ni.name].total = t
    best = select_host(totals, random.Random(seed))
    outcome.node = feasible[best].name
    outcome.message = f"scheduled on {outcome.node} (score {totals[best]})"
    return _pre_bind(outcome, fwk, pod)


def _pre_bind(outcome: CycleOutcome, fwk: Framework, pod: Pod) -> CycleOutcome:
    """Reserve and PreBind on the chosen node: the ResourceClaims the DRA plugin writes for the pod."""
    assert outcome.node is not None
    fwk.run_reserve_plugins_reserve(pod, outcome.node)
    dra = cast("DynamicResources | None", fwk.plugin(DYNAMIC_RESOURCES))
    if dra is not None:
        outcome.resource_claims = dra.claims_of(pod)
        outcome.pod_status = dra.pod_status(pod)
    return outcome


def _post_filter(outcome: CycleOutcome, fwk: Framework, state: CycleState, diag: Diagnosis, cluster: ClusterInputs,
                 gates: FeatureGates, profile: Profile, seed: int, pre_filter_msg: str) -> CycleOutcome:
    """PostFilter (preemption) for an unschedulable pod: the full FitError message with
    PostFilter's part. A dry run needs the cache: a long-running scheduler over the same inputs
    then answers, with the node it would nominate and the victims to evict there."""
    try:
        result, st, _ = fwk.run_post_filter_plugins(state, outcome.pod, diag)
    except DryRunNeedsCache:
        return _post_filter_with_cache(outcome, cluster, gates, profile, seed)
    hist = diag.histogram() if not pre_filter_msg else {}
    outcome.message = fit_error_message(len(fwk.handle.snapshot.node_infos), hist, pre_filter_msg,
                                        "" if result is not None else st.message)
    return outcome


def _post_filter_with_cache(outcome: CycleOutcome, cluster: ClusterInputs, gates: FeatureGates, profile: Profile,
                            seed: int) -> CycleOutcome:
    from .plugins.defaultpreemption.pdb import pdbs_from_objects
    from .scheduler import Scheduler

    pdbs = pdbs_from_objects(cluster.objects.get("PodDisruptionBudget", []), cluster.origins.get("PodDisruptionBudget"))
    sched = Scheduler(profile, cluster.nodes, gates, seed, pods=cluster.pods, objects=cluster.objects,
                      namespaces=cluster.namespace_labels(), pdbs=pdbs)
    result = sched.schedule(outcome.pod)
    if result.node is None:
        outcome.message = result.message
        outcome.nominated_node = result.nominated_node
        outcome.victims = [v.key for v in result.victims]
    return outcome
