"""Intel RDT classes as goresctrl configures them: partitions, classes, and each class's ``schemata``.

The configuration (``pkg/rdt/config.go``) splits the caches and memory bandwidth into
**partitions** — exclusive slices of each cache id, by percentage (resolved smallest first,
rounded down, at least ``min_cbm_bits``, the last partition taking what is left) or by explicit
bitmask (which must not overlap) — and each partition into **classes**, whose allocations are
relative to their partition's slice (percent, percent range, bitmask or bit list, shifted into
the partition's mask). L2 and L3 may use CDP (separate ``code``/``data`` masks); memory bandwidth
is a percentage of the partition's share (never below ``min_bandwidth``), or MBps under
``mba_MBps``. A class maps one-to-one to a resctrl control group whose ``schemata`` goresctrl
writes (``ctrlGroup.configure``): one line per supported resource, ``L3:0=fff;1=fff`` or
``L3CODE:``/``L3DATA:``, and ``MB:0=100;1=100``. A resource the machine lacks is an error unless
``options.<l2|l3|mb>.optional``.

Containers pick a class with the pod annotations ``rdt.resources.beta.kubernetes.io/pod`` and
``rdt.resources.beta.kubernetes.io/container.NAME`` (or the CRI container annotation
``io.kubernetes.cri.rdt-class``); a class may deny either (``kubernetes.denyPodAnnotation``,
``denyContainerAnnotation``). containerd (``internal/cri/server/rdt.go``) refuses a class when RDT
is not enabled, unless ``ignore_rdt_not_enabled_errors``.

Map iteration in Go is random; where goresctrl's result could depend on it (two keys naming the
same cache id), kubetwin takes document order, later keys winning.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..model.strict import BOOLEAN, STRING, map_of, obj
from . import gostrconv as sc
from .classes import CONTAINER_ANNOTATION, POD_ANNOTATION, ClassChoice, annotation_path, class_from_annotations
from .goconfig import decode_go_config
from .rdt_alloc import (
    CACHE_ID_ALL,
    CODE,
    DATA,
    SCHEMA_TYPES,
    UNIFIED,
    Absolute,
    CacheAllocation,
    CatAllocation,
    Pct,
    PctRange,
    bitmask_list_str,
    cat_to_schema,
    list_str_to_array,
    list_str_to_bitmask,
    lsb_zero,
    mba_to_schema,
    parse_cache_id_config,
    parse_cache_proportion,
)
from .resctrl import CACHE_LEVELS, L2, L3, MAX_UINT32, MAX_UINT64, ResctrlInfo, machine_resctrl

if TYPE_CHECKING:
    from ..machine.model import Machine

ROOT_CLASS_NAME = "system/default"
ROOT_CLASS_ALIAS = ""
RDT_CONTAINER_ANNOTATION = "io.kubernetes.cri.rdt-class"
RDT_POD_ANNOTATION = "rdt.resources.beta.kubernetes.io/pod"
RDT_POD_ANNOTATION_CONTAINER_PREFIX = "rdt.resources.beta.kubernetes.io/container."


# --- the file format ----------------------------------------------------------------------------

_CACHE_ID_CAT = obj(unified=STRING, code=STRING, data=STRING)
# A CatConfig is a string (all cache ids) or a map cache-id-list -> string | {unified, code, data}
_CAT = "any"
_MBA = "any"
_CLASS = obj(l2Allocation=_CAT, l3Allocation=_CAT, mbAllocation=_MBA,
             kubernetes=obj(denyPodAnnotation=BOOLEAN, denyContainerAnnotation=BOOLEAN))
_PARTITION = obj(l2Allocation=_CAT, l3Allocation=_CAT, mbAllocation=_MBA, classes=map_of(_CLASS))
_OPTIONS = obj(l2=obj(Optional=BOOLEAN), l3=obj(Optional=BOOLEAN), mb=obj(Optional=BOOLEAN))
SPEC = obj(options=_OPTIONS, partitions=map_of(_PARTITION))
_CAT_MAP = map_of("any")


class RdtError(InputError):
    """A configuration goresctrl refuses (``invalid configuration: ...``)."""


class RdtUnavailable(InputError):
    """The machine has no RDT (no resctrl filesystem): classes cannot be applied."""


class RdtClassError(InputError):
    """The runtime refuses a container's RDT class (the container is not created)."""


def is_qualified_class_name(name: str) -> bool:
    """``IsQualifiedClassName``: usable as a directory name (the root class excepted)."""
    return name == ROOT_CLASS_NAME or (len(name) < 4096 and name not in (".", "..") and "/" not in name
                                       and "\n" not in name)


def unalias_class_name(name: str) -> str:
    return ROOT_CLASS_NAME if name in (ROOT_CLASS_NAME, ROOT_CLASS_ALIAS) else name


# --- the configuration ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClassConfig:
    """One class as written, with its partition and the path of its entry in the file."""

    name: str
    partition: str
    l2: Any
    l3: Any
    mb: Any
    deny_pod_annotation: bool
    deny_container_annotation: bool
    path: str


@dataclass(frozen=True, slots=True)
class PartitionConfig:
    name: str
    l2: Any
    l3: Any
    mb: Any
    path: str


@dataclass(frozen=True)
class ResolvedRdt:
    """A configuration applied to one machine: every configured class's schemata."""

    info: ResctrlInfo
    schemata: Mapping[str, Mapping[str, str]]

    def text(self, class_name: str) -> str:
        return "".join(f"{k}:{v}\n" for k, v in self.schemata[unalias_class_name(class_name)].items())


@dataclass(frozen=True)
class RdtConfig:
    """A goresctrl RDT configuration (``rdt`` file), checked for structure; resolved per machine."""

    partitions: tuple[PartitionConfig, ...]
    classes: Mapping[str, ClassConfig]
    optional: Mapping[str, bool]
    file: str | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def class_names(self) -> list[str]:
        """Configured classes and the root class ``system/default``, sorted."""
        return sorted(set(self.classes) | {ROOT_CLASS_NAME})

    def has_class(self, name: str) -> bool:
        return unalias_class_name(name) in self.classes or unalias_class_name(name) == ROOT_CLASS_NAME

    # --- resolution --------------------------------------------------------------------------
    def resolve(self, machine: Machine | ResctrlInfo) -> ResolvedRdt:
        """Every class's schemata on ``machine`` (a Machine or a :class:`ResctrlInfo`)."""
        hit = self._cache.get(id(machine))
        if hit is not None and hit[0] is machine:
            return hit[1]
        info = machine if isinstance(machine, ResctrlInfo) else machine_resctrl(machine)
        if info is None:
            raise RdtUnavailable("RDT is not available on this machine: the machine description has no resctrl "
                                 "filesystem", file=self.file,
                                 fix="describe the machine's /sys/fs/resctrl under the machine's 'resctrl' key, "
                                     "or run without an RDT configuration")
        try:
            resolved = ResolvedRdt(info, _resolve(self, info))
        except RdtError as exc:
            raise exc.in_file(self.file) from None
        self._cache[id(machine)] = (machine, resolved)
        return resolved

    def schemata(self, class_name: str, machine: Machine | ResctrlInfo) -> dict[str, str]:
        """The resctrl ``schemata`` lines of a class on ``machine``, keyed by resource
        (``{"L3": "0=fff;1=fff", "MB": "0=100;1=100"}``). The root class, when the configuration
        leaves it alone, keeps the machine's current root schemata."""
        resolved = self.resolve(machine)
        name = unalias_class_name(class_name)
        if name in resolved.schemata:
            return dict(resolved.schemata[name])
        if name == ROOT_CLASS_NAME:
            out: dict[str, str] = {}
            for line in resolved.info.root_schemata:
                res, _, rest = line.partition(":")
                out[res.strip()] = rest.strip()
            return out
        raise RdtClassError(f"RDT class not found: failed to get class {sc.quote(class_name)} from resctrl fs: "
                            f"resctrl group not found for class {sc.quote(class_name)}", file=self.file,
                            fix=f"one of: {', '.join(self.class_names())}")

    # --- containers --------------------------------------------------------------------------
    def container_class(self, container_name: str, pod_annotations: Mapping[str, str] | None,
                        container_annotations: Mapping[str, str] | None = None) -> ClassChoice:
        """``rdt.ContainerClassFromAnnotations`` with this configuration (RDT enabled)."""
        choice = rdt_class_choice(container_name, pod_annotations, container_annotations)
        if not choice.found:
            return choice
        name = choice.name or ""
        path = annotation_path(choice)
        if not is_qualified_class_name(name):
            raise RdtClassError(f"unqualified RDT class name {sc.quote(name)}", path=path)
        if not self.has_class(name):
            raise RdtClassError(f"RDT class not found: failed to get class {sc.quote(name)} from resctrl fs: "
                                f"resctrl group not found for class {sc.quote(name)}", path=path,
                                fix=f"one of: {', '.join(self.class_names())}")
        cls = self.classes.get(unalias_class_name(name))
        if cls is not None:
            if choice.origin == POD_ANNOTATION and cls.deny_pod_annotation:
                raise RdtClassError(f"RDT class {sc.quote(name)} not allowed from Pod annotations", path=path)
            if choice.origin == CONTAINER_ANNOTATION and cls.deny_container_annotation:
                raise RdtClassError(f"RDT class {sc.quote(name)} not allowed from Container annotation", path=path)
        return choice


def rdt_class_choice(container_name: str, pod_annotations: Mapping[str, str] | None,
                     container_annotations: Mapping[str, str] | None = None) -> ClassChoice:
    return class_from_annotations(RDT_CONTAINER_ANNOTATION, RDT_POD_ANNOTATION, RDT_POD_ANNOTATION_CONTAINER_PREFIX,
                                  container_name, container_annotations, pod_annotations)


def rdt_class_from_annotations(pod_annotations: Mapping[str, str] | None, container: str,
                               container_annotations: Mapping[str, str] | None = None) -> str | None:
    """The RDT class a container's annotations ask for (``""`` is the root class), or None."""
    return rdt_class_choice(container, pod_annotations, container_annotations).name


def container_rdt_class(config: RdtConfig | None, machine: Machine | ResctrlInfo | None, container_name: str,
                        pod_annotations: Mapping[str, str] | None,
                        container_annotations: Mapping[str, str] | None = None, *,
                        ignore_not_enabled: bool = False) -> str | None:
    """The class containerd gives a container (``rdtClassFromAnnotations``), or None for none.

    RDT is enabled when a configuration is loaded and the machine has RDT. Without it an
    annotated container is refused (``RdtClassError``) unless ``ignore_not_enabled``.
    """
    info = machine if isinstance(machine, ResctrlInfo) or machine is None else machine_resctrl(machine)
    enabled = config is not None and info is not None
    choice = rdt_class_choice(container_name, pod_annotations, container_annotations)
    try:
        if enabled:
            assert config is not None
            choice = config.container_class(container_name, pod_annotations, container_annotations)
        elif choice.found:
            if info is None:
                raise RdtClassError(f"RDT not initialized, class {sc.quote(choice.name or '')} not available",
                                    path=annotation_path(choice))
            raise RdtClassError(f"RDT disabled, refusing to set RDT class of container {sc.quote(container_name)} "
                                f"to {sc.quote(choice.name or '')}", path=annotation_path(choice))
    except RdtClassError:
        if not enabled and ignore_not_enabled:
            return None
        raise
    return choice.name if choice.found else None


# --- resolving a configuration on a machine --------------------------------------------------------


#: goresctrl's ``setConfig`` wraps resolution errors and resctrl (configure) errors differently.
INVALID = "invalid configuration: "
FAILED = "resctrl configuration failed: "


def _err(msg: str, path: str = "", prefix: str = INVALID) -> RdtError:
    return RdtError(prefix + msg, path=path)


def _resolve(cfg: RdtConfig, info: ResctrlInfo) -> dict[str, dict[str, str]]:
    """``Config.resolve`` then ``ctrlGroup.configure`` for every class."""
    names = [p.name for p in cfg.partitions]  # sorted
    parts = {p.name: p for p in cfg.partitions}
    part_cat: dict[str, dict[str, dict[int, CatAllocation]]] = {n: {L2: {}, L3: {}} for n in names}
    for lvl in CACHE_LEVELS:
        if names:
            _resolve_cat_partitions(cfg, info, lvl, part_cat)
    part_mb: dict[str, dict[int, int]] = {}
    for p in cfg.partitions:
        try:
            alloc = mba_to_schema(p.mb, info.mb.cache_ids, info.mb.mbps_enabled)
        except ValueError as exc:
            raise _err(f"failed to resolve MB allocation for partition {sc.quote(p.name)}: {exc}",
                       f"{p.path}.mbAllocation") from None
        part_mb[p.name] = {}
        for i, a in (alloc or {}).items():
            part_mb[p.name][i] = a
            if not info.mb.mbps_enabled and a < info.mb.min_bandwidth:
                part_mb[p.name][i] = info.mb.min_bandwidth
    out: dict[str, dict[str, str]] = {}
    for name, cls in cfg.classes.items():
        partition = parts[cls.partition]
        cat: dict[str, dict[int, CatAllocation] | None] = {}
        for lvl, raw, praw in ((L2, cls.l2, partition.l2), (L3, cls.l3, partition.l3)):
            key = f"{lvl.lower()}Allocation"
            try:
                cat[lvl] = cat_to_schema(raw, info.cat_level(lvl).cache_ids, info.cat_level(lvl).min_cbm_bits())
            except ValueError as exc:
                raise _err(f"failed to resolve {lvl} allocation for class {sc.quote(name)}: {exc}",
                           f"{cls.path}.{key}") from None
            if cat[lvl] is not None and praw is None:
                raise _err(f"{lvl} allocation missing from partition {sc.quote(cls.partition)} but class "
                           f"{sc.quote(name)} specifies {lvl} schema", f"{cls.path}.{key}")
        try:
            mb = mba_to_schema(cls.mb, info.mb.cache_ids, info.mb.mbps_enabled)
        except ValueError as exc:
            raise _err(f"failed to resolve MB allocation for class {sc.quote(name)}: {exc}",
                       f"{cls.path}.mbAllocation") from None
        if mb is not None and partition.mb is None:
            raise _err(f"MB allocation missing from partition {sc.quote(cls.partition)} but class {sc.quote(name)} "
                       "specifies MB schema", f"{cls.path}.mbAllocation")
        out[name] = _configure(name, cls, cat, mb, part_cat[cls.partition], part_mb[cls.partition], cfg, info)
    return out


def _resolve_cat_partitions(cfg: RdtConfig, info: ResctrlInfo, lvl: str,
                            part_cat: dict[str, dict[str, dict[int, CatAllocation]]]) -> None:
    """``resolveCatPartitions`` + ``cacheResolver``: exclusive slices of each cache id."""
    level = info.cat_level(lvl)
    ids = level.cache_ids
    min_bits = level.min_cbm_bits()
    bits_total = lsb_zero(level.cbm_mask())
    names = [p.name for p in cfg.partitions]
    requests: dict[str, dict[int, CatAllocation] | None] = {}
    for part in cfg.partitions:
        raw = part.l2 if lvl == L2 else part.l3
        try:
            requests[part.name] = cat_to_schema(raw, ids, min_bits)
        except ValueError as exc:
            raise _err(f"failed to parse {lvl} allocation request for partition {sc.quote(part.name)}: {exc}",
                       f"{part.path}.{lvl.lower()}Allocation") from None
    grants: dict[str, dict[int, CatAllocation]] = {n: {} for n in names}

    def req(p: str, i: int, typ: str) -> CacheAllocation | None:
        r = requests[p]
        return (r.get(i) or CatAllocation()).get(typ) if r is not None else None

    for i in ids:
        for typ in SCHEMA_TYPES:
            nils = [p for p in names if req(p, i, typ) is None]
            if nils and len(nils) != len(names):
                raise _err(f"some partitions ({', '.join(nils)}) missing {lvl} {sc.quote(typ)} allocation request "
                           f"for cache id {i}", "partitions")
            first = req(names[0], i, typ)
            if first is None:
                continue
            if isinstance(first, Absolute):
                mask = 0
                for p in names:
                    a = req(p, i, typ)
                    if not isinstance(a, Absolute):
                        raise _err(f"error resolving {lvl} allocation for cache id {i}: mixing absolute and relative "
                                   "allocations between partitions not supported", "partitions")
                    if a.mask & mask:
                        raise _err(f"overlapping {lvl} partition allocation requests for cache id {i}", "partitions")
                    mask |= a.mask
                    grants[p][i] = grants[p].get(i, CatAllocation()).replace(typ, a)
                continue
            total = 0
            reqs: list[tuple[str, int]] = []
            for p in names:
                a = req(p, i, typ)
                if isinstance(a, Pct):
                    total += a.pct
                    reqs.append((p, a.pct))
                elif isinstance(a, Absolute):
                    raise _err(f"error resolving {lvl} allocation for cache id {i}: mixing relative and absolute "
                               "allocations between partitions not supported", "partitions")
                else:
                    raise _err("percentage ranges in partition allocation not supported", "partitions")
            if total > 100:
                raise _err(f"accumulated {lvl} {sc.quote(typ)} partition allocation requests for cache id {i} exceeds "
                           f"100% ({total}%)", "partitions")
            reqs.sort(key=lambda r: r[1])  # sort.Slice: ties keep an unspecified order; name order here
            granted: dict[str, int] = {}
            bits_all = total * bits_total // 100
            available = bits_all
            for n, (p, pct) in enumerate(reqs):
                if bits_all == 0:
                    raise _err(f"{lvl} partition allocation requests for cache id {i} sum to no bits: goresctrl "
                               "divides by zero here", "partitions")
                pct_available = available * total // bits_all
                if available < min_bits:
                    raise _err(f"unable to resolve {lvl} allocation for cache id {i}, not enough exlusive bits "
                               "available", "partitions")
                if pct_available == 0:
                    raise _err(f"{lvl} partition allocation requests for cache id {i} leave no bits: goresctrl "
                               "divides by zero here", "partitions")
                nb = pct * available // pct_available
                if nb < min_bits:
                    nb = min_bits
                if nb > available or n == len(reqs) - 1:
                    nb = available
                granted[p] = nb
                available -= nb
            lsb = 0
            for p in names:
                grants[p][i] = grants[p].get(i, CatAllocation()).replace(
                    typ, Absolute((((1 << granted[p]) - 1) << lsb) & MAX_UINT64))
                lsb += granted[p]
    for p in names:
        part_cat[p][lvl] = grants[p]


def _cat_line(lvl: str, typ: str, info: ResctrlInfo, alloc: dict[int, CatAllocation] | None,
              base: dict[int, CatAllocation]) -> str:
    """``catSchema.toStr``: one ``L3:`` / ``L3CODE:`` / ``L3DATA:`` line's value."""
    level = info.cat_level(lvl)
    min_bits = level.min_cbm_bits()
    parts = []
    for i in sorted(level.cache_ids):
        bmask = level.cbm_mask()
        if i in base:
            b = base[i].effective(typ)
            assert isinstance(b, Absolute)
            bmask = b.mask
        if alloc is not None:
            overlay = (alloc.get(i) or CatAllocation()).effective(typ)
            if overlay is None:
                raise ValueError("BUG: no allocation")
            bmask = overlay.overlay(bmask, min_bits)
        parts.append(f"{i}={bmask:x}")
    return ";".join(parts)


def _mb_line(info: ResctrlInfo, alloc: dict[int, int] | None, base: dict[int, int]) -> str:
    """``mbSchema.toStr``."""
    mb = info.mb
    parts = []
    for i in sorted(mb.cache_ids):
        b = base.get(i, MAX_UINT32 if mb.mbps_enabled else 100)
        if mb.mbps_enabled:
            v = alloc.get(i, 0) if alloc is not None else MAX_UINT32
            v = min(v, b)
        else:
            a = alloc.get(i, 0) if alloc is not None else 100
            v = a * b // 100
            if v < mb.min_bandwidth:
                v = mb.min_bandwidth
        parts.append(f"{i}={v}")
    return ";".join(parts)


def _configure(name: str, cls: ClassConfig, cat: dict[str, dict[int, CatAllocation] | None],
               mb: dict[int, int] | None, part_cat: dict[str, dict[int, CatAllocation]], part_mb: dict[int, int],
               cfg: RdtConfig, info: ResctrlInfo) -> dict[str, str]:
    """``ctrlGroup.configure``: the lines goresctrl writes to the class's ``schemata``."""
    out: dict[str, str] = {}
    for lvl in CACHE_LEVELS:
        level = info.cat_level(lvl)
        key = f"{lvl.lower()}Allocation"
        try:
            if level.unified.supported:
                out[lvl] = _cat_line(lvl, UNIFIED, info, cat[lvl], part_cat[lvl])
            elif level.cdp:
                out[lvl + "CODE"] = _cat_line(lvl, CODE, info, cat[lvl], part_cat[lvl])
                out[lvl + "DATA"] = _cat_line(lvl, DATA, info, cat[lvl], part_cat[lvl])
            elif cat[lvl] is not None and not cfg.optional.get(lvl, False):
                raise _err(f"{lvl} cache allocation for {sc.quote(name)} specified in configuration but not supported "
                           "by system", f"{cls.path}.{key}", FAILED)
        except ValueError as exc:
            raise _err(str(exc), f"{cls.path}.{key}", FAILED) from None
    if info.mb.supported:
        out["MB"] = _mb_line(info, mb, part_mb)
    elif mb is not None and not cfg.optional.get("MB", False):
        raise _err(f"memory bandwidth allocation for {sc.quote(name)} specified in configuration but not supported "
                   "by system", f"{cls.path}.mbAllocation", FAILED)
    return out


# --- loading --------------------------------------------------------------------------------------


def _check_cat(value: Any, path: str, what: str) -> None:
    """Structure and syntax of a CatConfig (machine-independent parts of ``toSchema``); ``what``
    prefixes a syntax error as goresctrl does (``failed to parse L3 allocation request for ...``)."""
    if value is None or isinstance(value, str):
        if isinstance(value, str):
            _parse_at(lambda: parse_cache_id_config(value, 0), path, what)
        return
    if not isinstance(value, dict):
        raise InputError(f"expected a string or a mapping of cache ids, got {type(value).__name__}", path=path)
    for key, v in value.items():
        sub = f"{path}.{key}"
        if isinstance(v, dict):
            decode_go_config(v, _CACHE_ID_CAT, file=None, prefix=sub)
        elif v is not None and not isinstance(v, str):
            raise InputError(f"expected a string or {{unified, code, data}}, got {type(v).__name__}", path=sub)
        if key != CACHE_ID_ALL:
            _parse_at(partial(list_str_to_array, key), sub, what)
        _parse_at(partial(parse_cache_id_config, v, 0), sub, what)


def _check_mba(value: Any, path: str, what: str) -> None:
    if value is None:
        return
    if isinstance(value, list):
        if not all(isinstance(x, str) for x in value):
            raise InputError("expected a list of strings such as [\"50%\", \"1000MBps\"]", path=path)
        return
    if not isinstance(value, dict):
        raise InputError(f"expected a list of values or a mapping of cache ids, got {type(value).__name__}", path=path)
    for key, v in value.items():
        sub = f"{path}.{key}"
        if v is not None and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
            raise InputError("expected a list of strings such as [\"50%\", \"1000MBps\"]", path=sub)
        if key != CACHE_ID_ALL:
            _parse_at(partial(list_str_to_array, key), sub, what)


def _parse_at(fn: Callable[[], object], path: str, what: str = "") -> None:
    try:
        fn()
    except ValueError as exc:
        raise RdtError(f"{INVALID}{what}{exc}", path=path) from None


def _fold_allocations(value: Any) -> Any:
    """String leaves of an allocation (CatConfig / MbaConfig) as Go's YAML reader makes them."""
    from .goconfig import go_map_key, go_scalar_string

    if isinstance(value, dict):
        return {go_map_key(k): (_fold_cache_id(v) if not isinstance(v, list) else [go_scalar_string(x) for x in v])
                for k, v in value.items()}
    if isinstance(value, list):
        return [go_scalar_string(x) for x in value]
    return go_scalar_string(value)


def _fold_cache_id(v: Any) -> Any:
    from .goconfig import fold, go_scalar_string

    if isinstance(v, dict):
        return fold(v, _CACHE_ID_CAT)
    return go_scalar_string(v)


def parse_rdt_config(doc: Mapping[str, Any] | None, file: str | None = None, *, prefix: str = "") -> RdtConfig:
    """A goresctrl ``rdt`` configuration (already parsed YAML/JSON) → :class:`RdtConfig`."""
    data = decode_go_config(doc or {}, SPEC, file=file, prefix=prefix)
    base = f"{prefix}." if prefix else ""
    try:
        opts = data.get("options") or {}
        optional = {lvl.upper(): bool((opts.get(lvl) or {}).get("Optional")) for lvl in ("l2", "l3", "mb")}
        partitions: list[PartitionConfig] = []
        classes: dict[str, ClassConfig] = {}
        for pname in sorted((data.get("partitions") or {})):
            p = data["partitions"][pname] or {}
            path = f"{base}partitions.{pname}"
            for key in ("l2Allocation", "l3Allocation", "mbAllocation"):
                if key in p:
                    p[key] = _fold_allocations(p[key])
            for lvl in CACHE_LEVELS:
                _check_cat(p.get(f"{lvl.lower()}Allocation"), f"{path}.{lvl.lower()}Allocation",
                           f"failed to parse {lvl} allocation request for partition {sc.quote(pname)}: ")
            _check_mba(p.get("mbAllocation"), f"{path}.mbAllocation",
                       f"failed to resolve MB allocation for partition {sc.quote(pname)}: ")
            partitions.append(PartitionConfig(pname, p.get("l2Allocation"), p.get("l3Allocation"),
                                              p.get("mbAllocation"), path))
            for cname, c in (p.get("classes") or {}).items():
                c = c or {}
                cpath = f"{path}.classes.{cname}"
                for key in ("l2Allocation", "l3Allocation", "mbAllocation"):
                    if key in c:
                        c[key] = _fold_allocations(c[key])
                name = unalias_class_name(str(cname))
                for lvl in CACHE_LEVELS:
                    _check_cat(c.get(f"{lvl.lower()}Allocation"), f"{cpath}.{lvl.lower()}Allocation",
                               f"failed to resolve {lvl} allocation for class {sc.quote(name)}: ")
                _check_mba(c.get("mbAllocation"), f"{cpath}.mbAllocation",
                           f"failed to resolve MB allocation for class {sc.quote(name)}: ")
                if not is_qualified_class_name(name):
                    raise RdtError(f"{INVALID}unqualified class name {sc.quote(name)} (must not be '.' or '..' and "
                                   "must not contain '/' or newline)", path=cpath)
                if name in classes:
                    raise RdtError(f"{INVALID}class names must be unique, {sc.quote(name)} defined multiple times",
                                   path=cpath, fix=f"it is also defined at {classes[name].path}")
                k8s = c.get("kubernetes") or {}
                classes[name] = ClassConfig(name, pname, c.get("l2Allocation"), c.get("l3Allocation"),
                                            c.get("mbAllocation"), bool(k8s.get("denyPodAnnotation")),
                                            bool(k8s.get("denyContainerAnnotation")), cpath)
    except InputError as exc:
        raise exc.in_file(file) from None
    return RdtConfig(tuple(partitions), classes, optional, file)


def load_rdt_config(path: str | Path) -> RdtConfig:
    """Read a goresctrl ``rdt`` configuration file (YAML or JSON; empty = no partitions)."""
    from ..model.loader import load_optional_mapping

    doc, name = load_optional_mapping(path, "RDT configuration", "options, partitions")
    return parse_rdt_config(doc, name)


__all__ = ["RdtConfig", "ResolvedRdt", "ClassConfig", "PartitionConfig", "RdtError", "RdtUnavailable",
           "RdtClassError", "load_rdt_config", "parse_rdt_config", "rdt_class_from_annotations", "rdt_class_choice",
           "container_rdt_class", "is_qualified_class_name", "unalias_class_name", "parse_cache_proportion",
           "list_str_to_bitmask", "list_str_to_array", "bitmask_list_str", "Absolute", "Pct", "PctRange",
           "CatAllocation", "cat_to_schema", "mba_to_schema", "ROOT_CLASS_NAME", "RDT_POD_ANNOTATION",
           "RDT_POD_ANNOTATION_CONTAINER_PREFIX", "RDT_CONTAINER_ANNOTATION"]
