"""Container Device Interface (CDI): qualified device names and spec files.

A CDI device is named ``vendor/class=name`` (``pkg/parser`` of
cncf-tags/container-device-interface): the vendor starts with a letter, ends with a letter
or digit and may contain letters, digits, ``-``, ``_`` and ``.``; the class the same without
``.`` before spec 0.6.0 (allowed since); the name starts and ends with a letter or digit and
may contain ``-``, ``_``, ``.`` and ``:``. Spec files are JSON with ``cdiVersion``, ``kind``
(``vendor/class``), ``devices`` and spec-level ``containerEdits``; we write the current spec
version of the reference implementation (``specs-go``: ``CurrentVersion = "1.1.0"``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final, Mapping

from ..errors import InputError

CDI_VERSION: Final = "1.1.0"

_VENDOR = re.compile(r"^[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")
_CLASS = re.compile(r"^[A-Za-z]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")
_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?$")


def validate_kind(vendor: str, cls: str, path: str = "kind") -> None:
    if not _VENDOR.match(vendor):
        raise InputError(f"invalid CDI vendor {vendor!r}: must start with a letter, end with a letter or digit, "
                         "and contain only letters, digits, '-', '_' and '.'", path=path)
    if not _CLASS.match(cls):
        raise InputError(f"invalid CDI class {cls!r}: must start with a letter, end with a letter or digit, "
                         "and contain only letters, digits, '-', '_' and '.'", path=path)


def validate_device_name(name: str, path: str = "name") -> None:
    if not _NAME.match(name):
        raise InputError(f"invalid CDI device name {name!r}: must start and end with a letter or digit and contain "
                         "only letters, digits, '-', '_', '.' and ':'", path=path)


def qualified_name(vendor: str, cls: str, name: str) -> str:
    """``vendor/class=name``, checked as CDI's parser checks it."""
    validate_kind(vendor, cls)
    validate_device_name(name)
    return f"{vendor}/{cls}={name}"


def parse_qualified_name(text: str) -> tuple[str, str, str]:
    """``(vendor, class, name)`` of a fully qualified CDI device name."""
    kind, sep, name = text.partition("=")
    vendor, sep2, cls = kind.partition("/")
    if not sep or not sep2:
        raise InputError(f"unqualified CDI device name {text!r}: expected vendor/class=name")
    validate_kind(vendor, cls)
    validate_device_name(name)
    return vendor, cls, name


@dataclass(frozen=True, slots=True)
class ContainerEdits:
    """The ``containerEdits`` a runtime applies (the subset drivers commonly use)."""

    env: tuple[str, ...] = ()
    device_nodes: tuple[Mapping[str, Any], ...] = ()
    mounts: tuple[Mapping[str, Any], ...] = ()
    hooks: tuple[Mapping[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.env:
            out["env"] = list(self.env)
        if self.device_nodes:
            out["deviceNodes"] = [dict(d) for d in self.device_nodes]
        if self.hooks:
            out["hooks"] = [dict(h) for h in self.hooks]
        if self.mounts:
            out["mounts"] = [dict(m) for m in self.mounts]
        return out


@dataclass(frozen=True, slots=True)
class CDIDevice:
    name: str
    edits: ContainerEdits = ContainerEdits()
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CDISpec:
    """One spec file: a kind and its devices."""

    vendor: str
    cls: str
    devices: tuple[CDIDevice, ...]
    edits: ContainerEdits = ContainerEdits()
    version: str = CDI_VERSION

    @property
    def kind(self) -> str:
        return f"{self.vendor}/{self.cls}"

    def qualified(self, device: str) -> str:
        return f"{self.kind}={device}"

    def validate(self) -> None:
        validate_kind(self.vendor, self.cls)
        seen: set[str] = set()
        for i, d in enumerate(self.devices):
            validate_device_name(d.name, f"devices[{i}].name")
            if d.name in seen:
                raise InputError(f"duplicate CDI device name {d.name!r} in kind {self.kind}", path=f"devices[{i}].name")
            seen.add(d.name)

    def to_json(self) -> dict[str, Any]:
        self.validate()
        devices = []
        for d in self.devices:
            item: dict[str, Any] = {"name": d.name}
            if d.annotations:
                item["annotations"] = dict(d.annotations)
            item["containerEdits"] = d.edits.to_json()
            devices.append(item)
        return {"cdiVersion": self.version, "kind": self.kind, "devices": devices,
                "containerEdits": self.edits.to_json()}

    def file_name(self, suffix: str = "") -> str:
        """``vendor-class[_suffix].json``, the naming the CDI cache and drivers use."""
        return f"{self.vendor}-{self.cls}" + (f"_{suffix}" if suffix else "") + ".json"
