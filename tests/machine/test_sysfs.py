"""sysfs: hwloc's 13 dumps load straight from their tarballs; a folder and this machine load too."""

import io
import re
import tarfile
from pathlib import Path

import pytest

from kubetwin.errors import InputError
from kubetwin.machine import load_machine
from kubetwin.machine.sysfs import DirFS, read_sysfs

from .conftest import HWLOC, SYSFS_TARBALLS, needs_shared


def _console_counts(console: Path) -> tuple[int, int, int, int]:
    """(packages, NUMA nodes, cores, PUs) as hwloc printed them."""
    t = console.read_text()
    count = lambda rx: len(re.findall(rx, t, re.M))  # noqa: E731
    return count(r"^\s*Package L#"), count(r"NUMANode L#"), count(r"^\s*Core L#"), count(r"^\s*PU L#")


# where cAdvisor's view differs from hwloc's on purpose: (sockets, NUMA nodes, cores, CPUs)
CADVISOR_VIEW = {
    # POWER7 reports physical_package_id -1: one socket, not hwloc's per-core packages
    "256ppc-8n8s4t": (1, 8, 64, 256),
    # sysfs has 4 package ids; hwloc merges two because of conflicting PCI locality
    "40intel64-4n10c+pci-conflicts": (4, 4, 40, 40),
    # 6 CPU-less GPU-memory nodes are NUMA nodes in sysfs; hwloc's console hides them
    "nvidiagpunumanodes": (2, 8, 8, 32),
    # node0 has no sysfs directory: its online CPUs 4-20 (even) are invisible to cAdvisor
    "offline-cpu0-node0": (1, 1, 8, 8),
}


def test_there_are_13_sysfs_dumps():
    assert len(SYSFS_TARBALLS) == 13


@needs_shared
@pytest.mark.parametrize("path", SYSFS_TARBALLS, ids=lambda p: p.name.split(".tar")[0])
def test_every_sysfs_tarball_loads(path):
    m = load_machine(str(path))
    assert m.num_cores == len(m.cpus) > 0
    assert m.cpu_topology().num_cpus == m.num_cores
    name = path.name.split(".tar")[0]
    console = path.with_name(name + ".console")
    counts = (m.num_sockets, len(m.nodes), m.num_physical_cores, m.num_cores)
    if name in CADVISOR_VIEW:
        assert counts == CADVISOR_VIEW[name]
    elif console.exists():
        assert counts == _console_counts(console)


@needs_shared
def test_sparse_numa_ids_stay_sparse():
    m = load_machine(str(HWLOC / "sysfs/48amd64-4pa2n6c-sparse.tar.bz2"))
    assert m.node_ids == (0, 1, 2, 33, 34, 45, 72, 73)


@needs_shared
def test_cpu_less_gpu_memory_nodes_are_kept():
    m = load_machine(str(HWLOC / "sysfs/nvidiagpunumanodes.tar.bz2"))
    cpuless = [n.id for n in m.nodes if not n.cores]
    assert cpuless == [250, 251, 252, 253, 254, 255]
    assert m.cpu_topology().num_numa_nodes == 2


@needs_shared
def test_offline_cpus_are_skipped():
    m = load_machine(str(HWLOC / "sysfs/offline-cpu0-node0.tar.bz2"))
    assert 0 not in m.cpus and 3 not in m.cpus


@needs_shared
def test_node_hugepages_and_distances_are_read():
    m = load_machine(str(HWLOC / "sysfs/memorysidecaches.tar.bz2"))
    assert [h.page_size for h in m.nodes[0].hugepages] == [2048, 1048576]
    assert sorted(set(m.nodes[0].distances)) == [10, 11, 21] and len(m.nodes[0].distances) == 4


@needs_shared
def test_sub_numa_clusters_share_an_uncore_cache():
    t = load_machine(str(HWLOC / "sysfs/memorysidecaches.tar.bz2")).cpu_topology()
    assert t.num_uncore_cache == 2 and t.num_numa_nodes == 4


@needs_shared
def test_pci_devices_carry_their_sysfs_numa_node():
    m = load_machine(str(HWLOC / "sysfs/40intel64-2g2n4c+pcilocality.tar.bz2"))
    by_address = {d.address: d for d in m.pci_devices}
    assert len(m.pci_devices) == 37
    assert by_address["0000:43:00.0"].numa_node == 2
    assert by_address["0000:02:00.0"].numa_node is None  # numa_node -1, local to every CPU


def test_pci_locality_falls_back_to_local_cpulist(tmp_path):
    root = _two_node_tree(tmp_path)
    dev = "sys/bus/pci/devices/0000:3b:00.0"
    _tree(root, {f"{dev}/class": "0x030200\n", f"{dev}/vendor": "0x10de\n", f"{dev}/device": "0x20b0\n",
                 f"{dev}/numa_node": "-1\n", f"{dev}/local_cpulist": "1\n"})
    (gpu,) = load_machine(str(root)).pci_devices
    assert (gpu.kind, gpu.numa_node, gpu.vendor_id) == ("gpu", 1, 0x10DE)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def _two_cpu_tree(root: Path) -> Path:
    files = {"sys/devices/system/cpu/online": "0-1\n", "proc/meminfo": "MemTotal: 2048 kB\nSwapTotal: 1024 kB\n"}
    for cpu in (0, 1):
        files[f"sys/devices/system/cpu/cpu{cpu}/topology/core_id"] = "0\n"
        files[f"sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id"] = "0\n"
        files[f"sys/devices/system/node/node0/cpu{cpu}/.keep"] = ""
    files["sys/devices/system/node/node0/meminfo"] = "Node 0 MemTotal:  2048 kB\n"
    files["sys/devices/system/node/node0/distance"] = "10\n"
    return _tree(root, files)


def _two_node_tree(root: Path) -> Path:
    files = {"sys/devices/system/cpu/online": "0-1\n"}
    for cpu in (0, 1):
        files[f"sys/devices/system/cpu/cpu{cpu}/topology/core_id"] = "0\n"
        files[f"sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id"] = f"{cpu}\n"
        files[f"sys/devices/system/node/node{cpu}/cpu{cpu}/.keep"] = ""
        files[f"sys/devices/system/node/node{cpu}/distance"] = "10 21\n" if cpu == 0 else "21 10\n"
    return _tree(root, files)


def test_a_sysfs_folder_loads_without_hugepages_or_caches(tmp_path):
    m = load_machine(str(_two_cpu_tree(tmp_path)))
    assert (m.num_cores, m.num_physical_cores, m.memory_capacity, m.swap_capacity) == (2, 1, 2048 * 1024, 1024 * 1024)
    assert m.nodes[0].hugepages == () and m.nodes[0].cores[0].threads == (0, 1)


def test_cpus_without_topology_files_are_skipped(tmp_path):
    root = _two_cpu_tree(tmp_path)
    (root / "sys/devices/system/cpu/cpu1/topology/core_id").unlink()
    assert read_sysfs(DirFS(root)).num_cores == 1


@pytest.mark.skipif(not Path("/sys/devices/system/cpu").is_dir(), reason="no live sysfs")
def test_this_machine_loads():
    m = load_machine("/")
    assert m.num_cores >= 1 and m.cpu_topology().num_cpus == m.num_cores


def test_tarball_without_cpu_dirs_is_rejected(tmp_path):
    path = tmp_path / "empty.tar.bz2"
    with tarfile.open(path, "w:bz2") as tar:
        data = b"MemTotal: 1 kB\n"
        info = tarfile.TarInfo("dump/proc/meminfo")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(InputError, match=r"empty\.tar\.bz2: no sys/devices/system/cpu directory in the tarball"):
        load_machine(str(path))


def test_folder_without_cpus_is_rejected(tmp_path):
    _tree(tmp_path, {"sys/devices/system/cpu/online": "0\n"})
    with pytest.raises(InputError, match="no online CPU with topology information"):
        load_machine(str(tmp_path))


@needs_shared
def test_pcie_root_is_the_first_directory_the_bus_symlink_points_to():
    m = load_machine(str(HWLOC / "sysfs/40intel64-2g2n4c+pcilocality.tar.bz2"))
    roots = {d.address: d.pcie_root for d in m.pci_devices}
    assert roots["0000:43:00.0"] == "pci0000:40"  # ../../../devices/pci0000:40/0000:40:03.0/0000:43:00.0
    assert roots["0000:02:00.0"] == "pci0000:00"


@needs_shared
def test_pcie_root_is_unknown_when_the_bus_entry_is_no_symlink():
    # this dump stores sys/bus/pci/devices/* as plain directories: readlink fails upstream too
    m = load_machine(str(HWLOC / "sysfs/nvidiagpunumanodes.tar.bz2"))
    assert m.pci_devices and all(d.pcie_root == "" for d in m.pci_devices)


def _linked_gpu(root: Path, address: str, target: str) -> None:
    real = root / "sys/bus/pci/devices" / target
    assert real.resolve().name == address
    _tree(real, {"class": "0x030200\n", "vendor": "0x10de\n", "device": "0x20b0\n", "numa_node": "0\n"})
    link = root / "sys/bus/pci/devices" / address
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


def test_pcie_root_from_a_folder_with_relative_symlinks(tmp_path):
    root = _two_node_tree(tmp_path)
    _linked_gpu(root, "0000:3b:00.0", "../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0")
    (gpu,) = load_machine(str(root)).pci_devices
    assert gpu.pcie_root == "pci0000:3a"


def test_pcie_root_needs_a_link_into_sys_devices_pci_ending_in_the_address(tmp_path):
    root = _two_node_tree(tmp_path)
    _linked_gpu(root, "0000:3b:00.0", "../../../devices/platform/vmbus/0000:3b:00.0")  # not under pci*
    (gpu,) = load_machine(str(root)).pci_devices
    assert gpu.pcie_root == ""


def test_pcie_root_from_a_tarball_symlink(tmp_path):
    tree = _two_node_tree(tmp_path / "dump")
    _linked_gpu(tree, "0000:3b:00.0", "../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0")
    tarball = tmp_path / "dump.tar.gz"
    with tarfile.open(tarball, "w:gz") as tar:
        tar.add(tree, arcname="dump")
    (gpu,) = load_machine(str(tarball)).pci_devices
    assert (gpu.address, gpu.pcie_root) == ("0000:3b:00.0", "pci0000:3a")


def test_a_cpu_directory_past_the_largest_cpu_id_is_refused_at_once(tmp_path):
    from kubetwin.errors import InputError
    from kubetwin.machine import load_machine

    cpu = tmp_path / "sys/devices/system/cpu/cpu99999999999/topology"
    cpu.mkdir(parents=True)
    (cpu / "core_id").write_text("0\n")
    (cpu / "physical_package_id").write_text("0\n")
    (tmp_path / "sys/devices/system/node/node0/cpu99999999999").mkdir(parents=True)
    with pytest.raises(InputError, match="CPU id 99999999999 is beyond the largest CPU id"):
        load_machine(str(tmp_path))
