"""What a machine's ``resctrl`` filesystem tells goresctrl: the RDT hardware, or its absence.

goresctrl (``pkg/rdt/info.go``, ``getRdtInfo``; v0.12.0, the version containerd 2.3 vendors) reads
``/sys/fs/resctrl``: per cache level the
capacity bitmask (``info/L3/cbm_mask``), its minimum width (``min_cbm_bits``), the number of
classes of service (``num_closids``); ``L3CODE``/``L3DATA`` instead of ``L3`` when CDP is on;
memory bandwidth (``info/MB``: ``min_bandwidth``, ``bandwidth_gran``, ``delay_linear``) and, from
the mount options, whether it is set in MBps (``mba_MBps``). The cache ids it configures are the
ones the root group's ``schemata`` lists.

cAdvisor's MachineInfo does not carry any of this, so kubetwin reads it from a ``resctrl`` key of
the machine description, in the layout of the filesystem itself::

    "resctrl": {
      "mountOptions": ["mba_MBps"],                      # optional
      "info": {"L3": {"cbm_mask": "7ff", "min_cbm_bits": 1, "num_closids": 16, "shareable_bits": "0"},
               "MB": {"min_bandwidth": 10, "bandwidth_gran": 10, "delay_linear": 1, "num_closids": 8}},
      "schemata": "L3:0=7ff;1=7ff\\nMB:0=100;1=100"
    }

(file contents as strings or numbers; hex files — masks — as strings). The sysfs reader fills it
in when the sysfs copy includes ``sys/fs/resctrl`` (:mod:`kubetwin.machine.sysfs`). A machine without the
key has no RDT: :func:`machine_resctrl` returns None and every RDT question is answered "no RDT".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from ..errors import InputError
from ..model.strict import STRING, STRING_OR_NUMBER, check, list_of, obj

if TYPE_CHECKING:
    from ..machine.model import Machine

L2 = "L2"
L3 = "L3"
CACHE_LEVELS = (L2, L3)
MAX_UINT64 = (1 << 64) - 1
MAX_UINT32 = (1 << 32) - 1

_CAT_FILES = obj(cbm_mask=STRING_OR_NUMBER, min_cbm_bits=STRING_OR_NUMBER, num_closids=STRING_OR_NUMBER,
                 shareable_bits=STRING_OR_NUMBER, bit_usage=STRING)
_MB_FILES = obj(min_bandwidth=STRING_OR_NUMBER, bandwidth_gran=STRING_OR_NUMBER, delay_linear=STRING_OR_NUMBER,
                num_closids=STRING_OR_NUMBER, thread_throttle_mode=STRING)
_MON_FILES = obj(num_rmids=STRING_OR_NUMBER, mon_features=STRING, max_threshold_occupancy=STRING_OR_NUMBER)
SPEC = obj(mountOptions=list_of(STRING), schemata=STRING,
           info=obj({"L2": _CAT_FILES, "L2CODE": _CAT_FILES, "L2DATA": _CAT_FILES,
                     "L3": _CAT_FILES, "L3CODE": _CAT_FILES, "L3DATA": _CAT_FILES,
                     "MB": _MB_FILES, "L3_MON": _MON_FILES, "last_cmd_status": STRING}))


@dataclass(frozen=True, slots=True)
class CatInfo:
    """One cache-allocation resource (``info/L3``, ``info/L3CODE``, ...)."""

    cbm_mask: int = 0
    min_cbm_bits: int = 0
    shareable_bits: int = 0
    num_closids: int = 0

    @property
    def supported(self) -> bool:
        return self.cbm_mask != 0


@dataclass(frozen=True, slots=True)
class CatInfoAll:
    """A cache level: its unified, code and data resources and the cache ids of the root schemata."""

    cache_ids: tuple[int, ...] = ()
    unified: CatInfo = CatInfo()
    code: CatInfo = CatInfo()
    data: CatInfo = CatInfo()

    def info(self) -> CatInfo:
        """goresctrl's ``getInfo``: code, else data, else unified."""
        if self.code.supported:
            return self.code
        if self.data.supported:
            return self.data
        return self.unified

    def cbm_mask(self) -> int:
        """The full mask; an unsupported level reads as all 64 bits set (goresctrl's fallback)."""
        mask = self.info().cbm_mask
        return mask if mask else MAX_UINT64

    def min_cbm_bits(self) -> int:
        return self.info().min_cbm_bits

    @property
    def cdp(self) -> bool:
        return self.code.supported or self.data.supported

    @property
    def supported(self) -> bool:
        return self.info().supported


@dataclass(frozen=True, slots=True)
class MbInfo:
    """Memory bandwidth allocation (``info/MB``); ``mbps_enabled`` from the ``mba_MBps`` mount option."""

    cache_ids: tuple[int, ...] = ()
    bandwidth_gran: int = 0
    delay_linear: int = 0
    min_bandwidth: int = 0
    mbps_enabled: bool = False
    num_closids: int = 0

    @property
    def supported(self) -> bool:
        return self.min_bandwidth != 0


@dataclass(frozen=True, slots=True)
class ResctrlInfo:
    """The RDT hardware as goresctrl sees it; ``num_closids`` is the smallest of the resources'
    (goresctrl v0.12); ``root_schemata`` is the root group's current schemata."""

    cat: Mapping[str, CatInfoAll] = field(default_factory=dict)
    mb: MbInfo = MbInfo()
    num_closids: int = 0
    root_schemata: tuple[str, ...] = ()

    def cat_level(self, level: str) -> CatInfoAll:
        return self.cat.get(level, CatInfoAll())

    @property
    def summary(self) -> str:
        parts = []
        for lvl in CACHE_LEVELS:
            c = self.cat_level(lvl)
            if c.supported:
                width = bin(c.cbm_mask()).count("1")
                parts.append(f"{lvl} CAT{' (CDP)' if c.cdp else ''}: {width} ways on caches "
                             f"{','.join(str(i) for i in sorted(c.cache_ids))}")
        if self.mb.supported:
            parts.append("MBA in " + ("MBps" if self.mb.mbps_enabled else "percent") + " on domains "
                         + ",".join(str(i) for i in sorted(self.mb.cache_ids)))
        if not parts:
            return "RDT with nothing to allocate"
        return "; ".join(parts) + f"; {self.num_closids} classes of service"


def _uint(text: Any, path: str, base: int = 10) -> int:
    s = str(text).strip()
    try:
        v = int(s, base)
    except ValueError:
        raise InputError(f"invalid {'hex ' if base == 16 else ''}number {s!r}", path=path) from None
    if v < 0 or v > MAX_UINT64:
        raise InputError(f"value {s!r} out of range", path=path)
    return v


def _cache_ids(schemata: list[str], prefix: str, path: str) -> tuple[int, ...]:
    """``getCacheIds``: the ids of the first root-schemata line whose resource starts with ``prefix``."""
    for line in schemata:
        name, sep, rest = line.strip().partition(":")
        if sep and name.startswith(prefix):
            ids = []
            for definition in rest.split(";"):
                parts = definition.split("=")
                if len(parts) != 2:
                    raise InputError(f"looks like an invalid schema {line.strip()!r}", path=path)
                ids.append(_uint(parts[0], path))
            return tuple(ids)
    raise InputError(f"no {prefix} resources in root schemata", path=path,
                     fix=f"add the root group's {prefix} line to resctrl.schemata")


def parse_resctrl(doc: Mapping[str, Any], *, file: str | None = None, prefix: str = "resctrl") -> ResctrlInfo:
    """A ``resctrl`` description (the layout of ``/sys/fs/resctrl``) → :class:`ResctrlInfo`."""
    check(doc, SPEC, file=file, prefix=prefix)
    info = doc.get("info") or {}
    schemata = [ln for ln in str(doc.get("schemata") or "").splitlines() if ln.strip()]
    mount = set(doc.get("mountOptions") or ())
    try:
        num_closids = 0
        cat: dict[str, CatInfoAll] = {}
        for lvl in CACHE_LEVELS:
            parts: dict[str, CatInfo] = {}
            for suffix, key in (("", "unified"), ("CODE", "code"), ("DATA", "data")):
                files = info.get(lvl + suffix)
                if files is None:
                    continue
                base = f"{prefix}.info.{lvl + suffix}"
                for required in ("cbm_mask", "min_cbm_bits", "num_closids", "shareable_bits"):
                    if files.get(required) is None:
                        raise InputError(f"missing {required}", path=f"{base}.{required}",
                                         fix="give every file goresctrl reads from the info directory")
                parts[key] = CatInfo(_uint(files["cbm_mask"], f"{base}.cbm_mask", 16),
                                     _uint(files["min_cbm_bits"], f"{base}.min_cbm_bits"),
                                     _uint(files["shareable_bits"], f"{base}.shareable_bits", 16),
                                     _uint(files["num_closids"], f"{base}.num_closids"))
                if num_closids == 0 or parts[key].num_closids < num_closids:
                    num_closids = parts[key].num_closids
            level = CatInfoAll((), **parts)
            if level.supported:
                level = CatInfoAll(_cache_ids(schemata, lvl, f"{prefix}.schemata"), **parts)
            cat[lvl] = level
        mb = MbInfo()
        files = info.get("MB")
        if files is not None:
            base = f"{prefix}.info.MB"
            for required in ("bandwidth_gran", "delay_linear", "min_bandwidth", "num_closids"):
                if files.get(required) is None:
                    raise InputError(f"missing {required}", path=f"{base}.{required}")
            mb = MbInfo(_cache_ids(schemata, "MB", f"{prefix}.schemata"),
                        _uint(files["bandwidth_gran"], f"{base}.bandwidth_gran"),
                        _uint(files["delay_linear"], f"{base}.delay_linear"),
                        _uint(files["min_bandwidth"], f"{base}.min_bandwidth"),
                        "mba_MBps" in mount, _uint(files["num_closids"], f"{base}.num_closids"))
            if num_closids == 0 or mb.num_closids < num_closids:
                num_closids = mb.num_closids
    except InputError as exc:
        raise exc.in_file(file) from None
    return ResctrlInfo(cat, mb, num_closids, tuple(ln.strip() for ln in schemata))


def machine_resctrl(machine: Machine, *, file: str | None = None) -> ResctrlInfo | None:
    """The RDT hardware of a :class:`~kubetwin.machine.model.Machine`, or None: no RDT."""
    doc = machine.extra.get("resctrl")
    if doc is None or doc is False:
        return None
    if not isinstance(doc, dict):
        raise InputError(f"expected an object, got {type(doc).__name__}", path="resctrl", file=file)
    return parse_resctrl(doc, file=file)


__all__ = ["CatInfo", "CatInfoAll", "MbInfo", "ResctrlInfo", "parse_resctrl", "machine_resctrl",
           "L2", "L3", "CACHE_LEVELS", "MAX_UINT32", "MAX_UINT64"]
