"""Block I/O classes as goresctrl defines them, and the cgroup v2 ``io.*`` lines they become.

A goresctrl ``blockio`` configuration (``pkg/blockio``) names **classes**; each is a list of
parameter sets. A set without ``Devices`` gives the class's default scheduler ``Weight``
(10..1000); a set with ``Devices`` (glob patterns such as ``/dev/sd[a-z]``, resolved against the
machine's block devices) gives per-device weight and throttling (``ThrottleReadBps``,
``ThrottleWriteBps``, ``ThrottleReadIOPS``, ``ThrottleWriteIOPS``; Kubernetes quantities such
as ``50M`` or ``10k``). A later set matching the same device overrides an earlier value
(``devicesParametersToCgBlockIO``). The class becomes an OCI ``LinuxBlockIO`` (``OciLinuxBlockIO``)
which containerd puts into the container's spec (``internal/cri/server/container_create.go``)
and runc writes on cgroup v2 (``opencontainers/cgroups`` ``fs2/io.go``): the default weight to
``io.bfq.weight`` when the BFQ scheduler is loaded, else converted to ``io.weight``
(``1 + (w - 10) * 9999 / 990``); per-device weights to ``io.bfq.weight`` only (without BFQ they
are silently dropped); throttling to ``io.max`` as ``MAJ:MIN rbps=N`` etc.

Containers choose a class with ``blockio.resources.beta.kubernetes.io/pod`` or
``blockio.resources.beta.kubernetes.io/container.NAME`` (or the CRI container annotation
``io.kubernetes.cri.blockio-class``). A class the configuration does not define fails the
container's creation; so does any class while Block I/O is not enabled in containerd, unless
``ignore_blockio_not_enabled_errors``.

The machine's block devices come from cAdvisor's ``disk_map`` (name, major, minor, scheduler).
Patterns under ``/dev`` match those names; other paths (``/dev/disk/by-id/...``) match only the
links a device lists, and are reported when the machine description cannot tell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..diagnostics import warn
from ..errors import InputError
from ..model.quantity import Quantity
from ..model.strict import STRING, list_of, map_of, obj
from . import gostrconv as sc
from .classes import ClassChoice, annotation_path, class_from_annotations
from .goconfig import decode_go_config

if TYPE_CHECKING:
    from ..machine.model import Machine

BLOCKIO_CONTAINER_ANNOTATION = "io.kubernetes.cri.blockio-class"
BLOCKIO_POD_ANNOTATION = "blockio.resources.beta.kubernetes.io/pod"
BLOCKIO_POD_ANNOTATION_CONTAINER_PREFIX = "blockio.resources.beta.kubernetes.io/container."

_PARAMS = obj(Devices=list_of(STRING), ThrottleReadBps=STRING, ThrottleWriteBps=STRING, ThrottleReadIOPS=STRING,
              ThrottleWriteIOPS=STRING, Weight=STRING)
SPEC = obj(Classes=map_of(list_of(_PARAMS)))
_THROTTLES = (("ThrottleReadBps", "rbps"), ("ThrottleWriteBps", "wbps"), ("ThrottleReadIOPS", "riops"),
              ("ThrottleWriteIOPS", "wiops"))


class BlockIOError(InputError):
    """A configuration goresctrl refuses."""


class BlockIOClassError(InputError):
    """The runtime refuses a container's Block I/O class (the container is not created)."""


# --- the machine's block devices ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BlockDevice:
    """A whole-disk block device (``/sys/block/NAME``): device numbers and its I/O scheduler."""

    name: str
    major: int
    minor: int
    scheduler: str = ""
    size: int = 0
    links: tuple[str, ...] = ()  # other /dev paths of the device (/dev/disk/by-id/...), when known

    @property
    def node(self) -> str:
        return f"/dev/{self.name}"

    @property
    def number(self) -> str:
        return f"{self.major}:{self.minor}"


def block_devices(machine: Machine) -> tuple[BlockDevice, ...]:
    """The machine's block devices from MachineInfo's ``disk_map`` (``"8:0": {name, major, minor, ...}``)."""
    disk_map = machine.extra.get("disk_map") or {}
    if not isinstance(disk_map, dict):
        raise InputError("expected an object of MAJOR:MINOR -> disk", path="disk_map")
    out = []
    for key, d in disk_map.items():
        path = f"disk_map.{key}"
        if not isinstance(d, dict):
            raise InputError("expected an object (name, major, minor, size, scheduler)", path=path)
        try:
            major, minor = int(d.get("major", -1)), int(d.get("minor", -1))
        except (TypeError, ValueError):
            raise InputError("major and minor must be integers", path=path) from None
        name = d.get("name")
        if not isinstance(name, str) or not name or major < 0 or minor < 0:
            raise InputError("a disk needs its name, major and minor", path=path)
        links = d.get("links") or ()
        out.append(BlockDevice(name, major, minor, str(d.get("scheduler") or ""), int(d.get("size") or 0),
                               tuple(str(x) for x in links)))
    return tuple(sorted(out, key=lambda b: (b.major, b.minor)))


def bfq_loaded(devices: Iterable[BlockDevice]) -> bool:
    """``io.bfq.weight`` exists in every cgroup once the BFQ scheduler is registered: taken as
    "some device uses it" (what the machine description can tell)."""
    return any(d.scheduler == "bfq" for d in devices)


# --- Go's filepath.Match ---------------------------------------------------------------------------


def glob_regex(pattern: str) -> re.Pattern[str]:
    """``path/filepath.Match`` syntax as a regex; ``ValueError("syntax error in pattern")`` if bad."""
    out, i, n = [], 0, len(pattern)
    bad = ValueError("syntax error in pattern")
    while i < n:
        ch = pattern[i]
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "\\":
            if i + 1 >= n:
                raise bad
            i += 1
            out.append(re.escape(pattern[i]))
        elif ch == "[":
            i += 1
            neg = i < n and pattern[i] == "^"
            if neg:
                i += 1
            items, first = [], True
            while True:
                if i >= n:
                    raise bad
                if pattern[i] == "]" and not first:
                    break
                lo, i = _class_char(pattern, i)
                hi = lo
                if i < n and pattern[i] == "-":
                    hi, i = _class_char(pattern, i + 1)
                if hi < lo:
                    raise bad
                items.append(re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}")
                first = False
            out.append(("[^/" if neg else "[") + "".join(items) + "]")
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out))


def _class_char(p: str, i: int) -> tuple[str, int]:
    """``getEsc``: one character of a ``[...]`` class; ``-`` and ``]`` must be escaped there."""
    if i >= len(p) or p[i] in "-]":
        raise ValueError("syntax error in pattern")
    if p[i] == "\\":
        i += 1
        if i >= len(p):
            raise ValueError("syntax error in pattern")
    return p[i], i + 1


def match_devices(patterns: Sequence[str], devices: Sequence[BlockDevice], *, path: str = "",
                  file: str | None = None) -> list[BlockDevice]:
    """``configurableBlockDevices``: the devices the patterns name, each once, in pattern order."""
    found: list[BlockDevice] = []
    for k, pattern in enumerate(patterns):
        where = f"{path}[{k}]" if path else ""
        head, _, tail = pattern.rpartition("/")
        try:
            rx = glob_regex(tail)
            dir_rx = glob_regex(head) if head else None
        except ValueError as exc:
            raise InputError(f"bad device wildcard {sc.quote(pattern)}: {exc}", path=where, file=file) from None
        if head == "/dev":
            hits = [d for d in devices if rx.fullmatch(d.name)]
        else:
            hits = [d for d in devices for link in d.links if glob_regex(pattern).fullmatch(link)]
            if not hits and dir_rx is not None and not any(d.links for d in devices):
                warn(InputError(f"device wildcard {sc.quote(pattern)} cannot be resolved: the machine description "
                                "lists block devices by /dev/NAME only; goresctrl would resolve it on the node",
                                path=where, file=file,
                                fix="use /dev/NAME patterns, or list the device's links in disk_map"))
                continue
        if not hits:
            warn(InputError(f"device wildcard {sc.quote(pattern)} does not match any device nodes: goresctrl ignores "
                            "it", path=where, file=file))
        for d in sorted(hits, key=lambda d: d.name):
            if d not in found:
                found.append(d)
    return found


# --- the configuration ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DevicesParameters:
    """One parameter set of a class (values in bytes/s or IO/s; -1 = not given)."""

    devices: tuple[str, ...] | None
    throttle_read_bps: int = -1
    throttle_write_bps: int = -1
    throttle_read_iops: int = -1
    throttle_write_iops: int = -1
    weight: int = -1
    path: str = ""


@dataclass(frozen=True)
class BlockIOParameters:
    """goresctrl's ``BlockIOParameters`` for one class on one machine: ``(major, minor, value)`` lists."""

    weight: int = -1
    weight_device: tuple[tuple[int, int, int], ...] = ()
    throttle_read_bps_device: tuple[tuple[int, int, int], ...] = ()
    throttle_write_bps_device: tuple[tuple[int, int, int], ...] = ()
    throttle_read_iops_device: tuple[tuple[int, int, int], ...] = ()
    throttle_write_iops_device: tuple[tuple[int, int, int], ...] = ()

    def oci(self) -> dict[str, Any]:
        """``OciLinuxBlockIO``: the OCI runtime-spec ``linux.resources.blockIO`` object."""
        out: dict[str, Any] = {}
        if self.weight != -1:
            out["weight"] = self.weight
        if self.weight_device:
            out["weightDevice"] = [{"major": a, "minor": b, "weight": w} for a, b, w in self.weight_device]
        for key, rows in (("throttleReadBpsDevice", self.throttle_read_bps_device),
                          ("throttleWriteBpsDevice", self.throttle_write_bps_device),
                          ("throttleReadIOPSDevice", self.throttle_read_iops_device),
                          ("throttleWriteIOPSDevice", self.throttle_write_iops_device)):
            if rows:
                out[key] = [{"major": a, "minor": b, "rate": r} for a, b, r in rows]
        return out


def _update(rows: list[tuple[int, int, int]], major: int, minor: int, value: int) -> None:
    """``DeviceWeights.Update`` / ``DeviceRates.Update``: replace in place, else append."""
    for k, (a, b, _) in enumerate(rows):
        if a == major and b == minor:
            rows[k] = (a, b, value)
            return
    rows.append((major, minor, value))


def _quantity(name: str, text: str, lo: int, hi: int, path: str) -> tuple[int, str | None]:
    """``parseAndValidateQuantity``: -1 when empty; an error text when invalid or out of range."""
    if text == "":
        return -1, None
    try:
        value = Quantity.parse(text).value()
    except Exception:
        return -1, f"syntax error in {sc.quote(name)} ({sc.quote(text)})"
    if lo != -1 and lo > value:
        return -1, f"value of {sc.quote(name)} ({value}) smaller than minimum ({lo})"
    if hi != -1 and value > hi:
        return -1, f"value of {sc.quote(name)} ({value}) bigger than maximum ({hi})"
    return value, None


@dataclass(frozen=True)
class BlockIOConfig:
    """A goresctrl ``blockio`` configuration: classes of parameter sets."""

    classes: Mapping[str, tuple[DevicesParameters, ...]]
    file: str | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def class_names(self) -> list[str]:
        """``GetClasses``: sorted."""
        return sorted(self.classes)

    def has_class(self, name: str) -> bool:
        return name in self.classes

    def _params(self, name: str) -> tuple[DevicesParameters, ...]:
        if name not in self.classes:
            raise BlockIOClassError(f"no OCI BlockIO parameters for class {sc.quote(name)}", file=self.file,
                                    fix=f"one of: {', '.join(self.class_names()) or '(no classes defined)'}")
        return self.classes[name]

    def parameters(self, class_name: str, devices: Any) -> BlockIOParameters:
        """``devicesParametersToCgBlockIO`` for one class against the machine's block devices."""
        devs = _devices(devices)
        key = (class_name, devs)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        weight = -1
        rows: dict[str, list[tuple[int, int, int]]] = {k: [] for k in ("w", "rbps", "wbps", "riops", "wiops")}
        for dp in self._params(class_name):
            if dp.devices is None:
                if dp.weight > -1:
                    weight = dp.weight
                continue
            for d in match_devices(dp.devices, devs, path=f"{dp.path}.Devices", file=self.file):
                if dp.weight != -1:
                    _update(rows["w"], d.major, d.minor, dp.weight)
                for value, k in ((dp.throttle_read_bps, "rbps"), (dp.throttle_write_bps, "wbps"),
                                 (dp.throttle_read_iops, "riops"), (dp.throttle_write_iops, "wiops")):
                    if value != -1:
                        _update(rows[k], d.major, d.minor, value)
        out = BlockIOParameters(weight, tuple(rows["w"]), tuple(rows["rbps"]), tuple(rows["wbps"]),
                                tuple(rows["riops"]), tuple(rows["wiops"]))
        self._cache[key] = out
        return out

    def oci(self, class_name: str, devices: Any) -> dict[str, Any]:
        """The OCI ``LinuxBlockIO`` of a class (``OciLinuxBlockIO``)."""
        return self.parameters(class_name, devices).oci()

    def cgroup_v2(self, class_name: str, devices: Any, *, bfq: bool | None = None) -> dict[str, str]:
        """The container cgroup's ``io.bfq.weight`` / ``io.weight`` / ``io.max`` content for a class
        (per device, ``MAJ:MIN``), as runc leaves them."""
        devs = _devices(devices)
        return io_files(self.oci(class_name, devs), bfq=bfq_loaded(devs) if bfq is None else bfq).files

    def container_class(self, container_name: str, pod_annotations: Mapping[str, str] | None,
                        container_annotations: Mapping[str, str] | None = None) -> ClassChoice:
        """The class a container asks for; one this configuration does not define fails the container."""
        choice = blockio_class_choice(container_name, pod_annotations, container_annotations)
        if choice.found and choice.name not in self.classes:
            raise BlockIOClassError(f"no OCI BlockIO parameters for class {sc.quote(choice.name or '')}",
                                    path=annotation_path(choice),
                                    fix=f"one of: {', '.join(self.class_names()) or '(no classes defined)'}")
        return choice


def _devices(devices: Any) -> tuple[BlockDevice, ...]:
    if hasattr(devices, "extra"):
        return block_devices(devices)
    return tuple(devices)


@dataclass(frozen=True)
class IOFiles:
    """What runc writes for a ``LinuxBlockIO``: file -> content, and what it could not apply."""

    files: dict[str, str]
    notes: tuple[str, ...] = ()


def convert_blkio_to_io_weight(weight: int) -> int:
    """``ConvertBlkIOToIOWeightValue``: [10, 1000] -> [1, 10000]; 0 stays 0."""
    if weight == 0:
        return 0
    return 1 + (weight - 10) * 9999 // 990


def io_files(block_io: Mapping[str, Any], *, bfq: bool) -> IOFiles:
    """``fs2.setIo``: the ``io.*`` files of a container cgroup from an OCI ``LinuxBlockIO``."""
    files: dict[str, str] = {}
    notes: list[str] = []
    weight = int(block_io.get("weight") or 0)
    wdev = [(int(r["major"]), int(r["minor"]), int(r.get("weight") or 0)) for r in block_io.get("weightDevice") or ()]
    if weight or wdev:
        if bfq:
            lines = [f"default {weight or 100}"] + [f"{a}:{b} {w}" for a, b, w in sorted(wdev)]
            files["io.bfq.weight"] = "\n".join(lines)
        else:
            if weight:
                files["io.weight"] = f"default {convert_blkio_to_io_weight(weight)}"
            if wdev:
                notes.append("per-device weights not applied: runc writes them to io.bfq.weight only, and no device "
                             "uses the BFQ scheduler")
    limits: dict[tuple[int, int], dict[str, str]] = {}
    for key, name in (("throttleReadBpsDevice", "rbps"), ("throttleWriteBpsDevice", "wbps"),
                      ("throttleReadIOPSDevice", "riops"), ("throttleWriteIOPSDevice", "wiops")):
        for r in block_io.get(key) or ():
            dev = (int(r["major"]), int(r["minor"]))
            rate = int(r["rate"])
            limits.setdefault(dev, {})[name] = str(rate)
    if limits:
        files["io.max"] = "\n".join(f"{a}:{b} " + " ".join(f"{k}={vals.get(k, 'max')}"
                                                            for k in ("rbps", "wbps", "riops", "wiops"))
                                     for (a, b), vals in sorted(limits.items()))
    return IOFiles(files, tuple(notes))


def blockio_class_choice(container_name: str, pod_annotations: Mapping[str, str] | None,
                         container_annotations: Mapping[str, str] | None = None) -> ClassChoice:
    return class_from_annotations(BLOCKIO_CONTAINER_ANNOTATION, BLOCKIO_POD_ANNOTATION,
                                  BLOCKIO_POD_ANNOTATION_CONTAINER_PREFIX, container_name, container_annotations,
                                  pod_annotations)


def blockio_class_from_annotations(pod_annotations: Mapping[str, str] | None, container: str,
                                   container_annotations: Mapping[str, str] | None = None) -> str | None:
    """The Block I/O class a container's annotations ask for, or None."""
    return blockio_class_choice(container, pod_annotations, container_annotations).name


def container_blockio_class(config: BlockIOConfig | None, container_name: str,
                            pod_annotations: Mapping[str, str] | None,
                            container_annotations: Mapping[str, str] | None = None, *,
                            ignore_not_enabled: bool = False) -> str | None:
    """The class containerd gives a container (``blockIOClassFromAnnotations``), or None.

    An empty class name is no class. Block I/O is enabled when a configuration is loaded."""
    if config is not None:
        choice = config.container_class(container_name, pod_annotations, container_annotations)
        return choice.name or None
    choice = blockio_class_choice(container_name, pod_annotations, container_annotations)
    if not choice.name:
        return None
    if ignore_not_enabled:
        return None
    raise BlockIOClassError(f"blockio disabled, refusing to set blockio class of container {sc.quote(container_name)} "
                            f"to {sc.quote(choice.name)}", path=annotation_path(choice),
                            fix="give a Block I/O configuration (containerd's blockio_config_file)")


# --- loading --------------------------------------------------------------------------------------


def parse_blockio_config(doc: Mapping[str, Any] | None, file: str | None = None, *, prefix: str = "") -> BlockIOConfig:
    """A goresctrl ``blockio`` configuration (already parsed) → :class:`BlockIOConfig`.

    goresctrl checks every value (weights 10..1000, rates >= 0, throttling only with ``Devices``)
    and reports all problems together; so does this."""
    data = decode_go_config(doc or {}, SPEC, file=file, prefix=prefix)
    base = f"{prefix}." if prefix else ""
    classes: dict[str, tuple[DevicesParameters, ...]] = {}
    problems: list[tuple[str, str]] = []
    for name, sets in (data.get("Classes") or {}).items():
        params = []
        for k, dp in enumerate(sets or ()):
            dp = dp or {}
            path = f"{base}Classes.{name}[{k}]"
            values: dict[str, int] = {}
            for fname, lo, hi in (("Weight", 10, 1000), ("ThrottleReadBps", 0, -1), ("ThrottleWriteBps", 0, -1),
                                  ("ThrottleReadIOPS", 0, -1), ("ThrottleWriteIOPS", 0, -1)):
                v, err = _quantity(fname, dp.get(fname) or "", lo, hi, path)
                values[fname] = v
                if err:
                    problems.append((f"{path}.{fname}", err))
            devices = dp.get("Devices")
            if devices is None and any(values[f] > -1 for f, _ in _THROTTLES):
                shown = " ".join(f'{short}={sc.quote(dp.get(f) or "")}' for f, short in _THROTTLES)
                problems.append((path, f"ignoring throttling ({shown}): Devices not listed"))
            if devices is not None:
                for j, pattern in enumerate(devices):
                    head, _, tail = pattern.rpartition("/")
                    try:
                        glob_regex(tail)
                        if head:
                            glob_regex(head)
                    except ValueError as exc:
                        problems.append((f"{path}.Devices[{j}]", f"bad device wildcard {sc.quote(pattern)}: {exc}"))
            params.append(DevicesParameters(tuple(devices) if devices is not None else None,
                                            values["ThrottleReadBps"], values["ThrottleWriteBps"],
                                            values["ThrottleReadIOPS"], values["ThrottleWriteIOPS"], values["Weight"],
                                            path))
        classes[str(name)] = tuple(params)
    if problems:
        if len(problems) == 1:
            raise BlockIOError(problems[0][1], path=problems[0][0], file=file)
        raise BlockIOError("; ".join(f"{p}: {m}" for p, m in problems), file=file)
    return BlockIOConfig(classes, file)


def load_blockio_config(path: str | Path) -> BlockIOConfig:
    """Read a goresctrl ``blockio`` configuration file (YAML or JSON; empty = no classes)."""
    from ..model.loader import load_optional_mapping

    doc, name = load_optional_mapping(path, "Block I/O configuration", "Classes")
    return parse_blockio_config(doc, name)


__all__ = ["BlockIOConfig", "BlockIOParameters", "DevicesParameters", "BlockDevice", "IOFiles", "BlockIOError",
           "BlockIOClassError", "block_devices", "bfq_loaded", "match_devices", "glob_regex", "io_files",
           "convert_blkio_to_io_weight", "load_blockio_config", "parse_blockio_config",
           "blockio_class_from_annotations", "blockio_class_choice", "container_blockio_class",
           "BLOCKIO_POD_ANNOTATION", "BLOCKIO_POD_ANNOTATION_CONTAINER_PREFIX", "BLOCKIO_CONTAINER_ANNOTATION"]
