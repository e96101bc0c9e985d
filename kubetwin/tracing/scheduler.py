"""Spans of a scheduling cycle: the cycle (``scheduleOne``'s ``SchedulingCycle``) with a span per
extension point — PreFilter, Filter, PostFilter, PreScore, Score, NormalizeScore, then Reserve,
Permit and Bind when the pod is bound — and one per plugin under each, with the verdicts and
scores as attributes (``pkg/scheduler/schedule_one.go``, ``framework/runtime/framework.go``).

:class:`CycleTrace` is a :class:`~kubetwin.scheduler.schedule_one.CycleRecorder`. The vectorised
cycle (the path a traced scheduler takes) hands it each PreFilter status, every Filter stage's
verdict over the nodes its sampling examined (:meth:`CycleTrace.filter_stages` turns them into the
plain cycle's per-plugin counts: each node rejected by the first plugin that fails it) and each
Score plugin's scores; the plain cycle (``vectorised=False``) hands it each plugin's status node by
node. The spans are made when the cycle ends. Rejections are counted by reason and the first
:data:`~.attributes.MAX_NODES` are span events. A cycle answered from a kept verdict — one by one,
or a batch of parked pods (:func:`traced_kept_answers`) — is a span with
``kubetwin.scheduler.reused`` and no children: no plugin ran.

Not an upstream module: kubetwin's tracing of the scheduler.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..scheduler.schedule_one import CycleRecorder
from .attributes import CODE, EXTENSION_POINT, MAX_NODES, NODE_NAME, PLUGIN, REASONS, pod_attributes

if TYPE_CHECKING:
    from ..model.pod import Pod
    from ..scheduler.framework.runtime import PluginScores
    from ..scheduler.framework.status import Status
    from ..scheduler.scheduler import Scheduler, ScheduleResult
    from .provider import Tracing


class _PluginCalls:
    """One plugin at one extension point: time spent, passes, rejections (the first
    :data:`~.attributes.MAX_NODES` as events, all of them counted by reason)."""

    __slots__ = ("ns", "passed", "rejected", "events", "status", "reasons", "vectorised")

    def __init__(self) -> None:
        self.ns = 0
        self.passed = 0
        self.rejected = 0
        self.events: list[tuple[str, Any]] = []
        self.status: Any = None
        self.reasons: Counter[str] = Counter()
        self.vectorised: bool | None = None


class CycleTrace(CycleRecorder):
    """Records one cycle as it runs; :meth:`finish` turns it into spans."""

    def __init__(self, tracing: "Tracing", pod: "Pod"):
        self.tracing = tracing
        self.clock = tracing.decision_clock()
        self.start = self.last = self.clock.start
        self.pod = pod
        self.pre_filter_calls: dict[str, _PluginCalls] = {}
        self.pre_filter_end: int | None = None
        self.filter_calls: dict[str, _PluginCalls] = {}
        self.filter_end: int | None = None
        self.left_out_nodes = 0
        self.score_list: list[PluginScores] | None = None
        #: the vectorised cycle's Score: (node names, the first scored positions, how many, parts)
        self.vector_scores: tuple[Sequence[str], list[int], int, list[tuple[str, int, str, Any]]] | None = None
        self.score_end = 0
        self.post: tuple[Any, Any, list[str], int, int] | None = None
        #: DRA allocations made in the cycle (:mod:`.dra`): each makes its spans under a parent
        self.dra: list[Callable[[Any], None]] = []
        self.dra_count = 0

    def _tick(self) -> int:
        now = self.clock()
        spent, self.last = now - self.last, now
        return spent

    # --- what the cycle reports --------------------------------------------------------------------
    def pre_filter(self, plugin: str, status: "Status") -> None:
        calls = self.pre_filter_calls.setdefault(plugin, _PluginCalls())
        calls.ns += self._tick()
        calls.status = status
        self.pre_filter_end = self.last

    def filter(self, node: str, plugin: str, status: "Status") -> None:
        calls = self.filter_calls.get(plugin)
        if calls is None:
            calls = self.filter_calls[plugin] = _PluginCalls()
        calls.ns += self._tick()
        if status.is_success:
            calls.passed += 1
        else:
            calls.rejected += 1
            calls.reasons.update(status.reasons)
            if len(calls.events) < MAX_NODES:
                calls.events.append((node, status))
        self.filter_end = self.last

    def filter_stages(self, names: Sequence[str], stages: Sequence[tuple[str, Any, int]], examined: Any,
                      statuses: dict[int, "Status"], walk_ns: int) -> None:
        """The vectorised Filter's verdicts turned into the plain cycle's per-plugin counts: each
        examined node is rejected by the first plugin (in Filter order) that fails it — a vector
        verdict's mask, or the status of a node walked node by node — and passed by the ones before."""
        import numpy as np

        ex = np.asarray(examined, dtype=np.int64)
        undecided = np.zeros(len(names), dtype=bool)
        undecided[ex] = True
        by_plugin: dict[str, list[int]] = {}
        for i, st in statuses.items():
            by_plugin.setdefault(st.plugin, []).append(i)
        walked = sum(1 for _, v, _ in stages if v is None)
        for name, verdict, ns in stages:
            before = int(undecided.sum())
            if not before:   # every examined node already rejected: the plugin ran on none
                break
            calls = self.filter_calls.get(name)
            if calls is None:
                calls = self.filter_calls[name] = _PluginCalls()
            calls.vectorised = verdict is not None
            if verdict is not None:
                calls.ns += ns
                rejected = undecided & verdict.fail
            else:  # the node-by-node walk's time, shared by the plugins it ran
                calls.ns += walk_ns // walked
                rejected = np.zeros(len(names), dtype=bool)
                mine = by_plugin.get(name)
                if mine:
                    rejected[mine] = True
                    rejected &= undecided
            n_rejected = int(rejected.sum())
            calls.passed += before - n_rejected
            calls.rejected += n_rejected
            if n_rejected:
                order = ex[rejected[ex]]
                if verdict is not None:
                    verdict.settle()
                    _count_vector_reasons(calls.reasons, verdict, rejected)
                    for i in order[:MAX_NODES - len(calls.events)].tolist():
                        calls.events.append((names[i], verdict.status(i)))
                else:
                    for i in order.tolist():
                        st = statuses[i]
                        calls.reasons.update(st.reasons)
                        if len(calls.events) < MAX_NODES:
                            calls.events.append((names[i], st))
                undecided &= ~rejected
        self._tick()
        self.filter_end = self.last

    def score_parts(self, names: Sequence[str], feasible: Any, parts: Sequence[tuple[str, int, str, Any]]) -> None:
        """The vectorised Score's parts: per plugin what the fast path computed for it."""
        self._tick()
        self.vector_scores = (names, [int(i) for i in feasible[:MAX_NODES]], len(feasible), list(parts))
        self.score_end = self.last

    def left_out(self, node: str, status: "Status") -> None:
        self.left_out_nodes += 1

    def scores(self, scores: list["PluginScores"]) -> None:
        self._tick()
        self.score_list = scores
        self.score_end = self.last

    def post_filter(self, result: Any, status: "Status", gave: list[str], started: int) -> None:
        self._tick()
        self.post = (result, status, gave, started, self.last)

    # --- spans -------------------------------------------------------------------------------------
    def finish(self, sched: "Scheduler", r: "ScheduleResult", *, reused: bool, cycles: int = 1) -> Any:
        """The cycle's spans; returns the cycle span, left open when the pod was scheduled (its
        Reserve, Permit and Bind spans come with :func:`traced_bind`)."""
        t = self.tracing
        end = self.clock()
        attrs = pod_attributes(self.pod)
        attrs.update({
            "kubetwin.scheduler.profile": sched.profile.scheduler_name if hasattr(sched.profile, "scheduler_name")
            else None,
            "kubetwin.scheduler.result": _result_word(r),
            NODE_NAME: r.node,
            "kubetwin.scheduler.feasible_nodes": r.feasible,
            "kubetwin.scheduler.evaluated_nodes": r.evaluated,
            CODE: r.code.name,
            "kubetwin.scheduler.message": r.message or None,
            "kubetwin.scheduler.unschedulable_plugins": sorted(r.unschedulable_plugins) or None,
            "kubetwin.scheduler.nominated_node": r.nominated_node,
            "kubetwin.scheduler.victims": [f"{v.metadata.namespace}/{v.metadata.name}" for v in r.victims] or None,
            "kubetwin.scheduler.reused": reused,
            "kubetwin.scheduler.cycles": cycles if cycles != 1 else None,
        })
        cycle = t.open("scheduling cycle", attrs, self.start)
        if not reused:
            self._extension_points(cycle, end)
        if r.node is None:
            cycle.end(end_time=end)
            return None
        return cycle

    def _extension_points(self, cycle: Any, end: int) -> None:
        t = self.tracing
        at = self.start
        if self.pre_filter_calls:
            stop = self.pre_filter_end or at
            ep = t.open("PreFilter", {EXTENSION_POINT: "PreFilter"}, at, cycle)
            _plugin_spans(t, ep, "PreFilter", self.pre_filter_calls, at)
            ep.end(end_time=stop)
            at = stop
        if self.filter_calls:
            stop = self.filter_end or at
            ep = t.open("Filter", {EXTENSION_POINT: "Filter",
                                   "kubetwin.scheduler.left_out_nodes": self.left_out_nodes or None}, at, cycle)
            _plugin_spans(t, ep, "Filter", self.filter_calls, at)
            for emit in self.dra:
                emit(ep)
            if self.dra_count > len(self.dra):
                ep.set_attribute("kubetwin.dra.allocations_left_out", self.dra_count - len(self.dra))
            ep.end(end_time=max(stop, self.last))
            at = stop
        if self.post is not None:
            result, st, gave, _started, stop = self.post
            attrs = {EXTENSION_POINT: "PostFilter", CODE: st.code.name, REASONS: list(st.reasons) or None,
                     PLUGIN: st.plugin or None, "kubetwin.scheduler.gave_reasons": gave or None}
            if result is not None and st.is_success:
                attrs["kubetwin.scheduler.nominated_node"] = result.nominated_node
                attrs["kubetwin.scheduler.victims"] = [f"{v.metadata.namespace}/{v.metadata.name}"
                                                       for v in result.victims] or None
            t.span("PostFilter", attrs, at, stop, cycle)
            at = stop
        if self.vector_scores is not None:
            _vector_score_spans(t, cycle, self.vector_scores, at, self.score_end or at)
        if self.score_list is not None:
            stop = self.score_end or at
            fwk_scores = self.score_list
            t.span("PreScore", {EXTENSION_POINT: "PreScore"}, at, at, cycle)
            ep = t.open("Score", {EXTENSION_POINT: "Score"}, at, cycle)
            for ps in fwk_scores:
                nodes = list(ps.raw)[:MAX_NODES]
                t.span(f"Score {ps.plugin}", {
                    PLUGIN: ps.plugin, EXTENSION_POINT: "Score", "kubetwin.scheduler.weight": ps.weight,
                    "kubetwin.scheduler.score.nodes": nodes,
                    "kubetwin.scheduler.score.raw": [ps.raw[n] for n in nodes],
                    "kubetwin.scheduler.nodes_left_out": max(0, len(ps.raw) - MAX_NODES) or None,
                }, at, stop, ep)
            ep.end(end_time=stop)
            norm = t.open("NormalizeScore", {EXTENSION_POINT: "NormalizeScore"}, stop, cycle)
            for ps in fwk_scores:
                nodes = list(ps.normalized)[:MAX_NODES]
                t.span(f"NormalizeScore {ps.plugin}", {
                    PLUGIN: ps.plugin, EXTENSION_POINT: "NormalizeScore", "kubetwin.scheduler.weight": ps.weight,
                    "kubetwin.scheduler.score.nodes": nodes,
                    "kubetwin.scheduler.score.normalized": [ps.normalized[n] for n in nodes],
                    "kubetwin.scheduler.score.weighted": [ps.normalized[n] * ps.weight for n in nodes],
                }, stop, stop, norm)
            norm.end(end_time=stop)


def _count_vector_reasons(counter: Counter[str], verdict: Any, rejected: Any) -> None:
    """Every rejected node's reasons, counted from a vector verdict's reason keys."""
    import numpy as np

    n = int(rejected.sum())
    if verdict.key is None:
        for r in verdict.reasons_of(0):
            counter[r] += n
        return
    keys, counts = np.unique(verdict.key[rejected], return_counts=True)
    for k, c in zip(keys.tolist(), counts.tolist()):
        for r in verdict.reasons_of(k):
            counter[r] += c


def _vector_score_spans(t: "Tracing", cycle: Any, got: tuple[Sequence[str], list[int], int, list[Any]],
                        at: int, stop: int) -> None:
    """PreScore, Score and NormalizeScore from the vectorised cycle's parts: per plugin its raw and
    normalized scores, or ``skipped`` (its PreScore skips, or it scores every node alike: it moves
    no total, and the fast path leaves it out)."""
    names, first, total, parts = got
    nodes = [names[i] for i in first]
    left_out = max(0, total - len(first)) or None
    t.span("PreScore", {EXTENSION_POINT: "PreScore"}, at, at, cycle)
    score = t.open("Score", {EXTENSION_POINT: "Score"}, at, cycle)
    norm_spans: list[tuple[str, dict[str, Any]]] = []
    for plugin, weight, how, value in parts:
        attrs: dict[str, Any] = {PLUGIN: plugin, EXTENSION_POINT: "Score", "kubetwin.scheduler.weight": weight,
                                 "kubetwin.scheduler.score.how": how}
        norm: dict[str, Any] = {PLUGIN: plugin, EXTENSION_POINT: "NormalizeScore",
                                "kubetwin.scheduler.weight": weight, "kubetwin.scheduler.score.how": how}
        if how == "vector":
            k = len(first)
            attrs.update({"kubetwin.scheduler.score.nodes": nodes,
                          "kubetwin.scheduler.score.raw": [int(x) for x in value.raw[:k]],
                          "kubetwin.scheduler.nodes_left_out": left_out})
            normalized = [int(x) for x in value.normalized[:k]]
            norm.update({"kubetwin.scheduler.score.nodes": nodes, "kubetwin.scheduler.score.normalized": normalized,
                         "kubetwin.scheduler.score.weighted": [x * weight for x in normalized]})
        elif how == "plain":
            attrs.update({"kubetwin.scheduler.score.nodes": nodes,
                          "kubetwin.scheduler.score.raw": [value.raw[n] for n in nodes],
                          "kubetwin.scheduler.nodes_left_out": left_out})
            norm.update({"kubetwin.scheduler.score.nodes": nodes,
                         "kubetwin.scheduler.score.normalized": [value.normalized[n] for n in nodes],
                         "kubetwin.scheduler.score.weighted": [value.normalized[n] * weight for n in nodes]})
        t.span(f"Score {plugin}", attrs, at, stop, score)
        norm_spans.append((plugin, norm))
    score.end(end_time=stop)
    normalize = t.open("NormalizeScore", {EXTENSION_POINT: "NormalizeScore"}, stop, cycle)
    for plugin, norm in norm_spans:
        t.span(f"NormalizeScore {plugin}", norm, stop, stop, normalize)
    normalize.end(end_time=stop)


def _plugin_spans(t: "Tracing", parent: Any, point: str, calls: dict[str, _PluginCalls], at: int) -> None:
    """One span per plugin, laid end to end in the order they first ran."""
    for plugin, c in calls.items():
        attrs: dict[str, Any] = {PLUGIN: plugin, EXTENSION_POINT: point}
        if point == "Filter":
            attrs["kubetwin.scheduler.nodes_passed"] = c.passed
            attrs["kubetwin.scheduler.nodes_rejected"] = c.rejected
            if c.reasons:
                attrs["kubetwin.scheduler.rejection_reasons"] = list(c.reasons)
                attrs["kubetwin.scheduler.rejection_counts"] = list(c.reasons.values())
            if c.rejected > len(c.events):
                attrs["kubetwin.scheduler.rejections_left_out"] = c.rejected - len(c.events)
            if c.vectorised is not None:
                attrs["kubetwin.scheduler.vectorised"] = c.vectorised
        elif c.status is not None:
            attrs[CODE] = c.status.code.name
            attrs[REASONS] = list(c.status.reasons) or None
        s = t.open(f"{point} {plugin}", attrs, at, parent)
        for node, st in c.events:
            s.add_event("rejected", {NODE_NAME: node, CODE: st.code.name, REASONS: list(st.reasons)}, timestamp=at)
        at += c.ns
        s.end(end_time=at)


def _result_word(r: "ScheduleResult") -> str:
    if r.node is not None:
        return "scheduled"
    if r.nominated_node is not None:
        return "nominated"
    if r.code.name == "Pending":
        return "gated"
    return "unschedulable"


def traced_schedule(sched: "Scheduler", pod: "Pod", schedule: Callable[["Pod"], "ScheduleResult"]) -> "ScheduleResult":
    """``schedule(pod)`` with its cycle traced (a scheduled pod's cycle span stays open for its bind)."""
    from . import ACTIVE

    assert ACTIVE is not None
    _end_open_cycle(sched)
    rec = CycleTrace(ACTIVE, pod)
    before = sched.reused_cycles + sched.patched_cycles
    sched._recorder = rec
    ACTIVE.cycle = rec
    try:
        r = schedule(pod)
    finally:
        sched._recorder = None
        ACTIVE.cycle = None
    cycle = rec.finish(sched, r, reused=sched.reused_cycles + sched.patched_cycles != before)
    if cycle is not None:
        sched._open_cycle = (pod.uid, cycle, rec.clock)
    return r


def traced_kept_answers(sched: "Scheduler", pods: Sequence["Pod"], answers: Sequence["ScheduleResult"],
                        times: Sequence[int] | None) -> None:
    """A cycle span for each pod of a batch answered from kept verdicts (:meth:`Scheduler.kept_answers`):
    ``kubetwin.scheduler.reused`` and no children — no plugin ran — and, when the pod went through
    several cycles at once, their number (``kubetwin.scheduler.cycles``)."""
    from . import ACTIVE

    assert ACTIVE is not None
    _end_open_cycle(sched)
    for k, (pod, r) in enumerate(zip(pods, answers)):
        rec = CycleTrace(ACTIVE, pod)
        span = rec.finish(sched, r, reused=True, cycles=1 if times is None else times[k])
        if span is not None:  # a kept verdict is a failure: never left open
            span.end(end_time=rec.clock())


def _end_open_cycle(sched: "Scheduler") -> None:
    got = getattr(sched, "_open_cycle", None)
    if got is not None:
        sched._open_cycle = None
        _uid, span, clock = got
        span.end(end_time=clock())


def traced_bind(sched: "Scheduler", pod: "Pod", node: str, bind: Callable[["Pod", str], None]) -> None:
    """``bind(pod, node)`` with Reserve, Permit and Bind spans under the pod's cycle span (or a
    ``binding cycle`` span of its own when the pod was not scheduled by a traced cycle)."""
    from . import ACTIVE

    assert ACTIVE is not None
    t = ACTIVE
    got = getattr(sched, "_open_cycle", None)
    if got is not None and got[0] == pod.uid:
        sched._open_cycle = None
        _uid, parent, clock = got
        own = False
    else:
        clock = t.decision_clock()
        attrs = pod_attributes(pod)
        attrs[NODE_NAME] = node
        parent, own = t.open("binding cycle", attrs, clock.start), True
    start = clock()
    bind(pod, node)
    end = clock()
    fwk = sched.framework
    for point, plugins in (("Reserve", fwk.reserve_plugins), ("Permit", fwk.permit_plugins),
                           ("Bind", fwk.bind_plugins)):
        ep = t.open(point, {EXTENSION_POINT: point, NODE_NAME: node}, start, parent)
        for p in plugins:
            t.span(f"{point} {p.name}", {PLUGIN: p.name, EXTENSION_POINT: point, NODE_NAME: node}, start, end, ep)
        if point == "Bind" and not plugins:
            ep.set_attribute("kubetwin.scheduler.binder", "the scheduler cache (DefaultBinder)")
        ep.end(end_time=end)
    parent.end(end_time=end)
    del own


def traced_schedule_one(run: Callable[[], Any]) -> Any:
    """``kubetwin schedule``'s explained cycle (:func:`kubetwin.scheduler.cycle.schedule_one`) and
    its spans, made from the explanation it returns: every node's Filter verdict per plugin (nodes
    the sampling never reached have none), every scored node's raw, normalized and weighted score."""
    from . import ACTIVE

    assert ACTIVE is not None
    t = ACTIVE
    clock = t.decision_clock()
    outcome = run()
    end = clock()
    start = clock.start
    attrs = pod_attributes(outcome.pod)
    attrs.update({
        "kubetwin.scheduler.result": "scheduled" if outcome.node else (
            "nominated" if outcome.nominated_node else "unschedulable"),
        NODE_NAME: outcome.node,
        "kubetwin.scheduler.message": outcome.message or None,
        "kubetwin.scheduler.evaluated_nodes": outcome.evaluated,
        "kubetwin.scheduler.feasible_nodes": len(outcome.feasible),
        "kubetwin.scheduler.skipped_plugins": outcome.skipped_plugins or None,
        "kubetwin.scheduler.nominated_node": outcome.nominated_node,
        "kubetwin.scheduler.victims": outcome.victims or None,
        "kubetwin.scheduler.not_modelled_plugins": outcome.not_modelled or None,
    })
    cycle = t.open("scheduling cycle", attrs, start)
    if outcome.pre_filter:
        ep = t.open("PreFilter", {EXTENSION_POINT: "PreFilter"}, start, cycle)
        for plugin, st in outcome.pre_filter.items():
            t.span(f"PreFilter {plugin}", {PLUGIN: plugin, EXTENSION_POINT: "PreFilter", CODE: st.code.name,
                                           REASONS: list(st.reasons) or None}, start, end, ep)
        ep.end(end_time=end)
    per_plugin: dict[str, _PluginCalls] = {}
    for node, v in outcome.nodes.items():
        for plugin, st in v.filter.items():
            calls = per_plugin.setdefault(plugin, _PluginCalls())
            if st.is_success:
                calls.passed += 1
            else:
                calls.rejected += 1
                if len(calls.events) < MAX_NODES:
                    calls.events.append((node, st))
    if per_plugin:
        ep = t.open("Filter", {EXTENSION_POINT: "Filter"}, start, cycle)
        _plugin_spans(t, ep, "Filter", per_plugin, start)
        ep.end(end_time=end)
    scored = [(n, v) for n, v in outcome.nodes.items() if v.total is not None][:MAX_NODES]
    if scored:
        plugins = list(scored[0][1].raw)
        ep = t.open("Score", {EXTENSION_POINT: "Score"}, start, cycle)
        for plugin in plugins:
            t.span(f"Score {plugin}", {
                PLUGIN: plugin, EXTENSION_POINT: "Score",
                "kubetwin.scheduler.score.nodes": [n for n, _ in scored],
                "kubetwin.scheduler.score.raw": [v.raw.get(plugin, 0) for _, v in scored],
                "kubetwin.scheduler.score.normalized": [v.normalized.get(plugin, 0) for _, v in scored],
                "kubetwin.scheduler.score.weighted": [v.weighted.get(plugin, 0) for _, v in scored],
            }, start, end, ep)
        ep.end(end_time=end)
        t.span("selectHost", {"kubetwin.scheduler.score.nodes": [n for n, _ in scored],
                              "kubetwin.scheduler.score.total": [v.total or 0 for _, v in scored],
                              NODE_NAME: outcome.node}, end, end, cycle)
    cycle.end(end_time=end)
    return outcome
