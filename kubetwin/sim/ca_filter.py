"""The Cluster Autoscaler's scheduling simulation with the scheduler's own Filter plugins: a
forked snapshot of the simulated cluster plus the estimator's nodes made from a node group's
template, and the profile's PreFilter and Filter plugins run on it for one pod and one node.

Why: inter-pod affinity/anti-affinity and hard topology spread constraints depend on the pods of
other nodes, so the node-local predicate (requests, node affinity, taints) cannot answer them.
Upstream's estimator asks the scheduler framework on the forked ``ClusterSnapshot``; so does this
module, through kubetwin's own framework runtime and plugins (:mod:`kubetwin.scheduler`),
instantiated over a handle whose snapshot is the fork.

Upstream (read, not copied): cluster-autoscaler 1.36 ``simulator/clustersnapshot/predicate/
plugin_runner.go`` (``RunFiltersOnNode``: PreFilter over the whole snapshot, then Filter on the
one node; ``RunFiltersUntilPassingNode``: the first node that passes), ``simulator/
node_info_utils.go`` (``SanitizedNodeInfo``: the template under a new name, the hostname label
set to it), ``estimator/binpacking_estimator.go`` (``isPodUsingHostNameTopologyKey``,
``hasTopologyConstraintError``: a pod spread by hostname that fails the last node on its spread
constraint is tried on every other node of the snapshot, existing nodes included).

Only pods whose placement depends on other pods come here (:func:`needs_filter`); the rest keep
the node-local fast path. Pods with ResourceClaims come here too: the fork runs DynamicResources
over a fork of the live plugin's claims and devices, estimator nodes carry their group's
ResourceSlices, and pods placed in or removed from the fork reserve or release their claims
there (:mod:`.ca_dra`, upstream's DRA snapshot). Stated differences: the "first passing node"
walk starts at the first node each time (upstream rotates its start after each success);
kubetwin's GPUShare is left out of the fork (:data:`NOT_IN_FORK`); a template node's DaemonSet
pods hold no devices in the fork (upstream's forced DaemonSet pods do not either; an example
node's pods with allocated claims would have them sanitized onto the template).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..autoscale import clusterautoscaler as CA
from ..model.meta import to_builtins
from ..model.node import Node, node_from_dict
from ..model.pod import Pod
from ..scheduler.framework.interface import CycleState, Handle
from ..scheduler.framework.runtime import Framework, PreFilterOutcome, plugin_list
from ..scheduler.framework.status import Code, Status
from ..scheduler.framework.types import NodeInfo, PodInfo, Snapshot
from ..scheduler.plugins.dynamicresources import NAME as DYNAMIC_RESOURCES
from ..scheduler.plugins.podtopologyspread import NAME as POD_TOPOLOGY_SPREAD
from ..scheduler.plugins.podtopologyspread.plugin import ERR_REASON_CONSTRAINTS_NOT_MATCH
from .daemonset_controller import TemplatePod
from .gpushare import NAME as GPU_SHARE

if TYPE_CHECKING:
    from ..scheduler.backend.cache import ClusterState

HOSTNAME = "kubernetes.io/hostname"


def has_required_pod_affinity(pod: Pod) -> bool:
    """The pod's own required pod affinity or anti-affinity terms."""
    aff = pod.spec.affinity
    if aff is None:
        return False
    return any(a is not None and a.required_during_scheduling_ignored_during_execution
               for a in (aff.pod_affinity, aff.pod_anti_affinity))


def needs_filter(pod: Pod, cluster: ClusterState, framework: Framework) -> bool:
    """Does the pod's fit depend on pods of other nodes: its own constraints
    (:func:`has_inter_pod_constraints`) or a pod of the cluster with required anti-affinity (which
    may repel it)."""
    return bool(cluster.pods_with_required_anti_affinity) or has_inter_pod_constraints(pod, framework)


def has_inter_pod_constraints(pod: Pod, framework: Framework) -> bool:
    """The pod's required pod (anti-)affinity, or its hard spread constraints (its own, or the
    profile's defaults that apply to it)."""
    if has_required_pod_affinity(pod):
        return True
    pts: Any = framework.plugin(POD_TOPOLOGY_SPREAD)
    if pts is None:
        return False
    return bool(pts.constraints(pod, "DoNotSchedule"))


#: plugins left out of the fork's framework: their state is the devices allocated in the live
#: cluster, which a fresh instance over the fork would not know (GPU share is refused together
#: with the Cluster Autoscaler; DynamicResources joins as a fork of the live plugin, :mod:`.ca_dra`)
NOT_IN_FORK = frozenset({GPU_SHARE})


def _fork_plugins(profile: Any, handle: Handle, dra: Any = None) -> list[tuple[Any, int]]:
    """The profile's modelled plugins, but :data:`NOT_IN_FORK`, instantiated over ``handle``;
    DynamicResources as a fork of ``dra`` (left out without one)."""
    from ..scheduler.plugins.registry import NOT_MODELLED, plugin_class
    from .ca_dra import fork_plugin

    out: list[tuple[Any, int]] = []
    for name, weight in profile.plugins:
        if name in NOT_MODELLED or name in NOT_IN_FORK:
            continue
        if name == DYNAMIC_RESOURCES:
            if dra is not None:
                out.append((fork_plugin(dra, handle), weight))
            continue
        cls = plugin_class(name, path="profile")
        out.append((cls(profile.args_of(name, cls), handle), weight))
    return out


def uses_hostname_spread(pod: Pod) -> bool:
    """``isPodUsingHostNameTopologyKey``: one of the pod's own spread constraints is by hostname."""
    return any(c.topology_key == HOSTNAME for c in pod.spec.topology_spread_constraints)


def sanitized_node(template: Node, name: str) -> Node:
    """``SanitizedNodeInfo``: the template node under ``name``, its hostname label ``name``."""
    obj = {**to_builtins(template), "apiVersion": "v1", "kind": "Node"}
    meta = dict(obj.get("metadata") or {})
    meta["name"] = name
    meta["labels"] = {**(meta.get("labels") or {}), HOSTNAME: name}
    obj["metadata"] = meta
    return node_from_dict(obj, checked=True)


class SnapshotFilter:
    """The profile's PreFilter/Filter plugins over a fork of the simulated cluster.

    The fork starts as the cluster's node infos (shared until a pod is added to one, then
    copied); estimator nodes join it as they are first asked about (:meth:`fits`), their pods
    taken from the estimator's :class:`~kubetwin.autoscale.clusterautoscaler.NewNode` (the
    estimator places, the fork follows)."""

    def __init__(self, cluster: ClusterState, profile: Any, handle: Handle, base: SnapshotFilter | None = None,
                 dra: Any = None, template_slices: Mapping[str, Sequence[Mapping[str, Any]]] | None = None):
        """``base``: a fork to start from (its node infos are shared until changed here);
        ``dra``: the live DynamicResources plugin the fork's own starts from (``base``'s when
        given); ``template_slices``: per template node name, the slices its group publishes."""
        self.cluster = cluster
        infos = list(base.handle.snapshot.node_infos) if base is not None else list(cluster.infos)
        self.handle: Handle = Handle(snapshot=Snapshot(infos, dict(cluster.snapshot.namespaces)),
                             gates=handle.gates, accounting=cluster.accounting, objects=handle.objects,
                             seed=handle.seed, origins=handle.origins, pdbs=handle.pdbs,
                             live_nrt=handle.live_nrt)
        source = base.dra if base is not None else dra
        self.framework = Framework(profile, self.handle, _fork_plugins(profile, self.handle, source))
        #: the fork's DynamicResources (None: no DRA in the cluster)
        self.dra: Any = self.framework.plugin(DYNAMIC_RESOURCES)
        self.template_slices: Mapping[str, Sequence[Mapping[str, Any]]] = (
            (base.template_slices if base is not None else template_slices) or {})
        self._dra_marks: dict[int, Any] = {}
        self._mine: set[str] = set()   # node infos of the fork (copied or added): safe to change
        self._synced: dict[str, int] = {}   # estimator node -> how many of its pods the fork holds
        #: the last Filter failure (:meth:`fits`), for the hostname-spread retry
        self.last_status: Status | None = None
        #: a pod with required anti-affinity joined the fork: every pod's fit now depends on it
        self.anti: bool = base.anti if base is not None else False
        #: pod changes on the cluster's nodes, in order: (added?, node, pod)
        self._log: list[tuple[bool, str, Pod]] = []
        #: bumped by every change of the fork; the last PreFilter run is kept for one pod at one
        #: generation (the estimator asks about the same pod on node after node)
        self._gen = 0
        self._pre_memo: tuple[Pod, int, CycleState, PreFilterOutcome] | None = None

    # --- the fork ----------------------------------------------------------------------------
    def _writable(self, name: str) -> NodeInfo:
        snap = self.handle.snapshot
        ni = snap.by_name[name]
        if name not in self._mine:
            ni = ni.clone()
            snap.node_infos[snap.index[name]] = ni
            snap.by_name[name] = ni
            self._mine.add(name)
        return ni

    def add_pod(self, pod: Pod, name: str) -> None:
        self._add(self._writable(name), pod)
        self._log.append((True, name, pod))

    def remove_pod(self, pod: Pod, name: str) -> None:
        """The pod leaves the cluster's node ``name`` in the fork (a drained node's pods); its
        claims lose the reservation, and their allocation when the pod owns them or nobody
        else uses them (``UnreservePodClaims``)."""
        self._writable(name).remove_pod(pod)
        self._gen += 1
        self._log.append((False, name, pod))
        if self.dra is not None and pod.spec.resource_claims:
            self.dra.unreserve(pod)

    def mark(self) -> int:
        """A point :meth:`revert` goes back to (pods added to or removed from cluster nodes,
        and the DRA snapshot's claims)."""
        at = len(self._log)
        if self.dra is not None:
            from .ca_dra import checkpoint

            self._dra_marks = {at: checkpoint(self.dra)}   # trials do not nest: the latest only
        return at

    def revert(self, mark: int) -> None:
        """Undo the pod changes on cluster nodes made since ``mark`` (a failed drain trial)."""
        while len(self._log) > mark:
            added, name, pod = self._log.pop()
            ni = self._writable(name)
            if added:
                ni.remove_pod(pod)
                self._gen += 1
            else:
                self._add(ni, pod, reserve=False)
        cp = self._dra_marks.pop(mark, None)
        if cp is not None:
            from .ca_dra import restore

            restore(self.dra, cp)
            self._gen += 1

    def _add(self, ni: NodeInfo, pod: Pod, reserve: bool = True) -> None:
        pi = PodInfo(pod)
        ni.add_pod(pi)
        self._gen += 1
        if pi.has_required_anti_affinity:
            self.anti = True
        if reserve and self.dra is not None and pod.spec.resource_claims:
            # Reserve in the snapshot: the claims take the devices Filter found on this node
            self.dra.reserve(pod, ni.name)

    def _sync(self, node: CA.NewNode, template: Node, fork_name: Callable[[CA.NewNode], str]) -> NodeInfo:
        snap = self.handle.snapshot
        name = fork_name(node)
        ni = snap.by_name.get(name)
        if ni is None:
            ni = NodeInfo(sanitized_node(template, name), self.cluster.accounting)
            snap.index[name] = len(snap.node_infos)
            snap.node_infos.append(ni)
            snap.by_name[name] = ni
            self._mine.add(name)
            self._synced[name] = 0
            self._gen += 1
            raw = self.template_slices.get(template.metadata.name)
            if raw and self.dra is not None:
                from .ca_dra import add_slices, sanitized_node_resource_slices

                add_slices(self.dra, sanitized_node_resource_slices(raw, name, name))
        done = self._synced[name]
        for p in node.pods[done:]:
            # a template node's own pods (DaemonSet pods) join without claims allocated here:
            # upstream's podsExpectedOnFreshNode adds them without their ResourceClaims
            self._add(ni, p.payload.pod, reserve=not isinstance(p.payload, TemplatePod))
        self._synced[name] = len(node.pods)
        return ni

    # --- the plugins -------------------------------------------------------------------------
    def _pre_filter(self, pod: Pod) -> tuple[CycleState, PreFilterOutcome]:
        """``RunPreFilterPlugins`` over the fork, run again only when the pod or the fork changed."""
        memo = self._pre_memo
        if memo is not None and memo[0] is pod and memo[1] == self._gen:
            return memo[2], memo[3]
        state = CycleState()
        pre = self.framework.run_pre_filter_plugins(state, pod, self.handle.snapshot.node_infos)
        self._pre_memo = (pod, self._gen, state, pre)
        return state, pre

    def check(self, pod: Pod, ni: NodeInfo) -> Status | None:
        """``RunFiltersOnNode``: PreFilter over the fork, then Filter on ``ni``; the failure or None."""
        state, pre = self._pre_filter(pod)
        if not pre.status.is_success:
            return pre.status
        if pre.allowed is not None and ni.name not in pre.allowed:
            return Status(Code.UnschedulableAndUnresolvable,
                          (f"node(s) didn't satisfy plugin(s) {plugin_list(pre.restricting)}",))
        return self.framework.run_filter_plugins(state, pod, ni, pre.skipped)

    def first_passing(self, pod: Pod, skip: str, accept: Callable[[str], bool] | None = None) -> str | None:
        """``RunFiltersUntilPassingNode`` over every node of the fork but ``skip``; ``accept``
        (kubetwin's kubelet-aware estimator) must also take the node."""
        nodes = self.handle.snapshot.node_infos
        state, pre = self._pre_filter(pod)
        if not pre.status.is_success:
            return None
        for ni in list(nodes):
            if ni.name == skip or (pre.allowed is not None and ni.name not in pre.allowed):
                continue
            if self.framework.run_filter_plugins(state, pod, ni, pre.skipped) is None and (
                    accept is None or accept(ni.name)):
                return ni.name
        return None

    def fits(self, pod: Pod, node: CA.NewNode, template: Node, fork_name: Callable[[CA.NewNode], str]) -> bool:
        """May ``pod`` go on the estimator node ``node`` (with the fork as it stands)?"""
        ni = self._sync(node, template, fork_name)
        st = self.check(pod, ni)
        self.last_status = st
        return st is None

    def fits_existing(self, pod: Pod, name: str) -> bool:
        """May ``pod`` go on the cluster's node ``name`` (with the fork as it stands)?"""
        return self.check(pod, self.handle.snapshot.by_name[name]) is None

    def retry_elsewhere(self, pod: Pod, last: CA.NewNode, nodes: list[CA.NewNode], template: Node,
                        fork_name: Callable[[CA.NewNode], str],
                        accept: Callable[[CA.NewNode | str], bool] | None = None) -> CA.NewNode | str | None:
        """The estimator's retry for a pod spread by hostname that failed the last node on its
        spread constraints: the first other node of the fork that passes (an estimator node, or
        an existing node's name, the pod then added to the fork there); None otherwise.
        ``accept`` (the kubelet-aware estimator's kubelet admission) is asked of each node that
        passes, with the estimator node or the existing node's name."""
        if not uses_hostname_spread(pod) or not self.failed_on_spread():
            return None
        by_fork = {}
        for n in nodes:
            self._sync(n, template, fork_name)
            by_fork[fork_name(n)] = n
        name = self.first_passing(pod, fork_name(last),
                                  None if accept is None else (lambda n: accept(by_fork.get(n, n))))
        if name is None:
            return None
        if name in by_fork:
            return by_fork[name]
        self.add_pod(pod, name)
        return name

    def failed_on_spread(self) -> bool:
        """``hasTopologyConstraintError``: the last failure is the spread constraints' reason."""
        st = self.last_status
        return st is not None and ERR_REASON_CONSTRAINTS_NOT_MATCH in st.reasons


def estimator_predicates(fork: SnapshotFilter, template: Node, group: str, *,
                         plain: CA.FitPredicate | None = None,
                         routed: Callable[[CA.CAPod], bool] | None = None,
                         accept: Callable[[CA.CAPod, CA.NewNode | str], bool] | None = None,
                         ) -> tuple[CA.FitPredicate, CA.Elsewhere]:
    """The binpacking estimator's fit predicate and hostname-spread retry over ``fork`` for one
    node group (``template``): the full Filter for pods ``routed`` says need it (every pod when
    None), ``plain`` for the rest. Each pod's payload carries its ``pod``. ``accept`` is asked
    of each node the retry finds passing (the kubelet-aware estimator's admission)."""

    def fork_name(node: CA.NewNode) -> str:
        return f"template-node-for-{group}-{node.name}"

    def full(pod: CA.CAPod) -> bool:
        return plain is None or routed is None or routed(pod) or fork.anti

    def fits(pod: CA.CAPod, node: CA.NewNode) -> bool:
        if full(pod):
            return fork.fits(pod.payload.pod, node, template, fork_name)
        assert plain is not None
        return plain(pod, node)

    def elsewhere(pod: CA.CAPod, last: CA.NewNode, nodes: Sequence[CA.NewNode]) -> CA.NewNode | str | None:
        if not full(pod):
            return None
        return fork.retry_elsewhere(pod.payload.pod, last, list(nodes), template, fork_name,
                                    None if accept is None else (lambda n: accept(pod, n)))

    return fits, elsewhere
