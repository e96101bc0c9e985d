"""What the HTTP API answers, as plain data: the cluster overview, a node's NUMA map with the pods
and containers on each CPU, memory block and device, a pod's drill-down, and the what-if
commands (``schedule``, ``admit``, ``explain``) over the served cluster.

Each answer is computed by the library the commands use: the scheduling cycle of
:mod:`kubetwin.scheduler` (``explain``ed per plugin and node, as ``kubetwin schedule -o json``),
the kubelet's admission (:class:`kubetwin.kubelet.admission.NodeAdmission`, reported by
:mod:`kubetwin.kubelet.report` as ``kubetwin admit -o json``), the pod's QoS and cgroup values
(:mod:`kubetwin.kubelet.qos`, :mod:`kubetwin.kubelet.cgroups`). A node's picture replays its
running pods into a fresh kubelet of its machine and configuration, so names are the pods' own.

Not an upstream module: kubetwin's own views.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    from ..kubelet.admission import NodeAdmission
    from ..model.pod import Pod
    from .cluster import ServedCluster
    from .kubelet_models import Verdict

#: pending pods listed with their scheduling message (each costs a scheduling cycle)
PENDING_LIMIT = 200


def _amounts(res: Any) -> dict[str, str]:
    return {k: str(v) for k, v in res.items()}


def overview(cluster: ServedCluster) -> dict[str, Any]:
    from .ui_facts import node_facts

    models = cluster.kubelets
    facts = node_facts(cluster)
    nodes = []
    for name, n in cluster.nodes.items():
        node = n.node
        nodes.append({"name": name, "group": n.group, "labels": dict(node.metadata.labels),
                      "allocatable": _amounts(node.status.allocatable),
                      "pods": len(cluster.bound.get(name, ())), "kubeletModelled": models.modelled(name),
                      "unschedulable": bool(node.spec.unschedulable),
                      "kubeletDisagreements": len(cluster.disagreements.get(name, ())),
                      **facts[name]})
    return {"sources": cluster.sources, "kubernetesVersion": cluster.gates.version,
            "nodes": nodes, "runningPods": sum(len(v) for v in cluster.bound.values()),
            "pendingPods": len(cluster.pending), "kubeletClasses": models.class_count(),
            "generation": cluster.generation}


def _node(cluster: ServedCluster, name: str) -> Any:
    n = cluster.nodes.get(name)
    if n is None:
        from ..model.strict import suggest

        near = suggest(name, cluster.nodes)
        raise LookupError(f"node {name!r} is not in the served cluster" + (f" (did you mean {near!r}?)" if near else ""))
    return n


def node_detail(cluster: ServedCluster, name: str) -> dict[str, Any]:
    """A node: its object's facts, its pods, and its kubelet's NUMA map (``kubetwin admit``'s)."""
    from ..kubelet.report import numa_map, pod_report

    n = _node(cluster, name)
    with cluster.lock:
        pods = list(cluster.bound.get(name, ()))
    out: dict[str, Any] = {"name": name, "group": n.group, "labels": dict(n.node.metadata.labels),
                           "capacity": _amounts(n.node.status.capacity),
                           "allocatable": _amounts(n.node.status.allocatable),
                           "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in n.node.spec.taints],
                           "pods": [p.key for p in pods], "kubelet": None}
    if cluster.kubelets.modelled(name):
        kubelet, decisions = cluster.kubelets.replay(name, pods)
        out["kubelet"] = {"allocatable": _amounts(kubelet.allocatable), **numa_map(kubelet),
                          "pods": [pod_report(kubelet, d) for d in decisions]}
        from .ui_facts import cpu_cores

        out["kubelet"]["cores"] = cpu_cores(kubelet.machine)
    return out


def _find_pod(cluster: ServedCluster, namespace: str, name: str) -> tuple[Pod, str | None]:
    key = f"{namespace}/{name}"
    with cluster.lock:
        if key in cluster.pending:
            return cluster.pending[key], None
        for node, pods in cluster.bound.items():
            for p in pods:
                if p.key == key:
                    return p, node
    raise LookupError(f"pod {key} is not in the served cluster")


def verdict_json(v: Verdict | None) -> dict[str, Any]:
    if v is None:
        return {"modelled": False}
    out: dict[str, Any] = {"modelled": True, "admitted": v.admitted}
    if v.admitted:
        out.update(score=v.score, numaNodes=list(v.numa_nodes))
    else:
        out.update(reason=v.reason, message=v.message)
    return out


def pod_cgroups(cluster: ServedCluster, node: str, pod: Pod, kubelet: Any) -> dict[str, Any]:
    """The pod's QoS class and pod-level cgroup values on its node (cgroup v2, as the kubelet writes them)."""
    from ..kubelet.admission import cgroup_settings
    from ..kubelet.cgroups import pod_cgroup_files, resource_config_for_pod
    from ..kubelet.qos import explain_pod_qos

    settings = cgroup_settings(kubelet)
    decision = explain_pod_qos(pod, kubelet.gates)
    files = pod_cgroup_files(resource_config_for_pod(pod, settings), settings)
    return {"qosClass": decision.qos_class, "qosRule": decision.rule, "cgroupVersion": "v2",
            "podCgroup": [{"file": f.file, "value": f.content, "formula": f.formula, "written": f.written}
                          for f in files]}


def pod_detail(cluster: ServedCluster, namespace: str, name: str, *, seed: int = 0) -> dict[str, Any]:
    """A pod's drill-down: for a running pod its node's kubelet admission and cgroup values, and
    its cycle as if scheduled now without itself (:mod:`.pod_cycle`); for a pending pod each
    plugin's Filter verdict and Score per node, and each node's kubelet verdict."""
    from ..kubelet.report import pod_report

    pod, node = _find_pod(cluster, namespace, name)
    out: dict[str, Any] = {"pod": pod.key, "uid": pod.uid, "node": node, "phase": "Running" if node else "Pending"}
    if node is not None:
        if cluster.kubelets.modelled(node):
            with cluster.lock:
                pods = list(cluster.bound[node])
            kubelet, decisions = cluster.kubelets.replay(node, pods)
            d = decisions[[p.key for p in pods].index(pod.key)]
            out["admission"] = pod_report(kubelet, d)
            from .ui_facts import admission_hints

            out["admission"]["hints"] = admission_hints(cluster, node, pod.key)
            out["cgroups"] = pod_cgroups(cluster, node, pod, kubelet)
        from .pod_cycle import rescheduled

        out["rescheduled"] = rescheduled(cluster, pod, node, seed=seed)
        _add_dra(out, cluster, pod, node, seed)
        return out
    out.update(what_if_schedule(cluster, pod, seed=seed))
    _add_dra(out, cluster, pod, out["scheduling"].get("node") or None, seed)
    return out


def _add_dra(out: dict[str, Any], cluster: ServedCluster, pod: Pod, node: str | None, seed: int) -> None:
    """The ``dra`` key (docs/serve.md) for a pod with claims (:mod:`.dra_views`)."""
    from .dra_views import pod_dra

    dra = pod_dra(cluster, pod, node, seed=seed)
    if dra is not None:
        out["dra"] = dra


def pending(cluster: ServedCluster) -> dict[str, Any]:
    """Pending pods with the scheduler's message (the first ``PENDING_LIMIT``)."""
    from ..scheduler.run import run_cycle

    with cluster.lock:
        pods = list(cluster.pending.values())
    rows = []
    for pod in pods[:PENDING_LIMIT]:
        outcome = run_cycle(cluster.inputs(), pod, cluster.gates)
        rows.append({"pod": pod.key, "uid": pod.uid, "node": outcome.node, "message": outcome.message})
    return {"pods": rows, "total": len(pods), "truncated": len(pods) > PENDING_LIMIT}


def what_if_schedule(cluster: ServedCluster, pod: Pod, *, seed: int = 0) -> dict[str, Any]:
    """One explained scheduling cycle for ``pod`` (``kubetwin schedule -o json``), with each node's
    kubelet verdict beside it: would the node the scheduler picks admit the pod?"""
    from ..scheduler.run import run_cycle

    outcome = run_cycle(cluster.inputs(), pod, cluster.gates, seed=seed)
    verdicts = cluster.kubelets.verdicts(cluster.nodes, pod)
    return {"scheduling": outcome.to_json(),
            "kubelet": {name: verdict_json(v) for name, v in verdicts.items()}}


def _replayed_kubelet(cluster: ServedCluster, node: str) -> NodeAdmission:
    """A copy of a served node's kubelet with the pods bound to it admitted again."""
    _node(cluster, node)
    if not cluster.kubelets.modelled(node):
        raise InputError(f"node {node!r} has no modelled kubelet (no machine)", path="node",
                         fix="give its node group a machine, or select it in --kubelets")
    with cluster.lock:
        running = list(cluster.bound.get(node, ()))
    kubelet, _ = cluster.kubelets.replay(node, running)
    return kubelet


def what_if_admit(cluster: ServedCluster, node: str, pods: list[Pod]) -> dict[str, Any]:
    """``kubetwin admit`` on a copy of a served node's kubelet: the pods in order, then its NUMA map."""
    from ..kubelet.report import numa_map, pod_report

    kubelet = _replayed_kubelet(cluster, node)
    reports = [pod_report(kubelet, kubelet.admit(p)) for p in pods]
    return {"pods": reports, "node": numa_map(kubelet)}


def what_if_explain(cluster: ServedCluster, node: str, pod: Pod) -> dict[str, Any]:
    """The pod's QoS, pod cgroup and containers' CRI resources if admitted on ``node``."""
    from ..kubelet.report import pod_report

    kubelet = _replayed_kubelet(cluster, node)
    d = kubelet.admit(pod)
    return {"admission": pod_report(kubelet, d), **pod_cgroups(cluster, node, pod, kubelet)}
