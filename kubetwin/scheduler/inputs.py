"""Reading what a scheduling run needs: nodes, running pods, other objects, plugin args.

Other API objects (Namespaces, Services, DeviceClasses, ResourceSlices, NodeResourceTopologies,
PriorityClasses, ...) are grouped by kind; each consumer types the kinds it reads, so this
module needs no model of objects it only passes on.

Not an upstream module: kubetwin's own reading of the objects an informer would hold."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import InputError
from ..model.kinds import READ_BY_SCHEDULER, check_read
from ..model.loader import load_documents, load_one
from ..model.node import Node
from ..model.objects import load_nodes, load_pods, warn_to_stderr
from ..model.pod import Pod


@dataclass
class ClusterInputs:
    nodes: list[Node]
    pods: list[Pod]
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: where each object came from, for error messages (same order as ``objects[kind]``)
    origins: dict[str, list[str]] = field(default_factory=dict)

    def namespace_labels(self) -> dict[str, Mapping[str, str]]:
        out: dict[str, Mapping[str, str]] = {}
        for obj in self.objects.get("Namespace", []):
            raw = obj.get("metadata")
            meta: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
            out[str(meta.get("name", ""))] = dict(meta.get("labels") or {})
        return out


def load_cluster(nodes: Iterable[str | Path], pods: Iterable[str | Path] = (),
                 objects: Iterable[str | Path] = ()) -> ClusterInputs:
    node_list = load_nodes(list(nodes))
    pod_list = load_pods(list(pods), warn=warn_to_stderr, reader="kube-scheduler") if pods else []
    grouped: dict[str, list[dict[str, Any]]] = {}
    origins: dict[str, list[str]] = {}
    for path in objects:
        for doc in load_documents(path):
            if not isinstance(doc.obj, dict):
                raise InputError("expected a Kubernetes object (a mapping)", file=doc.where)
            kind = doc.obj.get("kind")
            if not isinstance(kind, str) or not kind:
                raise InputError("Required value: kind", path="kind", file=doc.where)
            check_read(doc.obj, doc.where, reads=READ_BY_SCHEDULER, reader="kube-scheduler")
            grouped.setdefault(kind, []).append(doc.obj)
            origins.setdefault(kind, []).append(doc.where)
    return ClusterInputs(node_list, pod_list, grouped, origins)


def load_pod(path: str | Path) -> Pod:
    pods = load_pods([path], warn=warn_to_stderr, reader="kube-scheduler")
    if len(pods) != 1:
        raise InputError(f"expected exactly one Pod, found {len(pods)}", file=str(path))
    return pods[0]


def load_plugin_args(path: str | Path | None, plugin: str) -> tuple[dict[str, Any], str]:
    """The ``<Plugin>Args`` object of ``--plugin-args`` (kind checked when given)."""
    if path is None:
        return {}, ""
    doc = load_one(path, what=f"{plugin}Args")
    obj = doc.obj
    if not isinstance(obj, dict):
        raise InputError("expected a mapping of plugin args", file=doc.where)
    from .profile import check_args_type

    check_args_type(obj, plugin, "", doc.where)
    args = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    return args, doc.where
