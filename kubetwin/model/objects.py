"""Loading typed objects from files: one registry from ``kind`` to decoder.

Modules that add a kind register its decoder here (:func:`register_kind`), so every command
reads mixed multi-document files the same way and every error names file, document and field.

Not an upstream module: kubetwin's own registry of the kinds it reads.
"""

from __future__ import annotations

from pathlib import Path
from types import GenericAlias
from typing import Any, Callable, Iterable

import msgspec

from ..errors import InputError
from .apischema import strict_struct
from .defaulting import api_defaults
from .kinds import check_object, refuse_kind
from .loader import Document, load_documents
from .meta import dec_hook
from .node import Node, node_from_dict
from .pod import Pod, pod_from_dict, validate_pod
from .unmodelled import not_modelled_object, not_modelled_pod

Decoder = Callable[[dict[str, Any], str | None], Any]
_DECODERS: dict[str, Decoder] = {}


def register_kind(kind: str, decoder: Decoder) -> None:
    """Make ``kind`` loadable by :func:`decode_document`; ``decoder(obj, file)`` validates."""
    _DECODERS[kind] = decoder


def warn_to_stderr(err: InputError) -> None:
    """Default sink for rules the API server enforces but upstream unit tests bend: a warning
    (an error under ``kubetwin --strict``), see :mod:`kubetwin.diagnostics`."""
    from ..diagnostics import warn

    warn(err)


def _pod_decoder(obj: dict[str, Any], file: str | None) -> Pod:
    return pod_from_dict(obj, file, warn=_current_warn, checked=True)


def _node_decoder(obj: dict[str, Any], file: str | None) -> Node:
    return node_from_dict(obj, file, checked=True)


_current_warn: Callable[[InputError], None] | None = None

register_kind("Pod", _pod_decoder)
register_kind("Node", _node_decoder)

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


def decode_document(doc: Document, kinds: tuple[str, ...] | None = None, reader: str | None = None) -> Any:
    """The typed object of a document, its kind one of ``kinds`` (default: every kind with a
    decoder), strictly decoded (:func:`~kubetwin.model.kinds.check_object`); fields that change
    ``reader``'s answer but are not modelled are reported (:mod:`kubetwin.model.unmodelled`)."""
    kind = doc.obj.get("kind")
    decoder = _decoder_for(kind) if isinstance(kind, str) and (kinds is None or kind in kinds) else None
    if decoder is None:
        accepted = kinds if kinds is not None else tuple(_DECODERS) + tuple(LAZY_KINDS)
        if not isinstance(kind, str) or not kind:
            check_object(doc.obj, f"{doc.file}: document {doc.index + 1}")  # names what is missing
        raise refuse_kind(kind, accepted, file=f"{doc.file}: document {doc.index + 1}")
    try:
        check_object(doc.obj, None)
        if kind == "Pod":
            not_modelled_pod(doc.obj, doc.where, reader=reader)
        else:
            not_modelled_object(doc.obj, doc.where, reader=reader)
        return decoder(doc.obj, None)
    except InputError as exc:
        exc.file = None
        raise exc.in_file(doc.where) from None


def load_objects(paths: str | Path | Iterable[str | Path], kinds: tuple[str, ...] | None = None,
                 warn: Callable[[InputError], None] | None = None, reader: str | None = None) -> list[Any]:
    """Typed objects from one or more files, in order; ``kinds`` restricts what is accepted;
    ``reader`` (``kubelet``, ``kube-scheduler``) selects the not-modelled fields reported."""
    global _current_warn
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out = []
    previous, _current_warn = _current_warn, warn
    try:
        for path in paths:
            for doc in load_documents(path):
                out.append(decode_document(doc, kinds, reader))
    finally:
        _current_warn = previous
    return out


def load_pods(paths: str | Path | Iterable[str | Path], warn: Callable[[InputError], None] | None = None,
              reader: str | None = None) -> list[Pod]:
    """Pods from files. JSON and NDJSON take a typed fast path (msgspec decodes bytes straight
    into :class:`Pod`, no intermediate dicts); any problem falls back to the general path,
    which produces the precise error message."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    out: list[Pod] = []
    for path in paths:
        fast = _pods_fast(path, warn, reader)
        out.extend(fast if fast is not None else load_objects(path, ("Pod",), warn=warn, reader=reader))
    return out


class _PodList(msgspec.Struct):
    items: list[Pod] = []


class _Kind(msgspec.Struct):
    kind: str = ""


_STRICT_LISTS: dict[Any, Any] = {}


def _strict_list(item: Any) -> Any:
    """``{"kind": "List", "items": [...]}`` with strictly checked items (the list's own fields are
    those of every ``*List`` kind)."""
    found = _STRICT_LISTS.get(item)
    if found is None:
        found = msgspec.defstruct("StrictList", [("apiVersion", str, ""), ("kind", str, ""),
                                                 ("metadata", dict, {}), ("items", list[item], [])],
                                  forbid_unknown_fields=True)
        _STRICT_LISTS[item] = found
    return found


def _pods_fast(path: str | Path, warn: Callable[[InputError], None] | None, reader: str | None = None) -> list[Pod] | None:
    # Decoding builds hundreds of thousands of small containers at once; the cyclic collector
    # would rescan them repeatedly while none of them can form a cycle.
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        return _pods_fast_decode(path, warn, reader)
    finally:
        if enabled:
            gc.enable()


#: JSON files up to this size take the general path, which also refuses a key given twice; larger
#: ones are machine-written (``kubectl get -o json``, trace exports — Go's encoder never repeats a
#: key) and take the fast path, which checks unknown fields and types at C speed but cannot see
#: a repeated key (msgspec keeps the last).
FAST_PATH_MIN_BYTES = 8 * 1024 * 1024


def _report_unmodelled(pods: list[Pod], path: str | Path, reader: str | None) -> None:
    """:func:`~kubetwin.model.unmodelled.not_modelled_pod` for pods decoded without dicts: the few
    that set a field it reports on are turned back into dicts."""
    from .meta import to_builtins

    for i, pod in enumerate(pods):
        s = pod.spec
        if (s.runtime_class_name or s.host_network or s.os or s.scheduling_group or s.workload_ref
                or s.resource_claims or s.active_deadline_seconds is not None):
            not_modelled_pod(to_builtins(pod), f"{path}: document {i + 1} (Pod {pod.name})", reader=reader)


def _pods_fast_decode(path: str | Path, warn: Callable[[InputError], None] | None,
                      reader: str | None = None) -> list[Pod] | None:
    if str(path) == "-":
        return None
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None  # the general path reports it
    if len(data) < FAST_PATH_MIN_BYTES:
        return None
    head = data[:64].lstrip()
    strict_pod = strict_struct("v1", "Pod")
    if strict_pod is None:
        return None
    try:
        if head.startswith(b"["):
            msgspec.json.decode(data, type=GenericAlias(list, (strict_pod,)))
            pods = msgspec.json.decode(data, type=list[Pod], dec_hook=dec_hook)
        elif head.startswith(b"{"):
            try:
                kind = msgspec.json.decode(data, type=_Kind).kind
                if kind.endswith("List"):
                    msgspec.json.decode(data, type=_strict_list(strict_pod))
                    pods = msgspec.json.decode(data, type=_PodList, dec_hook=dec_hook).items
                else:
                    msgspec.json.decode(data, type=strict_pod)
                    pods = [msgspec.json.decode(data, type=Pod, dec_hook=dec_hook)]
            except msgspec.DecodeError:
                lines = [line for line in data.splitlines() if line.strip()]
                for line in lines:
                    msgspec.json.decode(line, type=strict_pod)
                pods = [msgspec.json.decode(line, type=Pod, dec_hook=dec_hook) for line in lines]
        else:
            return None
        pods = [api_defaults(pod) for pod in pods]  # as pod_from_dict: defaulted, then validated
        for pod in pods:
            if pod.kind != "Pod" or pod.api_version != "v1":
                return None
            validate_pod(pod, warn=warn)
    except (msgspec.DecodeError, msgspec.ValidationError, InputError, TypeError):
        return None
    _report_unmodelled(pods, path, reader)
    return pods


def load_nodes(paths: str | Path | Iterable[str | Path]) -> list[Node]:
    return load_objects(paths, ("Node",))
