"""NodeResourceTopology (topology.node.k8s.io/v1alpha2): per-NUMA-zone resources a node
agent (RTE, NFD) publishes, typed for the NodeResourceTopologyMatch plugin."""

from __future__ import annotations

import re
from typing import Any

from ....errors import InputError
from ....model.meta import KubeStruct, ObjectMeta, convert
from ....model.quantity import Quantity

API_VERSIONS = ("topology.node.k8s.io/v1alpha2", "topology.node.k8s.io/v1alpha1")
_NUMA_NAME = re.compile(r"^node-(\d+)$")
MAX_NUMA_ID = 64


class ResourceInfo(KubeStruct, frozen=True):
    name: str
    capacity: Quantity | None = None
    allocatable: Quantity | None = None
    available: Quantity | None = None


class CostInfo(KubeStruct, frozen=True):
    name: str
    value: int = 0


class AttributeInfo(KubeStruct, frozen=True):
    name: str
    value: str = ""


class Zone(KubeStruct, frozen=True):
    name: str
    type: str = ""
    parent: str = ""
    costs: list[CostInfo] = []
    attributes: list[AttributeInfo] = []
    resources: list[ResourceInfo] = []


class NodeResourceTopology(KubeStruct, frozen=True):
    api_version: str = "topology.node.k8s.io/v1alpha2"
    kind: str = "NodeResourceTopology"
    metadata: ObjectMeta = ObjectMeta(namespace="")
    topology_policies: list[str] = []
    attributes: list[AttributeInfo] = []
    zones: list[Zone] = []


def numa_id(zone_name: str) -> int | None:
    """``numanode.NameToID``: ``node-<id>``; None for other names or ids past 64."""
    m = _NUMA_NAME.match(zone_name)
    if m is None:
        return None
    v = int(m.group(1))
    return v if v <= MAX_NUMA_ID else None


def nrt_from_dict(obj: dict[str, Any], file: str | None = None) -> NodeResourceTopology:
    api = obj.get("apiVersion")
    if api is not None and api not in API_VERSIONS:
        raise InputError(f"unsupported apiVersion {api!r} for NodeResourceTopology", path="apiVersion", file=file,
                         fix=f"use {API_VERSIONS[0]}")
    return convert(obj, NodeResourceTopology, file=file)


def topology_manager_config(nrt: NodeResourceTopology) -> tuple[str, str]:
    """(policy, scope) the node's kubelet runs: attributes win over the deprecated topologyPolicies."""
    policy, scope = "none", "container"
    legacy = {
        "SingleNUMANodePodLevel": ("single-numa-node", "pod"),
        "SingleNUMANodeContainerLevel": ("single-numa-node", "container"),
        "BestEffortPodLevel": ("best-effort", "pod"),
        "BestEffortContainerLevel": ("best-effort", "container"),
        "RestrictedPodLevel": ("restricted", "pod"),
        "RestrictedContainerLevel": ("restricted", "container"),
    }
    if nrt.topology_policies and nrt.topology_policies[0] in legacy:
        policy, scope = legacy[nrt.topology_policies[0]]
    for attr in nrt.attributes:
        if attr.name == "topologyManagerScope" and attr.value in ("container", "pod"):
            scope = attr.value
        elif attr.name == "topologyManagerPolicy" and attr.value in ("none", "best-effort", "restricted",
                                                                     "single-numa-node"):
            policy = attr.value
    return policy, scope
