"""Claim constraints: ``matchAttribute`` and ``distinctAttribute``.

Both are assumed monotonic, as upstream: once a device is refused, adding more devices will
not help, so the search may stop early. ``remove`` undoes exactly one successful ``add``
(with the upstream quirks kept: a list-type intersection is not widened again, and distinct
values are remembered per request name).

Upstream:
``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/experimental/constraint.go``.
"""

from __future__ import annotations

from typing import Protocol

from .api import Device, DeviceAttribute, DeviceConstraint


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """The fully qualified name first, then the bare id when the domain is the device's driver."""
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


class Constraint(Protocol):
    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool: ...

    def remove(self, request: str, sub_request: str, device: Device, driver: str) -> None: ...


class _Scoped:
    __slots__ = ("requests", "attribute", "list_types")

    def __init__(self, spec: DeviceConstraint, attribute: str, list_types: bool):
        self.requests = frozenset(spec.requests)
        self.attribute = attribute
        self.list_types = list_types

    def applies(self, request: str, sub_request: str) -> bool:
        if not self.requests:
            return True
        if request in self.requests:
            return True
        return bool(sub_request) and f"{request}/{sub_request}" in self.requests


def _scalar_equal(a: DeviceAttribute, b: DeviceAttribute) -> bool:
    return a.kind == b.kind and a.kind in ("int", "bool", "string", "version") and a.value == b.value


class MatchAttribute(_Scoped):
    """All devices in scope must have the same value (with list types: a common element)."""

    __slots__ = ("value", "common", "count")

    def __init__(self, spec: DeviceConstraint, list_types: bool):
        super().__init__(spec, spec.match_attribute or "", list_types)
        self.value: DeviceAttribute | None = None
        self.common: frozenset | None = None
        self.count = 0

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub_request):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if self.list_types:
            values = attr.as_set() if attr.kind else frozenset()
            if self.count == 0:
                self.common = values
                self.count = 1
                return True
            both = (self.common or frozenset()) & values
            if not both:
                return False
            self.common = both
            self.count += 1
            return True
        if self.count == 0:
            self.value = attr
            self.count = 1
            return True
        if self.value is None or not _scalar_equal(attr, self.value):
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub_request: str, device: Device, driver: str) -> None:
        if self.applies(request, sub_request):
            self.count -= 1


class DistinctAttribute(_Scoped):
    """Devices in scope must all differ (with list types: pairwise disjoint sets)."""

    __slots__ = ("values", "count")

    def __init__(self, spec: DeviceConstraint, list_types: bool):
        super().__init__(spec, spec.distinct_attribute or "", list_types)
        self.values: dict[str, DeviceAttribute] = {}
        self.count = 0

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub_request):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if self.count and not self._distinct(attr):
            return False
        self.values[request] = attr
        self.count += 1
        return True

    def _distinct(self, attr: DeviceAttribute) -> bool:
        if self.list_types:
            mine = attr.as_set() if attr.kind else frozenset()
            return all(not (mine & other.as_set()) for other in self.values.values() if other.kind)
        if attr.kind not in ("int", "bool", "string", "version"):
            return False
        return all(not _scalar_equal(attr, other) for other in self.values.values())

    def remove(self, request: str, sub_request: str, device: Device, driver: str) -> None:
        if self.applies(request, sub_request):
            self.values.pop(request, None)
            self.count -= 1
