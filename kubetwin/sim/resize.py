"""In-place resizes in a simulation: timed ``spec.resizes`` events through the same path as
``kubetwin admit --resize`` (the API server's checks, each node kubelet's allocation manager,
the pending-resize retries).

A scenario lists resizes as ``{at: DURATION, pod: NAME | workload: NAME, patch: {spec: ...}}``
(docs/scenario-format.md). At ``at`` each targeted pod that runs then is patched: the API server
refuses the patch (``Refused``) or changes the pod's spec; its node's kubelet then allocates the
resize, defers it or finds it infeasible (:mod:`kubetwin.kubelet.resize`). The scheduler sees the
pod as the API server holds it — the desired spec, with the allocated and actuated resources in
its status and its resize conditions — so a deferred resize holds the larger of both, as
kube-scheduler counts it. Deferred resizes are retried when a pod on the node is removed, when
a resize there is allocated, and on the allocation manager's ticker (30 s after the kubelet
starts, then 3 minutes after each retry). Each outcome is an event ``PodResize`` in the results.

Not an upstream module: the simulation's glue around ``pkg/registry/core/pod`` (resize) and
``pkg/kubelet/allocation``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

import msgspec

from ..errors import InputError
from ..model.pod import ContainerStatus, Pod, PodCondition, ResourceRequirements

if TYPE_CHECKING:
    from .loop import Simulator
    from .scenario import Scenario

#: the allocation manager's first tick after the kubelet starts (``initialRetryDelay``)
INITIAL_RETRY_SECONDS = 30.0


@dataclass(frozen=True)
class ResizeEvent:
    """One ``spec.resizes[]`` entry."""

    time: float
    patch: Mapping[str, Any]
    pod: str = ""       # name or namespace/name
    workload: str = ""  # every running pod of this workload
    path: str = ""      # where it was written, for messages


def parse_resizes(sc: "Scenario", raw: Any, path: str = "spec.resizes") -> list[ResizeEvent]:
    """The scenario's resize events, strictly checked; targets must name pods or workloads the
    scenario creates."""
    from ..model.pod_resize import check_resize_patch
    from .workload import seconds

    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError("expected a list of resizes", path=path)
    names = {a.pod.name for a in sc.arrivals} | {a.pod.key for a in sc.arrivals}
    workloads = {a.source for a in sc.arrivals if a.source}
    out = []
    for i, r in enumerate(raw):
        where = f"{path}[{i}]"
        if not isinstance(r, Mapping):
            raise InputError("expected a resize mapping {at, pod or workload, patch}", path=where)
        pod, workload = r.get("pod"), r.get("workload")
        if (pod is None) == (workload is None):
            raise InputError("give one of pod and workload", path=where,
                             fix="pod: NAME resizes one pod, workload: NAME every running pod of a workload")
        if pod is not None and pod not in names:
            from ..model.strict import suggest

            hint = suggest(str(pod), sorted(names))
            raise InputError(f'no pod "{pod}" in the scenario', path=f"{where}.pod",
                             fix=f'did you mean "{hint}"?' if hint else "name a pod of spec.workloads or spec.objects")
        if workload is not None and workload not in workloads:
            raise InputError(f'no workload "{workload}" in the scenario', path=f"{where}.workload",
                             fix=f"workloads: {', '.join(sorted(w for w in workloads if w)) or 'none'}")
        if "at" not in r:
            raise InputError("Required value: at (when the resize is requested)", path=f"{where}.at")
        if "patch" not in r:
            raise InputError("Required value: patch ({spec: {containers: [{name, resources}]}})",
                             path=f"{where}.patch")
        patch = check_resize_patch(r["patch"], prefix=f"{where}.patch")
        out.append(ResizeEvent(seconds(r["at"], f"{where}.at"), patch, str(pod or ""), str(workload or ""), where))
    return out


def api_pod(desired: Pod, allocated: Pod, conditions: tuple[Any, ...]) -> Pod:
    """The pod as the API server holds it: the desired spec; in the status each container's
    allocated resources and actuated resources (the allocated ones: kubetwin's kubelets actuate at
    once) and the resize conditions."""
    alloc = {c.name: c for c, _ in allocated.all_containers()}

    def status(c: Any) -> ContainerStatus:
        a = alloc.get(c.name, c)
        return ContainerStatus(name=c.name, allocated_resources=dict(a.resources.requests),
                               resources=ResourceRequirements(requests=dict(a.resources.requests),
                                                              limits=dict(a.resources.limits)))

    kept = [x for x in desired.status.conditions if x.type not in ("PodResizePending", "PodResizeInProgress")]
    conds = kept + [PodCondition(type=c.type, status="True", reason=c.reason, message=c.message) for c in conditions]
    st = msgspec.structs.replace(desired.status, conditions=conds,
                                 container_statuses=[status(c) for c in desired.spec.containers],
                                 init_container_statuses=[status(c) for c in desired.spec.init_containers])
    return msgspec.structs.replace(desired, status=st)


class SimResizes:
    """The resize events of one simulation and each node's allocation manager."""

    def __init__(self, sim: "Simulator", events: list[ResizeEvent]):
        from ..model.features import gates_for

        self.sim = sim
        self.events = events
        self.managers: dict[int, Any] = {}
        #: each workload's pods (by UID), for ``workload:`` targets
        self.members: dict[str, set[str]] = {}
        for a in sim.sc.arrivals:
            if a.source:
                self.members.setdefault(a.source, set()).add(a.pod.uid)
        #: how many resizes came to each outcome
        self.counts: dict[str, int] = {}
        self.api_gates = gates_for(sim.sc.settings.kubernetes_version, sim.sc.settings.feature_gates)

    def manager(self, i: int) -> Any:
        from ..kubelet.resize import ResizeManager

        m = self.managers.get(i)
        if m is None:
            kubelet = self.sim._kubelet(i)
            if kubelet is None:
                return None
            m = self.managers[i] = ResizeManager(kubelet, next_retry=INITIAL_RETRY_SECONDS)
        return m

    # --- the clock --------------------------------------------------------------------------------
    def apply(self, obj: Any) -> None:
        """A scheduled resize event, or a node's ticker (``("tick", node)``)."""
        if isinstance(obj, tuple):
            _, i = obj
            m = self.managers.get(i)
            if m is not None and m.pending and self.sim.now >= m.next_retry:
                self._settle(i, m.periodic(self.sim.now))
            return
        for sp in self._targets(obj):
            self._resize(sp, obj)

    def pod_removed(self, i: int, sp: Any) -> None:
        """``HandlePodRemoves`` on node ``i``: pending resizes there are retried."""
        m = self.managers.get(i)
        if m is not None and (m.pending or sp.pod.uid in m.desired):
            self._settle(i, m.pod_removed(sp.pod.uid, self.sim.now))
        elif m is not None:
            m.remove_pod(sp.pod.uid)

    # --- one resize -------------------------------------------------------------------------------
    def _targets(self, ev: ResizeEvent) -> list[Any]:
        sim = self.sim
        out = []
        for sp in sim.pods:
            if sp.phase != "Running" or sp.node < 0:
                continue
            if ev.pod and ev.pod not in (sp.pod.name, sp.pod.key):
                continue
            if ev.workload and sp.pod.uid not in self.members.get(ev.workload, ()):
                continue
            out.append(sp)
        if not out:
            self._record(None, ev, "NotRunning", f"no running pod matches {ev.pod or ev.workload} at this time")
        return out

    def _resize(self, sp: Any, ev: ResizeEvent) -> None:
        from ..model.pod_resize import apply_resize_patch, refusal_message, validate_pod_resize

        current = sp.pod
        try:
            desired = apply_resize_patch(current, ev.patch)
        except InputError as exc:
            raise exc.within(f"{ev.path}.patch") from None
        errors = validate_pod_resize(current, desired, self.api_gates)
        if errors:
            self._record(sp, ev, "Refused", refusal_message(current, errors))
            return
        i = sp.node
        m = self.manager(i)
        if m is None:  # no kubelet simulated on this node: the spec change is taken as it comes
            self._update(sp, api_pod(desired, desired, ()))
            self._record(sp, ev, "Completed", "no kubelet simulated on the node")
            return
        if m.allocated(desired.uid) is None:
            self._record(sp, ev, "NotRunning", "the kubelet does not run the pod")
            return
        self._settle(i, m.request(desired, self.sim.now), ev, sp)

    def request(self, sp: Any, desired: Pod, source: str) -> str:
        """A resize another component asks for (the VPA updater's in-place update): the API
        server's checks, then the node's kubelet, as a scheduled resize goes. Returns the outcome:
        ``Refused``, ``Completed``, ``Deferred``, ``Infeasible``, ``InProgress`` or ``NotRunning``."""
        from ..model.pod_resize import refusal_message, validate_pod_resize

        errors = validate_pod_resize(sp.pod, desired, self.api_gates)
        if errors:
            self._record(sp, None, "Refused", refusal_message(sp.pod, errors), source=source)
            return "Refused"
        i = sp.node
        m = self.manager(i)
        if m is None:  # no kubelet simulated on this node: the spec change is taken as it comes
            self._update(sp, api_pod(desired, desired, ()))
            self._record(sp, None, "Completed", "no kubelet simulated on the node", source=source)
            return "Completed"
        if m.allocated(desired.uid) is None:
            self._record(sp, None, "NotRunning", "the kubelet does not run the pod", source=source)
            return "NotRunning"
        before = len(self.sim.events)
        self._settle(i, m.request(desired, self.sim.now), None, None, source=source, who=sp)
        mine = [e for e in self.sim.events[before:] if e.get("pod") == sp.pod.key]
        return mine[-1]["status"] if mine else "Deferred"

    def pending_reason(self, sp: Any) -> str | None:
        """The pod's resize state on its node: ``Deferred`` / ``Infeasible`` (``PodResizePending``),
        ``InProgress`` (``PodResizeInProgress``), or None when no resize is under way."""
        from ..kubelet.resize import IN_PROGRESS, PENDING

        m = self.managers.get(sp.node)
        if m is None:
            return None
        for c in m.conditions_of(sp.pod.uid):
            if c.type == PENDING:
                return c.reason
            if c.type == IN_PROGRESS:
                return "InProgress"
        return None

    def _settle(self, i: int, results: list[Any], ev: ResizeEvent | None = None, requested: Any = None,
                source: str = "", who: Any = None) -> None:
        """Each evaluated pod: actuate allocated resizes, update the API pod (scheduler cache), record."""
        from ..kubelet.resize import ALLOCATED

        sim = self.sim
        m = self.managers[i]
        by_uid = {sp.pod.uid: sp for sp in sim.residents[i].values()}
        for r in results:
            sp = by_uid.get(r.pod.uid)
            if sp is None:
                continue
            if r.status == ALLOCATED:
                self._check_usage(sp, r.pod)
                m.actuated(r.pod.uid)
            allocated = m.allocated(r.pod.uid) or r.pod
            desired = m.desired.get(r.pod.uid, allocated)
            self._update(sp, api_pod(desired, allocated, m.conditions_of(r.pod.uid)))
            status = "Completed" if r.status == ALLOCATED else r.status
            self._record(sp, ev if sp is requested else None, status, r.message, r.trigger, r.notes,
                         source=source if sp is who else "")
        if m.pending and (sim.live > 0 or sim._pressure_busy()):
            # the ticker matters only while something else can still change the node
            sim.push(m.next_retry, RESIZE_TICK, ("tick", i))

    def _check_usage(self, sp: Any, allocated: Pod) -> None:
        """``doPodResizeAction`` aborts a memory resize whose new pod limit is at or below the pod's
        current usage (and retries it on later syncs): not modelled — said, never hidden."""
        if sp.usage is None:
            return
        limit = 0
        for c, init in allocated.all_containers():
            q = c.resources.limits.get("memory")
            if q is None and not init:
                return  # no pod memory limit
            limit += q.value() if q is not None and not init else 0
        usage = 0
        first = True
        for c, init in allocated.all_containers():
            if init:
                continue
            curve = sp.usage.of(c.name, first)
            first = False
            if curve is not None:
                usage += curve.at(self.sim.now - sp.origin)
        if usage >= limit:
            from ..diagnostics import warn

            warn(InputError(f"pod {sp.pod.key}: its memory use ({usage}) is at or above the memory limit of its "
                            f"resize ({limit}) at {self.sim.now:g}s; the kubelet would abort the resize and retry it, "
                            f"which kubetwin does not model (the resize is taken as done)", path="spec.resizes"))

    def _update(self, sp: Any, new: Pod) -> None:
        """The API server's pod changed: the scheduler's cache and queue hear of it."""
        from ..scheduler.backend.queue import ASSIGNED_POD_UPDATE

        sim = self.sim
        old = sp.pod
        node = sim.cluster.remove(old)
        sp.pod = new
        if node is not None:
            sim.cluster.bind(new, node)
            sim.queue.on_event(ASSIGNED_POD_UPDATE, sim.now, old=old, new=new)

    def _record(self, sp: Any, ev: ResizeEvent | None, status: str, message: str = "", trigger: str = "",
                notes: tuple[str, ...] = (), source: str = "") -> None:
        sim = self.sim
        entry: dict[str, Any] = {"time": sim.now, "type": "PodResize", "status": status}
        if sp is not None:
            entry["pod"] = sp.pod.key
            entry["node"] = sim.cluster.names[sp.node]
        elif ev is not None:
            entry["pod"] = ev.pod or f"workload {ev.workload}"
        if ev is not None or source:
            entry["source"] = ev.path if ev is not None else source
        elif trigger:
            entry["trigger"] = trigger
        if message:
            entry["message"] = message
        if notes:
            entry["notes"] = list(notes)
        sim.events.append(entry)
        self.counts[status] = self.counts.get(status, 0) + 1


#: the event kinds the loop dispatches here (live: they can change the cluster)
RESIZE, RESIZE_TICK = -2, -1


def schedule(sim: "Simulator") -> "SimResizes | None":
    """Put the scenario's resize events on the clock; None when it has none."""
    events = getattr(sim.sc, "resizes", None)
    if not events:
        return None
    for ev in events:
        sim.push(ev.time, RESIZE, ev)
    return SimResizes(sim, events)


__all__ = ["INITIAL_RETRY_SECONDS", "RESIZE", "RESIZE_TICK", "ResizeEvent", "SimResizes", "api_pod",
           "parse_resizes", "schedule"]
