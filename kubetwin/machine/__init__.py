"""Hardware topology: one immutable :class:`Machine` model, readers for cAdvisor MachineInfo,
sysfs (live, folder or tarball), hwloc XML and a compact spec, writers for MachineInfo and
NodeResourceTopology, and the kubelet's :class:`CPUTopology` view.

Heavy parts (XML, tarballs, rich) are imported only by the functions that need them.

Not an upstream module: kubetwin's own hardware package; the model follows cAdvisor's
``info/v1/machine.go``.
"""

from __future__ import annotations

from .cputopology import CPUDetails, CPUInfo, CPUTopology, discover
from .machineinfo import machine_from_machineinfo, read_machineinfo, to_machineinfo
from .model import Cache, Core, HugePages, LogicalCPU, Machine, NUMANode, PCIDevice
from .source import load_live, load_machine
from .spec import parse_spec

__all__ = [
    "CPUDetails", "CPUInfo", "CPUTopology", "Cache", "Core", "HugePages", "LogicalCPU", "Machine",
    "NUMANode", "PCIDevice", "discover", "load_live", "load_machine", "machine_from_machineinfo",
    "parse_spec", "read_machineinfo", "to_machineinfo",
]
