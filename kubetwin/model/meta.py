"""Shared pieces of typed views: the msgspec base, ObjectMeta, label selectors, and turning
msgspec's validation errors into :class:`InputError` with a Kubernetes field path.

All typed views are msgspec ``Struct``s: frozen (immutable data in), camelCase on the wire,
unknown fields ignored (real manifests carry far more than we model), and decoded straight
from dicts at ~1 µs per small object — fast enough to load 10,000 pods well under a second.

Upstream: ``k8s.io/apimachinery/pkg/apis/meta/v1/types.go`` (``ObjectMeta``, ``LabelSelector``).
"""

from __future__ import annotations

import re
from typing import Any, Mapping, TypeVar

import msgspec

from ..errors import InputError
from .quantity import QUANTITY_FIX, Quantity, QuantityError, parse_quantity

T = TypeVar("T")


class KubeStruct(msgspec.Struct, frozen=True, rename="camel", kw_only=True, omit_defaults=True, gc=False):
    """Base of every typed Kubernetes view."""


ResourceList = dict[str, Quantity]


class OwnerReference(KubeStruct, frozen=True):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None


class ObjectMeta(KubeStruct, frozen=True):
    name: str = ""
    generate_name: str = ""
    namespace: str = "default"
    uid: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    owner_references: list[OwnerReference] = []
    resource_version: str = ""
    generation: int = 0


class LabelSelectorRequirement(KubeStruct, frozen=True):
    key: str
    operator: str
    values: list[str] = []


class LabelSelector(KubeStruct, frozen=True):
    match_labels: dict[str, str] = {}
    match_expressions: list[LabelSelectorRequirement] = []


def dec_hook(typ: type, obj: Any) -> Any:
    """msgspec's decode hook for kubetwin's structs: a ``Quantity`` from its string."""
    if typ is Quantity:
        try:
            return parse_quantity(obj)
        except QuantityError as exc:
            raise ValueError(exc.message) from None
    raise NotImplementedError(f"cannot decode {typ}")


def enc_hook(obj: Any) -> Any:
    """msgspec's encode hook for kubetwin's structs: a ``Quantity`` as its string."""
    if isinstance(obj, Quantity):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj)}")


_PATH_RE = re.compile(r"^(.*) - at `\$(.*)`$", re.S)
_SEGMENT_RE = re.compile(r"\.([A-Za-z0-9_\-]+)|\[(\d+|\.\.\.)\]")


def convert(obj: Any, typ: type[T], *, file: str | None = None, path: str = "") -> T:
    """Decode a plain dict into the typed view ``typ``; errors carry the field path.

    msgspec writes ``$.spec.containers[1].resources.limits[...]`` for a bad map value; the
    ``[...]`` is resolved against the raw object to the offending key, so the user sees
    ``spec.containers[1].resources.limits.cpu``.
    """
    try:
        return msgspec.convert(obj, typ, dec_hook=dec_hook, str_keys=True)
    except msgspec.ValidationError as exc:
        raise _to_input_error(str(exc), obj, file, path) from None


def _to_input_error(text: str, raw: Any, file: str | None, prefix: str) -> InputError:
    m = _PATH_RE.match(text)
    message, msg_path = (m.group(1), m.group(2)) if m else (text, "")
    parts: list[str] = []
    node: Any = raw
    for seg in _SEGMENT_RE.finditer(msg_path):
        field, index = seg.group(1), seg.group(2)
        if field is not None:
            parts.append(("." if parts else "") + field)
            node = node.get(field) if isinstance(node, dict) else None
        elif index == "...":
            key = _bad_key(node)
            if key is None:
                parts.append("[*]")
                node = None
            else:
                parts.append(("." if parts else "") + key)
                node = node.get(key) if isinstance(node, dict) else None
        else:
            parts.append(f"[{index}]")
            i = int(index)
            node = node[i] if isinstance(node, list) and i < len(node) else None
    path = "".join(parts)
    if prefix:
        path = f"{prefix}.{path}" if path and not path.startswith("[") else prefix + path
    message = message.replace("Expected `object`", "expected a mapping").replace("Expected `array`", "expected a list")
    message = message.replace("Expected `str`", "expected a string").replace("Expected `int`", "expected an integer")
    message = message.replace("Expected `bool`", "expected true or false")
    message = re.sub(r"`(\w+)`", r"\1", message)
    fix = QUANTITY_FIX if message.startswith('quantity "') else None
    return InputError(message, path=path, file=file, fix=fix)


def _bad_key(node: Any) -> str | None:
    """The first key of a map whose value is not a valid quantity (or not a string)."""
    if not isinstance(node, dict):
        return None
    for key, value in node.items():
        if not isinstance(key, str):
            return str(key)
        try:
            parse_quantity(value)
        except QuantityError:
            return key
    for key, value in node.items():
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            return key
    return None


def to_builtins(obj: Any) -> Any:
    """A typed view back as plain dicts (camelCase, quantities as strings), for output."""
    return msgspec.to_builtins(obj, enc_hook=enc_hook, str_keys=True)


def check_kind(obj: Mapping[str, Any], kinds: tuple[str, ...], api_versions: tuple[str, ...],
               file: str | None) -> None:
    """Refuse an object of another kind or API version, naming both."""
    kind = obj.get("kind")
    if kind not in kinds:
        from .strict import suggest

        near = suggest(kind, kinds) if isinstance(kind, str) else None
        raise InputError(f"expected kind {' or '.join(kinds)}, found {kind!r}", path="kind", file=file,
                         fix=f'did you mean "{near}"?' if near else None)
    api = obj.get("apiVersion")
    if api is not None and api not in api_versions:
        raise InputError(f"unsupported apiVersion {api!r} for {kind}", path="apiVersion", file=file,
                         fix=f"use {api_versions[0]}")
