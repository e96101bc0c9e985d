"""One scheduling cycle with a profile (``schedulePod``): PreFilter, Filter with node
sampling, PreScore/Score/NormalizeScore with weights, and the host pick — explained per node.

Node order follows the scheduler cache's node tree (nodes interleaved zone by zone), which
decides which nodes a sampled cycle looks at. Ties among top scores are broken by a seeded
reservoir sample, as upstream's ``selectHost`` does with its unseeded one.
"""

from __future__ import annotations

from typing import Sequence

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..errors import KubetwinError
from ..model.pod import Pod
from .framework.interface import CycleState, Plugin, plugin_class
from .framework.status import Code, Status
from .framework.types import NodeInfo
from .inputs import ClusterInputs
from .profile import CYCLE_FRAME, NOT_MODELLED, Profile, load_profile
from .run import make_handle

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


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


def node_tree_order(nodes: Sequence[NodeInfo]) -> list[NodeInfo]:
    """The cache's ``nodeTree`` listing: one node per zone in turn, zones in order of appearance."""
    zones: dict[str, list[NodeInfo]] = {}
    for ni in nodes:
        region = ni.labels.get("topology.kubernetes.io/region", "")
        zone = ni.labels.get("topology.kubernetes.io/zone", "")
        key = f"{region}:\x00:{zone}" if region or zone else ""
        zones.setdefault(key, []).append(ni)
    out: list[NodeInfo] = []
    lists = list(zones.values())
    i = 0
    while len(out) < len(nodes):
        for lst in lists:
            if i < len(lst):
                out.append(lst[i])
        i += 1
    return out


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
    #: what DefaultPreemption would do for an unschedulable pod
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


def fit_error_message(num_nodes: int, statuses: dict[str, Status], pre_filter_msg: str = "",
                      post_filter_msg: str = "") -> str:
    """``FitError.Error()``: the reason histogram sorted as strings, then PostFilter's message."""
    text = f"0/{num_nodes} nodes are available:"
    if pre_filter_msg:
        text += f" {pre_filter_msg}."
    else:
        hist: Counter[str] = Counter()
        for st in statuses.values():
            for r in st.reasons:
                hist[r] += 1
        text += " " + ", ".join(sorted(f"{n} {r}" for r, n in hist.items())) + "."
    if post_filter_msg:
        text += f" {post_filter_msg}"  # PostFilter's message brings its own full stop
    return text


class Framework:
    """The profile's plugins, instantiated over one snapshot."""

    def __init__(self, profile: Profile, handle: Any):
        self.handle = handle
        self.plugins: list[tuple[Plugin, int]] = []
        self.not_modelled: list[str] = []
        for name, weight in profile.plugins:
            if name in NOT_MODELLED:
                self.not_modelled.append(name)
                continue
            if name in CYCLE_FRAME:
                continue
            cls = plugin_class(name, path="profile")
            args = cls.parse_args(profile.plugin_args.get(name), f"pluginConfig[{name}].args")
            self.plugins.append((cls(args, handle), weight))


def schedule_one(cluster: ClusterInputs, pod: Pod, gates: Any, *, config_path: str | None = None,
                 admit: bool = False, seed: int = 0) -> CycleOutcome:
    admission: list[str] = []
    if admit:
        from .admission import admit_from_objects

        result = admit_from_objects(pod, cluster.objects, cluster.origins, cluster.pods, gates)
        pod, admission = result.pod, result.changes
    profile = load_profile(config_path, pod.spec.scheduler_name)
    handle = make_handle(cluster, gates, seed)
    fw = Framework(profile, handle)
    all_nodes = node_tree_order(handle.snapshot.node_infos)
    outcome = CycleOutcome(pod, None, {ni.name: NodeVerdict() for ni in all_nodes}, not_modelled=fw.not_modelled,
                           admission=admission)
    if pod.spec.scheduling_gates:
        outcome.message = "pod has scheduling gates: " + ", ".join(g.name for g in pod.spec.scheduling_gates)
        return outcome
    if not all_nodes:
        outcome.message = "no nodes available to schedule pods"
        return outcome
    state = CycleState()

    # PreFilter
    skipped: set[str] = set()
    allowed: set[str] | None = None
    restricting: list[str] = []
    for plugin, _ in fw.plugins:
        if not hasattr(plugin, "pre_filter"):
            continue
        names, st = plugin.pre_filter(state, pod, all_nodes)
        outcome.pre_filter[plugin.name] = st
        if st.is_skip:
            skipped.add(plugin.name)
            continue
        if st.code != Code.Success:
            for v in outcome.nodes.values():
                v.filter[plugin.name] = st
            outcome.message = fit_error_message(len(all_nodes), {}, pre_filter_msg=st.message)
            if st.code == Code.UnschedulableAndUnresolvable and _post_filter_without_dry_run(
                    outcome, fw, profile, state, pod, skipped, {ni.name: st for ni in all_nodes}, st.message):
                return outcome
            return _post_filter(outcome, cluster, pod, gates, profile, seed)
        if names is not None:
            restricting.append(plugin.name)
            allowed = set(names) if allowed is None else allowed & set(names)
    outcome.skipped_plugins = sorted(skipped)
    statuses: dict[str, Status] = {}
    candidates = all_nodes
    if allowed is not None:
        if not allowed:
            msg = f"node(s) didn't satisfy plugin(s) {_plugin_list(restricting)} simultaneously"
            outcome.message = fit_error_message(len(all_nodes), {}, pre_filter_msg=msg)
            return outcome
        reason = Status(Code.UnschedulableAndUnresolvable,
                        (f"node(s) didn't satisfy plugin(s) {_plugin_list(restricting)}",))
        for ni in all_nodes:
            if ni.name not in allowed:
                statuses[ni.name] = reason
                outcome.nodes[ni.name].filter["PreFilterResult"] = reason
        candidates = [ni for ni in all_nodes if ni.name in allowed]

    # Filter, with sampling
    filters = [p for p, _ in fw.plugins if hasattr(p, "filter") and p.name not in skipped]
    has_score = any(hasattr(p, "score") and w > 0 for p, w in fw.plugins)
    to_find = num_feasible_nodes_to_find(profile.percentage_of_nodes_to_score, len(candidates)) if has_score else 1
    feasible: list[NodeInfo] = []
    for ni in candidates:
        outcome.evaluated += 1
        verdict = outcome.nodes[ni.name]
        ok = True
        for plugin in filters:
            st = plugin.filter(state, pod, ni)
            verdict.filter[plugin.name] = st
            if not st.is_success:
                statuses[ni.name] = st.with_plugin(plugin.name)
                ok = False
                break
        if ok:
            feasible.append(ni)
            if len(feasible) >= to_find:
                break
    outcome.feasible = [ni.name for ni in feasible]
    if not feasible:
        if _post_filter_without_dry_run(outcome, fw, profile, state, pod, skipped, statuses, ""):
            return outcome
        return _post_filter(outcome, cluster, pod, gates, profile, seed)
    if len(feasible) == 1:
        outcome.node = feasible[0].name
        outcome.message = f"scheduled on {outcome.node} (the only feasible node; not scored)"
        return _pre_bind(outcome, fw, pod)

    # Score
    totals = {ni.name: 0 for ni in feasible}
    for plugin, weight in fw.plugins:
        if not hasattr(plugin, "score") or weight == 0:
            continue
        if hasattr(plugin, "pre_score"):
            st = plugin.pre_score(state, pod, feasible)
            if st.is_skip:
                continue
            if not st.is_success:
                raise KubetwinError(f"{plugin.name} PreScore: {st.message}")
        raw = {}
        for ni in feasible:
            s, st = plugin.score(state, pod, ni)
            if not st.is_success:
                raise KubetwinError(f"{plugin.name} Score on {ni.name}: {st.message}")
            raw[ni.name] = s
        normalized = dict(raw)
        if hasattr(plugin, "normalize_score"):
            plugin.normalize_score(state, pod, normalized)
        for name in raw:
            v = outcome.nodes[name]
            v.raw[plugin.name] = raw[name]
            v.normalized[plugin.name] = normalized[name]
            v.weighted[plugin.name] = normalized[name] * weight
            totals[name] += normalized[name] * weight
    for name, t in totals.items():
        outcome.nodes[name].total = t
    outcome.node = select_host([(ni.name, totals[ni.name]) for ni in feasible], random.Random(seed))
    outcome.message = f"scheduled on {outcome.node} (score {totals[outcome.node]})"
    return _pre_bind(outcome, fw, pod)


def _pre_bind(outcome: CycleOutcome, fw: Framework, pod: Pod) -> CycleOutcome:
    """Reserve and PreBind on the chosen node: the claims DynamicResources writes for the pod."""
    assert outcome.node is not None
    for plugin, _ in fw.plugins:
        if plugin.name != "DynamicResources":
            continue
        plugin.reserve(pod, outcome.node)
        outcome.resource_claims = plugin.claims_of(pod)
        outcome.pod_status = plugin.pod_status(pod)
    return outcome


def _post_filter_without_dry_run(outcome: CycleOutcome, fw: Framework, profile: Profile, state: CycleState,
                                 pod: Pod, skipped: set[str], statuses: dict[str, Status],
                                 pre_filter_msg: str) -> bool:
    """PostFilter's message when DefaultPreemption cannot find a victim anywhere — no pod of
    lower priority on any node that failed only as Unschedulable — without building the
    vectorised scheduler for a dry run (keeps the one-shot command free of numpy).

    False when a dry run is needed (or the pod carries a nominated node to check).
    """
    from .preemption import NEVER, NO_VICTIMS, NOT_HELPFUL, pod_priority

    preemption = "DefaultPreemption" in {n for n, _ in profile.plugins}
    nodes = fw.handle.snapshot.node_infos
    preempt_msg = ""
    if preemption:
        if pod.spec.preemption_policy == "Never":
            preempt_msg = "preemption: " + NEVER
        else:
            if pod.status.nominated_node_name:
                return False
            prio = pod_priority(pod)
            reasons: dict[str, Status] = {}
            for ni in nodes:
                st = statuses.get(ni.name)
                if st is not None and st.code == Code.Unschedulable:
                    if any(pod_priority(pi.pod) < prio for pi in ni.pods):
                        return False
                    reasons[ni.name] = Status(Code.UnschedulableAndUnresolvable, (NO_VICTIMS,))
                else:
                    reasons[ni.name] = Status(Code.UnschedulableAndUnresolvable, (NOT_HELPFUL,))
            preempt_msg = "preemption: " + fit_error_message(len(nodes), reasons)
    messages = [plugin.post_filter_message(state) for plugin, _ in fw.plugins
                if hasattr(plugin, "post_filter_message") and plugin.name not in skipped]
    messages = [m for m in messages if m]
    if preempt_msg:
        messages.append(preempt_msg)
    outcome.message = fit_error_message(len(nodes), {} if pre_filter_msg else statuses, pre_filter_msg,
                                        ", ".join(messages))
    return True


def _post_filter(outcome: CycleOutcome, cluster: ClusterInputs, pod: Pod, gates: Any, profile: Profile,
                 seed: int) -> CycleOutcome:
    """PostFilter (DefaultPreemption) for an unschedulable pod: the full FitError message with
    preemption's part, and the node it would nominate with the victims to evict there."""
    from .pdb import pdbs_from_objects
    from .scheduler import Scheduler

    pdbs = pdbs_from_objects(cluster.objects.get("PodDisruptionBudget", []), cluster.origins.get("PodDisruptionBudget"))
    sched = Scheduler(profile, cluster.nodes, gates, seed, pods=cluster.pods, objects=cluster.objects,
                      namespaces=cluster.namespace_labels(), pdbs=pdbs)
    result = sched.schedule(pod)
    if result.node is None:
        outcome.message = result.message
        outcome.nominated_node = result.nominated_node
        outcome.victims = [v.key for v in result.victims]
    return outcome


def select_host(scored: list[tuple[str, int]], rng: random.Random) -> str:
    """Highest total wins; among equal totals one is picked uniformly at random.

    Upstream draws by reservoir sampling over a heap, so only the distribution (uniform
    over the top-scoring nodes) can be matched; one draw per tie keeps it cheap and seeded.
    """
    best = max(s for _, s in scored)
    top = [name for name, s in scored if s == best]
    return top[0] if len(top) == 1 else top[rng.randrange(len(top))]


def _plugin_list(names: list[str]) -> str:
    return "[" + " ".join(sorted(names)) + "]"
