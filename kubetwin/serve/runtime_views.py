"""``POST /api/v1/runtime``: ``kubetwin runtime`` on a served node — the node's machine and
kubelet configuration, its running pods created first, then the request's pods: the CRI calls,
the NRI events, the resource policy's grants; each container's cpuset, memory nodes, RDT and
Block I/O class, and the NUMA map (``kubetwin runtime -o json``'s shape).

The resource policy is the request's (``topology-aware``, ``balloons``, ``none``, or a policy
file inside ``--data-dir``), else the node group's runtime policy in the scenario, else none.
Files (policy, Helm values, RDT and Block I/O configuration) are read only from ``--data-dir``;
Python NRI plugins are never loaded from a request (only a scenario's own node-group plugin).

Not an upstream module: kubetwin's own view over :func:`kubetwin.runtime.run.run_on_node`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    from .cluster import ServedCluster

#: the fields of ``POST /api/v1/runtime``
FIELDS = ("node", "policy", "helmValues", "rdt", "blockio", "isolatedCpus", "pods", "delete", "explain", "nrt")
CHARTS = ("topology-aware", "balloons", "none")


def _file(data_dir: Path | None, body: dict[str, Any], key: str) -> str | None:
    from .limits import in_data_dir

    return str(in_data_dir(data_dir, body[key], key)) if body.get(key) is not None else None


def _flag(body: dict[str, Any], key: str) -> bool:
    value = body.get(key, False)
    if not isinstance(value, bool):
        raise InputError("expected a boolean", path=key)
    return value


def what_if_runtime(cluster: ServedCluster, body: dict[str, Any], data_dir: Path | None) -> dict[str, Any]:
    """One ``kubetwin runtime`` step on a served node (nothing is kept: the served cluster is unchanged)."""
    from ..model.kubelet_config import KubeletConfiguration
    from ..runtime.resmgr.policy import PolicyError
    from ..runtime.run import RuntimeInputs, run_on_node
    from .extender import decode_pod
    from .views import _node

    if not isinstance(body["node"], str):
        raise InputError("expected a node name (a string)", path="node")
    n = _node(cluster, body["node"])
    if n.machine is None:
        raise InputError(f"node {body['node']!r} has no machine: its runtime is not modelled", path="node",
                         fix="give its node group a machine, or select it in --kubelets")
    pods_raw = body.get("pods") or []
    if not isinstance(pods_raw, list):
        raise InputError("expected an array of Pods", path="pods")
    delete = body.get("delete") or []
    if not isinstance(delete, list) or not all(isinstance(d, str) for d in delete):
        raise InputError("expected an array of pod names ([NAMESPACE/]NAME)", path="delete")
    isolated = body.get("isolatedCpus", "")
    if not isinstance(isolated, str):
        raise InputError("expected a cpuset (a string, e.g. 2-3)", path="isolatedCpus")
    explain, nrt = _flag(body, "explain"), _flag(body, "nrt")
    plugins: list[str] = []
    policy = body.get("policy")
    if policy is None:
        rt = n.runtime
        if rt is None:
            policy = "none"
        elif rt.plugin:
            policy, plugins = "none", [rt.plugin]
        else:
            policy = rt.config or rt.name
    elif not isinstance(policy, str):
        raise InputError("expected a chart name (topology-aware, balloons, none) or a policy file", path="policy")
    elif policy not in CHARTS:
        policy = _file(data_dir, body, "policy")
    inputs = RuntimeInputs(machine=n.machine.name or body["node"], policy=str(policy),
                           helm_values=_file(data_dir, body, "helmValues"), rdt=_file(data_dir, body, "rdt"),
                           blockio=_file(data_dir, body, "blockio"), plugins=plugins, isolated=isolated,
                           delete=list(delete), kubernetes_version=cluster.gates.version, explain=explain,
                           nrt=nrt, node_name=body["node"])
    pods = [(decode_pod(p, f"pods[{i}]"), p) for i, p in enumerate(pods_raw)]
    kubelet = n.kubelet if n.kubelet is not None else KubeletConfiguration.from_dict(None, cluster.gates.version)
    with cluster.lock:
        running = list(cluster.bound.get(body["node"], ()))
    try:
        return run_on_node(inputs, machine=n.machine, kubelet=kubelet, running=running, pods=pods)
    except PolicyError as exc:
        raise InputError(str(exc), path="policy") from None
