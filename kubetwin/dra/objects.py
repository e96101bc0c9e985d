"""Reading DRA objects from manifests: every version converted to v1, errors naming file and field."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..errors import InputError
from ..model.loader import Document
from .api import (DeviceClass, Node, ResourceClaim, ResourceClaimTemplate, ResourceSlice, parse_device_class,
                  parse_node, parse_resource_claim, parse_resource_claim_template, parse_resource_slice)
from .convert import split_counter_slices, to_v1


@dataclass(slots=True)
class DRAObjects:
    """The DRA part of a cluster: classes by name, slices, claims, templates (and anything else)."""

    classes: dict[str, DeviceClass] = field(default_factory=dict)
    slices: list[ResourceSlice] = field(default_factory=list)
    claims: list[ResourceClaim] = field(default_factory=list)
    templates: list[ResourceClaimTemplate] = field(default_factory=list)
    others: list[Mapping[str, Any]] = field(default_factory=list)


_PARSERS = {
    "DeviceClass": parse_device_class,
    "ResourceSlice": parse_resource_slice,
    "ResourceClaim": parse_resource_claim,
    "ResourceClaimTemplate": parse_resource_claim_template,
}


def parse_object(doc: Document) -> Any:
    """One DRA object from a document; an :class:`InputError` names the file and field path."""
    obj = doc.obj
    kind = obj.get("kind")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise InputError(f"kind {kind!r} is not a DRA object (DeviceClass, ResourceSlice, ResourceClaim, "
                         "ResourceClaimTemplate)", path="kind", file=doc.where)
    try:
        return parser(to_v1(obj))
    except InputError as exc:
        raise exc.in_file(doc.where) from None


def _split_old_slices(docs: Iterable[Document]) -> list[Document]:
    """v1beta1/v1alpha3 slices with devices *and* counters become two v1 slices (see convert)."""
    docs = list(docs)
    old = [d for d in docs if d.obj.get("kind") == "ResourceSlice"
           and d.obj.get("apiVersion") in ("resource.k8s.io/v1beta1", "resource.k8s.io/v1alpha3")
           and isinstance(d.obj.get("spec"), dict) and d.obj["spec"].get("devices")
           and d.obj["spec"].get("sharedCounters")]
    if not old:
        return docs
    converted: list[Document] = []
    for d in docs:
        if d.obj.get("kind") == "ResourceSlice":
            try:
                v1 = to_v1(d.obj)
            except InputError as exc:
                raise exc.in_file(d.where) from None
            converted.append(Document(v1, d.file, d.index))
        else:
            converted.append(d)
    objs = split_counter_slices([d.obj for d in converted])
    out: list[Document] = []
    i = 0
    for d in converted:
        spec = d.obj.get("spec") if d.obj.get("kind") == "ResourceSlice" else None
        n = 2 if isinstance(spec, dict) and spec.get("devices") and spec.get("sharedCounters") else 1
        out.extend(Document(o, d.file, d.index) for o in objs[i:i + n])
        i += n
    return out


def collect(docs: Iterable[Document], strict: bool = False) -> DRAObjects:
    """Sort documents by kind; non-DRA objects are kept aside unless ``strict``."""
    out = DRAObjects()
    for doc in _split_old_slices(docs):
        kind = doc.obj.get("kind")
        if not isinstance(kind, str):
            raise InputError(f"kind must be a string, not {type(kind).__name__}", path="kind", file=doc.where)
        if kind not in _PARSERS:
            if strict:
                parse_object(doc)
            out.others.append(doc.obj)
            continue
        value = parse_object(doc)
        if isinstance(value, DeviceClass):
            if value.name in out.classes:
                raise InputError(f"DeviceClass {value.name} is defined twice", path="metadata.name", file=doc.where)
            out.classes[value.name] = value
        elif isinstance(value, ResourceSlice):
            out.slices.append(value)
        elif isinstance(value, ResourceClaim):
            out.claims.append(value)
        else:
            out.templates.append(value)
    return out


def load_node(doc: Document) -> Node:
    if doc.obj.get("kind") not in (None, "Node"):
        raise InputError(f"expected a Node, found kind {doc.obj.get('kind')!r}", path="kind", file=doc.where)
    try:
        return parse_node(doc.obj)
    except InputError as exc:
        raise exc.in_file(doc.where) from None
