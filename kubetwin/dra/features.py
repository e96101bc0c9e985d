"""The allocator's feature switches, derived from feature gates as kube-scheduler derives them.

The allocator itself never reads gates: like upstream's ``structured.Features`` it gets plain
switches, so tests (and the upstream test table) can pin any combination, including ones a
release locks.

Upstream: ``Features`` in
``staging/src/k8s.io/dynamic-resource-allocation/structured/allocator.go``, filled as
``pkg/scheduler/framework/plugins/feature/feature.go`` fills it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Mapping

from ..model.features import FeatureGates

#: Gates the allocator reads; the conformance table sets all of them explicitly.
ALLOCATOR_GATES: Final = ("DRAAdminAccess", "DRAPrioritizedList", "DRAPartitionableDevices", "DRADeviceTaints",
                          "DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus", "DRAConsumableCapacity",
                          "DRAListTypeAttributes")


@dataclass(frozen=True, slots=True)
class AllocatorFeatures:
    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True
    list_type_attributes: bool = False

    @classmethod
    def from_gates(cls, gates: FeatureGates, overrides: Mapping[str, bool] | None = None) -> "AllocatorFeatures":
        """Switches from effective gates; ``overrides`` win even over locked gates (as in unit tests)."""
        def on(name: str) -> bool:
            if overrides and name in overrides:
                return overrides[name]
            try:
                return gates.enabled(name)
            except KeyError:
                return False

        return cls(
            admin_access=on("DRAAdminAccess"),
            prioritized_list=on("DRAPrioritizedList"),
            partitionable_devices=on("DRAPartitionableDevices"),
            device_taints=on("DRADeviceTaints"),
            device_binding_and_status=on("DRADeviceBindingConditions") and on("DRAResourceClaimDeviceStatus"),
            consumable_capacity=on("DRAConsumableCapacity"),
            list_type_attributes=on("DRAListTypeAttributes"),
        )
