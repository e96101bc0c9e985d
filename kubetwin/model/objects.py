"""Loading typed objects from files: one registry from ``kind`` to decoder.

Modules that add a kind register its decoder here (:func:`register_kind`), so every command
reads mixed multi-document files the same way and every error names file, document and field.
"""

from __future__ import annotations

import sys

import msgspec
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import InputError
from .loader import Document, load_documents
from .node import Node, node_from_dict
from .meta import _dec_hook
from .pod import Pod, pod_from_dict, validate_pod

Decoder = Callable[[dict[str, Any], str | None], Any]
_DECODERS: dict[str, Decoder] = {}


def register_kind(kind: str, decoder: Decoder) -> None:
    """Make ``kind`` loadable by :func:`decode_document`; ``decoder(obj, file)`` validates."""
    _DECODERS[kind] = decoder


def warn_to_stderr(err: InputError) -> None:
    """Default sink for rules the API server enforces but upstream unit tests bend."""
    print(f"warning: {err}", file=sys.stderr)


def _pod_decoder(obj: dict[str, Any], file: str | None) -> Pod:
    return pod_from_dict(obj, file, warn=_current_warn)


_current_warn: Callable[[InputError], None] | None = None

register_kind("Pod", _pod_decoder)
register_kind("Node", node_from_dict)

# Kinds whose module registers them on import; imported only when a file holds one, so
# commands that never see them do not pay for the import.
LAZY_KINDS: dict[str, str] = {
    "ResourceQuota": "kubetwin.model.policy",
    "LimitRange": "kubetwin.model.policy",
    "PriorityClass": "kubetwin.model.policy",
}


def _decoder_for(kind: str) -> Decoder | None:
    decoder = _DECODERS.get(kind)
    if decoder is None and kind in LAZY_KINDS:
        import importlib

        importlib.import_module(LAZY_KINDS[kind])
        decoder = _DECODERS.get(kind)
    return decoder


def decode_document(doc: Document) -> Any:
    kind = doc.obj.get("kind")
    decoder = _decoder_for(kind) if isinstance(kind, str) else None
    if decoder is None:
        raise InputError(f"kind {kind!r} is not supported here", path="kind", file=f"{doc.file}: document {doc.index + 1}",
                         fix=f"supported kinds: {', '.join(sorted(_DECODERS))}")
    try:
        return decoder(doc.obj, None)
    except InputError as exc:
        exc.file = None
        raise exc.in_file(doc.where) from None


def load_objects(paths: str | Path | Iterable[str | Path], kinds: tuple[str, ...] | None = None,
                 warn: Callable[[InputError], None] | None = None) -> list[Any]:
    """Typed objects from one or more files, in order; ``kinds`` restricts what is accepted."""
    global _current_warn
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out = []
    previous, _current_warn = _current_warn, warn
    try:
        for path in paths:
            for doc in load_documents(path):
                kind = doc.obj.get("kind")
                if kinds is not None and kind not in kinds:
                    raise InputError(f"expected {' or '.join(kinds)}, found kind {kind!r}", path="kind",
                                     file=doc.where)
                out.append(decode_document(doc))
    finally:
        _current_warn = previous
    return out


def load_pods(paths: str | Path | Iterable[str | Path], warn: Callable[[InputError], None] | None = None) -> list[Pod]:
    """Pods from files. JSON and NDJSON take a typed fast path (msgspec decodes bytes straight
    into :class:`Pod`, no intermediate dicts); any problem falls back to the general path,
    which produces the precise error message."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[Pod] = []
    for path in paths:
        fast = _pods_fast(path, warn)
        out.extend(fast if fast is not None else load_objects(path, ("Pod",), warn=warn))
    return out


class _PodList(msgspec.Struct):
    items: list[Pod] = []


class _Kind(msgspec.Struct):
    kind: str = ""


def _pods_fast(path: str | Path, warn: Callable[[InputError], None] | None) -> list[Pod] | None:
    # Decoding builds hundreds of thousands of small containers at once; the cyclic collector
    # would rescan them repeatedly while none of them can form a cycle.
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        return _pods_fast_decode(path, warn)
    finally:
        if enabled:
            gc.enable()


def _pods_fast_decode(path: str | Path, warn: Callable[[InputError], None] | None) -> list[Pod] | None:
    if str(path) == "-":
        return None
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None  # the general path reports it
    head = data[:64].lstrip()
    try:
        if head.startswith(b"["):
            pods = msgspec.json.decode(data, type=list[Pod], dec_hook=_dec_hook)
        elif head.startswith(b"{"):
            try:
                kind = msgspec.json.decode(data, type=_Kind).kind
                if kind.endswith("List"):
                    pods = msgspec.json.decode(data, type=_PodList, dec_hook=_dec_hook).items
                else:
                    pods = [msgspec.json.decode(data, type=Pod, dec_hook=_dec_hook)]
            except msgspec.DecodeError:
                pods = [msgspec.json.decode(line, type=Pod, dec_hook=_dec_hook)
                        for line in data.splitlines() if line.strip()]
        else:
            return None
        for pod in pods:
            if pod.kind != "Pod" or pod.api_version != "v1":
                return None
            validate_pod(pod, warn=warn)
    except (msgspec.DecodeError, msgspec.ValidationError, InputError, TypeError):
        return None
    return pods


def load_nodes(paths: str | Path | Iterable[str | Path]) -> list[Node]:
    return load_objects(paths, ("Node",))
