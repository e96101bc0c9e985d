"""The kubelet's checkpoint files: ``cpu_manager_state``, ``memory_manager_state`` (JSON, versioned).

Upstream: ``pkg/kubelet/cm/cpumanager/state/checkpoint.go``,
``pkg/kubelet/cm/memorymanager/state/checkpoint.go``,
``pkg/kubelet/cm/devicemanager/checkpoint/checkpoint.go``."""

from .cpu_manager_state import cpu_state_to_json, read_cpu_manager_state, write_cpu_manager_state
from .files import atomic_write

__all__ = ["read_cpu_manager_state", "write_cpu_manager_state", "cpu_state_to_json", "atomic_write"]
