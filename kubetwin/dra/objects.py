"""Reading DRA objects from manifests: every version strictly decoded as written (unknown fields
refused as the API server of that version refuses them), then converted to v1; errors name the
file, the object and the field.

Upstream: the resource.k8s.io types of
``staging/src/k8s.io/api/resource/{v1,v1beta2,v1beta1,v1alpha3}/types.go``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..errors import InputError
from ..model.kinds import check_builtin, check_object, ignored
from ..model.loader import Document
from .api import (
    DeviceClass,
    Node,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    parse_device_class,
    parse_node,
    parse_resource_claim,
    parse_resource_claim_template,
    parse_resource_slice,
)
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


def _is_dra(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("kind")
    return isinstance(kind, str) and kind in _PARSERS


def check_document(doc: Document) -> None:
    """Strict decoding of a DRA object in the version it is written in (before conversion)."""
    check_object(doc.obj, doc.where, kinds=tuple(_PARSERS), what="as a DRA object")


def parse_object(doc: Document, *, checked: bool = False) -> Any:
    """One DRA object from a document; an :class:`InputError` names the file and field path.
    ``checked``: :func:`check_document` already ran on it (or on what it was converted from)."""
    obj = doc.obj
    if not checked:
        check_document(doc)
    parser = _PARSERS[obj["kind"]]
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


def collect(docs: Iterable[Document], strict: bool = False, *, checked: bool = False,
            reader: str = "kubetwin dra") -> DRAObjects:
    """Sort documents by kind. Every object is strictly decoded first (unless ``checked``: its
    reader already did); non-DRA objects are refused if ``strict``, else kept aside with a
    warning that ``reader`` does not read them."""
    out = DRAObjects()
    docs = list(docs)
    if not checked:
        for doc in docs:
            if strict or _is_dra(doc.obj):
                check_document(doc)
            else:
                check_object(doc.obj, doc.where)
                ignored(str(doc.obj.get("kind")), reader, file=doc.where)
    for doc in _split_old_slices(docs):
        kind = doc.obj.get("kind")
        if not isinstance(kind, str):
            raise InputError(f"kind must be a string, not {type(kind).__name__}", path="kind", file=doc.where)
        if not _is_dra(doc.obj):
            out.others.append(doc.obj)
            continue
        value = parse_object(doc, checked=True)
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
    """The node to allocate on: a Node, or only its ``metadata`` (name and labels) without kind."""
    if doc.obj.get("kind") is None:
        check_builtin(doc.obj, "v1", "Node", doc.where)
    else:
        check_object(doc.obj, doc.where, kinds=("Node",))
    try:
        return parse_node(doc.obj)
    except InputError as exc:
        raise exc.in_file(doc.where) from None
