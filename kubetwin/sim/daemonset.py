"""The DaemonSet controller's placement: which nodes run a daemon pod, and the pod it creates.

Models ``pkg/controller/daemon/daemon_controller.go`` (``NodeShouldRunDaemonPod``,
``predicates``, ``NewPod``) and ``pkg/controller/daemon/util/daemonset_util.go``
(``AddOrUpdateDaemonPodTolerations``, ``ReplaceDaemonSetPodNodeNameNodeAffinity``):

* a node runs the daemon pod when the pod's ``nodeName`` (if set) is the node, its nodeSelector
  and required node affinity match the node, and no ``NoSchedule``/``NoExecute`` taint of the
  node is left untolerated — counting the tolerations the controller adds to every daemon pod;
* the pod it creates keeps the template, gets those tolerations and a required node affinity of
  exactly one term ``matchFields: metadata.name In [node]`` (the scheduler then places it).

Immutable data in (a checked DaemonSet object, typed nodes), plain pod objects out.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import msgspec

from ..model.node import Node
from ..model.pod import Pod, pod_from_dict
from ..scheduler.plugins.helpers import untolerated_taint
from ..scheduler.plugins.nodeaffinity.node_affinity import required_node_affinity

_EXISTS = "Exists"

#: ``AddOrUpdateDaemonPodTolerations``: (key, effect), operator Exists, in the controller's order.
DAEMON_TOLERATIONS: tuple[tuple[str, str], ...] = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
#: added only for pods on the host network
NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def add_daemon_tolerations(spec: dict[str, Any]) -> None:
    """``AddOrUpdateDaemonPodTolerations``: each toleration is added, or replaces one with the
    same key, operator, value and effect (``AddOrUpdateTolerationInPodSpec``'s ``MatchToleration``)."""
    wanted = list(DAEMON_TOLERATIONS)
    if spec.get("hostNetwork"):
        wanted.append(NETWORK_UNAVAILABLE)
    tolerations: list[dict[str, Any]] = [dict(t) for t in spec.get("tolerations") or []]
    for key, effect in wanted:
        new = {"key": key, "operator": _EXISTS, "effect": effect}
        for i, t in enumerate(tolerations):
            if (t.get("key", ""), t.get("operator", "Equal") or "Equal", t.get("value", ""),
                    t.get("effect", "")) == (key, _EXISTS, "", effect):
                tolerations[i] = new
                break
        else:
            tolerations.append(new)
    spec["tolerations"] = tolerations


def _clone(obj: Any) -> Any:
    """A deep copy of plain JSON values (a manifest), at C speed."""
    return msgspec.json.decode(msgspec.json.encode(obj))


def node_name_affinity(affinity: Mapping[str, Any] | None, node: str) -> dict[str, Any]:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: the required node selector becomes one term
    matching the node's name; preferred terms and pod (anti-)affinity are kept."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    out = _clone(dict(affinity or {}))
    node_aff = dict(out.get("nodeAffinity") or {})
    node_aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
    out["nodeAffinity"] = node_aff
    return out


@dataclass(frozen=True)
class DaemonSet:
    """A checked ``apps/v1`` DaemonSet: what its controller needs."""

    name: str
    namespace: str
    uid: str
    template: Mapping[str, Any]     # spec.template (metadata, spec) as written

    def new_pod_dict(self) -> dict[str, Any]:
        """``NewPod`` without a node: the template with the daemon tolerations."""
        tmpl = self.template
        meta = _clone(dict(tmpl.get("metadata") or {}))
        spec = _clone(dict(tmpl.get("spec") or {}))
        add_daemon_tolerations(spec)
        meta["namespace"] = self.namespace
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def daemon_set(obj: Mapping[str, Any]) -> DaemonSet:
    meta = obj.get("metadata") or {}
    name = str(meta.get("name", ""))
    ns = str(meta.get("namespace") or "default")
    return DaemonSet(name, ns, str(meta.get("uid") or f"DaemonSet/{ns}/{name}"),
                     (obj.get("spec") or {}).get("template") or {})


def should_run(pod: Pod, node: Node, comparison_operators: bool = False) -> bool:
    """``NodeShouldRunDaemonPod``'s first answer (``predicates``): name, affinity, taints."""
    if pod.spec.node_name and pod.spec.node_name != node.metadata.name:
        return False
    if not required_node_affinity(pod)(node.metadata.labels, node.metadata.name):
        return False
    return untolerated_taint(node.spec.taints, pod.spec.tolerations, comparison_operators) is None


def daemon_pods(ds: DaemonSet, nodes: Iterable[Node], has_pod: set[str], *,
                comparison_operators: bool = False) -> list[dict[str, Any]]:
    """The pods the controller creates: one per eligible node that has none yet (``has_pod``:
    names of nodes already running, or about to run, a pod of this DaemonSet)."""
    base = ds.new_pod_dict()
    probe = pod_from_dict({**base, "metadata": {**base["metadata"], "name": f"{ds.name}-probe"}}, checked=True)
    out = []
    for node in nodes:
        name = node.metadata.name
        if name in has_pod or not should_run(probe, node, comparison_operators):
            continue
        pod = _clone(base)
        suffix = hashlib.blake2s(f"{ds.namespace}/{ds.name}/{name}".encode(), digest_size=4).hexdigest()[:5]
        pod["metadata"]["name"] = f"{ds.name}-{suffix}"
        pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds.name,
                                               "uid": ds.uid, "controller": True, "blockOwnerDeletion": True}]
        pod["spec"]["affinity"] = node_name_affinity(pod["spec"].get("affinity"), name)
        out.append(pod)
    return out


def daemon_pod_node(pod: Mapping[str, Any]) -> str | None:
    """The node a daemon pod is for: its ``nodeName``, or the name its node affinity pins."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    req = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in req.get("nodeSelectorTerms") or []:
        for f in term.get("matchFields") or []:
            if f.get("key") == "metadata.name" and f.get("operator") == "In" and len(f.get("values") or []) == 1:
                return str(f["values"][0])
    return None
