"""Block-style YAML for plain data (dicts, lists, strings, numbers, booleans, null), fast.

PyYAML's dumper resolves the implicit tag of every scalar with Python regular expressions, even
with its C emitter: a 65,536-CPU MachineInfo (1.3 million scalars) takes a minute. Data that is
plain JSON needs none of that: this writer lays it out as ``yaml.safe_dump(sort_keys=False)``
does (two-space indent, sequences in mappings not indented, ``{}``/``[]`` for empty ones) and
quotes every string that a YAML 1.1 reader could take for anything but that string — so
``yaml.safe_load(dump(x)) == x`` for every such ``x`` (``tests/test_yaml_block.py`` checks it on
random data). Long strings are not folded.
"""

from __future__ import annotations

import math
import re
from typing import Any

#: Strings written plain: a letter, ``_`` or ``/`` first, then letters, digits, ``_ . / -`` and
#: inner blanks; no YAML 1.1 boolean or null word (``y``, ``no``, ``on``, ``Null``, ...).
#: Everything else is quoted.
_PLAIN = re.compile(r"[A-Za-z_/](?:[A-Za-z0-9_./ -]*[A-Za-z0-9_./-])?")
_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
_PRINTABLE = re.compile(r"[\x20-\x7e\u00a0-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*")


_DIGIT_FIRST = re.compile(r"[0-9][A-Za-z0-9_./-]*")


def _resolves_to_str(s: str) -> bool:
    """Whether a YAML 1.1 reader takes the plain scalar ``s`` for a string (``0-3``, ``2s1n4c``;
    not ``0x1f``, ``1_000``, ``1.5``, ``2001-12-14``): PyYAML's own implicit resolvers decide."""
    import yaml

    return yaml.resolver.Resolver().resolve(yaml.nodes.ScalarNode, s, (True, False)) == "tag:yaml.org,2002:str"


def _string(s: str) -> str:
    if _PLAIN.fullmatch(s) and s.lower() not in _WORDS:
        return s
    if _DIGIT_FIRST.fullmatch(s) and _resolves_to_str(s):
        return s
    if _PRINTABLE.fullmatch(s):
        return "'" + s.replace("'", "''") + "'"
    return '"' + "".join(_escape(c) for c in s) + '"'


def _escape(c: str) -> str:
    """One character of a double-quoted scalar: printable ones as they are, others escaped."""
    if c == '"' or c == "\\":
        return "\\" + c
    if _PRINTABLE.fullmatch(c):
        return c
    n = ord(c)
    return f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def _scalar(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return ".nan"
        if math.isinf(v):
            return ".inf" if v > 0 else "-.inf"
        r = repr(v)
        if "e" in r and "." not in r.split("e")[0]:
            mant, _, exp = r.partition("e")
            r = f"{mant}.0e{exp if exp[0] in '+-' else '+' + exp}"
        elif "e" in r:
            mant, _, exp = r.partition("e")
            r = f"{mant}e{exp if exp[0] in '+-' else '+' + exp}"
        return r
    if isinstance(v, str):
        return _string(v)
    raise TypeError(f"not plain data: {type(v).__name__}")


def _key(k: Any) -> str:
    return _string(k) if isinstance(k, str) else _scalar(k)


def _leaf(v: Any, strings: dict[str, str]) -> str:
    """A scalar or an empty collection, as one token (ints and repeated strings on a fast path)."""
    t = type(v)
    if t is int:
        return str(v)
    if t is str:
        got = strings.get(v)
        if got is None:
            got = _string(v)
            if len(strings) < 65536:  # a cache for repeated strings, bounded
                strings[v] = got
        return got
    if t is dict:
        return "{}"
    if t is list:
        return "[]"
    return _scalar(v)


def _mapping(d: dict, indent: int, out: list[str], strings: dict[str, str], first_prefix: str | None = None) -> None:
    pad = " " * indent
    prefix = pad if first_prefix is None else first_prefix
    for k, v in d.items():
        head = prefix + (strings.get(k) or _leaf(k, strings) if type(k) is str else _key(k)) + ":"
        prefix = pad
        t = type(v)
        if t is dict and v:
            out.append(head)
            _mapping(v, indent + 2, out, strings)
        elif t is list and v:
            out.append(head)
            _sequence(v, indent, out, strings)
        else:
            out.append(head + " " + _leaf(v, strings))


def _sequence(items: list, indent: int, out: list[str], strings: dict[str, str],
              first_prefix: str | None = None) -> None:
    pad = " " * indent
    dash = (pad if first_prefix is None else first_prefix) + "- "
    inner = pad + "- "
    for v in items:
        t = type(v)
        if t is dict and v:
            _mapping(v, indent + 2, out, strings, first_prefix=dash)
        elif t is list and v:
            _sequence(v, indent + 2, out, strings, first_prefix=dash)
        else:
            out.append(dash + _leaf(v, strings))
        dash = inner


def dump(data: Any) -> str:
    """One YAML document for ``data`` (plain data only), ending with a newline."""
    out: list[str] = []
    strings: dict[str, str] = {}
    if isinstance(data, dict) and data:
        _mapping(data, 0, out, strings)
    elif isinstance(data, list) and data:
        _sequence(data, 0, out, strings)
    else:
        out.append(_leaf(data, strings))
    return "\n".join(out) + "\n"
