"""The resource-policy contract (``Backend``) and the registry of policies by upstream name.

A policy gets the machine (:class:`..sysfs.System`), the cache and its configuration in
``setup``; the resource manager then calls ``allocate_resources`` when a container is created,
``release_resources`` when it stops, ``update_resources`` when its resources change, and
``sync`` with what already runs. A policy changes containers only through the cache's
setters; it reports its pools as topology zones (NodeResourceTopology) and per-container
allocation details for reports.

Policies register here by the names nri-plugins uses (``topology-aware``, ``balloons``); the
module implementing one is imported only when it is asked for.

Upstream: containers/nri-plugins v0.14.0 ``pkg/resmgr/policy/policy.go``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .cache import Cache, CachedContainer

if TYPE_CHECKING:
    from ...model.cpuset import CPUSet
    from ..sysfs import System


class PolicyError(Exception):
    """An allocation or configuration the policy refuses; its text is the plugin's error."""


@dataclass
class ZoneResource:
    name: str
    capacity: str
    allocatable: str
    available: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "capacity": self.capacity, "allocatable": self.allocatable,
                "available": self.available}


@dataclass
class TopologyZone:
    """One pool as the policy publishes it for NodeResourceTopology."""

    name: str
    type: str
    parent: str = ""
    resources: list[ZoneResource] = field(default_factory=list)
    attributes: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.parent:
            out["parent"] = self.parent
        out["resources"] = [r.to_json() for r in self.resources]
        out["attributes"] = [{"name": n, "value": v} for n, v in self.attributes]
        return out


class Backend(Protocol):
    """``policy.Backend``."""

    name: str
    description: str

    def setup(self, system: System, cache: Cache, config: Any) -> None: ...  # config: the policy's own type

    def start(self) -> None: ...

    def sync(self, add: list[CachedContainer], delete: list[CachedContainer]) -> None: ...

    def allocate_resources(self, c: CachedContainer) -> None: ...

    def release_resources(self, c: CachedContainer) -> None: ...

    def update_resources(self, c: CachedContainer) -> None: ...

    def handle_event(self, event: str, data: Any) -> bool: ...

    def export_resource_data(self, c: CachedContainer) -> dict[str, str] | None: ...

    def topology_zones(self) -> list[TopologyZone]: ...

    def describe_container(self, c: CachedContainer) -> dict[str, Any] | None:
        """kubetwin's own: the container's grant (pool, exclusive/shared CPUs, memory zone)."""
        ...

    def container_placement(self, c: CachedContainer) -> tuple[str, CPUSet] | None:
        """kubetwin's own, for the simulation's figures: the container's pool and the CPUs it
        holds alone (what :meth:`describe_container` says, without building its text)."""
        ...

    def describe(self) -> dict[str, Any]:
        """kubetwin's own: the policy's pools and their free resources, for reports."""
        ...

    def reserved_cpus(self) -> CPUSet:
        """kubetwin's own: the reserved CPUs, as ``reserved`` of :meth:`describe`."""
        ...


# name -> (module, class); the config kind each one reads
POLICIES: dict[str, tuple[str, str]] = {
    "topology-aware": ("kubetwin.runtime.policies.topologyaware.policy", "TopologyAwarePolicy"),
    "balloons": ("kubetwin.runtime.policies.balloons.fast", "new_policy"),
}
CONFIG_KINDS = {"TopologyAwarePolicy": "topology-aware", "BalloonsPolicy": "balloons"}


def sync_allocations(policy: Backend, add: list[CachedContainer], delete: list[CachedContainer]) -> None:
    """``Sync`` as both policies implement it: release what went away, then allocate what
    came; a container the policy cannot release or place is skipped (upstream ignores the
    error)."""
    for c in delete:
        try:
            policy.release_resources(c)
        except PolicyError:
            pass
    for c in add:
        try:
            policy.allocate_resources(c)
        except PolicyError:
            pass


def new_policy(name: str) -> Backend:
    """A fresh backend of the named policy (``policy.NewPolicy``)."""
    module, attr = POLICIES[name]
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError:
        raise PolicyError(f'the "{name}" policy is not in this build of kubetwin') from None
    return getattr(mod, attr)()
