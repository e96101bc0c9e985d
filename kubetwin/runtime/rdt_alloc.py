"""goresctrl's allocation arithmetic: bit lists, cache proportions, their overlay on a partition's mask.

The pieces of ``pkg/rdt/config.go`` and ``bitmask.go`` that do not depend on a configuration:
``listStrToBitmask`` / ``listStrToArray`` (bit numbers 0..63, cache ids -128..127, with Go's
``strconv`` errors), ``CacheProportion.parse`` (``"50%"``, ``"50-60%"``, ``"0xff0"``, ``"4-11"``;
one contiguous block of at least ``min_cbm_bits`` bits), the allocation kinds and their
``Overlay`` on a base mask (percentages widened to ``min_cbm_bits``), and ``CatConfig.toSchema`` /
``MbaConfig.toSchema`` (per cache id; ``all`` as the default). :mod:`.rdt` builds on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from . import gostrconv as sc
from .resctrl import MAX_UINT32, MAX_UINT64

CACHE_ID_ALL = "all"
UNIFIED, CODE, DATA = "unified", "code", "data"
SCHEMA_TYPES = (UNIFIED, CODE, DATA)


# --- bitmasks and number lists -------------------------------------------------------------------


def _lsb_one(b: int) -> int:
    return (b & -b).bit_length() - 1 if b else -1


def _msb_one(b: int) -> int:
    return b.bit_length() - 1


def lsb_zero(b: int) -> int:
    """Position of the lowest zero bit of a 64-bit value (64 when all are ones)."""
    inv = ~b & MAX_UINT64
    return _lsb_one(inv) if inv else 64


def list_str_to_bitmask(s: str) -> int:
    """``listStrToBitmask``: ``"0-3,8"`` -> ``0x10f``; bit numbers 0..63."""
    b = 0
    if not s:
        return b
    for ran in s.split(","):
        parts = ran.split("-", 1)
        try:
            bit = sc.parse_uint(parts[0], 10, 6)
        except sc.NumError as exc:
            raise ValueError(f"invalid bitmask {sc.quote(s)}: {exc}") from None
        if len(parts) == 1:
            b |= 1 << bit
        else:
            try:
                end = sc.parse_uint(parts[1], 10, 6)
            except sc.NumError as exc:
                raise ValueError(f"invalid bitmask {sc.quote(s)}: {exc}") from None
            if end <= bit:
                raise ValueError(f"invalid range {sc.quote(ran)} in bitmask {sc.quote(s)}")
            b |= (((1 << (end - bit + 1)) - 1) << bit) & MAX_UINT64
    return b


def bitmask_list_str(b: int) -> str:
    """``bitmask.listStr``: ``0x1d1a`` -> ``"1,3-4,8,10-12"``."""
    out, run_start = [], None
    for i in range(65):
        on = i < 64 and (b >> i) & 1
        if on and run_start is None:
            run_start = i
        elif not on and run_start is not None:
            out.append(str(run_start) if i - 1 == run_start else f"{run_start}-{i - 1}")
            run_start = None
    return ",".join(out)


def list_str_to_array(s: str) -> list[int]:
    """``listStrToArray``: cache-id lists such as ``"0-1"`` or ``"2,3"`` (ids -128..127), sorted."""
    out: list[int] = []
    if not s:
        return out
    for ran in s.split(","):
        parts = ran.split("-", 1)
        try:
            num = sc.parse_int(parts[0], 8)
        except sc.NumError as exc:
            raise ValueError(f"invalid integer {sc.quote(s)}: {exc}") from None
        if len(parts) == 1:
            out.append(num)
        else:
            try:
                end = sc.parse_int(parts[1], 8)
            except sc.NumError as exc:
                raise ValueError(f"invalid integer in range {sc.quote(s)}: {exc}") from None
            if end <= num:
                raise ValueError(f"invalid integer range {sc.quote(ran)} in {sc.quote(s)}")
            out.extend(range(num, end + 1))
    return sorted(out)


# --- cache allocations ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Absolute:
    """``catAbsoluteAllocation``: a bitmask relative to the partition's mask."""

    mask: int

    def overlay(self, base: int, min_bits: int) -> int:
        _verify_base_mask(base, min_bits)
        shift = _lsb_one(base)
        bmask = (self.mask << shift) & MAX_UINT64
        if bmask | base != base:
            raise ValueError(f"bitmask {hex(bmask)} ({hex(self.mask)} << {shift}) does not fit basemask {hex(base)}")
        return bmask


@dataclass(frozen=True, slots=True)
class PctRange:
    """``catPctRangeAllocation``: the ``low``..``high`` percent of the partition's mask."""

    low: int
    high: int

    def overlay(self, base: int, min_bits: int) -> int:
        _verify_base_mask(base, min_bits)
        base_lsb, base_msb = _lsb_one(base), _msb_one(base)
        nbits = base_msb - base_lsb + 1
        low, high = self.low, self.high
        if low == 0:
            low = 1
        if low > high or low > 100 or high > 100:
            raise ValueError(f"invalid percentage range in {{{self.low} {self.high}}}")
        lsb = (low - 1) * nbits // 100
        msb = (high - 1) * nbits // 100
        num = msb - lsb + 1
        if num < min_bits:
            gap = min_bits - num
            if gap <= lsb:
                lsb -= gap
                gap = 0
            else:
                gap -= lsb
                lsb = 0
            available = nbits - msb - 1
            if gap <= available:
                msb += gap
            else:
                raise ValueError(f"BUG: not enough bits available for cache bitmask ({{{self.low} {self.high}}} "
                                 f"applied on basemask {hex(base)})")
        return (((1 << (msb - lsb + 1)) - 1) << (lsb + base_lsb)) & MAX_UINT64


@dataclass(frozen=True, slots=True)
class Pct:
    """``catPctAllocation``: the lowest ``pct`` percent of the partition's mask."""

    pct: int

    def overlay(self, base: int, min_bits: int) -> int:
        return PctRange(0, self.pct).overlay(base, min_bits)


CacheAllocation = Absolute | Pct | PctRange


def _verify_base_mask(base: int, min_bits: int) -> None:
    if base == 0:
        raise ValueError("empty basemask not allowed")
    width = _msb_one(base) - _lsb_one(base) + 1
    ones = bin(base).count("1")
    if ones != width:
        raise ValueError(f"invalid basemask {hex(base)}: more than one block of bits set")
    if ones < min_bits:
        raise ValueError(f"invalid basemask {hex(base)}: fewer than {min_bits} bits set")


def parse_cache_proportion(c: str, min_bits: int) -> CacheAllocation | None:
    """``CacheProportion.parse``: ``"50%"``, ``"50-60%"``, ``"0xff0"`` or ``"4-11"``; ``""`` is unset."""
    if c == "":
        return None
    if c.endswith("%"):
        parts = c[:-1].split("-", 1)
        try:
            if len(parts) == 1:
                pct = sc.parse_uint(parts[0], 10, 7)
                if pct > 100:
                    raise ValueError(f"invalid percentage value {sc.quote(c)}")
                return Pct(pct)
            low = sc.parse_uint(parts[0], 10, 7)
            high = sc.parse_uint(parts[1], 10, 7)
        except sc.NumError as exc:
            raise ValueError(str(exc)) from None
        if low > high or low > 100 or high > 100:
            raise ValueError(f"invalid percentage range {sc.quote(c)}")
        return PctRange(low, high)
    if c.startswith("0x"):
        try:
            value = sc.parse_uint(c[2:], 16, 64)
        except sc.NumError as exc:
            raise ValueError(str(exc)) from None
    else:
        value = list_str_to_bitmask(c)
    ones = bin(value).count("1")
    trailing = _lsb_one(value) if value else 64
    if ones != value.bit_length() - trailing:
        raise ValueError(f"invalid cache bitmask {sc.quote(c)}: more than one continuous block of ones")
    if ones < min_bits:
        raise ValueError(f"invalid cache bitmask {sc.quote(c)}: number of bits less than {min_bits}")
    return Absolute(value)


@dataclass(frozen=True, slots=True)
class CatAllocation:
    """``catAllocation``: the unified mask and, for CDP, separate code and data masks."""

    unified: CacheAllocation | None = None
    code: CacheAllocation | None = None
    data: CacheAllocation | None = None

    def get(self, typ: str) -> CacheAllocation | None:
        return self.code if typ == CODE else self.data if typ == DATA else self.unified

    def effective(self, typ: str) -> CacheAllocation | None:
        """``getEffective``: code/data fall back to unified."""
        v = self.get(typ)
        return v if v is not None else self.unified

    def replace(self, typ: str, value: CacheAllocation) -> "CatAllocation":
        return CatAllocation(value if typ == UNIFIED else self.unified, value if typ == CODE else self.code,
                             value if typ == DATA else self.data)


def parse_cache_id_config(value: Any, min_bits: int) -> CatAllocation:
    """``CacheIdCatConfig.parse``: a string is the unified mask; code and data go in pairs."""
    if isinstance(value, dict):
        u, c, d = value.get(UNIFIED) or "", value.get(CODE) or "", value.get(DATA) or ""
    else:
        u, c, d = value or "", "", ""
    a = CatAllocation(parse_cache_proportion(u, min_bits), parse_cache_proportion(c, min_bits),
                      parse_cache_proportion(d, min_bits))
    text = "{" + " ".join((u, c, d)) + "}"
    if a.unified is None:
        raise ValueError(f"'unified' not specified in cache schema {text}")
    if a.code is not None and a.data is None:
        raise ValueError(f"'code' specified but missing 'data' from cache schema {text}")
    if a.code is None and a.data is not None:
        raise ValueError(f"'data' specified but missing 'code' from cache schema {text}")
    return a


def _cat_items(cfg: Any) -> list[tuple[str, Any]] | None:
    """A CatConfig as (key, value) pairs: a bare string is ``{"all": string}``; None is unset."""
    if cfg is None:
        return None
    if isinstance(cfg, str):
        return [(CACHE_ID_ALL, cfg)]
    return list(cfg.items())


def cat_to_schema(cfg: Any, cache_ids: Sequence[int], min_bits: int) -> dict[int, CatAllocation] | None:
    """``CatConfig.toSchema``: the allocation of every cache id (``all`` pre-filled; default 100%)."""
    items = _cat_items(cfg)
    if items is None:
        return None
    default = dict(items).get(CACHE_ID_ALL, UNIFIED_100)
    default_val = parse_cache_id_config(default, min_bits)
    out = {i: default_val for i in cache_ids}
    for key, val in items:
        if key == CACHE_ID_ALL:
            continue
        ids = list_str_to_array(key)
        parsed = parse_cache_id_config(val, min_bits)
        for i in ids:
            if i in out:
                out[i] = parsed
    return out


UNIFIED_100 = "100%"


def _mb_items(cfg: Any) -> list[tuple[str, Any]] | None:
    if cfg is None:
        return None
    if isinstance(cfg, list):
        return [(CACHE_ID_ALL, cfg)]
    return list(cfg.items())


def _parse_mba(values: Sequence[str], mbps: bool) -> int:
    """``CacheIdMbaConfig.parse``: the first value in the unit the kernel uses (``%`` or ``MBps``)."""
    for v in values:
        s = str(v)
        try:
            if s.endswith("%"):
                if not mbps:
                    return sc.parse_uint(s[:-1], 10, 7)
            elif s.endswith("MBps"):
                if mbps:
                    return sc.parse_uint(s[:-4], 10, 32)
            # other units: goresctrl logs "unrecognized MBA allocation unit" and goes on
        except sc.NumError as exc:
            raise ValueError(str(exc)) from None
    if mbps:
        raise ValueError("missing 'MBps' value from mbSchema; required because 'mba_MBps' is enabled in the system")
    raise ValueError("missing '%' value from mbSchema; required because percentage-based MBA allocation "
                     "is enabled in the system")


def mba_to_schema(cfg: Any, cache_ids: Sequence[int], mbps: bool) -> dict[int, int] | None:
    """``MbaConfig.toSchema``."""
    items = _mb_items(cfg)
    if items is None:
        return None
    default = dict(items).get(CACHE_ID_ALL, ["100%", f"{MAX_UINT32}MBps"])
    default_val = _parse_mba(default, mbps)
    out = {i: default_val for i in cache_ids}
    for key, val in items:
        if key == CACHE_ID_ALL:
            continue
        ids = list_str_to_array(key)
        parsed = _parse_mba(val, mbps)
        for i in ids:
            if i in out:
                out[i] = parsed
    return out


__all__ = ["Absolute", "Pct", "PctRange", "CacheAllocation", "CatAllocation", "parse_cache_proportion",
           "list_str_to_bitmask", "list_str_to_array", "bitmask_list_str", "cat_to_schema", "mba_to_schema",
           "parse_cache_id_config", "lsb_zero",
           "CACHE_ID_ALL", "UNIFIED", "CODE", "DATA", "SCHEMA_TYPES"]
