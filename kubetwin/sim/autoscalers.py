"""The autoscalers acting in ``simulate``: HorizontalPodAutoscalers, VerticalPodAutoscalers and the
Cluster Autoscaler (:mod:`.cluster_autoscaler`), each on its own period of the simulated clock.

* HPA (``pkg/controller/podautoscaler/horizontal.go``): every ``--horizontal-pod-autoscaler-sync-period``
  (15 s) each HPA reads its target's scale and pods, gets one proposal per metric from what
  metrics-server reports (:mod:`.load`), and ``reconcile`` (the library, :mod:`kubetwin.autoscale.hpa`)
  decides; a rescale sets the controller's replicas. The ReplicaSet controller then creates pods
  or deletes the surplus, ranked as ``getPodsToDelete`` ranks them (unscheduled before scheduled,
  pending before running, the most recently started first).
* VPA (vertical-pod-autoscaler 1.7.1): the recommender every minute feeds each container's CPU
  sample and memory working set into its aggregate state and recomputes the recommendation
  (capped by the ``resourcePolicy``); the admission controller sets new pods' requests to the
  target (limits kept in proportion with ``RequestsAndLimits``) in every mode but ``Off``; the
  updater every minute evicts, in modes ``Recreate``/``Auto``/``InPlaceOrRecreate``, pods whose
  requests lie outside [lowerBound, upperBound] (or differ by 10 % after 12 h), outside-range
  first, no more than the eviction tolerance of the controller's replicas, never below
  ``minReplicas``, and only where the PodDisruptionBudgets allow (:mod:`.disruption`).
  ``InPlaceOrRecreate`` resizes in place through the kubelet's resize path
  (:meth:`kubetwin.sim.resize.SimResizes.request`: the API server's checks, then the node's
  allocation manager) as ``AttemptInPlaceUpdate`` does: a pod whose resize is under way is left
  alone unless it failed — ``Infeasible``, ``Deferred`` for more than 5 minutes or ``InProgress``
  for more than an hour since the updater's last attempt — and then evicted (PDBs permitting); a
  resize the API server refuses is an error that ends the updater's run, as upstream's
  ``RunOnce`` returns. In-place updates count against the eviction tolerance as evictions do.

Not an upstream module: kubetwin's glue between the clock (:mod:`.loop`) and the library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from ..autoscale import hpa as H
from ..autoscale import vpa as V
from ..model.quantity import Quantity

if TYPE_CHECKING:
    from .loop import SimPod, Simulator
    from .workload import Controller

#: the simulated clock's zero as Unix seconds (the VPA's decaying histograms are anchored to wall time)
EPOCH_UNIX = 1767225600.0   # 2026-01-01T00:00:00Z, kubetwin.sim.loop.EPOCH


# --- what metrics-server reports -----------------------------------------------------------------
def pod_cpu_milli(sp: SimPod, c: Controller, running: int, now: float) -> int:
    """A running pod's CPU usage: its share of the controller's load, else what its controller's
    template requests (the workload's own figure: a request the VPA changed is not a use)."""
    if c.load is not None and c.load.cpu is not None:
        return c.load.cpu_milli(now) // max(running, 1)
    return sum(_req(ct, "cpu") for ct, _ in c.template.all_containers() if _app(c.template, ct))


def pod_memory(sp: SimPod, c: Controller, now: float) -> int:
    """A running pod's working set in bytes: its usage curve, else what its controller's template
    requests."""
    total = 0
    first = True
    for ct, _ in c.template.all_containers():
        if not _app(c.template, ct):
            continue
        curve = sp.usage.of(ct.name, first) if sp.usage is not None else None
        total += curve.at(now - sp.origin) if curve is not None else _req(ct, "memory") // 1000
        first = False
    return total


def _app(pod: Any, ct: Any) -> bool:
    return ct in pod.spec.containers or ct.restart_policy == "Always"


def _req(ct: Any, resource: str) -> int:
    q = ct.resources.requests.get(resource)
    return q.milli_value() if q is not None else 0


# --- HPA ----------------------------------------------------------------------------------------
@dataclass
class HPARun:
    spec: Any
    file: str
    target: Any
    state: H.HPAState = field(default_factory=H.HPAState)
    last: H.Decision | None = None
    #: (pod uid, resource) -> (phase, its HPAPod): a pod's view changes only with its phase
    seen: dict[tuple[str, str], tuple[str, H.HPAPod]] = field(default_factory=dict)

    def hpa_pods(self, pods: list[SimPod], resource: str) -> list[H.HPAPod]:
        out = []
        seen = self.seen
        for sp in pods:
            key = (sp.pod.uid, resource)
            got = seen.get(key)
            if got is None or got[0] != sp.phase:
                got = seen[key] = (sp.phase, _hpa_pod(sp, resource))
            out.append(got[1])
        if len(seen) > 4 * len(pods) + 1024:   # forget pods that are gone
            alive = {sp.pod.uid for sp in pods}
            for k in [k for k in seen if k[0] not in alive]:
                del seen[k]
        return out


def _hpa_pod(sp: SimPod, resource: str) -> H.HPAPod:
    running = sp.phase == "Running"
    reqs: dict[str, int | None] = {}
    for ct, _ in sp.pod.all_containers():
        if _app(sp.pod, ct):
            q = ct.resources.requests.get(resource)
            reqs[ct.name] = q.milli_value() if q is not None else None
    return H.HPAPod(sp.pod.name, sp.phase if sp.phase in ("Running", "Pending") else "Failed",
                    H.PodCondition("True", sp.start) if running else H.PodCondition("False", sp.arrival),
                    sp.start if running else None, False, reqs)


def hpa_proposals(run: HPARun, pods: list[SimPod], now: float, flags: Any) -> list[H.Proposal | H.MetricError]:
    """One proposal (or error) per metric, from the pods' metrics as metrics-server reports them."""
    c = run.target
    spec = run.spec
    running = [sp for sp in pods if sp.phase == "Running"]
    tol = H.tolerances_for(spec, flags.tolerance)
    kw = dict(cpu_initialization_period=flags.cpu_initialization_period,
              delay_of_initial_readiness_status=flags.initial_readiness_delay)
    out: list[H.Proposal | H.MetricError] = []
    for m in spec.metrics:
        try:
            if m.type in ("Resource", "ContainerResource"):
                hpods = run.hpa_pods(pods, m.name)
                if m.name == "cpu":
                    if c.load is not None and c.load.cpu is not None:   # one share for every pod
                        share = H.PodMetric(c.load.cpu_milli(now) // max(len(running), 1), now)
                        metrics = {sp.pod.name: share for sp in running}
                    else:
                        metrics = {sp.pod.name: H.PodMetric(pod_cpu_milli(sp, c, len(running), now), now)
                                   for sp in running}
                elif m.name == "memory":
                    metrics = {sp.pod.name: H.PodMetric(pod_memory(sp, c, now) * 1000, now) for sp in running}
                else:
                    raise H.MetricError(f"metrics-server reports cpu and memory only, not {m.name}")
                if m.target_type == "Utilization":
                    out.append(H.resource_replicas(c.replicas, m.average_utilization or 0, m.name, hpods, metrics,
                                                   now, container=m.container, tolerances=tol, **kw))
                else:
                    out.append(H.plain_metric_replicas(c.replicas, m.average_value_milli or 0, m.name, hpods,
                                                       metrics, now, tolerances=tol, **kw))
            elif m.type == "Pods":
                total = c.load.metric_milli(m.name, now) or 0
                per = {sp.pod.name: H.PodMetric(total // max(len(running), 1), now) for sp in running}
                hpods = run.hpa_pods(pods, "")
                out.append(H.plain_metric_replicas(c.replicas, m.average_value_milli or 0, "", hpods, per, now,
                                                   tolerances=tol, **kw))
            else:   # External
                total = c.load.metric_milli(m.name, now) or 0
                if m.target_type == "AverageValue":
                    out.append(H.per_pod_value_replicas(len(pods), total, m.average_value_milli or 1, tol))
                else:
                    hpods = run.hpa_pods(pods, "")
                    out.append(H.object_or_external_value_replicas(c.replicas, total, m.value_milli or 1, hpods,
                                                                   tol))
        except H.MetricError as exc:
            out.append(exc)
    return out


# --- VPA ----------------------------------------------------------------------------------------
@dataclass
class VPARun:
    spec: Any
    file: str
    target: Any
    aggregates: dict[str, V.AggregateContainerState] = field(default_factory=dict)
    #: per (pod uid, container): the sample feeder of that container instance
    containers: dict[tuple[str, str], V.ContainerState] = field(default_factory=dict)
    recommendation: dict[str, V.RecommendedContainerResources] = field(default_factory=dict)
    evictions: int = 0
    in_place_fallbacks: int = 0
    in_place_updates: int = 0
    #: pod UID -> when the updater last asked for an in-place resize (``lastInPlaceAttemptTimeMap``)
    in_place_attempts: dict[str, float] = field(default_factory=dict)


def _quantity(resource: str, amount: int) -> Quantity:
    return Quantity.parse(f"{amount}m" if resource == "cpu" else str(amount))


def apply_recommendation(pod: Any, vpa: Any, rec: dict[str, V.RecommendedContainerResources]) -> Any:
    """The VPA admission controller: requests set to the target of the controlled resources;
    with ``RequestsAndLimits`` a limit keeps its ratio to the request (``getProportionalResourceLimit``)."""
    containers = []
    changed = False
    for ct in pod.spec.containers:
        r = rec.get(ct.name)
        p = vpa.policy_for(ct.name)
        if r is None or (p is not None and p.mode == "Off"):
            containers.append(ct)
            continue
        reqs = dict(ct.resources.requests)
        lims = dict(ct.resources.limits)
        for resource, amount in (("cpu", r.target.cpu), ("memory", r.target.memory)):
            if amount is None:
                continue
            new = _quantity(resource, amount)
            old = reqs.get(resource)
            reqs[resource] = new
            if (p is None or p.controlled_values == "RequestsAndLimits") and resource in lims and old is not None \
                    and old.milli_value() > 0:
                scaled = lims[resource].milli_value() * new.milli_value() // old.milli_value()
                lims[resource] = _quantity(resource, scaled if resource == "cpu" else scaled // 1000)
        res = msgspec.structs.replace(ct.resources, requests=reqs, limits=lims)
        containers.append(msgspec.structs.replace(ct, resources=res))
        changed = True
    if not changed:
        return pod
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, containers=containers))


def vpa_update_priority(sp: SimPod, rec: dict[str, V.RecommendedContainerResources], now: float,
                        flags: Any) -> tuple[bool, float] | None:
    """``UpdatePriorityCalculator.AddPod``: (outside the recommended range, resource diff), or None
    when the pod needs no update."""
    outside = False
    totals: dict[str, list[int]] = {}
    for ct in sp.pod.spec.containers:
        r = rec.get(ct.name)
        if r is None:
            continue
        for resource, target, lo, hi in (("cpu", r.target.cpu, r.lower_bound.cpu, r.upper_bound.cpu),
                                         ("memory", r.target.memory, r.lower_bound.memory, r.upper_bound.memory)):
            if target is None:
                continue
            q = ct.resources.requests.get(resource)
            req = (q.milli_value() if resource == "cpu" else q.value()) if q is not None else 0
            t = totals.setdefault(resource, [0, 0])
            t[0] += req
            t[1] += target
            if (lo is not None and req < lo) or (hi is not None and req > hi):
                outside = True
    diff = 0.0
    for req, target in totals.values():
        if req == 0:
            diff += 1.0 if target else 0.0
        else:
            diff += abs(target - req) / req
    if not outside:
        if now - sp.start < flags.pod_lifetime_update_threshold or diff < flags.min_change_priority:
            return None
    return outside, diff


class Autoscalers:
    """HPA and VPA controllers of one run, and the Cluster Autoscaler when node groups have bounds."""

    def __init__(self, sim: Simulator):
        a = sim.sc.autoscaling
        self.sim = sim
        self.cfg = a
        self.hpas = [HPARun(s, f, _controller(sim, s.target_kind, s.namespace, s.target_name)) for s, f in a.hpas]
        self.vpas = [VPARun(s, f, _controller(sim, s.target_kind, s.namespace, s.target_name)) for s, f in a.vpas]
        self.vpa_of: dict[str, VPARun] = {v.target.key: v for v in self.vpas}
        self.ca: Any = None
        if a.ca is not None and a.groups:
            from .cluster_autoscaler import ClusterAutoscalerLoop

            self.ca = ClusterAutoscalerLoop(sim, a)
        #: time series (per sample) and decisions, for the report and JSON
        self.series: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.notes: list[str] = []

    # --- the clock -----------------------------------------------------------------------------
    def periods(self) -> list[tuple[str, float]]:
        out = []
        if self.hpas:
            out.append(("hpa", self.cfg.hpa.sync_period))
        if self.vpas:
            out += [("vpa-recommender", self.cfg.vpa.recommender_interval), ("vpa-updater", self.cfg.vpa.updater_interval)]
        if self.ca is not None:
            out.append(("cluster-autoscaler", self.cfg.ca.scan_interval))
        return out

    def tick(self, what: str, now: float) -> None:
        if what == "hpa":
            self.sync_hpas(now)
        elif what == "vpa-recommender":
            self.recommend(now)
        elif what == "vpa-updater":
            self.update_vpas(now)
        elif what == "cluster-autoscaler":
            self.ca.run_once(now)
        else:
            self.ca.node_ready(now)

    def _pods_by_owner(self) -> dict[str, list[SimPod]]:
        out: dict[str, list[SimPod]] = {}
        for sp in self.sim.by_uid.values():
            if sp.owner and sp.phase in ("Pending", "Running"):
                out.setdefault(sp.owner, []).append(sp)
        return out

    # --- HPA -----------------------------------------------------------------------------------
    def sync_hpas(self, now: float) -> None:
        owners = self._pods_by_owner()
        flags = self.cfg.hpa
        for run in self.hpas:
            c = run.target
            pods = sorted(owners.get(c.key, []), key=lambda sp: sp.i)
            proposals = hpa_proposals(run, pods, now, flags)
            d = H.reconcile(run.spec, c.replicas, len(pods), proposals, run.state, now, flags.downscale_stabilization)
            run.state, run.last = d.state, d
            if d.rescale:
                self.events.append({"time": now, "type": "HPARescale", "autoscaler": f"{run.spec.namespace}/"
                                    f"{run.spec.name}", "target": c.key, "from": c.replicas,
                                    "to": d.desired_replicas, "reason": d.rescale_reason})
                self.scale(c, d.desired_replicas, pods)

    def scale(self, c: Controller, replicas: int, pods: list[SimPod]) -> None:
        """The ReplicaSet controller after the scale changed: more pods, or the surplus deleted."""
        from .loop import CONTROLLER

        sim = self.sim
        old = c.replicas
        c.replicas = replicas
        if c.kind == "StatefulSet":   # the StatefulSet controller scales in its own order (:mod:`.statefulset`)
            sim.statefulsets.wake(c)
            return
        if replicas > old:
            sim.push(sim.now + sim.sc.settings.controller_delay, CONTROLLER, c)
            return
        surplus = c.active - replicas
        ranked = sorted(pods, key=lambda sp: (sp.node >= 0, sp.phase == "Running", -sp.start, -sp.i))
        for sp in ranked[:max(surplus, 0)]:
            c.retired += 1
            sim.delete_pod(sp, "ScaledDown", f"deleted by the ReplicaSet controller: {c.key} scaled to {replicas}")

    # --- VPA -----------------------------------------------------------------------------------
    def recommend(self, now: float) -> None:
        owners = self._pods_by_owner()
        for run in self.vpas:
            pods = [sp for sp in owners.get(run.target.key, []) if sp.phase == "Running"]
            t = EPOCH_UNIX + now
            for sp in pods:
                cpu = pod_cpu_milli(sp, run.target, len(pods), now)
                mem = pod_memory(sp, run.target, now)
                first = sp.pod.spec.containers[0].name if sp.pod.spec.containers else ""
                for ct in sp.pod.spec.containers:
                    agg = run.aggregates.get(ct.name)
                    if agg is None:
                        agg = run.aggregates[ct.name] = V.AggregateContainerState()
                    key = (sp.pod.uid, ct.name)
                    st = run.containers.get(key)
                    if st is None:
                        st = run.containers[key] = V.container_state_for(run.spec, ct.name, agg)
                    st.add_cpu_sample(cpu if ct.name == first else 0, t)
                    st.add_memory_sample(mem if ct.name == first else 0, t)
            if run.aggregates:
                controlled = {name: (p.controlled_resources if (p := run.spec.policy_for(name)) is not None
                                     else ("cpu", "memory")) for name in run.aggregates}
                run.recommendation = V.apply_policy(run.spec, V.recommend(run.aggregates, controlled=controlled))

    def vpa_webhook(self, c: Controller) -> Any:
        """The VPA admission controller (a mutating webhook) for a pod ``c`` creates, or None:
        it runs after LimitRanger's defaulting and before its checks (:func:`admit_pod`)."""
        run = self.vpa_of.get(c.key)
        if run is None or not run.recommendation or run.spec.update_mode == "Off":
            return None
        return lambda pod: apply_recommendation(pod, run.spec, self.capped(run, pod))

    def capped(self, run: VPARun, pod: Any) -> dict[str, V.RecommendedContainerResources]:
        """The recommendation for ``pod`` capped to its namespace's LimitRanges
        (:func:`kubetwin.autoscale.vpa_limitrange.cap_to_limit_ranges`), as the admission
        controller and the updater see it."""
        ranges = self.sim.admission.limit_ranges.get(pod.metadata.namespace, ())
        if not ranges:
            return run.recommendation
        from ..autoscale.vpa_limitrange import cap_to_limit_ranges

        return cap_to_limit_ranges(pod, run.spec, run.recommendation, ranges)

    def _resizes(self) -> Any:
        sim = self.sim
        if sim.resizes is None:
            from .resize import SimResizes

            sim.resizes = SimResizes(sim, [])
        return sim.resizes

    def resize_in_place(self, sp: SimPod, run: VPARun, now: float) -> str:
        """``AttemptInPlaceUpdate`` for one pod: ``evict`` (fall back to eviction), ``wait``
        (a resize is under way), ``resized`` (asked for; the kubelet allocated, deferred or is
        still actuating it) or ``error`` (the API server refused the resize)."""
        rs = self._resizes()
        state = rs.pending_reason(sp)
        uid = sp.pod.uid
        if state is not None:   # ``CanEvictInPlacingPod``: fall back only when the resize failed
            last = run.in_place_attempts.setdefault(uid, now)
            if state == "Deferred":
                return "evict" if now - last > DEFERRED_RESIZE_UPDATE_TIMEOUT else "wait"
            if state == "InProgress":
                return "evict" if now - last > IN_PROGRESS_RESIZE_UPDATE_TIMEOUT else "wait"
            return "evict"   # Infeasible (or unknown)
        desired = apply_recommendation(sp.pod, run.spec, self.capped(run, sp.pod))
        run.in_place_attempts[uid] = now
        outcome = rs.request(sp, desired, f"VerticalPodAutoscaler {run.spec.namespace}/{run.spec.name}")
        if outcome == "Refused":
            return "error"
        if outcome == "NotRunning":
            return "wait"
        run.in_place_updates += 1
        self.events.append({"time": now, "type": "VPAInPlaceResize", "autoscaler": f"{run.spec.namespace}/"
                            f"{run.spec.name}", "pod": sp.pod.key, "target": run.target.key, "outcome": outcome})
        return "resized"

    def update_vpas(self, now: float) -> None:
        from .disruption import eviction_allowed

        flags = self.cfg.vpa
        owners = self._pods_by_owner()
        sim = self.sim
        for run in self.vpas:
            mode = run.spec.update_mode
            if mode not in ("Recreate", "Auto", "InPlaceOrRecreate") or not run.recommendation:
                continue
            c = run.target
            configured = c.replicas
            min_replicas = run.spec.min_replicas if run.spec.min_replicas is not None else flags.min_replicas
            if configured < min_replicas:
                continue
            pods = owners.get(c.key, [])
            running = [sp for sp in pods if sp.phase == "Running"]
            in_place = mode == "InPlaceOrRecreate"
            resizing = set()
            if in_place and sim.resizes is not None:
                resizing = {sp.i for sp in running if sim.resizes.pending_reason(sp) is not None}
            wanted = []
            for sp in running:
                prio = vpa_update_priority(sp, self.capped(run, sp.pod), now, flags)
                if prio is not None:
                    wanted.append((not prio[0], -prio[1], sp.i, sp))
                elif sp.i in resizing:   # its spec already asks for the recommendation; the resize waits
                    wanted.append((False, 0.0, sp.i, sp))
            if not wanted:
                continue
            wanted.sort(key=lambda w: w[:3])
            tolerance = int(configured * flags.eviction_tolerance)
            should_be_alive = configured - tolerance
            alive = len(running)
            evicted = 0
            for _, _, _, sp in wanted:
                if not (alive - evicted > should_be_alive
                        or (alive == configured and tolerance == 0 and evicted == 0)):
                    break
                if in_place:
                    got = self.resize_in_place(sp, run, now)
                    if got == "error":   # upstream's RunOnce returns on an in-place update error
                        self.events.append({"time": now, "type": "VPAInPlaceUpdateFailed",
                                            "autoscaler": f"{run.spec.namespace}/{run.spec.name}",
                                            "pod": sp.pod.key, "target": c.key})
                        return
                    if got == "resized":
                        evicted += 1   # counts against the tolerance (inPlaceUpdateInitiated)
                        continue
                    if got == "wait":
                        continue
                    run.in_place_fallbacks += 1
                everyone = ([(p.pod, p.phase == "Running") for p in sim.by_uid.values()]
                            if sim.sched.pdbs else [])   # only a PDB reads it
                if not eviction_allowed(sp.pod, sim.sched.pdbs, everyone):
                    continue
                evicted += 1
                run.evictions += 1
                self.events.append({"time": now, "type": "VPAEviction", "autoscaler": f"{run.spec.namespace}/"
                                    f"{run.spec.name}", "pod": sp.pod.key, "target": c.key})
                sim.delete_pod(sp, "EvictedByVPA", "evicted by the VPA updater to apply its recommendation")

    # --- observations ---------------------------------------------------------------------------
    def sample(self, now: float) -> None:
        row: dict[str, Any] = {"time": now}
        if self.hpas:
            row["replicas"] = {r.target.key: r.target.replicas for r in self.hpas}
        if self.vpas:
            row["recommendations"] = {
                v.target.key: {name: {"cpu": r.target.cpu, "memory": r.target.memory}
                               for name, r in v.recommendation.items()} for v in self.vpas}
        if self.ca is not None:
            row["nodes"] = self.ca.group_sizes()
        self.series.append(row)

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"timeSeries": self.series, "events": self.events}
        if self.hpas:
            out["horizontalPodAutoscalers"] = [{
                "name": f"{r.spec.namespace}/{r.spec.name}", "target": r.target.key, "replicas": r.target.replicas,
                "conditions": [{"type": x.type, "status": x.status, "reason": x.reason, "message": x.message}
                               for x in (r.last.conditions if r.last else ())]} for r in self.hpas]
        if self.vpas:
            out["verticalPodAutoscalers"] = [{
                "name": f"{v.spec.namespace}/{v.spec.name}", "target": v.target.key, "updateMode": v.spec.update_mode,
                "evictions": v.evictions, "inPlaceUpdates": v.in_place_updates,
                "inPlaceFallbacks": v.in_place_fallbacks,
                "recommendation": {n: {"target": _res(r.target), "lowerBound": _res(r.lower_bound),
                                       "upperBound": _res(r.upper_bound)} for n, r in v.recommendation.items()}}
                for v in self.vpas]
        if self.ca is not None:
            out["clusterAutoscaler"] = self.ca.result()
        if self.notes:
            out["notes"] = list(self.notes)
        return out


#: the VPA updater's fallbacks from a resize under way to eviction (``DeferredResizeUpdateTimeout``,
#: ``InProgressResizeUpdateTimeout``)
DEFERRED_RESIZE_UPDATE_TIMEOUT = 300.0
IN_PROGRESS_RESIZE_UPDATE_TIMEOUT = 3600.0


def _res(r: V.Resources) -> dict[str, str]:
    out = {}
    if r.cpu is not None:
        out["cpu"] = f"{r.cpu}m"
    if r.memory is not None:
        out["memory"] = str(r.memory)
    return out


def _controller(sim: Simulator, kind: str, ns: str, name: str) -> Any:
    return sim.controllers[f"{kind}/{ns}/{name}"]
