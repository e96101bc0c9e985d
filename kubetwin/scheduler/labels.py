"""Label and node selectors as apimachinery evaluates them.

Two rules decide many scheduling answers and are easy to get wrong: a *nil* LabelSelector
selects nothing while an empty one (``{}``) selects everything; and a node selector term
with an invalid requirement (a ``Gt`` value that is no integer, an unknown operator) does
not match instead of failing the pod.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping

from ..model.meta import LabelSelector
from ..model.pod import NodeSelectorRequirement, NodeSelectorTerm

Labels = Mapping[str, str]
Matcher = Callable[[Labels], bool]


def _nothing(_: Labels) -> bool:
    return False


def _everything(_: Labels) -> bool:
    return True


_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def valid_label_key(key: str) -> bool:
    """A qualified name with an optional DNS-subdomain prefix (``IsQualifiedName``)."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and _NAME.match(name) is not None


def valid_label_value(value: str) -> bool:
    return len(value) <= 63 and _LABEL_VALUE.match(value) is not None


_GO_INT = re.compile(r"[+-]?[0-9]+\Z")


def parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: ASCII digits with an optional sign, within int64.

    Python's ``int`` also takes ``1_000``, spaces and non-ASCII digits, and has no overflow; a
    Gt/Lt requirement on such a label value does not match upstream (differential test, v1.36).
    """
    if not _GO_INT.match(text):
        return None
    v = int(text)
    return v if -(1 << 63) <= v < (1 << 63) else None


def requirement_matcher(key: str, operator: str, values: tuple[str, ...] | list[str],
                        check: bool = True) -> Matcher | None:
    """One requirement (``labels.NewRequirement``); ``None`` when it is invalid."""
    if check and (not valid_label_key(key) or not all(valid_label_value(v) for v in values)):
        return None
    vals = frozenset(values)
    if operator == "In":
        if not vals:
            return None
        return lambda labels: key in labels and labels[key] in vals
    if operator == "NotIn":
        if not vals:
            return None
        return lambda labels: key not in labels or labels[key] not in vals
    if operator == "Exists":
        if vals:
            return None
        return lambda labels: key in labels
    if operator == "DoesNotExist":
        if vals:
            return None
        return lambda labels: key not in labels
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            return None
        bound = parse_int64(values[0])
        if bound is None:
            return None
        greater = operator == "Gt"

        def compare(labels: Labels) -> bool:
            if key not in labels:
                return False
            v = parse_int64(labels[key])
            if v is None:
                return False
            return v > bound if greater else v < bound

        return compare
    return None


def _all_of(matchers: list[Matcher]) -> Matcher:
    if not matchers:
        return _everything
    if len(matchers) == 1:
        return matchers[0]
    return lambda labels: all(m(labels) for m in matchers)


def label_selector_matcher(selector: LabelSelector | None) -> Matcher:
    """``metav1.LabelSelectorAsSelector``: nil → nothing, ``{}`` → everything.

    An invalid selector matches nothing (the scheduler treats the conversion error as a
    non-match for the term).
    """
    if selector is None:
        return _nothing
    matchers: list[Matcher] = []
    for k, v in selector.match_labels.items():
        matchers.append(lambda labels, k=k, v=v: labels.get(k) == v if k in labels else False)
    for req in selector.match_expressions:
        if req.operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return _nothing
        m = requirement_matcher(req.key, req.operator, req.values)
        if m is None:
            return _nothing
        matchers.append(m)
    return _all_of(matchers)


def map_selector_matcher(selector: Mapping[str, str]) -> Matcher:
    """``labels.SelectorFromSet``: every key equal; an empty map selects everything."""
    items = tuple(selector.items())
    return lambda labels: all(k in labels and labels[k] == v for k, v in items)


def node_selector_term_matcher(term: NodeSelectorTerm) -> Callable[[Labels, str], bool]:
    """A term matches a node (labels, name) when all expressions and fields match.

    An empty term matches no node; an invalid requirement makes the term match no node.
    """
    if not term.match_expressions and not term.match_fields:
        return lambda labels, name: False
    exprs: list[Matcher] = []
    for req in term.match_expressions:
        m = requirement_matcher(req.key, req.operator, req.values)
        if m is None:
            return lambda labels, name: False
        exprs.append(m)
    fields: list[Matcher] = []
    for req in term.match_fields:
        m = _field_matcher(req)
        if m is None:
            return lambda labels, name: False
        fields.append(m)
    lm = _all_of(exprs)
    fm = _all_of(fields)
    if not fields:
        return lambda labels, name: lm(labels)
    return lambda labels, name: lm(labels) and fm({"metadata.name": name})


def _field_matcher(req: NodeSelectorRequirement) -> Matcher | None:
    """matchFields: only ``metadata.name`` with ``In``/``NotIn`` of exactly one value."""
    if req.key != "metadata.name" or req.operator not in ("In", "NotIn") or len(req.values) != 1:
        return None
    return requirement_matcher(req.key, req.operator, req.values, check=False)


def node_selector_matcher(terms: list[NodeSelectorTerm]) -> Callable[[Labels, str], bool]:
    """Terms are ORed (``nodeaffinity.NodeSelector``); no terms matches nothing."""
    ms = [node_selector_term_matcher(t) for t in terms]
    return lambda labels, name: any(m(labels, name) for m in ms)
