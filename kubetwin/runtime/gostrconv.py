"""Go's ``strconv`` integer parsing and ``%q`` quoting, so errors read as the Go tools print them.

goresctrl reports bad numbers with the raw ``strconv`` error (``strconv.ParseUint: parsing "1f":
invalid syntax``) and bounds them by bit size (``ParseUint(s, 10, 7)`` refuses 128); Python's
``int()`` accepts more (``+5``, `` 5``, ``5_0``), so a faithful reader parses as Go does.
"""

from __future__ import annotations

import json
import re

_DEC = re.compile(r"[0-9]+")
_HEX = re.compile(r"[0-9a-fA-F]+")


class NumError(ValueError):
    """``*strconv.NumError``."""


def quote(s: str) -> str:
    """``%q`` of a string (JSON escaping is Go's for printable text)."""
    return json.dumps(s, ensure_ascii=False)


def parse_uint(s: str, base: int = 10, bits: int = 64) -> int:
    """``strconv.ParseUint(s, base, bits)`` for base 10 or 16."""
    pattern = _HEX if base == 16 else _DEC
    if not pattern.fullmatch(s):
        raise NumError(f"strconv.ParseUint: parsing {quote(s)}: invalid syntax")
    v = int(s, base)
    if v >= 1 << bits:
        raise NumError(f"strconv.ParseUint: parsing {quote(s)}: value out of range")
    return v


def parse_int(s: str, bits: int = 64) -> int:
    """``strconv.ParseInt(s, 10, bits)``."""
    body = s[1:] if s[:1] in ("+", "-") else s
    if not _DEC.fullmatch(body):
        raise NumError(f"strconv.ParseInt: parsing {quote(s)}: invalid syntax")
    v = int(s)
    if not -(1 << (bits - 1)) <= v < 1 << (bits - 1):
        raise NumError(f"strconv.ParseInt: parsing {quote(s)}: value out of range")
    return v


def hex_alt(v: int) -> str:
    """``%#x``."""
    return hex(v)


__all__ = ["NumError", "quote", "parse_uint", "parse_int", "hex_alt"]
