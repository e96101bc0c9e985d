"""The DaemonSet controller in ``simulate``: each DaemonSet of the scenario runs one pod on every
node that should run it, from the start and on every node that joins later (the Cluster
Autoscaler's new nodes); and the pods a node group's template node starts with, as the Cluster
Autoscaler counts them.

Why: a node the autoscaler adds is not empty — its DaemonSet pods take their requests and a pod
slot first, and upstream's estimator counts them on the template node. Without them the
estimate is too small and utilization too low.

Upstream (read, not copied): ``pkg/controller/daemon/daemon_controller.go`` (``manage``: a pod for
every node that should run one and has none; the pod placement itself is
:mod:`.daemonset`); cluster-autoscaler 1.36 ``simulator/node_info_utils.go``
(``SanitizedTemplateNodeInfoFromNodeInfo`` / ``podsExpectedOnFreshNode``: a template built from
a real node of the group keeps that node's DaemonSet and mirror pods, and adds the pods of
DaemonSets not running there only with ``--force-ds`` or when the pod is
``system-node-critical`` and may preempt; a template from the node group itself —
``SanitizedTemplateNodeInfoFromNodeGroup``, no node of the group exists — gets every DaemonSet
that should run on it), ``utils/daemonset/daemonset.go`` (``GetDaemonSetPodsForNode``),
``utils/pod`` (``IsDaemonSetPod``: controlled by a DaemonSet; ``IsMirrorPod``: the
``kubernetes.io/config.mirror`` annotation).

Stated simplifications: a pod the controller creates is admitted and scheduled as every created
pod (the scheduler places it on its node through the node-name affinity the controller sets);
the controller does not recreate a daemon pod that ended or failed; the example node of a group
is its first node in the scheduler's node order (upstream takes the first ready node the lister
returns, and keeps templates in a cache).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..model.pod import Pod, pod_from_dict
from .daemonset import DaemonSet, daemon_pods, daemon_set

if TYPE_CHECKING:
    from .loop import Simulator

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
SYSTEM_NODE_CRITICAL = "system-node-critical"


def is_daemon_set_pod(pod: Pod) -> bool:
    """``IsDaemonSetPod``: the pod's controller is a DaemonSet."""
    return any(r.kind == "DaemonSet" and r.controller for r in pod.metadata.owner_references or ())


def is_mirror_pod(pod: Pod) -> bool:
    """``IsMirrorPod``: a kubelet's static pod as the API server shows it."""
    return MIRROR_ANNOTATION in (pod.metadata.annotations or {})


def daemon_set_uid(pod: Pod) -> str | None:
    """The UID of the DaemonSet controlling ``pod``, if any."""
    for r in pod.metadata.owner_references or ():
        if r.kind == "DaemonSet" and r.controller:
            return r.uid or f"DaemonSet/{pod.metadata.namespace or 'default'}/{r.name}"
    return None


def _preempting_system_node_critical(pod: Pod) -> bool:
    """``isPreemptingSystemNodeCritical``."""
    if pod.spec.priority_class_name != SYSTEM_NODE_CRITICAL:
        return False
    return pod.spec.preemption_policy in (None, "PreemptLowerPriority")


def _pods(dicts: Iterable[dict[str, Any]]) -> list[Pod]:
    from ..model.defaulting import api_defaults

    out = []
    for d in dicts:
        meta = d["metadata"]
        meta.setdefault("uid", f"{meta.get('namespace', 'default')}/{meta['name']}")
        out.append(api_defaults(pod_from_dict(d, checked=True)))
    return out


@dataclass(frozen=True)
class TemplatePod:
    """A pod a template node starts with (the estimator's payload: ``pod``)."""

    pod: Pod


class DaemonSetController:
    """The scenario's DaemonSets, creating their pods in the simulation."""

    def __init__(self, sim: Simulator, objects: Iterable[Mapping[str, Any]]):
        self.sim = sim
        self.sets: list[DaemonSet] = [daemon_set(o) for o in objects]
        self.ops = sim.gates.enabled("TaintTolerationComparisonOperators")

    def _running_on(self) -> dict[str, set[str]]:
        """Node name -> UIDs of the DaemonSets with a live pod there (bound, or pinned there
        by its node-name affinity and still pending)."""
        from .daemonset import daemon_pod_node

        out: dict[str, set[str]] = {}
        for sp in self.sim.pods:   # arrived or still to arrive (a snapshot's daemon pods)
            if sp.phase not in ("Pending", "Running"):
                continue
            uid = daemon_set_uid(sp.pod)
            if uid is None:
                continue
            node = self.sim.node_name(sp.node) if sp.node >= 0 else daemon_pod_node(
                {"spec": {"nodeName": sp.pod.spec.node_name,
                          "affinity": _affinity_dict(sp.pod)}})
            if node:
                out.setdefault(node, set()).add(uid)
        return out

    def manage(self, nodes: Iterable[Any]) -> int:
        """``manage`` for ``nodes`` (Node objects): a pod for each DaemonSet that should run on a
        node and has none there; returns how many pods were created."""
        from .loop import SimPod

        if not self.sets:
            return 0
        nodes = list(nodes)
        running = self._running_on()
        made = 0
        for ds in self.sets:
            has = {n for n, uids in running.items() if ds.uid in uids}
            for pod in _pods(daemon_pods(ds, nodes, has, comparison_operators=self.ops)):
                sp = SimPod(len(self.sim.pods), pod, self.sim.now, None, None)
                self.sim.pods.append(sp)
                self.sim._arrive(sp)
                made += 1
        return made

    # --- the Cluster Autoscaler's template node -----------------------------------------------
    def template_pods(self, template_node: Any, example: int | None, force: bool) -> list[Pod]:
        """:func:`pods_expected_on_fresh_node` with this controller's DaemonSets; ``example``:
        the index of a node of the group, None when the group has none."""
        pods = None if example is None else [sp.pod for sp in self.sim.residents[example].values()]
        return pods_expected_on_fresh_node(pods, self.sets, template_node, force, self.ops)


def pods_expected_on_fresh_node(example: Iterable[Pod] | None, sets: Iterable[DaemonSet], template_node: Any,
                                force: bool, comparison_operators: bool = False) -> list[Pod]:
    """``podsExpectedOnFreshNode``: the pods a new node of a group starts with. ``example``: the
    pods of a node of the group (its DaemonSet and mirror pods are taken; the other DaemonSets
    only with ``force`` or for a preempting ``system-node-critical`` pod); None: the group has
    no node (``SanitizedTemplateNodeInfoFromNodeGroup``), every DaemonSet that should run on
    the template is added."""
    out: list[Pod] = []
    have: set[str] = set()
    if example is not None:
        for pod in example:
            if pod.metadata.deletion_timestamp:
                continue
            if is_mirror_pod(pod) or is_daemon_set_pod(pod):
                out.append(pod)
            uid = daemon_set_uid(pod)
            if uid is not None:
                have.add(uid)
    force_all = force or example is None
    for ds in sets:
        if ds.uid in have:
            continue
        for pod in _pods(daemon_pods(ds, [template_node], set(), comparison_operators=comparison_operators)):
            if force_all or _preempting_system_node_critical(pod):
                out.append(pod)
    return out


def check_daemon_set(obj: Mapping[str, Any], where: str) -> None:
    """The pod a DaemonSet's controller would create, refused now as a pod of the scenario would
    be (amounts past the scheduler's int64 range)."""
    from ..errors import InputError
    from .amounts import check_pod_amounts

    ds = daemon_set(obj)
    base = ds.new_pod_dict()
    base["metadata"]["name"] = f"{ds.name}-probe"
    try:
        pod = pod_from_dict(base, where, checked=True)
        check_pod_amounts(pod, where)
    except InputError as exc:
        if exc.path and not exc.path.startswith("spec.template"):
            exc.path = f"spec.template.{exc.path}"
        raise


def _affinity_dict(pod: Pod) -> dict[str, Any] | None:
    from ..model.meta import to_builtins

    aff = pod.spec.affinity
    return to_builtins(aff) if aff is not None else None
