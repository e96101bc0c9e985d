"""core/v1 NodeSelector matching as ``nodeaffinity.NewNodeSelector(...).Match(node)`` does it.

Terms are ORed, requirements inside a term ANDed; a term without requirements matches no
node. ``matchFields`` only knows ``metadata.name``. A malformed selector is an error (the
allocator turns it into an allocation error, as upstream).

Upstream: ``staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go``.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import KubetwinError
from .api import Node


class NodeSelectorError(KubetwinError):
    pass


def node_matches(node: Node, node_name: str | None, all_nodes: bool | None,
                 node_selector: Mapping[str, Any] | None) -> bool:
    """``NodeMatches``: a node name, all nodes, or a node selector (first one set wins)."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        return selector_matches(node_selector, node)
    return False


def selector_matches(selector: Mapping[str, Any], node: Node) -> bool:
    terms = selector.get("nodeSelectorTerms") or []
    matched = False
    for term in terms:
        # Every term is parsed (and may fail) even after an earlier one matched. A null element is
        # Go's zero NodeSelectorTerm after json.Unmarshal: empty, it matches nothing.
        if term is not None and _term_matches(term, node):
            matched = True
    return matched


def _term_matches(term: Mapping[str, Any], node: Node) -> bool:
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    ok = True
    for req in exprs:
        if not _requirement(req, node.labels, label=True):
            ok = False
    for req in fields:
        if req.get("key") != "metadata.name":
            raise NodeSelectorError(f"not a valid field selector key: {req.get('key')!r}")
        if not _requirement(req, {"metadata.name": node.name}, label=False):
            ok = False
    return ok


def _requirement(req: Mapping[str, Any], labels: Mapping[str, str], label: bool) -> bool:
    key: Any = req.get("key")  # a JSON value, as written
    op, values = req.get("operator"), list(req.get("values") or [])
    present = key in labels
    if op in ("In", "NotIn"):
        if not values:
            raise NodeSelectorError(f"for '{op}' operator, values set can't be empty")
        if not label and len(values) != 1:
            raise NodeSelectorError("for 'in', 'notin' operators on fields, exactly one value is required")
        inside = present and labels[key] in values
        return inside if op == "In" else not inside
    if op in ("Exists", "DoesNotExist"):
        if values:
            raise NodeSelectorError(f"values set must be empty for {op}")
        if not label:
            raise NodeSelectorError(f"{op} is not a valid field selector operator")
        return present if op == "Exists" else not present
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise NodeSelectorError(f"for '{op}' operator, exactly one value is required")
        try:
            want = int(values[0])
        except ValueError:
            raise NodeSelectorError(f"for '{op}' operator, the value must be an integer") from None
        if not present:
            return False
        try:
            have = int(labels[key])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    raise NodeSelectorError(f"{op!r} is not a valid label selector operator")
