"""The framework runtime: a profile's plugins instantiated over one handle, sorted into the
extension points they implement, and run in upstream's order
(``pkg/scheduler/framework/runtime/framework.go``).

``RunPreFilterPlugins`` (Skip, rejection, ``PreFilterResult`` merge), ``RunFilterPlugins`` (the
first rejection wins), ``RunFilterPluginsWithNominatedPods`` (a node must pass with the pods
nominated to it and without them), ``RunPostFilterPlugins`` (the first success ends it),
``RunPreScorePlugins``/``RunScorePlugins`` with ``NormalizeScore`` and weights, Reserve,
Permit and Bind. The one-shot explained cycle, the long-running scheduler's plain path and the
single-plugin runner all go through these methods; the vectorised fast path
(:mod:`..fastpath`) reads the same per-extension-point lists.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence, cast

from ...errors import KubetwinError
from ...model.pod import Pod
from .interface import (
    BindPlugin,
    ClaimChangesSource,
    CycleState,
    FilterPlugin,
    Handle,
    NodeLabelsListener,
    PermitPlugin,
    Plugin,
    PostFilterPlugin,
    PostFilterResult,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from .status import SKIP, SUCCESS, Code, Status
from .types import NodeInfo, PodInfo

if TYPE_CHECKING:
    from ..backend.queue import SchedulingQueue
    from ..profile import Profile
    from .diagnosis import Diagnosis

#: records one plugin's status on one node (the explained cycle)
FilterRecord = Callable[[str, Status], None]


@dataclass(slots=True)
class PreFilterOutcome:
    """``RunPreFilterPlugins``' answer: the merged ``PreFilterResult`` (None: all nodes), the
    plugins that restricted it, the rejection (success when none) and the plugins that skipped."""

    allowed: frozenset[str] | None
    restricting: tuple[str, ...]
    status: Status
    skipped: set[str]


#: a PreFilter plugin's shortcuts, in the order of ``Framework.pre_filter_plugins``: a known Skip
#: ``(pod, plugin) -> bool`` and another way to run it ``(pod, plugin, state) -> Status | None``
#: (None: let the plugin run); each may be None
KnownSkip = Callable[[Pod, PreFilterPlugin], bool]
PreFilterSubstitute = Callable[[Pod, PreFilterPlugin, CycleState], "Status | None"]
PreFilterShortcuts = Sequence[tuple["KnownSkip | None", "PreFilterSubstitute | None"]]


@dataclass(frozen=True)
class PluginScores:
    """One score plugin's scores over the scored nodes: raw, after NormalizeScore, weighted."""

    plugin: str
    weight: int
    raw: dict[str, int]
    normalized: dict[str, int]

    def weighted(self, node: str) -> int:
        return self.normalized[node] * self.weight


class Framework:
    """The profile's plugins over one handle (``frameworkImpl``)."""

    def __init__(self, profile: "Profile", handle: Handle, plugins: Sequence[tuple[Plugin, int]] | None = None):
        from ..plugins.registry import NOT_MODELLED, plugin_class

        self.handle = handle
        handle.framework = self
        self.profile = profile
        #: every plugin of the profile with a role in a cycle, with its score weight, in profile order
        self.plugins: list[tuple[Plugin, int]] = list(plugins or ())
        #: the profile's plugins kubetwin does not model (listed, never silently dropped)
        self.not_modelled: list[str] = []
        for name, weight in profile.plugins if plugins is None else ():
            if name in NOT_MODELLED:
                self.not_modelled.append(name)
                continue
            cls = plugin_class(name, path="profile")
            args = profile.args_of(name, cls)
            self.plugins.append((cls(args, handle), weight))
        self._by_name = {p.name: p for p, _ in self.plugins}
        every: list[Plugin] = [p for p, _ in self.plugins]
        #: the QueueSort plugin (upstream allows one per profile) and the PreEnqueue plugins
        self.queue_sort_plugin: QueueSortPlugin | None = next((p for p in every if isinstance(p, QueueSortPlugin)), None)
        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = [p for p in every if isinstance(p, PreEnqueuePlugin)]
        self.pre_filter_plugins: list[PreFilterPlugin] = [p for p in every if isinstance(p, PreFilterPlugin)]
        self.filter_plugins: list[FilterPlugin] = [p for p in every if isinstance(p, FilterPlugin)]
        self.post_filter_plugins: list[PostFilterPlugin] = [p for p in every if isinstance(p, PostFilterPlugin)]
        #: score plugins with a non-zero weight (a zero weight takes a plugin out of Score)
        self.score_plugins: list[tuple[ScorePlugin, int]] = [(p, w) for p, w in self.plugins
                                                     if isinstance(p, ScorePlugin) and w > 0]
        #: the score plugins with a PreScore, and those with a NormalizeScore (by name: a protocol
        #: isinstance check walks the protocol's members, too slow to repeat every cycle)
        scorers = [(p.name, p) for p, _ in self.score_plugins]
        self.pre_scorers: frozenset[str] = frozenset(n for n, p in scorers if isinstance(p, PreScorePlugin))
        self.normalizers: frozenset[str] = frozenset(n for n, p in scorers if isinstance(p, ScoreExtensions))
        self.reserve_plugins: list[ReservePlugin] = [p for p in every if isinstance(p, ReservePlugin)]
        self.permit_plugins: list[PermitPlugin] = [p for p in every if isinstance(p, PermitPlugin)]
        self.bind_plugins: list[BindPlugin] = [p for p in every if isinstance(p, BindPlugin)]
        #: kubetwin's own hooks: plugins told a node's labels changed, reserve plugins whose
        #: deallocated claims become queue events
        self.node_labels_listeners: list[NodeLabelsListener] = [p for p in every
                                                                if isinstance(p, NodeLabelsListener)]
        self.claim_changes_sources: list[ClaimChangesSource] = [p for p in self.reserve_plugins
                                                                if isinstance(p, ClaimChangesSource)]

    @classmethod
    def for_plugin(cls, plugin: Plugin, handle: Handle) -> "Framework":
        """A framework running one plugin alone (weight 1), as the plugins' unit tests run them."""
        from ..profile import Profile

        return cls(Profile(plugins=((plugin.name, 1),)), handle, [(plugin, 1)])

    def plugin(self, name: str) -> Plugin | None:
        return self._by_name.get(name)

    @property
    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    # --- PreEnqueue --------------------------------------------------------------------------------

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status:
        """``RunPreEnqueuePlugins``: the first PreEnqueue rejection (with its plugin) keeps the
        pod out of activeQ; success when every plugin lets it in."""
        for plugin in self.pre_enqueue_plugins:
            st = plugin.pre_enqueue(pod)
            if st is not SUCCESS and not st.is_success:
                return st.with_plugin(plugin.name)
        return SUCCESS

    def configure_queue(self, queue: "SchedulingQueue") -> None:
        """The scheduling queue takes this profile's QueueSort order and PreEnqueue plugins."""
        if self.queue_sort_plugin is not None:
            queue.sort_key = self.queue_sort_plugin.sort_key
        queue.pre_enqueue = self.run_pre_enqueue_plugins

    # --- PreFilter ---------------------------------------------------------------------------------

    def run_pre_filter_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], *,
                               shortcuts: PreFilterShortcuts | None = None,
                               record: FilterRecord | None = None) -> PreFilterOutcome:
        """Every PreFilter in order: a Skip leaves the plugin's Filter out; the first rejection
        ends the run (its plugin set); node-name results are intersected. ``shortcuts``: per
        plugin, a Skip the caller knows without running it (the plugin's Filter is left out
        alike) and another way to run it (its vectorised twin)."""
        skipped: set[str] = set()
        allowed: set[str] | None = None
        restricting: list[str] = []
        for k, plugin in enumerate(self.pre_filter_plugins):
            if shortcuts is not None:
                known_skip, substitute = shortcuts[k]
                if known_skip is not None and known_skip(pod, plugin):
                    skipped.add(plugin.name)
                    if record is not None:
                        record(plugin.name, SKIP)
                    continue
                if substitute is not None:
                    got = substitute(pod, plugin, state)
                    if got is not None:
                        if record is not None:
                            record(plugin.name, got)
                        if got is SUCCESS:
                            continue
                        if got.is_skip:
                            skipped.add(plugin.name)
                        elif not got.is_success:
                            return PreFilterOutcome(None, tuple(restricting), got.with_plugin(plugin.name), skipped)
                        continue
            names, st = plugin.pre_filter(state, pod, nodes)
            if record is not None:
                record(plugin.name, st)
            if st is not SUCCESS:
                if st.is_skip:
                    skipped.add(plugin.name)
                    continue
                if st.code != Code.Success:
                    return PreFilterOutcome(None, tuple(restricting), st.with_plugin(plugin.name), skipped)
            if names is not None:
                restricting.append(plugin.name)
                allowed = set(names) if allowed is None else allowed & set(names)
        if allowed is not None and not allowed:
            msg = f"node(s) didn't satisfy plugin(s) {plugin_list(restricting)} simultaneously"
            return PreFilterOutcome(frozenset(), tuple(restricting),
                                    Status(Code.UnschedulableAndUnresolvable, (msg,)), skipped)
        return PreFilterOutcome(None if allowed is None else frozenset(allowed), tuple(restricting), SUCCESS,
                                skipped)

    # --- Filter ------------------------------------------------------------------------------------

    def run_filter_plugins(self, state: CycleState, pod: Pod, node: NodeInfo, skipped: AbstractSet[str] = frozenset(),
                           record: FilterRecord | None = None) -> Status | None:
        """The node's first rejection (with its plugin), or None when every Filter passes."""
        for plugin in self.filter_plugins:
            if plugin.name in skipped:
                continue
            st = plugin.filter(state, pod, node)
            if record is not None:
                record(plugin.name, st)
            if not st.is_success:
                return st.with_plugin(plugin.name)
        return None

    def nominated_pods_for(self, pod: Pod, node: str) -> list[Pod]:
        """Pods nominated to ``node`` with a priority at least the pod's (other than the pod)."""
        pods = self.handle.nominated.get(node) if self.handle.nominated else None
        if not pods:
            return []
        prio = pod.spec.priority or 0
        return [p for p in pods if p.uid != pod.uid and (p.spec.priority or 0) >= prio]

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node: NodeInfo,
                                               nominated: Sequence[Pod] | None = None,
                                               skipped: AbstractSet[str] = frozenset(),
                                               record: FilterRecord | None = None) -> Status | None:
        """``RunFilterPluginsWithNominatedPods``: with the pods nominated to the node of at least
        the pod's priority added to a copy of it, then on the node as it is; either rejection
        stands. ``nominated``: those pods when the caller has them (else they are looked up)."""
        if nominated is None:
            nominated = self.nominated_pods_for(pod, node.name)
        if nominated:
            clone = node.clone()
            for p in nominated:
                clone.add_pod(PodInfo(p))
            st = self.run_filter_plugins(state, pod, clone, skipped)
            if st is not None:
                return st
        return self.run_filter_plugins(state, pod, node, skipped, record)

    # --- PostFilter --------------------------------------------------------------------------------

    def run_post_filter_plugins(self, state: CycleState, pod: Pod,
                                diagnosis: "Diagnosis") -> tuple[PostFilterResult | None, Status, list[str]]:
        """Each PostFilter in order until one succeeds (its result nominates a node) or one is
        unresolvable; else the rejections' reasons together. Returns the result, the status and
        which plugins gave a reason (plugins whose PreFilter skipped do not run)."""
        reasons: list[str] = []
        gave: list[str] = []
        for plugin in self.post_filter_plugins:
            if plugin.name in diagnosis.skipped:
                continue
            result, st = plugin.post_filter(state, pod, diagnosis)
            if st.is_success:
                return result, st.with_plugin(plugin.name), []
            if st.code == Code.UnschedulableAndUnresolvable:
                return result, st.with_plugin(plugin.name), [plugin.name] if st.reasons else []
            if not st.is_rejected:
                return None, st.with_plugin(plugin.name), []
            if st.reasons:
                reasons.extend(st.reasons)
                gave.append(plugin.name)
        return None, Status(Code.Unschedulable, tuple(reasons)), gave

    # --- Score -------------------------------------------------------------------------------------

    def run_pre_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> set[str]:
        """Every PreScore of a weighted score plugin; returns the plugins that said Skip."""
        return {plugin.name for plugin, _ in self.score_plugins if self.run_pre_score_plugin(state, pod, nodes, plugin)}

    def run_pre_score_plugin(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                             plugin: ScorePlugin) -> bool:
        """One score plugin's PreScore (if it has one); True when it said Skip."""
        if plugin.name not in self.pre_scorers:
            return False
        st = cast(PreScorePlugin, plugin).pre_score(state, pod, nodes)
        if st.is_skip:
            return True
        if not st.is_success:
            raise KubetwinError(f"{plugin.name} PreScore: {st.message}")
        return False

    def run_score_plugins(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                          skipped: set[str]) -> list[PluginScores]:
        """Score then NormalizeScore of every weighted plugin not skipped, in profile order."""
        out = []
        for plugin, weight in self.score_plugins:
            if plugin.name in skipped:
                continue
            out.append(self.run_score_plugin(state, pod, nodes, plugin, weight))
        return out

    def run_score_plugin(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], plugin: ScorePlugin,
                         weight: int) -> PluginScores:
        """One score plugin's Score on every node, then its NormalizeScore (if it has one)."""
        raw: dict[str, int] = {}
        for ni in nodes:
            s, st = plugin.score(state, pod, ni)
            if not st.is_success:
                raise KubetwinError(f"{plugin.name} Score on {ni.name}: {st.message}")
            raw[ni.name] = s
        normalized = dict(raw)
        if plugin.name in self.normalizers:
            cast(ScoreExtensions, plugin).normalize_score(state, pod, normalized)
        return PluginScores(plugin.name, weight, raw, normalized)

    # --- Reserve, Permit, Bind ---------------------------------------------------------------------

    def run_reserve_plugins_reserve(self, pod: Pod, node: str) -> None:
        for plugin in self.reserve_plugins:
            plugin.reserve(pod, node)

    def run_reserve_plugins_unreserve(self, pod: Pod) -> None:
        for plugin in self.reserve_plugins:
            plugin.unreserve(pod)

    def run_permit_plugins(self, state: CycleState, pod: Pod, node: str) -> Status:
        for plugin in self.permit_plugins:
            st = plugin.permit(state, pod, node)
            if not st.is_success:
                return st.with_plugin(plugin.name)
        return SUCCESS

    def run_bind_plugins(self, state: CycleState, pod: Pod, node: str) -> Status:
        """The first Bind plugin that does not Skip binds (the default binder — the cache's own
        bind — when none does)."""
        for plugin in self.bind_plugins:
            st = plugin.bind(state, pod, node)
            if not st.is_skip:
                return st.with_plugin(plugin.name)
        return SUCCESS


def plugin_list(names: Sequence[str]) -> str:
    """Plugin names as upstream prints a ``sets.List``: sorted, space-separated, in brackets."""
    return "[" + " ".join(sorted(names)) + "]"
