from pathlib import Path

import pytest

SHARED = Path("/work/shared")
HWLOC = SHARED / "data/topologies/hwloc"
MACHINES = SHARED / "conformance/machines"

XML_FILES = sorted(HWLOC.glob("xml/*.xml")) + sorted(HWLOC.glob("linux/*.xml")) + sorted(HWLOC.glob("x86/*.xml"))
SYSFS_TARBALLS = sorted(HWLOC.glob("sysfs/*.tar.bz2"))
MACHINEINFO_FILES = sorted(MACHINES.glob("*.json"))

needs_shared = pytest.mark.skipif(not HWLOC.is_dir(), reason="shared topology data not available")
