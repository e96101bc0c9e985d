"""Kubernetes ``resource.Quantity`` with the API machinery's exact semantics.

A quantity is kept as an exact decimal ``unscaled * 10**scale`` (Python ints, no float), like
``inf.Dec`` in apimachinery. Parsing mirrors ``ParseQuantity``: the same scanner, suffixes,
rounding of sub-nano precision *up* (away from zero), the BinarySI cap at 2^63-1, and the
quirk that a string already in canonical form is kept verbatim (so ``+1`` and ``0100m`` print
back as written). ``str()`` is ``Quantity.String()``: ``CanonicalizeBytes``.

One deliberate difference: a string without a single digit (``E``, ``e3``, ``+``, ``.``, ``-.``)
is refused. apimachinery's scanner reads such strings as 0 (``parseQuantityString`` strips
nothing and defaults the numerator to "0"; kubernetes/apimachinery#165), although its own
documented grammar (``<signedNumber> ::= <number> | <sign><number>``, a number having digits)
and the regular expression its error quotes do not allow them. A typo that silently requests
nothing would be a wrong answer, so kubetwin refuses it, saying what Kubernetes would do.

Quantities repeat a lot in real manifests, so :func:`parse_quantity` caches by string.

Upstream: ``k8s.io/apimachinery/pkg/api/resource/quantity.go`` (and ``amount.go``,
``scale_int.go``).
"""

from __future__ import annotations

from functools import total_ordering
from typing import Final

from .. import limits
from ..errors import InputError

DECIMAL_EXPONENT: Final = "DecimalExponent"
BINARY_SI: Final = "BinarySI"
DECIMAL_SI: Final = "DecimalSI"

_DEC_SUFFIXES: Final = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DEC_BY_EXP: Final = {v: k for k, v in _DEC_SUFFIXES.items()}
_BIN_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BIN_BY_EXP: Final = {v: k for k, v in _BIN_SUFFIXES.items()}
_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")
_DIGITS: Final = frozenset("0123456789")
_MAX_INT64: Final = 2**63 - 1
_NANO: Final = -9
_MAX_INT64_FACTORS: Final = 18
#: Digits before (or after) the decimal point beyond which a quantity is refused: far past
#: int64 (19 digits), where Kubernetes' own Value()/MilliValue() already overflow.
MAX_DECIMAL_DIGITS: Final = 40

SPLIT_RE_STRING: Final = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG: Final = f"quantities must match the regular expression '{SPLIT_RE_STRING}'"
ERR_NUMERIC: Final = "unable to parse numeric part of quantity"
ERR_SUFFIX: Final = "unable to parse quantity's suffix"
ERR_NO_DIGITS: Final = "a quantity needs digits (<signedNumber><suffix>)"
NO_DIGITS_FIX: Final = ("write the number, e.g. \"0\", \"1E\" or \"1e3\"; Kubernetes' ParseQuantity reads a "
                        "quantity without digits as 0 (kubernetes/apimachinery#165), kubetwin refuses it")
QUANTITY_FIX: Final = 'use a number with an optional suffix, e.g. "500m", "2", "1Gi", "1e3"'


class QuantityError(InputError):
    """A string that is not a Kubernetes quantity; the message quotes apimachinery's."""


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """apimachinery's ``parseQuantityString``: (positive, value, num, denom, suffix)."""
    positive = True
    pos = 0
    end = len(text)
    if end and text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while True:  # strip leading zeros
        if pos >= end:
            return positive, "0", "0", "", ""
        if text[pos] != "0":
            break
        pos += 1
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos]
    if pos >= end:
        return positive, text, num, "", ""
    if not num:
        num = "0"
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos >= end:
        return positive, value, num, denom, text[suffix_start:]
    if text[pos] in "+-":
        pos += 1
    while pos < end:
        if text[pos] not in _DIGITS:
            raise ValueError(ERR_FORMAT_WRONG)
        pos += 1
    return positive, value, num, denom, text[suffix_start:]


def _has_digits(text: str) -> bool:
    """Whether the number before the suffix (``[+-]?[0-9.]*``) has a digit."""
    for i, ch in enumerate(text):
        if ch in _DIGITS:
            return True
        if ch == "." or (i == 0 and ch in "+-"):
            continue
        return False
    return False


def _max_digits() -> int:
    return min(limits.MAX_QUANTITY_DIGITS.value(), 4000)


def _interpret(suffix: str) -> tuple[int, int, str] | None:
    if suffix in _DEC_SUFFIXES:
        return 10, _DEC_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BIN_SUFFIXES:
        return 2, _BIN_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        rest = suffix[1:]
        body = rest[1:] if rest[0] in "+-" else rest
        if body and body.isdigit() and body.isascii():
            exp = int(rest)
            if -(2**63) <= exp < 2**63:
                return 10, (exp + 2**31) % 2**32 - 2**31, DECIMAL_EXPONENT  # Go's int32 cast
    return None


def _round_up(unscaled: int, scale: int, to_scale: int) -> tuple[int, int, bool]:
    """Round ``unscaled*10**scale`` to ``to_scale`` away from zero; third item: exact."""
    if scale >= to_scale:
        return unscaled * 10 ** (scale - to_scale), to_scale, True
    div = 10 ** (to_scale - scale)
    q, r = divmod(abs(unscaled), div)
    if r:
        q += 1
    return (q if unscaled >= 0 else -q), to_scale, r == 0


def _int64s(*values: int) -> bool:
    """All fit an int64: else upstream's ``int64Amount`` arithmetic falls back to ``inf.Dec``."""
    return all(-(2**63) <= v <= _MAX_INT64 for v in values)


def _sum_dec(x: "Quantity", y: "Quantity", s: int, a: int, b: int, total: int) -> int | None:
    """The Dec scale of ``x ± y`` upstream: int64Amount while both are and nothing overflows."""
    if x._dec is None and y._dec is None and _int64s(a, b, total):
        return None
    return min(x.scale if x._dec is None else x._dec, y.scale if y._dec is None else y._dec, s)


def _go_int64(value: int) -> int:
    """``big.Int.Int64()`` / int64 overflow: the low 64 bits, two's complement."""
    return (value + 2**63) % 2**64 - 2**63


def _dec_scaled_down(unscaled: int, dif: int) -> int:
    """``scaledValue`` for a negative ``inf.Dec`` scaled down by ``10**dif`` (``scale_int.go``)."""
    if dif < 19:  # int64 fast path: Go's truncating division, plus one if a remainder was cut
        u = _go_int64(unscaled)
        d = 10**dif
        q = -(-u // d) if u < 0 else u // d
        return _go_int64(q + 1) if abs(u) % d else q
    q, r = divmod(unscaled, 10**dif)  # big.Int.DivMod: Euclidean (floor for a positive divisor)
    return _go_int64(_go_int64(q) + 1) if r else _go_int64(q)


def _remove_factors(value: int, base: int) -> tuple[int, int]:
    times = 0
    neg = value < 0
    v = -value if neg else value
    while v >= base and v % base == 0:
        v //= base
        times += 1
    return (-v if neg else v), times


@total_ordering
class Quantity:
    """An immutable Kubernetes quantity. Compare, add and subtract exactly."""

    __slots__ = ("unscaled", "scale", "format", "_s", "_canonical", "_dec")

    def __init__(self, unscaled: int = 0, scale: int = 0, format: str = DECIMAL_SI, s: str | None = None,
                 dec: int | None = None):
        self.unscaled = unscaled
        self.scale = scale
        self.format = format
        self._s = s
        self._canonical: str | None = None   # worked out once: pods of one shape are keyed by it
        #: where upstream holds this value as an ``inf.Dec`` (not an ``int64Amount``), the exponent
        #: of that Dec's scale: its ``ScaledValue`` rounds negative values differently and works
        #: on the Dec's own digits (see :meth:`scaled_value`); None for an ``int64Amount``
        self._dec = dec

    # --- construction -----------------------------------------------------------------
    @staticmethod
    def parse(text: str) -> "Quantity":
        """``ParseQuantity``; raises :class:`QuantityError` with apimachinery's message."""
        if not isinstance(text, str):
            raise QuantityError(f"quantity must be a string or number, not {type(text).__name__}")
        if not text:
            raise QuantityError(ERR_FORMAT_WRONG)
        if text == "0":
            return Quantity(0, 0, DECIMAL_SI, "0")
        try:
            positive, value, num, denom, suffix = _scan(text)
        except ValueError:
            raise QuantityError(ERR_FORMAT_WRONG) from None
        interp = _interpret(suffix)
        if interp is None:
            raise QuantityError(ERR_SUFFIX)
        if not _has_digits(text):  # Kubernetes reads it as 0: see the module docstring
            raise QuantityError(ERR_NO_DIGITS, fix=NO_DIGITS_FIX)
        base, exponent, fmt = interp
        if len(num) + len(denom) > _max_digits():
            # Kubernetes reads any number of digits; Python refuses to convert more than 4300 and
            # nothing in a cluster can use such a number: a limit, not a parse.
            raise QuantityError(f"quantity has more than {_max_digits()} digits (kubetwin's limit; raise it with "
                                f"{limits.MAX_QUANTITY_DIGITS.env}=N)")
        if not num.isdigit() or not (denom == "" or denom.isdigit()) or not num.isascii() or not denom.isascii():
            raise QuantityError(ERR_NUMERIC)
        if fmt != BINARY_SI and (num + denom).strip("0") and (len(num) + exponent > MAX_DECIMAL_DIGITS
                                                               or exponent - len(denom) < -MAX_DECIMAL_DIGITS):
            # Kubernetes parses such strings but then computes with int64 (Value/MilliValue):
            # nothing in a cluster can use them, and exact arithmetic on them would not end.
            raise QuantityError(f"quantity is out of range: more than {MAX_DECIMAL_DIGITS} decimal digits "
                                "before or after the point")

        precision = 0
        scale = 0
        mantissa = 1
        if fmt in (DECIMAL_EXPONENT, DECIMAL_SI):
            scale = exponent
            precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
        elif exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        else:
            precision = -1
        if precision >= 0:
            scale -= len(denom)
            if scale >= _NANO:
                shifted = num + denom
                ivalue = int(shifted)
                if ivalue > _MAX_INT64:
                    raise QuantityError(ERR_NUMERIC)
                result = ivalue * mantissa
                if -(2**63) <= result <= _MAX_INT64:
                    if result == 0:
                        scale = 0  # zero has no magnitude: keep exact arithmetic on it cheap
                    if not positive:
                        result = -result
                    keep = None
                    if fmt == BINARY_SI:
                        if exponent % 10 == 0 and (ivalue & 7) != 0:
                            keep = text
                    elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                        keep = text
                    return Quantity(result, scale, fmt, keep)

        # Slow path: exact decimal of ``value`` (sign, digits, optional fraction).
        digits = value.lstrip("+-")
        neg = value.startswith("-")
        int_part, _, frac = digits.partition(".")
        if not (int_part or frac) or not (int_part or "0").isdigit() or (frac and not frac.isdigit()):
            raise QuantityError(ERR_NUMERIC)
        unscaled = int((int_part or "0") + frac)
        dscale = -len(frac)
        if base == 10:
            dscale += exponent
        else:
            unscaled <<= exponent
        if unscaled != 0:
            unscaled, dscale, _ = _round_up(unscaled, dscale, _NANO) if dscale < _NANO else (unscaled, dscale, True)
        capped = fmt == BINARY_SI and _cmp_parts(unscaled, dscale, _MAX_INT64, 0) > 0
        if capped:
            unscaled, dscale = _MAX_INT64, 0
        if fmt == BINARY_SI and unscaled > 0 and _cmp_parts(unscaled, dscale, 1, 0) < 0:
            fmt = DECIMAL_SI
        if neg:
            unscaled = -unscaled
        # inf.Dec.Round(…, 9, RoundUp) leaves every non-zero value at nano scale; the cap is 2^63-1
        dec_scale = dscale if unscaled == 0 else 0 if capped else _NANO
        return Quantity(unscaled, dscale, fmt, dec=dec_scale)

    @staticmethod
    def from_int(value: int, format: str = DECIMAL_SI) -> "Quantity":
        return Quantity(value, 0, format)

    @staticmethod
    def from_milli(milli: int, format: str = DECIMAL_SI) -> "Quantity":
        return Quantity(milli, -3, format)

    # --- values -----------------------------------------------------------------------
    def scaled_value(self, scale: int) -> int:
        """``ScaledValue``: the value in units of ``10**scale``, rounded up away from zero.

        Bug for bug: a negative value that upstream holds as an ``inf.Dec`` goes through
        ``scaledValue`` (``scale_int.go``), which truncates toward zero and then adds one when
        anything was cut off (``-.128Gi``: ``Value()`` is ``-137438952``; ``-2851.3753122n``:
        ``MilliValue()`` is ``1``), on the Dec's own digits at its own scale (nano after
        parsing), wrapping like Go's int64; found by differential testing against apimachinery
        v0.36.3. Values upstream holds as ``int64Amount`` round away from zero.
        """
        if self._dec is not None and self.unscaled < 0:
            digits = self.unscaled * 10 ** (self.scale - self._dec)  # the Dec's own unscaled value
            dif = scale - self._dec
            if dif > 0:
                return _dec_scaled_down(digits, dif)
            return _go_int64(_go_int64(digits) * 10**-dif)
        return _round_up(self.unscaled, self.scale, scale)[0]

    def value(self) -> int:
        """``Value()``: whole units, rounded up (``1500m`` -> 2)."""
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """``MilliValue()``: thousandths, rounded up (``1n`` -> 1)."""
        return self.scaled_value(-3)

    def is_zero(self) -> bool:
        return self.unscaled == 0

    def sign(self) -> int:
        return (self.unscaled > 0) - (self.unscaled < 0)

    def as_float(self) -> float:
        return self.unscaled * 10.0**self.scale

    def exact(self) -> tuple[int, int]:
        return self.unscaled, self.scale

    # --- arithmetic (results drop the cached string, as Add/Sub clear ``s``) -----------------
    def __add__(self, other: "Quantity") -> "Quantity":
        s = min(self.scale, other.scale)
        a = self.unscaled * 10 ** (self.scale - s)
        b = other.unscaled * 10 ** (other.scale - s)
        fmt = other.format if self.unscaled == 0 else self.format
        return Quantity(a + b, s, fmt, dec=_sum_dec(self, other, s, a, b, a + b))

    def __sub__(self, other: "Quantity") -> "Quantity":
        s = min(self.scale, other.scale)
        a = self.unscaled * 10 ** (self.scale - s)
        b = other.unscaled * 10 ** (other.scale - s)
        fmt = other.format if self.unscaled == 0 else self.format
        return Quantity(a - b, s, fmt, dec=_sum_dec(self, other, s, a, b, a - b))

    def __neg__(self) -> "Quantity":
        return Quantity(-self.unscaled, self.scale, self.format, dec=self._dec)

    def mul(self, factor: int) -> "Quantity":
        return Quantity(self.unscaled * factor, self.scale, self.format)

    # --- comparison ---------------------------------------------------------------------
    def cmp(self, other: "Quantity") -> int:
        return _cmp_parts(self.unscaled, self.scale, other.unscaled, other.scale)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) == 0

    def __lt__(self, other: "Quantity") -> bool:
        return self.cmp(other) < 0

    def __hash__(self) -> int:
        u, s = self.unscaled, self.scale
        if u == 0:
            return 0
        while u % 10 == 0:
            u //= 10
            s += 1
        return hash((u, s))

    # --- formatting ---------------------------------------------------------------------
    def __str__(self) -> str:
        if self._s is not None:
            return self._s
        c = self._canonical
        if c is None:
            c = self._canonical = self.canonical()
        return c

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def canonical(self) -> str:
        """``CanonicalizeBytes`` joined: the form the API server writes back."""
        if self.unscaled == 0:
            return "0"
        fmt = self.format
        if fmt == BINARY_SI:
            if _cmp_parts(self.unscaled, self.scale, -1024, 0) > 0 and _cmp_parts(self.unscaled, self.scale, 1024, 0) < 0:
                fmt = DECIMAL_SI
            else:
                rounded, _, exact = _round_up(self.unscaled, self.scale, 0)
                if not exact:
                    fmt = DECIMAL_SI
        elif fmt not in (DECIMAL_SI, DECIMAL_EXPONENT):
            fmt = DECIMAL_EXPONENT
        if fmt == BINARY_SI:
            amount, times = _remove_factors(rounded, 1024)
            return f"{amount}{_BIN_BY_EXP.get(times * 10, '')}"
        amount, times = _remove_factors(self.unscaled, 10)
        exponent = self.scale + times
        while exponent % 3 != 0:
            amount *= 10
            exponent -= 1
        if fmt == DECIMAL_SI:
            return f"{amount}{_DEC_BY_EXP.get(exponent, '')}"
        return f"{amount}e{exponent}" if exponent else str(amount)


def _cmp_parts(u1: int, s1: int, u2: int, s2: int) -> int:
    s = min(s1, s2)
    a = u1 * 10 ** (s1 - s)
    b = u2 * 10 ** (s2 - s)
    return (a > b) - (a < b)


_CACHE: dict[str, Quantity] = {}
ZERO: Final = Quantity(0, 0, DECIMAL_SI, "0")


def parse_quantity(value: object, path: str = "") -> Quantity:
    """Parse a manifest value (string or YAML/JSON number) into a :class:`Quantity`.

    Numbers are accepted as the API server accepts them in JSON (``cpu: 2``). Errors name
    the bad string; ``path`` is the field it came from.
    """
    if isinstance(value, str):
        q = _CACHE.get(value)
        if q is not None:
            return q
        text = value
    elif isinstance(value, bool) or value is None:
        raise QuantityError(f"quantity must be a string or number, not {_kind(value)}", path=path,
                            fix='write it as a string, e.g. "500m" or "1Gi"')
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise QuantityError(f"quantity {value!r} is not a finite number", path=path)
        text = repr(value)
        if "e" in text or "E" in text:
            mant, _, exp = text.partition("e")
            text = f"{mant}e{int(exp)}"
    elif isinstance(value, Quantity):
        return value
    else:
        raise QuantityError(f"quantity must be a string or number, not {_kind(value)}", path=path)
    try:
        q = Quantity.parse(text)
    except QuantityError as exc:
        shown = text if len(text) <= 80 else f"{text[:40]}...({len(text)} characters)"
        raise QuantityError(f'quantity "{shown}" is invalid: {exc.message}', path=path,
                            fix=exc.fix or QUANTITY_FIX) from None
    if len(_CACHE) < 65536:
        _CACHE[text] = q
    return q


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return type(value).__name__
