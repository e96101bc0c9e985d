"""Mutations of a valid seed: what users and broken tools actually feed a command.

Each mutation changes one input file (or one option value) of a seed and says whether the
result is *known invalid* — Kubernetes would refuse it whatever else the file says (binary
garbage, a field no kind has, a duplicate key, an alias bomb, nesting past any sane depth, a
non-quantity where a quantity stood, an unknown kind). For a known-invalid input, exit status 0
is a failure ("a silent wrong answer"); for the others only a traceback, a hang, invalid output
or an error that names no file is.

Mutations are classes, not single cases: a failure is reported under the mutation's name, so
one bug found ten thousand times is one line of the summary.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, replace
from typing import Any, Callable

import yaml

from .seeds import Seed

#: a key no Kubernetes type has and no free-form map accepts (not a field, label key, resource name, ...)
UNKNOWN_KEY = "fuzz unknown field!"
#: subtrees whose schema is open (any JSON): a new key or a retyped value may be valid there
OPEN_KEYS = frozenset({"parameters", "opaque", "annotations", "data", "stringData", "binaryData", "extra"})


@dataclass(frozen=True)
class Mutated:
    """A seed with one change; ``argv`` and ``files`` are what runs."""

    seed: Seed
    mutation: str
    target: str                 # the file (or option) changed
    argv: tuple[str, ...]
    files: dict[str, bytes]
    known_invalid: bool
    detail: str = ""

    def describe(self) -> str:
        return f"{self.seed.name} / {self.mutation} on {self.target}{': ' + self.detail if self.detail else ''}"


class NotApplicable(Exception):
    """The mutation has nothing to work on in this file (no mapping, no quantity, ...)."""


# ------------------------------------------------------------------ reading and writing the files


def _is_json(data: bytes) -> bool:
    return data.lstrip()[:1] in (b"{", b"[")


def _load(data: bytes) -> tuple[list[Any], bool]:
    text = data.decode()
    if _is_json(data):
        try:
            return [json.loads(text)], True
        except json.JSONDecodeError:  # NDJSON / several objects
            return [json.loads(line) for line in text.splitlines() if line.strip()], True
    return [d for d in yaml.safe_load_all(text)], False


def _dump(docs: list[Any], as_json: bool) -> bytes:
    if as_json:
        if len(docs) == 1:
            return json.dumps(docs[0], indent=1, ensure_ascii=False).encode()
        return "\n".join(json.dumps(d, ensure_ascii=False) for d in docs).encode() + b"\n"
    return yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True).encode()


Path_ = tuple[Any, ...]


def _walk(node: Any, path: Path_ = ()) -> list[tuple[Path_, Any]]:
    """Every (path, value) in a document tree, the root included."""
    out = [(path, node)]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_walk(v, path + (k,)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(_walk(v, path + (i,)))
    return out


def _get(root: Any, path: Path_) -> Any:
    for p in path:
        root = root[p]
    return root


def _set(root: Any, path: Path_, value: Any) -> Any:
    if not path:
        return value
    _get(root, path[:-1])[path[-1]] = value
    return root


def _open(path: Path_) -> bool:
    return any(isinstance(p, str) and p in OPEN_KEYS for p in path)


def _dotted(path: Path_) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(root)"


# ------------------------------------------------------------------ structural mutations


StructMutation = Callable[[random.Random, list[Any]], tuple[list[Any], bool, str]]


def _pick_doc(rng: random.Random, docs: list[Any]) -> int:
    if not docs:
        raise NotApplicable("no document")
    return rng.randrange(len(docs))


def delete_field(rng: random.Random, docs: list[Any]) -> tuple[list[Any], bool, str]:
    spots = [(d, p) for d, doc in enumerate(docs) for p, v in _walk(doc) if p and isinstance(_get(doc, p[:-1]), dict)]
    if not spots:
        raise NotApplicable("no field")
    d, p = rng.choice(spots)
    del _get(docs[d], p[:-1])[p[-1]]
    return docs, False, _dotted(p)


def unknown_field(rng: random.Random, docs: list[Any]) -> tuple[list[Any], bool, str]:
    spots = [(d, p) for d, doc in enumerate(docs) for p, v in _walk(doc) if isinstance(v, dict)]
    if not spots:
        raise NotApplicable("no mapping")
    d, p = rng.choice(spots)
    _get(docs[d], p)[UNKNOWN_KEY] = rng.choice(["x", 1, True, {"a": 1}, [1]])
    return docs, not _open(p), _dotted(p)


def misspell_field(rng: random.Random, docs: list[Any]) -> tuple[list[Any], bool, str]:
    """``resources`` → ``resorces``: a field name with one letter dropped (the classic typo)."""
    spots = [(d, p) for d, doc in enumerate(docs) for p, v in _walk(doc)
             if p and isinstance(p[-1], str) and len(p[-1]) > 3 and isinstance(_get(doc, p[:-1]), dict)
             and re.fullmatch(r"[a-z][A-Za-z]+", p[-1])]
    if not spots:
        raise NotApplicable("no field name")
    d, p = rng.choice(spots)
    parent = _get(docs[d], p[:-1])
    name = p[-1]
    i = rng.randrange(1, len(name))
    typo = name[:i] + name[i + 1:]
    if typo in parent:
        raise NotApplicable("typo collides")
    parent[typo] = parent.pop(name)
    # A misspelt field is unknown, except in free-form maps (labels, limits, featureGates keys are data).
    free = _open(p) or any(isinstance(x, str) and x in ("labels", "nodeSelector", "matchLabels", "featureGates",
                                                         "requests", "limits", "capacity", "allocatable", "entries",
                                                         "attributes", "evictionHard", "evictionSoft", "counters",
                                                         "evictionSoftGracePeriod", "evictionMinimumReclaim",
                                                         "kubeReserved", "systemReserved", "resources", "hints",
                                                         "containerMemories", "machineState", "memory",
                                                         "checksum", "allocations", "overhead", "sharedCounters",
                                                         "consumesCounters", "policyOptions", "cpuManagerPolicyOptions",
                                                         "topologyManagerPolicyOptions", "qosReserved", "podSelector",
                                                         "selector", "usage", "deviceIds")
                           for x in p[:-1])
    return docs, not free, f"{_dotted(p)} -> {typo}"


_RETYPES: list[Any] = ["fuzz!", "", 0, -1, 1.5, True, None, [], {}, [1, "a"], {"a": {"b": 1}}, float("nan"),
                       float("inf")]


def retype_field(rng: random.Random, docs: list[Any]) -> tuple[list[Any], bool, str]:
    spots = [(d, p, v) for d, doc in enumerate(docs) for p, v in _walk(doc) if p]
    if not spots:
        raise NotApplicable("no value")
    d, p, old = rng.choice(spots)
    new = rng.choice(_RETYPES)
    _set(docs[d], p, new)
    # A mapping or list where a string stood, or a string where a mapping or list stood, is
    # never valid outside open subtrees; other swaps (0 for "0", null for absent) may be.
    known = not _open(p) and bool(
        (isinstance(old, (dict, list)) and new == "fuzz!") or (isinstance(old, str) and isinstance(new, dict) and new))
    return docs, known, f"{_dotted(p)}: {type(old).__name__} -> {new!r}"


_EXTREME_NUMBERS: list[Any] = [2 ** 63, -(2 ** 63) - 1, 2 ** 64 + 1, 10 ** 30, -1, 0, 1e308, -1e308, 1e-300,
                               float("nan"), float("inf"), float("-inf"),
                               9007199254740993, 4294967296, 2 ** 31, "NaN", "Infinity", "-0"]
_EXTREME_QUANTITIES = ["1e400", "999999999999999999999999Ei", "9223372036854775807", "9223372036854775808",
                       "-1", "0", "0.000000001", "1n", "1m", "18446744073709551616Ki", "1.5.5", "1e-400",
                       "100000000000000000000000000000000000000000000000000", "1E18", "8Ei", "9Ei"]
#: not quantities at all (resource.ParseQuantity refuses them): known invalid where a quantity stood
NOT_QUANTITIES = ["E", "e3", "+", ".", "-", "1ee", "Mi", "1 Gi", "１Gi", "1Gi ", "0x10", "1_000"]
_QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")
_QUANTITY_PARENTS = frozenset({"requests", "limits", "capacity", "allocatable", "overhead", "kubeReserved",
                               "systemReserved"})


def extreme_number(rng: random.Random, docs: list[Any]) -> tuple[list[Any], bool, str]:
    spots = [(d, p) for d, doc in enumerate(docs) for p, v in _walk(doc)
             if p and isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not spots:
        raise NotApplicable("no number")
    d, p = rng.choice(spots)
    new = rng.choice(_EXTREME_NUMBERS)
    _set(docs[d], p, new)
    return docs, False, f"{_dotted(p)} = {new!r}"


def extreme_quantity(rng: random.Random, docs: list[Any]) -> tuple[list[Any], bool, str]:
    spots = [(d, p) for d, doc in enumerate(docs) for p, v in _walk(doc)
             if p and isinstance(v, str) and _QUANTITY.match(v) and not isinstance(p[-1], int)]
    if not spots:
        raise NotApplicable("no quantity")
    d, p = rng.choice(spots)
    not_quantity = rng.random() < 0.3
    new = rng.choice(NOT_QUANTITIES if not_quantity else _EXTREME_QUANTITIES)
    _set(docs[d], p, new)
    in_resource_list = len(p) >= 2 and p[-2] in _QUANTITY_PARENTS and not _open(p)
    return docs, not_quantity and in_resource_list, f"{_dotted(p)} = {new!r}"


_STRINGS = ["", " ", "\x00", "\t\n", "ü" * 3, "１２", "a" * 70000, "${HOME}", "%s%n", "-1", "0-99999999999",
            "0-3,,5", "3-1", "{{", "null", "~", "\U0001F600", "\u202e", "a/b/c/d", "UPPER_case", "1.36", "9999.0"]


def odd_string(rng: random.Random, docs: list[Any]) -> tuple[list[Any], bool, str]:
    spots = [(d, p) for d, doc in enumerate(docs) for p, v in _walk(doc) if p and isinstance(v, str)]
    if not spots:
        raise NotApplicable("no string")
    d, p = rng.choice(spots)
    new = rng.choice(_STRINGS)
    _set(docs[d], p, new)
    return docs, False, f"{_dotted(p)} = {new[:20]!r}"


def duplicate_item(rng: random.Random, docs: list[Any]) -> tuple[list[Any], bool, str]:
    spots = [(d, p) for d, doc in enumerate(docs) for p, v in _walk(doc) if isinstance(v, list) and v]
    if not spots:
        if len(docs) >= 1:
            i = rng.randrange(len(docs))
            return docs[:i + 1] + [json.loads(json.dumps(docs[i]))] + docs[i + 1:], False, "document"
        raise NotApplicable("no list")
    d, p = rng.choice(spots)
    items = _get(docs[d], p)
    i = rng.randrange(len(items))
    items.insert(i, json.loads(json.dumps(items[i])))
    return docs, False, _dotted(p)


def grow_list(rng: random.Random, docs: list[Any]) -> tuple[list[Any], bool, str]:
    """A list made long (100,000 copies of an item): sizes, not syntax, must be bounded."""
    spots = [(d, p) for d, doc in enumerate(docs) for p, v in _walk(doc) if isinstance(v, list) and v]
    if not spots:
        raise NotApplicable("no list")
    d, p = rng.choice(spots)
    items = _get(docs[d], p)
    n = rng.choice([1000, 20000, 100000])
    items.extend([items[0]] * n)
    return docs, False, f"{_dotted(p)} x{n}"


def wrong_kind(rng: random.Random, docs: list[Any]) -> tuple[list[Any], bool, str]:
    spots = [d for d, doc in enumerate(docs) if isinstance(doc, dict) and ("kind" in doc or "apiVersion" in doc)]
    if not spots:
        raise NotApplicable("no kind")
    d = rng.choice(spots)
    which = rng.randrange(4)
    if which == 0:
        docs[d]["kind"] = "FuzzKind"
        return docs, True, "kind FuzzKind"
    if which == 1:
        docs[d]["apiVersion"] = "fuzz.example.com/v0"
        return docs, True, "apiVersion fuzz.example.com/v0"
    if which == 2:
        docs[d]["kind"] = rng.choice(["Pod", "Node", "ConfigMap", "ResourceClaim", "DeviceClass", "ResourceSlice",
                                      "KubeletConfiguration", "Simulation", "List", "PodList"])
        return docs, False, f"kind {docs[d]['kind']}"
    docs[d]["apiVersion"] = rng.choice(["v1", "resource.k8s.io/v1beta1", "resource.k8s.io/v1alpha3",
                                        "kubelet.config.k8s.io/v1", "apps/v1", "kubetwin.io/v1alpha1"])
    return docs, False, f"apiVersion {docs[d]['apiVersion']}"


STRUCTURAL: dict[str, StructMutation] = {
    "delete-field": delete_field,
    "unknown-field": unknown_field,
    "misspelt-field": misspell_field,
    "retyped-field": retype_field,
    "extreme-number": extreme_number,
    "extreme-quantity": extreme_quantity,
    "odd-string": odd_string,
    "duplicated-item": duplicate_item,
    "long-list": grow_list,
    "wrong-kind": wrong_kind,
}


# ------------------------------------------------------------------ text and byte mutations


TextMutation = Callable[[random.Random, bytes], tuple[bytes, bool, str]]


def truncate(rng: random.Random, data: bytes) -> tuple[bytes, bool, str]:
    if not data:
        raise NotApplicable("empty")
    n = rng.randrange(len(data))
    return data[:n], False, f"at byte {n}"


def flip_bytes(rng: random.Random, data: bytes) -> tuple[bytes, bool, str]:
    if not data:
        raise NotApplicable("empty")
    out = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 5])):
        i = rng.randrange(len(out))
        out[i] = rng.randrange(256)
    try:
        bytes(out).decode("utf-8")
        invalid = False
    except UnicodeDecodeError:
        invalid = True
    return bytes(out), invalid, "bytes flipped" + (" (not UTF-8)" if invalid else "")


def garbage(rng: random.Random, data: bytes) -> tuple[bytes, bool, str]:
    n = rng.choice([1, 16, 1000, 100000])
    blob = bytes(rng.randrange(256) for _ in range(min(n, 4096))) * max(1, n // 4096)
    blob = b"\xff\xfe\x00" + blob  # never UTF-8
    return blob, True, f"{len(blob)} random bytes"


def empty(rng: random.Random, data: bytes) -> tuple[bytes, bool, str]:
    text = rng.choice([b"", b"\n", b"null\n", b"[]", b"{}", b"---\n---\n", b"~", b"0", b'"x"', b"- - -"])
    return text, False, repr(text)


def duplicate_key(rng: random.Random, data: bytes) -> tuple[bytes, bool, str]:
    """A ``key: value`` line of a YAML block mapping written twice."""
    if _is_json(data):
        text = data.decode()
        keys = list(re.finditer(r'\n(\s*)("[^"\n]+": [^{\[\n]+?),?\n', text))
        if not keys:
            raise NotApplicable("no simple JSON key")
        m = rng.choice(keys)
        line = m.group(1) + m.group(2).rstrip(",")
        out = text[:m.start() + 1] + line + ",\n" + text[m.start() + 1:]
        return out.encode(), _has_duplicate(out.encode()), m.group(2)[:30]
    lines = data.decode().split("\n")
    spots = [i for i, line in enumerate(lines) if re.match(r"^\s*(- )?[A-Za-z_][\w./-]*: \S", line)]
    if not spots:
        raise NotApplicable("no simple YAML key")
    i = rng.choice(spots)
    line = lines[i]
    dup = re.sub(r"^(\s*)- ", lambda m: m.group(1) + "  ", line)
    lines.insert(i + 1, dup)
    out = "\n".join(lines).encode()
    return out, _has_duplicate(out), line.strip()[:30]


def _has_duplicate(data: bytes) -> bool:
    """Independent check (PyYAML's pure-Python loader) that a mapping has a key twice."""

    class Checker(yaml.SafeLoader):
        found = False

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge"]
            if len(keys) != len(set(keys)):
                Checker.found = True
            return super().construct_mapping(node, deep=deep)

    try:
        for _ in yaml.load_all(data.decode(), Loader=Checker):
            pass
    except (yaml.YAMLError, RecursionError, ValueError):
        return False
    return Checker.found


def deep_nesting(rng: random.Random, data: bytes) -> tuple[bytes, bool, str]:
    depth = rng.choice([300, 5000, 100000])
    if _is_json(data):
        text = data.decode()
        i = text.find("{", 1)
        if i < 0:
            raise NotApplicable("no nested object")
        nest = '{"a":' * depth + "1" + "}" * depth
        m = re.search(r'("[^"]+":\s*)("[^"]*"|-?\d+|true|false|null)', text)
        if not m:
            raise NotApplicable("no scalar")
        out = text[:m.start(2)] + nest + text[m.end(2):]
        return out.encode(), True, f"depth {depth}"
    nest = "[" * depth + "]" * depth
    lines = data.decode().split("\n")
    spots = [i for i, line in enumerate(lines) if re.match(r"^\s*[A-Za-z_][\w./-]*: \S", line)]
    if not spots:
        raise NotApplicable("no YAML key")
    i = rng.choice(spots)
    key = lines[i].split(":", 1)[0]
    lines[i] = f"{key}: {nest}"
    return "\n".join(lines).encode(), True, f"depth {depth}"


def alias_bomb(rng: random.Random, data: bytes) -> tuple[bytes, bool, str]:
    """A value replaced by a billion-laughs tree or a wide list of aliases (810,000 entries)."""
    if _is_json(data):
        raise NotApplicable("JSON has no aliases")
    lines = data.decode().split("\n")
    spots = [i for i, line in enumerate(lines) if re.match(r"^[A-Za-z_][\w./-]*: \S", line)]
    if not spots:
        raise NotApplicable("no top-level key")
    i = rng.choice(spots)
    key = lines[i].split(":", 1)[0]
    if rng.random() < 0.5:
        levels = rng.choice([6, 9])
        bomb = ["fuzzbomb0: &b0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
        for n in range(1, levels):
            bomb.append(f"fuzzbomb{n}: &b{n} [" + ", ".join([f"*b{n - 1}"] * 9) + "]")
        lines[i] = f"{key}: *b{levels - 1}"
        detail = f"9^{levels} laughs"
    else:
        width = rng.choice([100000, 810000])
        bomb = ["fuzzbomb: &b {a: 1}"]
        lines[i] = f"{key}: [" + ", ".join(["*b"] * width) + "]"
        detail = f"{width} aliases"
        if width < 300000:  # tripled by expansion, not multiplied tenfold: a long list, not a bomb
            return "\n".join(bomb + lines).encode(), False, detail
    return "\n".join(bomb + lines).encode(), True, detail


def huge_number(rng: random.Random, data: bytes) -> tuple[bytes, bool, str]:
    """A number written with thousands of digits (past Python's int/str conversion limit)."""
    text = data.decode()
    spots = list(re.finditer(r"(?<=[:\[, ] )-?\d+(?=\s*[,}\]\n])|(?<=: )-?\d+$", text, re.M))
    if not spots:
        raise NotApplicable("no number")
    m = rng.choice(spots)
    digits = rng.choice([25, 400, 5000, 100000])
    return (text[:m.start()] + "9" * digits + text[m.end():]).encode(), False, f"{digits} digits"


TEXTUAL: dict[str, TextMutation] = {
    "huge-number": huge_number,
    "truncated": truncate,
    "byte-flip": flip_bytes,
    "binary-garbage": garbage,
    "empty": empty,
    "duplicate-key": duplicate_key,
    "deep-nesting": deep_nesting,
    "alias-bomb": alias_bomb,
}


# ------------------------------------------------------------------ option values


_VALUE_OPTIONS = ("--pid-max", "--seed", "--partitions", "--feature-gates", "--signal", "--cgroup", "--plugin",
                  "--kubernetes-version", "--variant", "--machine", "--driver", "--node-name", "--vendor-id",
                  "--timeout", "-j", "--cdi-class", "--weight-curve", "--node-type", "--policy", "--isolated-cpus",
                  "--delete")
_ODD_VALUES = ["", "-1", "0", "99999999999999999999", "abc", "１", "1e9", "NaN", "=", ",", "a=b=c", "x" * 5000,
               "NoSuchGate=true", "PodLevelResources=maybe", "99999s9999n9999c99t", "2s1n4c2t:mem=1e400",
               "1s1n1c1t:hugepages-1Gi=99999999999", "256s1n256c1t", "0s0c", "1s1n4c2t:gpus=100000",
               "x:kubelet.topologyManagerPolcy=none", "x:gates.NoSuch=true", "x:scheduler.percentageOfNodesToScore=1e9"]
#: option values the CLI must refuse whatever the rest of the command line says
KNOWN_BAD_VALUES = {
    "--kubernetes-version": ["abc", "+1.36", "１.３６", "1.36.", "v1.36x", ""],
    "--feature-gates": ["NoSuchGate=true", "PodLevelResources=maybe", "=true"],
    "--variant": ["x:kubelet.topologyManagerPolcy=none", "x:gates.NoSuch=true", "novalue", "x:kubelet.cpuManagerPolicy="],
    "--pid-max": ["-1", "0", "abc"],
    "--node-type": ["x", "a=1s1n4c2t,prize=1", "a=1s1n4c2t,price=-1", "a=nosuchmachine", "a=1s1n4c2t,max=0",
                    "A=1s1n4c2t", "a=1s1n4c2t,taints=k:Maybe", "a=1s1n4c2t,devices=machine",
                    "a=1s1n4c2t:gpus=2,devices=", "a=1s1n4c2t:gpus=2,devices=nosuchfile.yaml"],
    "--trace": ["", "jaeger", "file:", "otlp://host", "otlp://:4318", "http://host:99999", "grpc://host:4317",
                "ftp://host:21", "otlp://host:4318/x", " file:x"],
}


def option_value(rng: random.Random, seed: Seed) -> tuple[tuple[str, ...], bool, str]:
    argv = list(seed.argv)
    spots = [i for i, a in enumerate(argv[:-1]) if a in _VALUE_OPTIONS and argv[i + 1] not in seed.files]
    if not spots or rng.random() < 0.2:
        option = rng.choice(list(KNOWN_BAD_VALUES))
        value = rng.choice(KNOWN_BAD_VALUES[option])
        if option == "--kubernetes-version":
            if option in argv:  # the last one given wins: change it rather than add one before it
                argv[argv.index(option) + 1] = value
            else:
                argv = [option, value] + argv
        elif option == "--feature-gates" and seed.command in ("dra allocate", "schedule", "gates", "dra slices"):
            argv = argv + [option, value]
        elif option == "--variant" and seed.command == "simulate":
            argv = argv + [option, value]
        elif option == "--trace":   # a global option: every command takes it
            argv = [option, value] + argv
        elif option == "--pid-max" and seed.command == "explain":
            argv = argv + [option, value]
        elif option == "--node-type" and seed.command == "plan":
            argv = argv + [option, value]
        else:
            raise NotApplicable(f"{option} not taken by {seed.command}")
        return tuple(argv), True, f"{option} {value!r}"
    i = rng.choice(spots)
    option = argv[i]
    bad = KNOWN_BAD_VALUES.get(option, [])
    value = rng.choice(bad + _ODD_VALUES if bad else _ODD_VALUES)
    argv[i + 1] = value
    return tuple(argv), value in bad, f"{option} {value[:40]!r}"


# ------------------------------------------------------------------ putting it together


MUTATIONS = [*STRUCTURAL, *TEXTUAL, "option-value"]


def mutate(rng: random.Random, seed: Seed, mutation: str | None = None) -> Mutated:
    """One random mutation of one input of ``seed`` (raises NotApplicable when it has no target)."""
    mutation = mutation or rng.choice(MUTATIONS)
    if mutation == "option-value" or not seed.inputs:
        argv, known, detail = option_value(rng, seed)
        return Mutated(seed, "option-value", "argv", argv, dict(seed.files), known, detail)
    if not seed.inputs:
        raise NotApplicable("no input file")
    target = rng.choice(seed.inputs)
    data = seed.files[target]
    if b"fuzzbomb" in data:  # an alias bomb already: reading it here would expand it in the harness
        raise NotApplicable("alias bomb")
    if mutation in TEXTUAL:
        try:
            new, known, detail = TEXTUAL[mutation](rng, data)
        except UnicodeDecodeError:
            raise NotApplicable("not text") from None
    else:
        try:
            docs, as_json = _load(data)
        except (yaml.YAMLError, json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            raise NotApplicable("not YAML or JSON") from None
        if not docs and mutation != "wrong-kind":
            raise NotApplicable("no document")
        docs, known, detail = STRUCTURAL[mutation](rng, docs)
        new = _dump(docs, as_json)
    files = dict(seed.files)
    files[target] = new
    return Mutated(seed, mutation, target, seed.argv, files, known, detail)


def mutate_twice(rng: random.Random, seed: Seed) -> Mutated:
    """Two mutations on top of each other."""
    first = mutate(rng, seed)
    second = mutate(rng, replace(seed, argv=first.argv, files=first.files))
    # The first change stays known invalid only under a second one that cannot undo it.
    kept = first.known_invalid and first.mutation in STRUCTURAL and second.mutation in _PRESERVING
    return Mutated(seed, f"{first.mutation}+{second.mutation}", f"{first.target}+{second.target}", second.argv,
                   second.files, kept or second.known_invalid, f"{first.detail}; {second.detail}")


_PRESERVING = frozenset({"unknown-field", "extreme-number", "odd-string", "duplicated-item", "long-list",
                         "option-value"})
