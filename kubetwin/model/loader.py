"""Reading Kubernetes objects from files: YAML (multi-document), JSON, NDJSON, ``List`` kinds, stdin.

YAML is read with PyYAML's C loader under YAML 1.1 rules, as Kubernetes' own YAML reader does
(``yes``/``on`` are booleans). A text that starts with ``{`` or ``[`` is JSON (or a stream of
JSON objects, one per line) and is held to JSON's rules — a trailing comma is an error, as in
apimachinery's ``YAMLOrJSONDecoder`` — instead of being re-read as YAML flow style.

A key given twice in one mapping is an error in both syntaxes (``strict decoding error:
duplicate field``), as the API server's and the kubelet's strict decoders refuse it; YAML merge
keys (``<<``) still override as YAML says. Inputs are bounded: files over
:data:`MAX_INPUT_BYTES` and alias bombs (documents whose anchors expand past
:data:`MAX_EXPANDED_NODES`) are refused with a clear error instead of exhausting memory. Every
error names the file.

Upstream: ``k8s.io/apimachinery/pkg/util/yaml/decoder.go`` (``YAMLOrJSONDecoder``) and
sigs.k8s.io/yaml.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import yaml

from .. import limits
from ..errors import InputError

try:  # the C loader is ~10x faster; fall back quietly where libyaml is missing
    _BaseLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _BaseLoader = yaml.SafeLoader

_MERGE_TAG = "tag:yaml.org,2002:merge"


class DuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping key given twice (found while constructing, so it carries the key's line)."""


class _Loader(_BaseLoader):
    """The C loader, refusing a key given twice in one mapping (merge keys excepted)."""

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            pairs = node.value
            if len(pairs) > 1:
                seen: set[tuple[str, str]] = set()
                for key_node, _ in pairs:
                    if isinstance(key_node, yaml.ScalarNode) and key_node.tag != _MERGE_TAG:
                        k = (key_node.tag, key_node.value)
                        if k in seen:
                            raise DuplicateKeyError(
                                None, None, f'duplicate field "{key_node.value}" (the key is given twice in this mapping)',
                                key_node.start_mark)
                        seen.add(k)
        return super().construct_mapping(node, deep=deep)




class DuplicateJSONKey(ValueError):
    pass


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` refusing a key given twice (Go's strict JSON decoder does)."""
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise DuplicateJSONKey(k)
            seen.add(k)
    return d

MAX_INPUT_BYTES = limits.MAX_INPUT_BYTES.default
MAX_EXPANDED_NODES = limits.MAX_ALIAS_EXPANSION.default
MAX_DEPTH = limits.MAX_NESTING.default


#: the end of :attr:`Document.where`'s text: ``FILE: document 2 (Pod web)``
_PLACED = re.compile(r": document \d+(?: \(.*\))?$")


@dataclass(frozen=True, slots=True)
class Document:
    """One object from an input file, with where it came from (for error messages)."""

    obj: Any
    file: str
    index: int  # position among the file's objects (List items flattened)

    @property
    def where(self) -> str:
        if _PLACED.search(self.file):  # already a document's place (a scenario's ``origins``): not twice
            return self.file
        kind = self.obj.get("kind", "object") if isinstance(self.obj, dict) else "object"
        meta = self.obj.get("metadata") if isinstance(self.obj, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        label = f"{kind} {name}" if name else kind
        return f"{self.file}: document {self.index + 1} ({label})"


def read_text(path: str | Path) -> str:
    """The text of ``path`` (``-`` = stdin), refusing huge or unreadable files with a clear error."""
    name = str(path)
    max_bytes = limits.MAX_INPUT_BYTES.value()
    if name == "-":
        data = sys.stdin.buffer.read(max_bytes + 1)
        name = "<stdin>"
    else:
        p = Path(path)
        try:
            if p.is_dir():
                raise InputError("is a directory, expected a file", file=name)
            size = p.stat().st_size
            if size > max_bytes:
                raise InputError(f"file is {size} bytes, more than the {max_bytes} bytes kubetwin reads", file=name,
                                 fix=f"raise the limit with {limits.MAX_INPUT_BYTES.env}=N if this is meant")
            data = p.read_bytes()
        except FileNotFoundError:
            raise InputError("no such file", file=name, fix="check the path") from None
        except PermissionError:
            raise InputError("permission denied", file=name) from None
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", file=name) from None
    if len(data) > max_bytes:
        raise InputError(f"input is more than the {max_bytes} bytes kubetwin reads", file=name,
                         fix=f"raise the limit with {limits.MAX_INPUT_BYTES.env}=N if this is meant")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", file=name) from None


def parse_documents(text: str, file: str = "<input>") -> list[Any]:
    """All top-level documents of a YAML/JSON/NDJSON text, ``List`` objects not yet flattened."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        if _DOC_SEPARATOR.search(text) is None:
            return _load_json(text, file)
        # JSON documents between YAML separators: each one held to the rules of its syntax.
        docs: list[Any] = []
        for part in _DOC_SEPARATOR.split(text):
            if part.lstrip()[:1] in ("{", "["):
                docs.extend(_load_json(part, file))
            elif part.strip():
                docs.extend(_load_yaml(part, file))
        return docs
    return _load_yaml(text, file)


def parse_json(text: str, file: str = "<input>") -> Any:
    """Exactly one JSON document (a request body), held to the rules of JSON files: no duplicate
    keys, no ``NaN``, no trailing commas, bounded nesting."""
    docs = _load_json(text, file)
    if len(docs) != 1:
        raise InputError(f"expected one JSON document, found {len(docs)}", file=file)
    return docs[0]


def parse_yaml(text: str, file: str = "<input>") -> list[Any]:
    """The documents of a YAML text, also where it starts like JSON (YAML's flow style:
    ``{memory: 2Gi}``), with the same limits and duplicate-key rule."""
    return _load_yaml(text, file)


_DOC_SEPARATOR = re.compile(r"^---[ \t]*$", re.M)


class NotJSONConstant(ValueError):
    pass


def _not_json(name: str) -> Any:
    """``NaN``, ``Infinity``: Python's JSON reader takes them, JSON (and Go's decoder) does not."""
    raise NotJSONConstant(name)


def _load_json(text: str, file: str) -> list[Any]:
    """One JSON document, or a stream of them (NDJSON, or objects one after another)."""
    decoder = json.JSONDecoder(object_pairs_hook=_json_object, parse_constant=_not_json)
    docs = []
    pos = 0
    end = len(text)
    try:
        while True:
            while pos < end and text[pos] in " \t\r\n":
                pos += 1
            if pos >= end:
                break
            doc, pos = decoder.raw_decode(text, pos)
            docs.append(doc)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=file,
                         fix="JSON allows no trailing commas, comments or single quotes" if exc.msg.startswith(
                             ("Expecting property name", "Expecting value")) else None) from None
    except DuplicateJSONKey as exc:
        raise InputError(f'strict decoding error: duplicate field "{exc.args[0]}"', file=file,
                         fix="give each field once") from None
    except NotJSONConstant as exc:
        raise InputError(f"invalid JSON: {exc.args[0]} is not a JSON value", file=file,
                         fix="write numbers as decimal literals") from None
    except RecursionError:
        raise InputError("JSON nesting is too deep", file=file) from None
    except ValueError as exc:  # an integer of thousands of digits (Python refuses to convert it)
        raise InputError(f"invalid JSON: {_number_problem(exc)}", file=file) from None
    for i, doc in enumerate(docs):
        _check_depth(doc, file, i)
    return docs


def _load_yaml(text: str, file: str) -> list[Any]:
    try:
        if "&" in text:  # anchors present: check the aliases cannot blow up before constructing
            loader = _Loader(text)
            try:
                docs: list[Any] = []
                while loader.check_node():
                    node = loader.get_node()
                    _check_expansion(node, file, len(docs))
                    docs.append(loader.construct_document(node))
            finally:
                loader.dispose()
        else:
            docs = list(yaml.load_all(text, Loader=_Loader))
            for i, doc in enumerate(docs):
                _check_depth(doc, file, i)
    except DuplicateKeyError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark else ""
        raise InputError(f"strict decoding error: {where}{exc.problem}", file=file,
                         fix="give each field once") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark else ""
        raise InputError(f"invalid YAML at {where}{exc.problem or exc.context}", file=file) from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", file=file) from None
    except RecursionError:
        raise InputError("YAML nesting is too deep", file=file) from None
    except ValueError as exc:  # an integer of thousands of digits (Python refuses to convert it)
        raise InputError(f"invalid YAML: {_number_problem(exc)}", file=file) from None
    return [d for d in docs if d is not None]


def _number_problem(exc: ValueError) -> str:
    text = str(exc)
    if "digits" in text:
        return "a number has more than 4300 digits (nothing Kubernetes reads is that large)"
    return text


def _check_depth(root: Any, file: str, index: int) -> None:
    """Refuse a document nested deeper than ``KUBETWIN_MAX_NESTING`` (no Kubernetes object comes
    near it), so no later recursive walk can run out of stack on it."""
    if not isinstance(root, (dict, list)):
        return
    limit = limits.MAX_NESTING.value()
    stack: list[tuple[Any, int]] = [(root, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth > limit:
            raise InputError(f"nesting is deeper than {limit} levels", file=file, path=f"document {index + 1}",
                             fix=f"raise the limit with {limits.MAX_NESTING.env}=N if this is meant")
        for v in (node.values() if type(node) is dict else node):
            if type(v) is dict or type(v) is list:
                push((v, depth + 1))


def _check_expansion(root: yaml.Node, file: str, index: int) -> None:
    """Refuse documents whose aliases expand too far, before anything is constructed.

    A document may reuse anchored parts (shared resource blocks), but aliases may not multiply
    its written size by more than :data:`~kubetwin.limits.ALIAS_AMPLIFICATION` once it passes
    :data:`~kubetwin.limits.MIN_ALIAS_EXPANSION` nodes, nor expand it past
    ``KUBETWIN_MAX_ALIAS_EXPANSION`` nodes: a billion-laughs tree and a list of 810,000 aliases
    are refused in well under a second instead of being built and walked for minutes."""
    max_nodes = limits.MAX_ALIAS_EXPANSION.value()
    max_depth = limits.MAX_NESTING.value()
    sizes: dict[int, int] = {}
    on_stack: set[int] = set()
    written = 0
    where = f"document {index + 1}"

    def size(node: yaml.Node, depth: int) -> int:
        nonlocal written
        key = id(node)
        cached = sizes.get(key)
        if cached is not None:
            return cached
        if key in on_stack:
            raise InputError("YAML alias refers to itself (recursive structure)", file=file, path=where)
        if depth > max_depth:
            raise InputError(f"YAML nesting is deeper than {max_depth} levels", file=file, path=where,
                             fix=f"raise the limit with {limits.MAX_NESTING.env}=N if this is meant")
        on_stack.add(key)
        written += 1
        total = 1
        if isinstance(node, yaml.SequenceNode):
            for child in node.value:
                total += size(child, depth + 1)
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += size(k, depth + 1) + size(v, depth + 1)
        on_stack.discard(key)
        if total > max_nodes:
            raise InputError(f"YAML aliases expand the document to more than {max_nodes} nodes (alias bomb?)",
                             file=file, path=where, fix="write the document without anchors and aliases, or raise "
                             f"the limit with {limits.MAX_ALIAS_EXPANSION.env}=N if this is meant")
        sizes[key] = total
        return total

    total = size(root, 0)
    # ``written`` counts distinct nodes; each alias use is one more written node (the ``*name``).
    written += _alias_uses(root)
    if total > limits.MIN_ALIAS_EXPANSION and total > limits.ALIAS_AMPLIFICATION * written:
        raise InputError(f"YAML aliases expand the document's {written} written nodes to {total} nodes, more than "
                         f"{limits.ALIAS_AMPLIFICATION} times as many (alias bomb?)", file=file, path=where,
                         fix="write the document without anchors and aliases")


def _alias_uses(root: yaml.Node) -> int:
    """How many times an already-seen node is referred to again (each is a ``*alias`` in the text)."""
    seen: set[int] = set()
    uses = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            uses += 1
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                stack.append(k)
                stack.append(v)
    return uses


def _flatten(obj: Any, file: str = "<input>") -> Iterator[Any]:
    """``kind: List`` (and ``*List`` kinds such as ``PodList``) contribute their items.

    The list's own fields are checked strictly (a misspelt ``itmes`` is an error, not an empty
    list). Items of a typed list as the API server returns it (``PodList``) carry no kind; they
    get the list's element kind and apiVersion, as a client decoding the list would."""
    if isinstance(obj, dict) and isinstance(obj.get("kind"), str) and obj["kind"].endswith("List"):
        _check_list(obj, file)
        element = obj["kind"][:-len("List")]
        api_version = obj.get("apiVersion")
        for item in obj.get("items") or ():
            if element and isinstance(item, dict) and "kind" not in item:
                item = {"apiVersion": api_version, "kind": element, **item} if api_version else \
                    {"kind": element, **item}
            yield from _flatten(item, file)
    elif isinstance(obj, list):
        for item in obj:
            yield from _flatten(item, file)
    else:
        yield obj


def _check_list(obj: dict[str, Any], file: str) -> None:
    """The fields of every ``*List`` kind: TypeMeta, ListMeta and ``items``."""
    from .strict import ANY, INTEGER, STRING, check, list_of
    from .strict import obj as spec_obj

    check(obj, spec_obj(apiVersion=STRING, kind=STRING, items=list_of(ANY),
                        metadata=spec_obj({"continue": STRING, "remainingItemCount": INTEGER,
                                           "resourceVersion": STRING, "selfLink": STRING})),
          file=f"{file}: {obj['kind']}")
    api_version = obj.get("apiVersion")
    if obj["kind"] == "List" and api_version is not None and api_version != "v1":
        raise InputError(f'no kind "List" is registered for version "{api_version}"', path="apiVersion",
                         file=f"{file}: List", fix='a List is apiVersion: v1')


def load_documents(path: str | Path) -> list[Document]:
    """Every object in the file (``-`` = stdin), ``List`` items flattened, in order."""
    name = "<stdin>" if str(path) == "-" else str(path)
    text = read_text(path)
    docs: list[Any] = []
    for raw in parse_documents(text, name):
        for obj in _flatten(raw, name):
            if not isinstance(obj, dict):
                raise InputError(f"document {len(docs) + 1} is a {type(obj).__name__}, expected a Kubernetes object "
                                 "(a mapping with apiVersion and kind)", file=name)
            docs.append(Document(obj, name, len(docs)))
    return docs


def load_optional_mapping(path: str | Path, what: str, expected: str) -> tuple[dict[str, Any], str]:
    """A configuration file holding at most one mapping (an empty file is ``{}``), and its name:
    goresctrl's ``rdt`` and ``blockio`` files. ``expected`` describes the mapping for the error."""
    name = "<stdin>" if str(path) == "-" else str(path)
    docs = [d for d in parse_documents(read_text(path), name) if d is not None]
    if len(docs) > 1:
        raise InputError(f"expected one {what}, found {len(docs)} documents", file=name)
    doc = docs[0] if docs else {}
    if not isinstance(doc, dict):
        raise InputError(f"expected a mapping ({expected}), got {type(doc).__name__}", file=name)
    return doc, name


def load_one(path: str | Path, what: str = "object") -> Document:
    """Exactly one object, e.g. a KubeletConfiguration; a clear error otherwise."""
    docs = load_documents(path)
    if len(docs) != 1:
        name = "<stdin>" if str(path) == "-" else str(path)
        raise InputError(f"expected exactly one {what}, found {len(docs)} documents", file=name)
    return docs[0]
