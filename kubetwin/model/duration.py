"""Go ``time.Duration``: parsing (``time.ParseDuration``) and printing (``Duration.String``).

KubeletConfiguration durations (``evictionPressureTransitionPeriod: 5m``,
``cpuCFSQuotaPeriod: 100ms``) are ``metav1.Duration`` values, written as Go duration strings;
the kubelet's own messages print them back with Go's formatting (``5m0s``, ``1m30s``), so both
directions must match Go exactly — including the int64 nanosecond range and its overflow errors.

Upstream: Go's ``src/time/format.go`` (``ParseDuration``) and ``src/time/time.go``
(``Duration.String``).
"""

from __future__ import annotations

from typing import Final

from ..errors import InputError

NANOSECOND: Final = 1
MICROSECOND: Final = 1000
MILLISECOND: Final = 1000 * MICROSECOND
SECOND: Final = 1000 * MILLISECOND
MINUTE: Final = 60 * SECOND
HOUR: Final = 60 * MINUTE

_UNITS: Final = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "\u00b5s": MICROSECOND,  # U+00B5 micro sign
    "\u03bcs": MICROSECOND,  # U+03BC Greek small letter mu
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
}
_MAX: Final = 2**63 - 1
_MIN: Final = -(2**63)


class DurationError(InputError):
    """Not a Go duration; the message quotes Go's ``time`` package."""

    #: what every such error suggests unless its raiser gives a better fix
    FIX = 'a Go duration: a number and a unit (ns, us, ms, s, m, h), e.g. "90s", "1h30m", "24h"'

    def __init__(self, message: str, *, path: str = "", file: str | None = None, fix: str | None = None):
        super().__init__(message, path=path, file=file, fix=fix or self.FIX)


class Duration(int):
    """A Go duration: an int of nanoseconds that prints as Go prints it (``str(Duration(90*SECOND)) == "1m30s"``)."""

    __slots__ = ()

    @classmethod
    def parse(cls, text: str) -> "Duration":
        return cls(parse_go_duration(text))

    @property
    def seconds(self) -> float:
        return int(self) / SECOND

    def __str__(self) -> str:
        return format_go_duration(int(self))

    def __repr__(self) -> str:
        return f"Duration({format_go_duration(int(self))!r})"


def parse_go_duration(text: str) -> int:
    """``time.ParseDuration``: ``[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+`` in nanoseconds; ``"0"`` alone needs no unit."""
    if not isinstance(text, str):
        raise DurationError(f"duration must be a string like \"1m30s\", not {type(text).__name__}")
    orig = text
    quoted = _go_quote(orig)
    s = text
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise DurationError(f"time: invalid duration {quoted}")
    total = 0
    while s:
        if not (s[0] == "." or s[0].isascii() and s[0].isdigit()):
            raise DurationError(f"time: invalid duration {quoted}")
        i = 0
        while i < len(s) and s[i].isascii() and s[i].isdigit():
            i += 1
        int_digits = s[:i]
        s = s[i:]
        frac_digits = ""
        if s.startswith("."):
            s = s[1:]
            i = 0
            while i < len(s) and s[i].isascii() and s[i].isdigit():
                i += 1
            frac_digits = s[:i]
            s = s[i:]
        if not int_digits and not frac_digits:
            raise DurationError(f"time: invalid duration {quoted}")
        i = 0
        while i < len(s) and s[i] != "." and not (s[i].isascii() and s[i].isdigit()):
            i += 1
        unit = s[:i]
        s = s[i:]
        if not unit:
            raise DurationError(f"time: missing unit in duration {quoted}")
        if unit not in _UNITS:
            raise DurationError(f"time: unknown unit {_go_quote(unit)} in duration {quoted}")
        scale = _UNITS[unit]
        whole = int(int_digits or "0")
        if whole > (1 << 63) // scale:
            raise DurationError(f"time: invalid duration {quoted}")
        value = whole * scale
        if frac_digits:
            f, fscale = _leading_fraction(frac_digits)
            # Go adds the fraction in float64 and truncates: float64(f) * (float64(unit) / scale).
            value += int(float(f) * (float(scale) / fscale))
            if value > 1 << 63:
                raise DurationError(f"time: invalid duration {quoted}")
        total += value
        if total > 1 << 63:
            raise DurationError(f"time: invalid duration {quoted}")
    if neg:
        total = -total
    if total > _MAX or total < _MIN:
        raise DurationError(f"time: invalid duration {quoted}")
    return total


def _leading_fraction(digits: str) -> tuple[int, float]:
    """Go's ``leadingFraction``: digits past int64 precision are dropped, not rounded."""
    x, scale = 0, 1.0
    for ch in digits:
        if x > (2**63 - 1) // 10:
            break
        y = x * 10 + int(ch)
        if y > 1 << 63:
            break
        x = y
        scale *= 10
    return x, scale


def format_go_duration(ns: int) -> str:
    """``time.Duration.String``: ``72h3m0.5s``, ``1.5s``, ``100ms``, ``0s``."""
    if ns == 0:
        return "0s"
    neg = ns < 0
    u = -ns if neg else ns
    sign = "-" if neg else ""
    if u < SECOND:
        if u < MICROSECOND:
            return f"{sign}{u}ns"
        if u < MILLISECOND:
            return f"{sign}{_frac(u, 3)}\u00b5s"
        return f"{sign}{_frac(u, 6)}ms"
    secs = _frac(u, 9)  # seconds with trailing fraction, e.g. "30.5"
    whole_seconds = u // SECOND
    frac = secs[len(str(whole_seconds)):]
    sec_part = whole_seconds % 60
    minutes = whole_seconds // 60
    if minutes == 0:
        return f"{sign}{sec_part}{frac}s"
    hours = minutes // 60
    minutes %= 60
    if hours == 0:
        return f"{sign}{minutes}m{sec_part}{frac}s"
    return f"{sign}{hours}h{minutes}m{sec_part}{frac}s"


def _frac(value: int, digits: int) -> str:
    """``value / 10**digits`` printed without trailing zeros, as Go's ``fmtFrac``+``fmtInt``."""
    whole, rest = divmod(value, 10**digits)
    if rest == 0:
        return str(whole)
    return f"{whole}.{str(rest).rjust(digits, '0').rstrip('0')}"


def _go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` for the characters durations realistically contain."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def parse_duration(value: object, path: str = "") -> Duration:
    """A ``metav1.Duration`` field value (a Go duration string) with the field path on errors."""
    if isinstance(value, Duration):
        return value
    if not isinstance(value, str):
        raise DurationError(f"duration must be a string like \"1m30s\", not {_kind(value)}", path=path,
                            fix='quote it, e.g. "10s", "5m", "100ms"')
    try:
        return Duration(parse_go_duration(value))
    except DurationError as exc:
        exc.path = path
        raise


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    return type(value).__name__
