"""Typed, immutable view of a core/v1 ``Node``: capacity, allocatable, labels, taints.

Upstream: ``Node`` in ``staging/src/k8s.io/api/core/v1/types.go``."""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from .meta import KubeStruct, ObjectMeta, ResourceList, check_kind, convert
from .pod import is_qualified_name, validate_labels


class Taint(KubeStruct, frozen=True):
    key: str
    value: str = ""
    effect: str = ""
    time_added: str | None = None


class NodeSpec(KubeStruct, frozen=True):
    unschedulable: bool = False
    taints: list[Taint] = []
    pod_cidr: str = ""
    provider_id: str = ""


class NodeCondition(KubeStruct, frozen=True):
    type: str
    status: str = "Unknown"
    reason: str = ""
    message: str = ""


class NodeStatus(KubeStruct, frozen=True):
    capacity: ResourceList = {}
    allocatable: ResourceList = {}
    conditions: list[NodeCondition] = []


class Node(KubeStruct, frozen=True):
    api_version: str = "v1"
    kind: str = "Node"
    metadata: ObjectMeta = ObjectMeta(namespace="")
    spec: NodeSpec = NodeSpec()
    status: NodeStatus = NodeStatus()

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def allocatable(self) -> ResourceList:
        """``status.allocatable``; a node that reports none is taken at its capacity."""
        return self.status.allocatable if self.status.allocatable else self.status.capacity

    @property
    def capacity(self) -> ResourceList:
        return self.status.capacity


_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def node_from_dict(obj: dict[str, Any], file: str | None = None, *, checked: bool = False) -> Node:
    """A validated :class:`Node`, decoded strictly unless ``checked`` (see :func:`pod_from_dict`)."""
    check_kind(obj, ("Node",), ("v1",), file)
    if not checked:
        from .kinds import check_builtin

        check_builtin(obj, "v1", "Node", file)
    node = convert(obj, Node, file=file)
    if not node.metadata.name:
        raise InputError("Required value: name or generateName is required", path="metadata.name", file=file)
    try:
        validate_labels(node.metadata.labels, "metadata.labels")
    except InputError as exc:
        raise exc.in_file(file) from None
    for i, t in enumerate(node.spec.taints):
        if t.effect not in _TAINT_EFFECTS:
            raise InputError(f'Unsupported value: "{t.effect}": supported values: "NoSchedule", '
                             f'"PreferNoSchedule", "NoExecute"', path=f"spec.taints[{i}].effect", file=file)
        if not t.key:
            raise InputError("Required value: taint key", path=f"spec.taints[{i}].key", file=file)
    for kind, values in (("capacity", node.status.capacity), ("allocatable", node.status.allocatable)):
        for rname, q in values.items():
            if q.sign() < 0:
                raise InputError("must be greater than or equal to 0", path=f"status.{kind}.{rname}", file=file)
            if not is_qualified_name(rname):
                # The API server does not check these names, but no kubelet or device plugin can
                # publish one that is not a qualified name (a typo such as "memory " or "cpu:"):
                # read as written it would be a resource no pod asks for, and the node would lack it.
                raise InputError(f'Invalid value: "{rname}": a resource name must be a qualified name '
                                 "(e.g. 'cpu', 'example.com/gpu')", path=f"status.{kind}.{rname}", file=file)
    return node
