"""The few facts the web UI (``kubetwin/serve/static``) shows that the API's views did not carry:
each node's requested amounts beside its allocatable ones (as kube-scheduler's ``NodeInfo``
sums them), its conditions and NUMA node count for the overview; the machine's sockets, cores
and CPUs for the NUMA map; and the Topology Manager's hints for a running pod's admission (what
``kubetwin admit --explain`` prints).

The amounts are in the scheduler's units (millicores for ``cpu``, ``Value()`` for the rest:
``pkg/scheduler/framework/types.go``, ``Resource``), so the page can compare and total them.

Not an upstream module: kubetwin's own view data, computed by the library the commands use
(:func:`kubetwin.scheduler.framework.resources.pod_request_amounts`, the kubelet's
``TopologyManager`` explain records of ``pkg/kubelet/cm/topologymanager``).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..machine.model import Machine
    from .cluster import ServedCluster


def node_facts(cluster: ServedCluster) -> dict[str, dict[str, Any]]:
    """Each node's requested and allocatable amounts (scheduler units), NUMA nodes and conditions,
    computed once per change of the cluster (its ``generation``)."""
    with cluster.lock:
        hit = _memo.get(id(cluster))
        if hit is not None and hit[0]() is cluster and hit[1] == cluster.generation:
            return hit[2]
        out = {name: _facts(cluster, name) for name in cluster.nodes}
        key = id(cluster)
        _memo[key] = (weakref.ref(cluster, lambda _: _memo.pop(key, None)), cluster.generation, out)
        return out


#: the last facts computed per served cluster: (the cluster, its generation then, the facts)
_memo: dict[int, tuple[weakref.ref[Any], int, dict[str, dict[str, Any]]]] = {}


def _facts(cluster: ServedCluster, name: str) -> dict[str, Any]:
    from ..scheduler.framework.resources import pod_request_amounts
    from ..scheduler.framework.types import resource_amounts

    n = cluster.nodes[name]
    requested: dict[str, int] = {}
    for p in cluster.bound.get(name, ()):
        for res, v in pod_request_amounts(p, cluster.gates).items():
            requested[res] = requested.get(res, 0) + v
    machine = n.machine
    return {"allocatableAmounts": resource_amounts(n.node.status.allocatable),
            "requestedAmounts": requested,
            "numaNodes": len(machine.nodes) if machine is not None else None,
            "conditions": [{"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
                           for c in n.node.status.conditions]}


def cpu_cores(machine: Machine) -> list[dict[str, Any]]:
    """Each physical core: its socket, NUMA node, the kubelet's core id and its logical CPUs."""
    out = []
    for node in machine.nodes:
        for core in node.cores:
            if core.threads:
                out.append({"socket": core.socket_id, "numaNode": node.id, "core": core.id,
                            "cpus": list(core.threads)})
    return out


def admission_hints(cluster: ServedCluster, node: str, pod_key: str) -> list[dict[str, Any]]:
    """The Topology Manager's hints for a running pod: each hint provider's (the CPU, memory and
    device managers) and the merged one, per container (or per pod, scope ``pod``) — the pods
    before it on its node admitted again first, as at load."""
    from ..kubelet.report import explain_record

    with cluster.lock:
        pods = list(cluster.bound.get(node, ()))
    keys = [p.key for p in pods]
    at = keys.index(pod_key)
    kubelet, _ = cluster.kubelets.replay(node, pods[:at])
    kubelet.topology.explain = []
    kubelet.admit(pods[at])
    return [explain_record(r) for r in kubelet.topology.explain]
