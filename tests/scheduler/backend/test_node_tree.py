"""The cache's node tree: the order a cycle visits nodes in."""

from __future__ import annotations

from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.scheduler.backend.node_tree import node_tree_order
from kubetwin.scheduler.framework.types import NodeInfo, ResourceAccounting


def _node(name: str, zone: str) -> NodeInfo:
    node = convert({"metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}}}, Node)
    return NodeInfo(node, ResourceAccounting(None))


def test_node_tree_interleaves_zones_in_order_of_appearance():
    nodes = [_node("a1", "a"), _node("a2", "a"), _node("b1", "b"), _node("a3", "a"), _node("b2", "b")]
    assert [n.name for n in node_tree_order(nodes)] == ["a1", "b1", "a2", "b2", "a3"]
