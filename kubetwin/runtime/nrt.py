"""The NodeResourceTopology custom resource an nri-plugins resource policy publishes.

The resource manager asks the active policy for its topology zones (``GetTopologyZones``) after
every container it allocated (``CreateContainer``), after every container it released
(``StopContainer``), after ``Synchronize`` and after a configuration update, and its agent
writes them into the node's ``topology.node.k8s.io/v1alpha2`` ``NodeResourceTopology``: named
after the node, one attribute ``TopologyPolicy`` = the policy's name, and the zones as the
policy gives them (name, type, parent, resources with capacity / allocatable / available as
Kubernetes quantities, attributes). Nothing is published when the policy has no zones, or when
the configuration's ``agent.nodeResourceTopology`` is false (the CRDs default ``agent`` to
``{nodeResourceTopology: true}``; an ``agent`` object without the field turns it off).

Upstream: containers/nri-plugins v0.14.0 ``pkg/agent/node-resource-topology.go``
(``updateNrtCR``, ``zonesToNrt``), ``pkg/resmgr/resource-manager.go`` (``updateTopologyZones``),
``pkg/resmgr/nri.go``; the NRT types of k8stopologyawareschedwg/noderesourcetopology-api
``v1alpha2`` (JSON: ``parent``, ``costs``, ``attributes``, ``resources`` left out when empty).
"""

from __future__ import annotations

from typing import Any

from .resmgr.policy import TopologyZone

API_VERSION = "topology.node.k8s.io/v1alpha2"
KIND = "NodeResourceTopology"


def nrt_enabled(spec: dict[str, Any]) -> bool:
    """``agent.nodeResourceTopology`` of the policy's configuration (the CRD default: true)."""
    agent = spec.get("agent")
    if agent is None:
        return True
    return bool(agent.get("nodeResourceTopology", False))


def zone_to_nrt(zone: TopologyZone) -> dict[str, Any]:
    """``zonesToNrt`` for one zone, in the v1alpha2 ``Zone`` JSON shape."""
    out: dict[str, Any] = {"name": zone.name, "type": zone.type}
    if zone.parent:
        out["parent"] = zone.parent
    if zone.attributes:
        out["attributes"] = [{"name": n, "value": v} for n, v in zone.attributes]
    if zone.resources:
        out["resources"] = [r.to_json() for r in zone.resources]
    return out


def node_resource_topology(node_name: str, policy: str, zones: list[TopologyZone]) -> dict[str, Any] | None:
    """The node's ``NodeResourceTopology`` (``updateNrtCR``), or None when there are no zones."""
    if not zones:
        return None
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": node_name},
            "attributes": [{"name": "TopologyPolicy", "value": policy}],
            "zones": [zone_to_nrt(z) for z in zones]}


def export(node: Any, node_name: str) -> dict[str, Any] | None:
    """What the agent of ``node``'s resource manager (a :class:`..runtime.node.RuntimeNode`) has
    published for ``node_name`` after the last event (None: nothing). The zones are read now:
    kubetwin drives no event that changes the policy's allocations without an update (no
    ``UpdateContainer`` in ``kubetwin runtime`` steps or ``simulate``), so they are the zones of
    the last ``updateTopologyZones``."""
    if node.resmgr is None or node.policy_resource is None or not nrt_enabled(node.policy_resource.spec):
        return None
    return node_resource_topology(node_name, node.resmgr.policy.name, node.resmgr.policy.topology_zones())
