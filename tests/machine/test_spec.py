"""The compact machine spec (docs/machine-spec.md)."""

import pytest

from kubetwin.errors import InputError
from kubetwin.machine import parse_spec
from kubetwin.model.cpuset import CPUSet


def test_shape_gives_sockets_nodes_cores_threads():
    m = parse_spec("2s2n16c2t")
    assert (m.num_sockets, len(m.nodes), m.num_physical_cores, m.num_cores) == (2, 4, 64, 128)


def test_numa_nodes_and_threads_default_to_one():
    m = parse_spec("1s4c")
    assert (len(m.nodes), m.num_cores) == (1, 4)


def test_threads_are_numbered_like_linux_on_x86():
    m = parse_spec("2s1n4c2t")
    assert m.nodes[0].cpus == CPUSet.parse("0-3,8-11")
    assert m.nodes[1].cores[0].threads == (4, 12)


def test_cadvisor_core_id_restarts_per_socket():
    m = parse_spec("2s1n4c2t")
    assert [c.core_id for c in m.nodes[1].cores] == [0, 1, 2, 3]


def test_memory_is_split_over_numa_nodes():
    m = parse_spec("2s1n4c:mem=64Gi")
    assert [n.memory for n in m.nodes] == [32 * 1024 ** 3] * 2


def test_hugepages_are_per_numa_node():
    m = parse_spec("1s2n2c:mem=16Gi:hugepages-1Gi=2")
    assert {h.page_size: h.num_pages for h in m.nodes[1].hugepages} == {2048: 0, 1048576: 2}
    assert {h.page_size: h.num_pages for h in m.hugepages}[1048576] == 4


def test_l3_per_socket_with_sub_numa_clusters_is_an_uncore_cache():
    assert parse_spec("2s2n4c").cpu_topology().num_uncore_cache == 2


def test_l3_per_numa_is_a_node_cache():
    m = parse_spec("2s2n4c:l3=per-numa")
    assert m.nodes[0].caches and not m.nodes[0].cores[0].uncore_caches


def test_l3_per_n_cores_groups_cores():
    t = parse_spec("1s1n16c2t:l3=per-4c").cpu_topology()
    assert (t.num_uncore_cache, t.cpus_per_uncore()) == (4, 8)


def test_gpus_are_spread_round_robin_over_numa_nodes():
    m = parse_spec("2s1n4c:gpus=4")
    assert [(d.kind, d.numa_node) for d in m.pci_devices] == [("gpu", 0), ("gpu", 1), ("gpu", 0), ("gpu", 1)]


def test_distances_local_same_socket_remote():
    m = parse_spec("2s2n2c:distance=32")
    assert m.distance_matrix[0] == {0: 10, 1: 11, 2: 32, 3: 32}


def test_swap():
    assert parse_spec("1s1c:swap=1Gi").swap_capacity == 1024 ** 3


@pytest.mark.parametrize("spec, message", [
    ("2x4c", '"2x4c" is not a machine shape'),
    ("0s4c", "sockets must be at least 1"),
    ("1s4c:foo=1", 'unknown option "foo"'),
    ("1s4c:gpus", '"gpus" is not key=value'),
    ("1s4c:gpus=two", "gpus must be a whole number"),
    ("1s4c:mem=lots", '"mem=lots"'),
    ("1s4c:l3=per-3c", "3 does not divide the 4 cores"),
    ("1s4c:l3=sideways", "unknown L3 layout"),
    ("1s1c:mem=1Gi:hugepages-1Gi=2", "hugepages need"),
    ("1s1c:distance=5", "at least 10"),
    ("1s4c:gpu=2", 'unknown option "gpu" (fix: did you mean "gpus"?)'),
    ("1s4c:mem=1Gi:mem=2Gi", 'option "mem" is given twice'),
    ("1s4c:gpus=\u0663", "gpus must be a whole number"),
    ("1s4c:mem=E", 'quantity "E" is invalid'),
    ("1s4c:mem=1e30", "more than the 2^63-1 bytes"),
    ("257s1n256c1t", "65792 CPUs is more than 65536"),
])
def test_bad_specs_name_the_bad_part(spec, message):
    with pytest.raises(InputError) as e:
        parse_spec(spec)
    assert f'machine spec "{spec}"' in str(e.value) and message in str(e.value)


def test_each_numa_node_has_one_pcie_root_with_its_devices_on_buses_behind_it():
    m = parse_spec("2s1n4c:gpus=2:nics=2")
    got = [(d.kind, d.numa_node, d.address, d.pcie_root) for d in m.pci_devices]
    assert got == [("gpu", 0, "0000:11:00.0", "pci0000:10"), ("gpu", 1, "0000:14:00.0", "pci0000:13"),
                   ("nic", 0, "0000:12:00.0", "pci0000:10"), ("nic", 1, "0000:15:00.0", "pci0000:13")]


def test_more_pci_devices_than_buses_is_refused():
    with pytest.raises(InputError, match="too many PCI devices"):
        parse_spec("2s1n4c:gpus=239")
