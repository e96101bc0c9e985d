"""hwloc XML: all 34 shared topologies load with the counts hwloc's README table gives; bombs fail fast."""

import time

import pytest

from kubetwin.errors import InputError
from kubetwin.machine import load_machine
from kubetwin.machine.hwloc import parse_bitmap, read_hwloc_xml

from .conftest import HWLOC, XML_FILES, needs_shared

pytestmark = needs_shared

# file -> (packages with CPUs, NUMA nodes, cores, PUs), from hwloc's README table
EXPECTED = {
    "xml/192em64t-24n8c2t.xml": (24, 24, 192, 384),
    "xml/192em64t-12gr2n8c2t.xml": (24, 24, 192, 384),
    "xml/irregulargroups-disallowed.xml": (8, 8, 64, 64),
    "xml/96em64t-4n4d3ca2co-pci.xml": (16, 4, 96, 96),
    "xml/memorysidecaches.xml": (2, 4, 40, 80),
    "xml/64intel64-heteromem.xml": (1, 8, 16, 64),
    "xml/nvidiaDGX2.xml": (2, 2, 4, 4),
    "xml/power8gpudistances.xml": (2, 2, 8, 16),
    "xml/32em64t-2n8c2t-pci-normalio.xml": (2, 2, 16, 32),
    "xml/24em64t-2n6c2t-pci.xml": (2, 2, 12, 24),
    "xml/16intel64-manyVFs.xml": (2, 2, 16, 16),
    "xml/16amd64-4distances.xml": (8, 8, 16, 16),
    "xml/cxlmem+dax.v3.xml": (1, 1, 4, 4),
    "xml/16em64t-4s2c2t-offlines.xml": (4, 1, 6, 7),
    "linux/40intel64-2g2n4c+pcilocality.xml": (4, 4, 40, 40),
    "linux/32em64t-2n8c+dax+nvme+mic+dimms.xml": (2, 2, 16, 16),
    "linux/64amd64-4p2n4ca2co.xml": (4, 8, 64, 64),
    "linux/nvidia-dgx-gb10.xml": (1, 1, 20, 20),
    "x86/AMD-19h-Zen4-2xEpyc-9654.xml": (2, 1, 192, 384),
    "x86/AMD-19h-Zen3-2xEpyc-7763.xml": (2, 1, 128, 128),
    "x86/AMD-17h-Zen-2xEpyc-7451.xml": (2, 1, 48, 96),
    "x86/Intel-KnightsLanding-XeonPhi-7210.xml": (1, 1, 64, 256),
    "x86/Intel-RaptorLake-Corei7-1370P.xml": (1, 1, 14, 20),
    "x86/Intel-IvyBridge-12xXeon-E5-4620v2.xml": (12, 1, 96, 192),
}
# file -> (PCI devices, GPU-class devices), from the README table
PCI = {
    "xml/nvidiaDGX2.xml": (28, 16), "xml/32em64t-2n8c2t-pci-normalio.xml": (10, 5),
    "xml/24em64t-2n6c2t-pci.xml": (9, 4), "xml/16intel64-manyVFs.xml": (18, 0),
    "xml/irregulargroups-disallowed.xml": (8, 3), "linux/32em64t-2n8c+dax+nvme+mic+dimms.xml": (128, 1),
    "linux/40intel64-2g2n4c+pcilocality.xml": (23, 1), "xml/cxlmem+dax.v3.xml": (7, 1),
}
# file -> L3 count from the README (uncore groups when L3s do not cover a whole NUMA node)
L3 = {"x86/AMD-19h-Zen4-2xEpyc-9654.xml": 24, "x86/AMD-17h-Zen-2xEpyc-7451.xml": 16,
      "xml/power8gpudistances.xml": 8, "x86/Hygon-Dhyana-32cores.xml": 8}


def _rel(p):
    return str(p.relative_to(HWLOC))


def test_there_are_34_xml_topologies():
    assert len(XML_FILES) == 34


@pytest.mark.parametrize("path", XML_FILES, ids=_rel)
def test_every_xml_topology_loads_with_sane_counts(path):
    m = load_machine(str(path))
    assert m.num_cores == len(m.cpus) > 0
    assert m.num_physical_cores <= m.num_cores
    assert m.cpu_topology().num_cpus == m.num_cores
    if _rel(path) in EXPECTED:
        assert (m.num_sockets, len(m.nodes), m.num_physical_cores, m.num_cores) == EXPECTED[_rel(path)]


@pytest.mark.parametrize("rel", sorted(PCI))
def test_pci_devices_and_gpus_match_hwloc(rel):
    m = load_machine(str(HWLOC / rel))
    assert (len(m.pci_devices), sum(d.kind == "gpu" for d in m.pci_devices)) == PCI[rel]


@pytest.mark.parametrize("rel", sorted(L3))
def test_split_l3_caches_become_uncore_groups(rel):
    assert load_machine(str(HWLOC / rel)).cpu_topology().num_uncore_cache == L3[rel]


def test_x86_cpuid_dumps_have_one_numa_node_without_memory():
    m = load_machine(str(HWLOC / "x86/Intel-Skylake-2xXeon6140.xml"))
    assert [(n.id, n.memory) for n in m.nodes] == [(0, 0)]


def test_heterogeneous_memory_nodes_are_cpu_less():
    m = load_machine(str(HWLOC / "xml/64intel64-heteromem.xml"))
    assert sum(1 for n in m.nodes if not n.cores) == 4


def test_distances_come_from_the_latency_matrix():
    m = load_machine(str(HWLOC / "xml/memorysidecaches.xml"))
    assert sorted({d for row in m.distance_matrix.values() for d in row.values()}) == [10, 11, 21]


def test_gpus_are_local_to_their_numa_node():
    m = load_machine(str(HWLOC / "xml/nvidiaDGX2.xml"))
    gpus = [d for d in m.pci_devices if d.kind == "gpu"]
    assert sorted(d.numa_node for d in gpus) == [0] * 8 + [1] * 8


def test_hwloc_bitmaps_with_empty_words():
    assert parse_bitmap("0x00000001,,0x00010000") == (1 << 64) | (1 << 16)


def test_entity_bomb_is_rejected_quickly():
    bomb = (b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa">'
            + b"".join(b'<!ENTITY a%d "&a%s;&a%s;&a%s;&a%s;&a%s;&a%s;&a%s;&a%s;&a%s;&a%s;">'
                       % (i, *(b"" if i == 1 else str(i - 1).encode(),) * 10) for i in range(1, 10))
            + b']><topology>&a9;</topology>')
    start = time.perf_counter()
    with pytest.raises(InputError, match="bomb.xml: XML DTD internal subsets are not allowed"):
        read_hwloc_xml(bomb, file="bomb.xml")
    assert time.perf_counter() - start < 0.5


def test_external_entities_are_rejected():
    xml = b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]><topology>&x;</topology>'
    with pytest.raises(InputError, match="not allowed"):
        read_hwloc_xml(xml, file="x.xml")


def test_malformed_xml_names_the_file_and_line():
    with pytest.raises(InputError, match=r"^t\.xml: not valid XML: .* line 1"):
        read_hwloc_xml(b"<topology><object>", file="t.xml")


def test_xml_without_pus_is_rejected():
    with pytest.raises(InputError, match="no PU"):
        read_hwloc_xml(b'<topology version="2.0"><object type="Machine"/></topology>', file="t.xml")


def test_xml_without_objects_is_not_hwloc():
    with pytest.raises(InputError, match="not an hwloc topology"):
        read_hwloc_xml(b"<html></html>", file="t.xml")


def test_hwloc_v1_numa_parent_layout_loads():
    xml = b"""<?xml version="1.0"?><topology>
      <object type="Machine" os_index="0" cpuset="0x0000000f">
        <object type="NUMANode" os_index="0" cpuset="0x00000003" nodeset="0x1" local_memory="1073741824">
          <object type="Socket" os_index="0" cpuset="0x00000003">
            <object type="Cache" cpuset="0x00000003" depth="3" cache_size="8388608">
              <object type="Core" os_index="0" cpuset="0x3">
                <object type="PU" os_index="0" cpuset="0x1"/><object type="PU" os_index="1" cpuset="0x2"/>
              </object></object></object></object>
        <object type="NUMANode" os_index="1" cpuset="0x0000000c" nodeset="0x2" local_memory="1073741824">
          <object type="Socket" os_index="1" cpuset="0x0000000c">
            <object type="Core" os_index="0" cpuset="0xc">
              <object type="PU" os_index="2" cpuset="0x4"/><object type="PU" os_index="3" cpuset="0x8"/>
            </object></object></object>
        <distances nbobjs="2" relative_depth="1" latency_base="10.0">
          <latency value="1.0"/><latency value="2.1"/><latency value="2.1"/><latency value="1.0"/>
        </distances>
      </object></topology>"""
    m = read_hwloc_xml(xml, file="v1.xml")
    assert [(n.id, str(n.cpus)) for n in m.nodes] == [(0, "0-1"), (1, "2-3")]
    assert m.num_sockets == 2
    assert m.distance_matrix[0] == {0: 10, 1: 21}
    assert m.nodes[0].caches[0].level == 3


@needs_shared
def test_pcie_root_is_the_host_bridge_domain_and_secondary_bus():
    m = load_machine(str(HWLOC / "xml/nvidiaDGX2.xml"))
    roots = {d.address: d.pcie_root for d in m.pci_devices}
    # bridge_pci="0000:[2b-3b]" above the first four GPUs, behind two levels of PCIe switches
    assert roots["0000:34:00.0"] == roots["0000:3b:00.0"] == "pci0000:2b"
    assert roots["0000:b7:00.0"] == "pci0000:ae"


@needs_shared
def test_pcie_root_keeps_the_pci_domain():
    m = load_machine(str(HWLOC / "xml/power8gpudistances.xml"))
    assert sorted(d.pcie_root for d in m.pci_devices) == ["pci0002:00", "pci0003:00", "pci000a:00", "pci000b:00"]


@needs_shared
def test_pcie_roots_from_hwloc_xml_agree_with_the_same_machine_read_from_sysfs():
    xml = {d.address: d.pcie_root for d in load_machine(str(HWLOC / "linux/40intel64-2g2n4c+pcilocality.xml")).pci_devices}
    fs = {d.address: d.pcie_root
          for d in load_machine(str(HWLOC / "sysfs/40intel64-2g2n4c+pcilocality.tar.bz2")).pci_devices}
    assert xml and all(fs[a] == root for a, root in xml.items())
    assert set(xml.values()) == {"pci0000:00", "pci0000:40"}


def test_pcie_root_without_a_host_bridge_is_the_bus_of_the_topmost_pci_object():
    xml = b"""<?xml version="1.0"?><topology version="2.0">
    <object type="Machine" os_index="0" cpuset="0x1" nodeset="0x1">
     <object type="Package" os_index="0" cpuset="0x1"><object type="Core" os_index="0" cpuset="0x1">
      <object type="PU" os_index="0" cpuset="0x1"/></object></object>
     <object type="Bridge" bridge_type="1-1" depth="0" bridge_pci="0001:[41-41]" pci_busid="0001:40:01.0"
             pci_type="0604 [8086:1234] [0000:0000] 00 00">
      <object type="PCIDev" pci_busid="0001:41:00.0" pci_type="0302 [10de:20b0] [0000:0000] a1 00"/>
     </object></object></topology>"""
    (gpu,) = [d for d in read_hwloc_xml(xml, file="t.xml").pci_devices if d.kind == "gpu"]
    assert gpu.pcie_root == "pci0001:40"


def test_a_cpu_id_past_the_largest_is_refused_naming_the_file(tmp_path):
    xml = b"""<?xml version="1.0"?><topology>
      <object type="Machine" os_index="0" cpuset="0x1">
        <object type="NUMANode" os_index="0" cpuset="0x1" nodeset="0x1" local_memory="1073741824">
          <object type="Package" os_index="0" cpuset="0x1"><object type="Core" os_index="0" cpuset="0x1">
            <object type="PU" os_index="99999999999" cpuset="0x1"/></object></object></object>
      </object></topology>"""
    (tmp_path / "t.xml").write_bytes(xml)
    with pytest.raises(InputError) as e:
        load_machine(str(tmp_path / "t.xml"))
    assert str(e.value).startswith(f"{tmp_path / 't.xml'}: ") and "beyond the largest CPU id" in str(e.value)
