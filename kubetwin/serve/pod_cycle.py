"""A running pod's scheduling cycle as kube-scheduler would run it *now*, with the pod taken off
its node: the ``rescheduled`` part of ``GET /api/v1/pods/{ns}/{name}`` (docs/serve.md).

The cycle that placed a running pod is in the past (kubetwin keeps no history of it), so the
drill-down answers the question kube-scheduler-simulator users ask of any pod — "what does the
scheduler think of this pod on each node?" — on today's cluster less the pod itself: its requests
no longer count on its node (``NodeInfo.RemovePod`` in ``pkg/scheduler/framework/types.go``), its
labels no longer match its own (anti-)affinity or spread terms, and the pod is the one a new
scheduling attempt would see (``spec.nodeName`` and ``status.nominatedNodeName`` cleared, as for a
pod recreated by its controller). The cycle is :func:`kubetwin.scheduler.run.run_cycle`, explained
per plugin and node exactly as for a pending pod (``kubetwin schedule -o json``), with each node's
kubelet verdict beside it — the pod's own node's kubelet replayed without the pod.

Nothing of the served cluster changes: the cycle reads a new :class:`ClusterInputs` sharing the
served nodes and objects, the kubelet of the pod's node is a replayed copy. The pod's
ResourceClaims keep their allocation (the claims are not deallocated), so a pod with claims is
scheduled as one whose claims are already allocated; its ``dra`` part is the running pod's.

Not an upstream module: kubetwin's own view over the cycle of ``pkg/scheduler/schedule_one.go``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from ..model.pod import Pod
    from ..scheduler.inputs import ClusterInputs
    from .cluster import ServedCluster

NOTE = ("Today's answer for this pod with it removed from its node: one scheduling cycle over the cluster as it "
        "is now, without this pod. It is not the cycle that placed the pod (that one is in the past).")


def as_new_pod(pod: Pod) -> Pod:
    """The pod as a new scheduling attempt sees it: not bound, not nominated."""
    spec = msgspec.structs.replace(pod.spec, node_name="")
    status = msgspec.structs.replace(pod.status, nominated_node_name="")
    return msgspec.structs.replace(pod, spec=spec, status=status)


def inputs_without(cluster: ServedCluster, pod: Pod) -> ClusterInputs:
    """The scheduler's view of the served cluster less ``pod`` (a new value; the served one is kept)."""
    from ..scheduler.inputs import ClusterInputs

    base = cluster.inputs()
    return ClusterInputs(base.nodes, [p for p in base.pods if p.key != pod.key], base.objects, base.origins)


def kubelet_verdicts_without(cluster: ServedCluster, pod: Pod, node: str) -> dict[str, Any]:
    """Each node's kubelet verdict for the pod; its own node's from a kubelet that admitted the
    node's other running pods, in order, and not this one."""
    from .kubelet_models import trial
    from .views import verdict_json

    new = as_new_pod(pod)
    verdicts: dict[str, Any] = {name: verdict_json(v) for name, v in cluster.kubelets.verdicts(cluster.nodes, new).items()}
    if cluster.kubelets.modelled(node):
        with cluster.lock:
            others = [p for p in cluster.bound.get(node, ()) if p.key != pod.key]
        kubelet, _ = cluster.kubelets.replay(node, others)
        verdicts[node] = verdict_json(trial(kubelet, new)[0])
    return verdicts


def rescheduled(cluster: ServedCluster, pod: Pod, node: str, *, seed: int = 0) -> dict[str, Any]:
    """The ``rescheduled`` part of a running pod's drill-down: ``scheduling`` and ``kubelet`` as a
    pending pod's, the ``note`` saying what it is, and whether the pick is the node it runs on."""
    from ..scheduler.run import run_cycle

    outcome = run_cycle(inputs_without(cluster, pod), as_new_pod(pod), cluster.gates, seed=seed)
    scheduling = outcome.to_json()
    return {"note": NOTE, "runsOn": node, "chosenNode": outcome.node, "sameNode": outcome.node == node,
            "scheduling": scheduling, "kubelet": kubelet_verdicts_without(cluster, pod, node)}
