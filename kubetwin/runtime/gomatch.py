"""Go's ``filepath.Match`` (on Linux): the glob nri-plugins matches namespaces and values with.

It differs from Python's ``fnmatch``: ``*`` and ``?`` never match ``/``, a character class is
negated with ``^`` (not ``!``), ``\\`` escapes, and a malformed pattern is an error
(``ErrBadPattern``) rather than a literal. A pattern that is bad anywhere is reported bad even
when an earlier part already failed to match, as Go does.

Upstream: Go ``src/path/filepath/match.go``.
"""

from __future__ import annotations


class BadPattern(ValueError):
    """``filepath.ErrBadPattern``: syntax error in pattern."""

    def __init__(self) -> None:
        super().__init__("syntax error in pattern")


def match(pattern: str, name: str) -> bool:
    """``filepath.Match(pattern, name)``; raises :class:`BadPattern`."""
    while pattern:
        star, chunk, pattern = _scan_chunk(pattern)
        if star and chunk == "":
            return "/" not in name
        t, ok = _match_chunk(chunk, name)
        if ok and (len(t) == 0 or len(pattern) > 0):
            name = t
            continue
        if star:
            i = 0
            while i < len(name) and name[i] != "/":
                t, ok = _match_chunk(chunk, name[i + 1:])
                if ok:
                    if len(pattern) == 0 and len(t) > 0:
                        i += 1
                        continue
                    name = t
                    break
                i += 1
            else:
                _check_rest(pattern)
                return False
            continue
        _check_rest(pattern)
        return False
    return len(name) == 0


def _check_rest(pattern: str) -> None:
    """Go validates the remaining pattern before reporting a mismatch."""
    while pattern:
        _, chunk, pattern = _scan_chunk(pattern)
        _match_chunk(chunk, "")


def _scan_chunk(pattern: str) -> tuple[bool, str, str]:
    star = False
    while pattern and pattern[0] == "*":
        pattern = pattern[1:]
        star = True
    in_range = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if i + 1 < len(pattern):
                i += 1
        elif c == "[":
            in_range = True
        elif c == "]":
            in_range = False
        elif c == "*" and not in_range:
            break
        i += 1
    return star, pattern[:i], pattern[i:]


def _match_chunk(chunk: str, s: str) -> tuple[str, bool]:
    failed = False
    while chunk:
        if not failed and not s:
            failed = True
        c = chunk[0]
        if c == "[":
            r = ""
            if not failed:
                r, s = s[0], s[1:]
            chunk = chunk[1:]
            negated = False
            if chunk and chunk[0] == "^":
                negated = True
                chunk = chunk[1:]
            matched = False
            nrange = 0
            while True:
                if chunk and chunk[0] == "]" and nrange > 0:
                    chunk = chunk[1:]
                    break
                lo, chunk = _get_esc(chunk)
                hi = lo
                if chunk and chunk[0] == "-":
                    hi, chunk = _get_esc(chunk[1:])
                if lo <= r <= hi and not failed:
                    matched = True
                nrange += 1
            if matched == negated:
                failed = True
        elif c == "?":
            if not failed:
                if s[0] == "/":
                    failed = True
                s = s[1:]
            chunk = chunk[1:]
        elif c == "\\":
            chunk = chunk[1:]
            if not chunk:
                raise BadPattern()
            if not failed:
                if chunk[0] != s[0]:
                    failed = True
                s = s[1:]
            chunk = chunk[1:]
        else:
            if not failed:
                if chunk[0] != s[0]:
                    failed = True
                s = s[1:]
            chunk = chunk[1:]
    if failed:
        return "", False
    return s, True


def _get_esc(chunk: str) -> tuple[str, str]:
    if not chunk or chunk[0] in "-]":
        raise BadPattern()
    if chunk[0] == "\\":
        chunk = chunk[1:]
        if not chunk:
            raise BadPattern()
    r, chunk = chunk[0], chunk[1:]
    if not chunk:
        raise BadPattern()
    return r, chunk
