"""The Cluster Autoscaler acting in ``simulate``: scale-up for unschedulable pods, scale-down of
unneeded nodes, and the kubelet-aware estimator (kubetwin's what-if, beyond upstream).

Upstream (read, not copied): cluster-autoscaler 1.36 ``core/static_autoscaler.go`` (``RunOnce``
every ``--scan-interval``), ``core/scaleup/orchestrator`` (pods that fit no existing or upcoming
node, one option per node group from the binpacking estimator, the expander's choice, node-group
and cluster limits), ``core/scaledown`` (``planner``/``eligibility``: utilization = max of the
cpu and memory requests over allocatable, below ``--scale-down-utilization-threshold``; pods
that must be able to move elsewhere; ``drain`` rules: pods without a controller, pods annotated
``cluster-autoscaler.kubernetes.io/safe-to-evict: "false"``, kube-system pods without a PDB,
pods a PDB protects; unneeded for ``--scale-down-unneeded-time``, no scale-down for
``--scale-down-delay-after-add`` after a scale-up); the planner's limits, order, recheck timeout
and deletion budgets (``--max-scale-down-parallelism``, ``--max-drain-parallelism``) are
:mod:`.ca_planner`.

The estimator (the library, :func:`kubetwin.autoscale.clusterautoscaler.binpacking_estimate`)
gets the scheduler's node-local checks as its predicate: NodeAffinity/nodeSelector and
TaintToleration against the group's template node, NodeResourcesFit's requests and pod count.
A pod whose fit depends on other pods (required pod affinity/anti-affinity, hard topology spread
constraints, or any pod of the cluster with required anti-affinity) is checked instead with the
scheduler's own PreFilter/Filter plugins on a fork of the cluster plus the estimated nodes
(:mod:`.ca_filter`) — in FilterOutSchedulable, the estimator (with upstream's hostname-spread
retry on other nodes) and the drain simulation, which then takes the plain walk.
``estimator: kubelet-aware`` adds the kubelet's admission (Topology, CPU, Memory and Device
Managers) of a freshly started kubelet of the group per estimated node: a node counts as fitting
only if that kubelet would admit the pod; an existing node the hostname-spread retry picks is
asked through a copy of its own kubelet, and the retry goes on to the next passing node when it
refuses. Upstream has no such estimator; the comparison with
``binpacking`` shows how many pods upstream's choice leaves failed (``TopologyAffinityError``).

With DRA (always on in 1.36) pods with ResourceClaims take the Filter-plugin path over a fork
that also holds the DynamicResources plugin's claims and devices and the groups' template slices
(:mod:`.ca_dra`); a node with node-local slices is as utilized as its busiest device pool
(``utilization.Calculate``). DaemonSet objects (:mod:`.daemonset_controller`) put their pods on
the template node (``podsExpectedOnFreshNode``, ``--force-ds``) and on every node that joins;
DaemonSet and mirror pods are skipped by the drain (drainability rules ``daemonset``, ``mirror``)
and left out of utilization with ``--ignore-daemonsets-utilization``.

New nodes join the simulation after ``nodeProvisioningTime`` (the cloud's boot time, kubetwin's
default 2 min); the scheduler starts again over the new node list in upstream's node-tree order
(:func:`resize_cluster`) and its cache takes the bound pods over by node name
(``ClusterState.adopt``).

Simplifications, stated: first fit (FilterOutSchedulable, the drain simulation) walks the nodes
in node-tree order from the first one; upstream walks its snapshot's node list — built from the
delta store's maps, so in Go's map order — starting after the node of the last match
(``clustersnapshot/scheduling_opts.go``'s ``lastIndexOrderMapping``, offset 1, kept by the one
``SchedulerPluginRunner`` across scans), and tries each pod's hinted node (where the last
simulation put it, ``scheduling/hinting_simulator.go``) first; neither is reproduced, since the
order it rotates over is not reproducible. For pods without inter-pod constraints the predicate is NodeAffinity,
TaintToleration and the requests (not host ports or the other Filter plugins); upcoming nodes are
not in the fork the Filter plugins see; equivalence groups
are pods of one controller and one request shape; a pod's scale-up reason is its last scheduler
message; node deletion is immediate once a node is chosen (no ``ToBeDeletedByClusterAutoscaler``
taint period).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..autoscale import clusterautoscaler as CA
from ..model.node import node_from_dict
from .ca_dra import has_claims, node_local_slices
from .ca_drain import DrainScan
from .ca_filter import SnapshotFilter, estimator_predicates, has_inter_pod_constraints
from .ca_planner import Planner, crop, order_candidates
from .daemonset_controller import TemplatePod, is_daemon_set_pod, is_mirror_pod, pods_expected_on_fresh_node

if TYPE_CHECKING:
    from .loop import SimPod, Simulator
    from .scenario import SimNode

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"


def template_of(name: str, sn: SimNode) -> CA.NodeTemplate:
    def amounts(rl: Any) -> dict[str, int]:
        return {r: (q.milli_value() if r == "cpu" else q.value()) for r, q in rl.items()}

    node = sn.node
    return CA.NodeTemplate(name, amounts(node.status.capacity), amounts(node.status.allocatable),
                           dict(node.metadata.labels), tuple({"key": t.key, "value": t.value or "", "effect": t.effect}
                                                             for t in node.spec.taints))


def node_local_fit(pod: Any, node: Any, gates: Any) -> bool:
    """NodeAffinity (nodeSelector and required terms) and TaintToleration against one node object."""
    from ..scheduler.plugins.helpers import untolerated_taint
    from ..scheduler.plugins.nodeaffinity.node_affinity import required_node_affinity

    taints = [t for t in node.spec.taints if t.effect in ("NoSchedule", "NoExecute")]
    if not taints and not pod.spec.node_selector and pod.spec.affinity is None:
        return True
    if not required_node_affinity(pod)(node.metadata.labels, node.metadata.name):
        return False
    ops = gates.enabled("TaintTolerationComparisonOperators")
    return untolerated_taint(taints, pod.spec.tolerations, ops) is None


class ClusterAutoscalerLoop:
    #: the drain simulation's fast path (:mod:`.ca_drain`); False runs the plain walk (the reference)
    fast_drain = True

    def __init__(self, sim: Simulator, a: Any):
        from ..autoscale.clusterautoscaler import build_expander, parse_priorities

        self.sim = sim
        self.flags = a.ca
        self.groups = a.groups
        pri = parse_priorities(self.flags.priorities) if self.flags.priorities is not None else None
        self.expander = build_expander(self.flags.expander, priorities=pri, seed=sim.sc.settings.seed)
        self.templates = {g: template_of(g, s.template) for g, s in self.groups.items()}
        #: per template node name, the node-local ResourceSlices its group's drivers publish
        self.template_slices = {s.template.node.metadata.name: node_local_slices(s.template.slices,
                                                                                   s.template.node.metadata.name)
                                for s in self.groups.values() if s.template.slices}
        self.upcoming: dict[str, list[tuple[float, SimNode]]] = {g: [] for g in self.groups}
        self.next_index = {g: sum(1 for n in sim.sc.nodes if n.group == g) for g in self.groups}
        self.last_scale_up = -math.inf
        self.planner = Planner(self.flags.planner, self.flags.scale_down_unneeded_time)
        self.scale_ups: list[dict[str, Any]] = []
        self.scale_downs: list[dict[str, Any]] = []
        self.added: set[str] = set()
        self.kubelet_aware = self.flags.estimator == "kubelet-aware"
        self._fit_memo: dict[tuple[str, str], bool] = {}
        #: per pod shape, the nodes that fit it at the start of the current scan (:meth:`_first_fit`)
        self._fits: dict[bytes, Any] = {}
        #: per pod uid, whether the drain skips it (DaemonSet and mirror pods, :meth:`_to_move`)
        self._skip_memo: dict[str, bool] = {}
        #: per pod uid, whether it has inter-pod constraints of its own (:meth:`_routed`)
        self._routed_memo: dict[str, bool] = {}

    # --- sizes ---------------------------------------------------------------------------------
    def group_sizes(self) -> dict[str, int]:
        out = {g: 0 for g in self.groups}
        for sn in self.sim.sim_nodes:
            if sn.group in out:
                out[sn.group] += 1
        return out

    # --- scale-up ------------------------------------------------------------------------------
    def _static_fit(self, sp: SimPod, group: str) -> bool:
        key = (sp.pod.uid, group)
        got = self._fit_memo.get(key)
        if got is None:
            if len(self._fit_memo) > 100_000:
                self._fit_memo.clear()
            got = self._fit_memo[key] = node_local_fit(sp.pod, self.groups[group].template.node, self.sim.gates)
        return got

    def _routed(self, sp: SimPod) -> bool:
        """Does the pod's fit depend on other pods (:func:`.ca_filter.needs_filter`); the pod's
        own part is kept by uid (its affinity and spread constraints never change)."""
        if self.sim.cluster.pods_with_required_anti_affinity:
            return True
        got = self._routed_memo.get(sp.pod.uid)
        if got is None:
            if len(self._routed_memo) > 100_000:
                self._routed_memo.clear()
            got = self._routed_memo[sp.pod.uid] = (
                has_inter_pod_constraints(sp.pod, self.sim.sched.framework)
                or (self.sim.dra is not None and has_claims(sp.pod)))
        return got

    def _fork(self, base: SnapshotFilter | None = None) -> SnapshotFilter:
        """A fork of the simulated cluster (or of ``base``) with the scheduler's profile over it,
        DynamicResources over a fork of the live plugin and the groups' template slices."""
        sched = self.sim.sched
        return SnapshotFilter(self.sim.cluster, sched.profile, sched.handle, base,
                              dra=self.sim.dra if self._with_dra() else None, template_slices=self.template_slices)

    def _with_dra(self) -> bool:
        """Does the cluster have DRA objects (or a group whose drivers will publish slices)?
        Without any, DynamicResources has nothing to say and stays out of the fork."""
        if self.template_slices:
            return True
        objects = self.sim.sched.handle.objects
        return any(objects.get(k) for k in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"))

    def _predicate(self, group: str, *, with_filter: bool = False,
                   base: SnapshotFilter | None = None) -> tuple[CA.FitPredicate, CA.Elsewhere | None]:
        """The estimator's fit predicate for ``group`` (and its hostname-spread retry): the
        node-local checks and requests; with ``with_filter`` the pods whose fit depends on other
        pods go through the scheduler's Filter plugins on a fork of the cluster plus the
        estimated nodes; the kubelet's admission after either with ``kubelet-aware``."""
        kubelets: dict[str, Any] = {}
        sn = self.groups[group].template
        aware = self.kubelet_aware and sn.machine is not None and sn.kubelet is not None

        def plain(pod: CA.CAPod, node: CA.NewNode) -> bool:
            return self._static_fit(pod.payload, group) and CA.resource_fit(pod, node)

        existing: dict[str, Any] = {}

        def admits(pod: CA.CAPod, node: CA.NewNode | str) -> bool:
            """The kubelet of an estimator node (freshly started from the group's template) or
            a copy of an existing node's kubelet (the hostname retry put the pod there) admits."""
            from .kubelets import kubelet_for

            if isinstance(node, CA.NewNode):
                k = kubelets.get(node.name)
                if k is None:
                    k = kubelets[node.name] = kubelet_for(sn)
                    for tp in node.template.pods:   # its DaemonSet pods start first
                        k.admit(tp.payload.pod)
            else:
                if node not in existing:
                    i = self.sim.cluster.index[node]
                    live, sim_node = self.sim.kubelets[i], self.sim.sim_nodes[i]
                    existing[node] = (live.fork() if live else kubelet_for(sim_node)
                                      if sim_node.machine is not None and sim_node.kubelet is not None else None)
                k = existing[node]
                if k is None:   # a node without a modelled kubelet admits what the scheduler places
                    return True
            return bool(k.admit(pod.payload.pod).admitted)

        check: CA.FitPredicate = plain
        elsewhere: CA.Elsewhere | None = None
        if with_filter:
            check, elsewhere = estimator_predicates(self._fork(base), sn.node, group, plain=plain,
                                                    routed=lambda p: self._routed(p.payload),
                                                    accept=admits if aware else None)

        def fits(pod: CA.CAPod, node: CA.NewNode) -> bool:
            if not check(pod, node):
                return False
            return not aware or admits(pod, node)

        return fits, elsewhere

    def _unschedulable(self) -> list[SimPod]:
        """The pods the scheduler found unschedulable, highest priority first
        (``filterOutSchedulableByPacking`` sorts them by priority, with Go's unstable
        ``sort.Slice`` over the lister's order; kubetwin keeps creation order among equals)."""
        return sorted((sp for sp in self.sim.by_uid.values() if sp.phase == "Pending" and sp.reason == "Unschedulable"
                       and not sp.pod.status.nominated_node_name), key=lambda sp: (-sp.priority, sp.i))

    def _ca_pod(self, sp: SimPod) -> CA.CAPod:
        from ..scheduler.framework.resources import pod_request_amounts

        return CA.CAPod(sp.pod.key, pod_request_amounts(sp.pod, self.sim.gates, status=False), sp)

    @staticmethod
    def _equivalence_groups(pods: list[CA.CAPod]) -> list[list[CA.CAPod]]:
        """``groupPodsBySchedulingProperties``-like: pods of one controller and one shape together."""
        groups: dict[Any, list[CA.CAPod]] = {}
        for p in pods:
            sp = p.payload
            key = (sp.owner or sp.pod.uid, tuple(sorted(p.requests.items())))
            groups.setdefault(key, []).append(p)
        return list(groups.values())

    def _template_pods(self) -> None:
        """Each group's template with the pods a fresh node of it starts with
        (:meth:`.daemonset_controller.DaemonSetController.template_pods`), from the group's
        first schedulable node when it has one."""
        import dataclasses

        ds = self.sim.daemonsets
        cs = self.sim.cluster
        for g, size in self.groups.items():
            example = next((i for i, sn in enumerate(self.sim.sim_nodes)
                            if sn.group == g and not cs.unschedulable[i]), None)
            if ds is not None:
                pods = ds.template_pods(size.template.node, example, self.flags.force_daemon_sets)
            else:   # no DaemonSet objects: the example node's own DaemonSet and mirror pods
                pods = pods_expected_on_fresh_node(
                    None if example is None else [sp.pod for sp in self.sim.residents[example].values()],
                    (), size.template.node, self.flags.force_daemon_sets)
            if pods or self.templates[g].pods:
                self.templates[g] = dataclasses.replace(self.templates[g], pods=tuple(
                    CA.CAPod(p.key, self._requests(p), TemplatePod(p)) for p in pods))

    def _requests(self, pod: Any) -> dict[str, int]:
        from ..scheduler.framework.resources import pod_request_amounts

        return pod_request_amounts(pod, self.sim.gates, status=False)

    def scale_up(self, now: float) -> None:
        pending = self._unschedulable()
        if not pending:
            return
        self._template_pods()
        # FilterOutSchedulable: pods that fit an existing node's free room wait for the scheduler
        cs = self.sim.cluster
        free, npods = cs.free.copy(), cs.npods.copy()
        self._fits = {}
        # pods whose fit depends on other pods are checked with the scheduler's Filter plugins on a
        # fork of the cluster that every placement of this scan joins
        with_filter = any(self._routed(sp) for sp in pending)
        fork = self._fork() if with_filter else None
        pending = [sp for sp in pending if not self._first_fit(sp, free, npods, skip=(), fork=fork)]
        pods = [self._ca_pod(sp) for sp in pending]
        # pods that fit nodes still being provisioned wait for them (upcoming nodes count as existing)
        for g, ups in self.upcoming.items():
            if not ups or not pods:
                continue
            fits, _ = self._predicate(g, with_filter=with_filter, base=fork)
            nodes = [CA.NewNode(f"upcoming-{k}", self.templates[g]) for k in range(len(ups))]
            left = []
            for p in pods:
                target = next((n for n in nodes if fits(p, n)), None)
                if target is None:
                    left.append(p)
                else:
                    target.place(p)
            pods = left
        if not pods:
            return
        total = len(self.sim.sim_nodes) + sum(len(u) for u in self.upcoming.values())
        options = []
        for g, size in self.groups.items():
            current = sum(1 for sn in self.sim.sim_nodes if sn.group == g) + len(self.upcoming[g])
            room = size.max_size - current
            if self.flags.max_nodes_total:
                room = min(room, self.flags.max_nodes_total - total)
            if room <= 0:
                continue
            fits, elsewhere = self._predicate(g, with_filter=with_filter, base=fork)
            est = CA.binpacking_estimate(self._equivalence_groups(pods), self.templates[g], fits,
                                         max_nodes=min(room, self.flags.max_nodes_per_scale_up), elsewhere=elsewhere)
            if est.node_count > 0:
                options.append(CA.Option(g, est.node_count, est.scheduled_pods))
        if not options:
            return
        best = self.expander(options, self.templates)
        if best is None:
            return
        ready = now + self.flags.node_provisioning_time
        for _ in range(best.node_count):
            sn = self._new_node(best.node_group)
            self.upcoming[best.node_group].append((ready, sn))
        self.last_scale_up = now
        from .loop import AUTOSCALE

        self.sim.push(ready, AUTOSCALE, "cluster-autoscaler-ready")
        reasons: dict[str, int] = {}
        for sp in pending:
            from .loop import _reason_key

            k = _reason_key(sp.message) if sp.message else "Unschedulable"
            reasons[k] = reasons.get(k, 0) + 1
        self.scale_ups.append({
            "time": now, "nodeGroup": best.node_group, "nodes": best.node_count, "pods": len(best.pods),
            "unschedulablePods": len(pending), "estimator": self.flags.estimator,
            "expander": ",".join(self.flags.expander), "ready": ready,
            "options": [{"nodeGroup": o.node_group, "nodes": o.node_count, "pods": len(o.pods)} for o in options],
            "why": reasons})

    def _new_node(self, group: str) -> SimNode:
        import dataclasses

        from ..model.meta import to_builtins

        tmpl = self.groups[group].template
        k = self.next_index[group]
        self.next_index[group] = k + 1
        name = f"{group}-{k}"
        obj = {**to_builtins(tmpl.node), "apiVersion": "v1", "kind": "Node"}
        meta = dict(obj.get("metadata") or {})
        meta["name"] = name
        meta["labels"] = {**(meta.get("labels") or {}), "kubernetes.io/hostname": name}
        obj["metadata"] = meta
        self.added.add(name)
        slices: list[dict[str, Any]] = []
        if tmpl.machine is not None:
            from .scenario import publish_slices

            for d in self.groups[group].drivers:
                slices.extend(publish_slices(tmpl.machine, d, name))
        return dataclasses.replace(tmpl, node=node_from_dict(obj, checked=True), slices=slices)

    def node_ready(self, now: float) -> None:
        add: list[SimNode] = []
        for g, ups in self.upcoming.items():
            keep = []
            for t, sn in ups:
                if t <= now:
                    add.append(sn)
                else:
                    keep.append((t, sn))
            self.upcoming[g] = keep
        if add:
            resize_cluster(self.sim, add, [])
            if self.sim.daemonsets is not None:   # the DaemonSet controller sees the new nodes
                self.sim.daemonsets.manage(sn.node for sn in add)

    # --- scale-down ----------------------------------------------------------------------------
    def _blocks(self, sp: SimPod, everyone: list[tuple[Any, bool]]) -> str | None:
        from .disruption import eviction_allowed

        pod = sp.pod
        if (pod.metadata.annotations or {}).get(SAFE_TO_EVICT) == "false":
            return "NotSafeToEvictAnnotation"
        if not sp.owner or sp.owner not in self.sim.controllers:
            return "NotReplicated"
        if pod.metadata.namespace == "kube-system" and not any(
                p.metadata.namespace == "kube-system" for p in self.sim.sched.pdbs):
            return "UnmovableKubeSystemPod"
        if not eviction_allowed(pod, self.sim.sched.pdbs, everyone):
            return "NotEnoughPdb"
        return None

    def scale_down(self, now: float) -> None:
        """``Planner.UpdateClusterState`` then ``NodesToDelete`` and the actuator's budgets
        (:mod:`.ca_planner`): the autoscaled nodes at or below the utilization threshold and not
        recently unremovable are simulated in the planner's order (empty nodes, then the last
        scan's unneeded ones) until its limit of removable nodes is reached."""
        sim = self.sim
        cs = sim.cluster
        planner = self.planner
        planner.begin(now, cs.names)
        cpu_j, mem_j = cs.rindex.get("cpu"), cs.rindex.get("memory")
        everyone: list[tuple[Any, bool]] | None = None
        free = cs.free.copy()
        npods = cs.npods.copy()
        self._fits = {}
        # utilization: max of the cpu and memory requests over allocatable
        util = np.zeros(cs.n)
        for j in (cpu_j, mem_j):
            if j is not None:
                a = cs.alloc[:, j]
                util = np.maximum(util, np.divide(cs.requested[:, j], a, out=np.zeros(cs.n), where=a > 0))
        if self.flags.ignore_daemon_sets_utilization:
            self._without_daemon_sets(util)
        # a node with node-local ResourceSlices: the highest utilization of its device pools instead
        unknown = self._dra_utilization(util) if sim.dra is not None else set()
        threshold = self.flags.scale_down_utilization_threshold
        eligible = [i for i, sn in enumerate(sim.sim_nodes) if sn.group in self.groups and i not in unknown
                    and not planner.recently_unremovable(cs.names[i]) and util[i] <= threshold]
        order = order_candidates(eligible, self._empty, lambda i: cs.names[i] in planner.unneeded)
        limit = planner.limit()
        busy: set[int] = set()   # the nodes found removable in this scan are no destination
        trials: DrainScan | None = None
        # a pod whose fit depends on other pods takes the plain walk over a fork of the cluster
        # checked with the scheduler's Filter plugins (the fast path knows requests and node-local
        # checks only)
        fork = self._fork() if self._drain_needs_filter(order) else None
        if self.fast_drain and fork is None:
            trials = DrainScan(free, npods, cs.pods_alloc, cs.unschedulable, lambda sp: cs.amounts(sp.pod).bound,
                               self._local_fit())
            trials.set_busy(busy)
        removable: list[str] = []
        for i in order:
            if len(removable) >= limit:
                break
            name = cs.names[i]
            residents = self._to_move(i)
            ok = True
            if residents:
                if everyone is None:   # only a PDB reads it
                    everyone = ([(p.pod, p.phase == "Running") for p in sim.by_uid.values()]
                                if sim.sched.pdbs else [])
                ok = all(self._blocks(sp, everyone) is None for sp in residents)
                if ok:   # the pods must fit the other nodes (first fit, requests and pod count)
                    ok = (trials.place_elsewhere(i, residents) if trials is not None
                          else self._place_elsewhere(i, residents, free, npods, busy, fork))
            if not ok:
                planner.mark_unremovable(name, now)
                continue
            busy.add(i)
            if trials is not None:
                trials.mark_busy(i, True)
            removable.append(name)
        planner.finish(removable, now)
        if now - self.last_scale_up < self.flags.scale_down_delay_after_add:
            return
        # RemovableAt: the node groups' target sizes (upcoming nodes included) above their minimum
        sizes = self.group_sizes()
        for g, ups in self.upcoming.items():
            sizes[g] += len(ups)
        empty: list[tuple[str, str]] = []
        drain: list[tuple[str, str]] = []
        for want_empty in (True, False):
            for name in removable:
                i = cs.index[name]
                if self._empty(i) != want_empty or not planner.unneeded_long_enough(name, now):
                    continue
                g = sim.sim_nodes[i].group
                if sizes[g] <= self.groups[g].min_size:
                    continue
                sizes[g] -= 1
                (empty if want_empty else drain).append((name, g))
        empty_names, drain_names = crop(empty, drain, self.flags.planner)
        remove = empty_names + drain_names
        if not remove:
            return
        for name in drain_names:
            i = cs.index[name]
            for sp in self._to_move(i):
                sim.delete_pod(sp, "DrainedByClusterAutoscaler",
                               f"evicted by the cluster autoscaler to scale down node {name}")
        for name in remove:   # DaemonSet and mirror pods go with their node
            for sp in list(sim.residents[cs.index[name]].values()):
                sim.delete_pod(sp, "NodeDeleted", f"node {name} deleted by the cluster autoscaler")
        for name in remove:
            planner.unneeded.pop(name, None)
            self.scale_downs.append({"time": now, "node": name, "nodeGroup": sim.sim_nodes[cs.index[name]].group,
                                     "empty": name in empty_names})
        resize_cluster(sim, [], remove)

    def _to_move(self, i: int) -> list[SimPod]:
        """The pods of node ``i`` a drain moves: all but DaemonSet and mirror pods (drainability
        rules ``daemonset`` and ``mirror``: skipped — they neither block nor move)."""
        res = self.sim.residents[i]
        if not res:
            return []
        return [sp for sp in res.values() if not self._skipped(sp)]

    def _empty(self, i: int) -> bool:
        """Node ``i`` has no pod a drain would move (upstream's empty node)."""
        return not any(not self._skipped(sp) for sp in self.sim.residents[i].values())

    def _skipped(self, sp: SimPod) -> bool:
        """:func:`_skipped_in_drain`, kept by pod uid."""
        memo = self._skip_memo
        skip = memo.get(sp.pod.uid)
        if skip is None:
            if len(memo) > 100_000:
                memo.clear()
            skip = memo[sp.pod.uid] = _skipped_in_drain(sp.pod)
        return skip

    def _without_daemon_sets(self, util: Any) -> None:
        """``--ignore-daemonsets-utilization``: a node's DaemonSet pods leave both its requests
        and its allocatable (``CalculateUtilizationOfResource``), for cpu and memory."""
        cs = self.sim.cluster
        for i, res in enumerate(self.sim.residents):
            ds = [sp for sp in res.values() if is_daemon_set_pod(sp.pod)]
            if not ds or self.sim.sim_nodes[i].group not in self.groups:
                continue
            top = 0.0
            for r in ("cpu", "memory"):
                j = cs.rindex.get(r)
                if j is None:
                    continue
                skip = sum(int(cs.amounts(sp.pod).bound[j]) for sp in ds)
                room = int(cs.alloc[i, j]) - skip
                if room > 0:
                    top = max(top, (int(cs.requested[i, j]) - skip) / room)
            util[i] = top

    def _dra_utilization(self, util: Any) -> set[int]:
        """``utilization.Calculate`` with DRA (always on in 1.36): an autoscaled node with
        node-local ResourceSlices is as utilized as its most used device pool, whatever its cpu
        and memory (:func:`.ca_dra.highest_dynamic_resource_utilization`, the devices of its
        pods' claims). Returns the nodes whose utilization cannot be worked out (a pool's
        newest generation incomplete): upstream leaves them unremovable."""
        from .ca_dra import UtilizationError, highest_dynamic_resource_utilization

        sim = self.sim
        by_node: dict[str, list[Any]] = {}
        for s in sim.sched.handle.objects.get("ResourceSlice", ()):
            name = (s.get("spec") or {}).get("nodeName")
            if name:
                by_node.setdefault(name, []).append(s)
        unknown: set[int] = set()
        if not by_node:
            return unknown
        for i, name in enumerate(sim.cluster.names):
            local = by_node.get(name)
            if not local or sim.sim_nodes[i].group not in self.groups:
                continue
            claims: dict[tuple[str, str], Any] = {}
            for sp in sim.residents[i].values():
                for c in sim.dra.resource_claims_of(sp.pod):
                    claims[(c.namespace or "default", c.name)] = c
            try:
                util[i] = highest_dynamic_resource_utilization(local, claims.values())
            except UtilizationError:
                unknown.add(i)
        return unknown

    def _local_fit(self) -> Any:
        """:func:`node_local_fit` by node index, answering at once for a pod without node selector
        or affinity on a node without NoSchedule/NoExecute taints (nothing to check)."""
        cs = self.sim.cluster
        gates = self.sim.gates
        tainted = [any(t.effect in ("NoSchedule", "NoExecute") for t in info.node.spec.taints) for info in cs.infos]

        def fit(sp: SimPod, k: int) -> bool:
            pod = sp.pod
            if not tainted[k] and not pod.spec.node_selector and pod.spec.affinity is None:
                return True
            return node_local_fit(pod, cs.infos[k].node, gates)

        return fit

    def _first_fit(self, sp: SimPod, free: Any, npods: Any, skip: Any, base: tuple[Any, Any] | None = None,
                   fork: SnapshotFilter | None = None) -> bool:
        """Put ``sp`` on the first node (node-tree order) whose free requests, pod slots and
        node-local checks take it, outside ``skip``; ``free``/``npods`` are updated.

        Within one scan the committed free room (``base``, default ``free``/``npods``) only
        shrinks (a drain trial works on a copy, a failed one is dropped), so the nodes that fit a
        pod shape in it are worked out once per shape (``self._fits``) and only those are looked
        at again. The shortlist comes from the committed room, never from a trial's copy: a node
        a failed trial filled has its room back for the next trial."""
        cs = self.sim.cluster
        vec = cs.amounts(sp.pod).bound
        key = vec.tobytes()
        cand = self._fits.get(key)
        if cand is None:
            bfree, bnpods = base if base is not None else (free, npods)
            cols = np.flatnonzero(vec)
            ok = (bnpods < cs.pods_alloc) & ~cs.unschedulable
            if len(cols):
                ok &= (bfree[:, cols] >= vec[cols]).all(axis=1)
            cand = self._fits[key] = (np.flatnonzero(ok).tolist(), cols, vec[cols])
        nodes, cols, want = cand
        alloc = cs.pods_alloc
        for k in nodes:
            if k in skip or npods[k] >= alloc[k]:
                continue
            if len(cols) and not (free[k, cols] >= want).all():
                continue
            if not node_local_fit(sp.pod, cs.infos[k].node, self.sim.gates):
                continue
            if fork is not None and (self._routed(sp) or fork.anti) and not fork.fits_existing(sp.pod, cs.names[k]):
                continue
            free[k] -= vec
            npods[k] += 1
            if fork is not None:
                fork.add_pod(sp.pod, cs.names[k])
            return True
        return False

    def _place_elsewhere(self, skip: int, pods: list[SimPod], free: Any, npods: Any, busy: set[int],
                         fork: SnapshotFilter | None = None) -> bool:
        """The drain simulation: every pod of node ``skip`` finds room on a node that is neither
        it nor another unneeded node (``busy``); the room is taken only if all of them do. With
        ``fork``, the pods leave the node in it first and each place is checked with the
        scheduler's Filter plugins (``SimulateNodeRemoval``'s ``findPlaceFor``); a failed trial
        leaves the fork as it was."""
        trial_free, trial_n = free.copy(), npods.copy()
        others = busy | {skip}
        mark = fork.mark() if fork is not None else 0
        if fork is not None:
            name = self.sim.cluster.names[skip]
            for sp in pods:
                fork.remove_pod(sp.pod, name)
        for sp in pods:
            if not self._first_fit(sp, trial_free, trial_n, others, base=(free, npods), fork=fork):
                if fork is not None:
                    fork.revert(mark)
                return False
        free[:] = trial_free
        npods[:] = trial_n
        return True

    def _drain_needs_filter(self, candidates: list[int]) -> bool:
        """Does a pod of a node checked for removal in this scan need the Filter plugins: a pod of
        the cluster with required anti-affinity, or a resident whose fit depends on other pods."""
        if self.sim.cluster.pods_with_required_anti_affinity:
            return True
        residents = self.sim.residents
        return any(self._routed(sp) and not self._skipped(sp) for i in candidates for sp in residents[i].values())

    # --- the loop ------------------------------------------------------------------------------
    def run_once(self, now: float) -> None:
        """``StaticAutoscaler.RunOnce``: scale up when pods are unschedulable, else consider scale-down."""
        before = len(self.scale_ups)
        self.scale_up(now)
        if len(self.scale_ups) == before and self.flags.scale_down_enabled:
            self.scale_down(now)

    def result(self) -> dict[str, Any]:
        failed_on_added: dict[str, int] = {}
        for sp in self.sim.pods:
            if sp.phase == "Failed" and sp.node != -1 and sp.reason not in ("Evicted", "Preempted", "OOMKilled"):
                if self.sim.node_name(sp.node) in self.added:
                    failed_on_added[sp.reason] = failed_on_added.get(sp.reason, 0) + 1
        return {"estimator": self.flags.estimator, "expander": ",".join(self.flags.expander),
                "scaleUps": self.scale_ups, "scaleDowns": self.scale_downs,
                "nodesAdded": len(self.added), "podsRejectedOnAddedNodes": failed_on_added,
                "finalSizes": self.group_sizes()}


def resize_cluster(sim: Simulator, add: list[SimNode], remove: list[str]) -> None:
    """Nodes join or leave: the scheduler is started again over the new node list (appended nodes
    last, as the node tree receives them), its cache taking over every bound pod where it runs,
    nominations kept, the rotation of ``nextStartNodeIndex`` carried over; the simulator's per-node
    state follows the nodes by name. Removed nodes must be empty. Pods parked as unschedulable hear
    ``NodeAdd`` for each new node."""
    from ..scheduler import Scheduler
    from ..scheduler.backend.queue import NODE_ADD

    old = sim.sched
    gone = set(remove)
    old_names = list(sim.cluster.names)
    state = {name: (sim.sim_nodes[i], sim.kubelets[i], sim.residents[i]) for i, name in enumerate(old_names)}
    pressure = sim.pressure.nodes if sim.pressure is not None else None
    pressure_by_name = {old_names[i]: n for i, n in pressure.items()} if pressure is not None else {}
    for name in gone:
        i = sim.cluster.index[name]
        if sim.residents[i]:
            raise RuntimeError(f"node {name} still runs pods")
        sim.retire_node(name)
    nodes = [sn for sn in sim.sc.nodes if sn.node.metadata.name not in gone] + list(add)
    sim.sc.nodes = nodes
    dra_slices = _published_slices(sim, add, gone)
    for sn in add:
        state[sn.node.metadata.name] = (sn, None, {})
    new = Scheduler(old.profile, [n.node for n in nodes], old.gates, old.handle.seed,
                    objects=old.handle.objects, namespaces=old.cluster.snapshot.namespaces,
                    pdbs=old.handle.pdbs, reuse_verdicts=old.reuse_verdicts)
    new.handle.seed = old.handle.seed
    new.handle.origins = getattr(old.handle, "origins", None)
    new.next_start = old.next_start % max(new.cluster.n, 1)
    names = new.cluster.names
    sim.sched = new
    sim.cluster = new.cluster
    sim.queue.plugins = {p.name: p for p, _ in new.plugins}
    from ..scheduler.plugins.dynamicresources import NAME as DYNAMIC_RESOURCES
    from .gpushare import NAME as GPU_SHARE

    sim.gpu = new.framework.plugin(GPU_SHARE)
    old_dra = sim.dra
    sim.dra = new.framework.plugin(DYNAMIC_RESOURCES)
    if old_dra is not None and sim.dra is not None and old_dra._dra is not None:   # it had read the objects
        from .ca_dra import carry_over

        carry_over(old_dra, sim.dra, dra_slices if dra_slices is not None else new.handle.objects.get("ResourceSlice", []))
    sim.sim_nodes = [state[n][0] for n in names]
    sim.kubelets = [state[n][1] for n in names]
    sim.residents = [state[n][2] for n in names]
    if sim.node_dra is not None:
        sim.node_dra.reindex(old_names, names)
    index = new.cluster.index
    for sp in sim.pods:
        if sp.node >= 0:
            name = old_names[sp.node]
            sp.node = index[name] if name in index else sim.retired_index(name)
    if old.cluster.resources == new.cluster.resources:
        new.cluster.adopt(old.cluster)   # the bound pods move over as they are
    else:
        for i, res in enumerate(sim.residents):
            for sp in res.values():
                new.bind(sp.pod, names[i])
    for sp in sim.by_uid.values():
        nn = sp.pod.status.nominated_node_name
        if sp.phase == "Pending" and nn and nn in index:
            new.nominate(sp.pod, nn)
    if pressure is not None:
        pressure.clear()
        for name, n in pressure_by_name.items():
            if name in index:
                pressure[index[name]] = n
    for sn in add:
        sim.queue.on_event(NODE_ADD, sim.now, new=sn.node)


def _published_slices(sim: Simulator, add: list[SimNode], gone: set[str]) -> list[Any] | None:
    """The cluster's ResourceSlices after nodes join (their drivers publish) and leave (the
    slices a deleted node's drivers published are garbage-collected with it, their owner being
    the Node); ``sim.dra_devices`` follows. None when nothing changed."""
    objects = sim.sched.handle.objects   # the scheduler's objects, handed to the next one
    new = [s for sn in add for s in sn.slices]
    had = objects.get("ResourceSlice")
    if not new and not (had and gone):
        return None
    kept_idx = [i for i, s in enumerate(had or ()) if ((s.get("spec") or {}).get("nodeName")) not in gone]
    origins = sim.sc.origins.get("ResourceSlice")
    slices = [had[i] for i in kept_idx] + new if had else list(new)
    objects["ResourceSlice"] = slices
    sim.sc.objects["ResourceSlice"] = list(slices)   # the per-node figures read the scenario's
    if origins is not None or new:
        old_origins = origins or []
        sim.sc.origins["ResourceSlice"] = ([old_origins[i] if i < len(old_origins) else "-" for i in kept_idx]
                                           + ["the Cluster Autoscaler's new node"] * len(new))
    sim.dra_devices = sum(len((o.get("spec") or {}).get("devices") or ()) for o in slices)
    return slices


def _skipped_in_drain(pod: Any) -> bool:
    """DaemonSet and mirror pods: the drain neither moves them nor is blocked by them."""
    return is_daemon_set_pod(pod) or is_mirror_pod(pod)
