"""CPUTopology / CPUDetails against the kubelet's Discover semantics (cpumanager/topology)."""

import pytest

from kubetwin.errors import InputError
from kubetwin.machine import Core, Machine, NUMANode, discover, load_machine, parse_spec
from kubetwin.model.cpuset import CPUSet

from .conftest import MACHINES


@pytest.fixture(scope="module")
def dual_socket_ht():
    # 2 sockets x 3 cores x 2 threads; core n has threads n and n+6; socket 0 = even cores
    return load_machine(str(MACHINES / "dual-socket-ht.json")).cpu_topology()


def test_counters_come_from_machineinfo_fields(dual_socket_ht):
    t = dual_socket_ht
    assert (t.num_cpus, t.num_cores, t.num_sockets, t.num_numa_nodes) == (12, 6, 2, 2)


def test_ratios_are_integer_divisions(dual_socket_ht):
    assert dual_socket_ht.cpus_per_core() == 2
    assert dual_socket_ht.cpus_per_socket() == 6


def test_core_id_is_smallest_thread_id(dual_socket_ht):
    assert dual_socket_ht.cpu_core_id(6) == 0
    assert dual_socket_ht.cpu_core_id(11) == 5


def test_cpus_in_sockets(dual_socket_ht):
    assert dual_socket_ht.details.cpus_in_sockets(0) == CPUSet.parse("0,2,4,6,8,10")


def test_cpus_in_numa_nodes_of_several_ids(dual_socket_ht):
    assert dual_socket_ht.details.cpus_in_numa_nodes(0, 1) == CPUSet.parse("0-11")


def test_cores_in_sockets_are_kubelet_core_ids(dual_socket_ht):
    assert dual_socket_ht.details.cores_in_sockets(1) == CPUSet.parse("1,3,5")


def test_sockets_and_numa_nodes_relate(dual_socket_ht):
    d = dual_socket_ht.details
    assert d.sockets_in_numa_nodes(1) == CPUSet([1])
    assert d.numa_nodes_in_sockets(0) == CPUSet([0])


def test_keep_only_restricts_every_query(dual_socket_ht):
    d = dual_socket_ht.details.keep_only(CPUSet.parse("0,6,1"))
    assert d.cpus() == CPUSet.parse("0-1,6")
    assert d.cores() == CPUSet.parse("0-1")
    assert d.cores_in_sockets(0) == CPUSet([0])
    assert d.cpus_in_cores(0) == CPUSet.parse("0,6")


def test_unknown_cpu_is_an_error(dual_socket_ht):
    with pytest.raises(ValueError, match="unknown CPU ID: 99"):
        dual_socket_ht.cpu_socket_id(99)


def test_uncore_id_falls_back_to_socket_id():
    t = parse_spec("2s1n2c1t:l3=none").cpu_topology()
    assert t.num_uncore_cache == 2
    assert t.details.cpus_in_uncore_caches(1) == CPUSet.parse("2-3")


def test_uncore_caches_in_numa_nodes():
    d = parse_spec("1s2n4c1t:l3=per-2c").cpu_topology().details
    assert d.uncore_in_numa_nodes(1) == CPUSet.parse("2-3")


def test_cores_needed_in_uncore_cache_takes_lowest_core_ids():
    d = parse_spec("1s1n8c2t:l3=per-4c").cpu_topology().details
    assert d.cores_needed_in_uncore_cache(2, 1) == CPUSet.parse("4-5")
    assert d.cores_needed_in_uncore_cache(9, 0) == CPUSet.parse("0-3")


def test_hybrid_cpu_has_one_cpu_per_core_by_integer_division():
    t = load_machine(str(MACHINES / "single-socket-single-numa-per-socket-p-core-ht-monolithic-uncore.json")).cpu_topology()
    assert (t.num_cpus, t.num_cores, t.cpus_per_core()) == (24, 16, 1)


def test_cpu_less_numa_nodes_do_not_count():
    m = Machine(num_cores=2, num_physical_cores=2, num_sockets=1, memory_capacity=0,
                nodes=(NUMANode(0, 0, cores=(Core(0, 0, (0,)), Core(1, 0, (1,)))), NUMANode(1, 1024)))
    assert discover(m).num_numa_nodes == 1


def test_zero_num_cores_cannot_detect_cpus():
    m = Machine(num_cores=0, num_physical_cores=0, num_sockets=1, memory_capacity=0, nodes=())
    with pytest.raises(InputError, match="could not detect number of cpus"):
        discover(m)


def test_numa_nodes_in_same_socket():
    d = parse_spec("2s2n2c1t").cpu_topology().details
    assert d.are_numa_nodes_in_same_socket([0, 1])
    assert not d.are_numa_nodes_in_same_socket([1, 2])
    assert not d.are_numa_nodes_in_same_socket([0, 9])


def test_check_alignment_is_one_uncore_cache():
    t = parse_spec("1s1n8c1t:l3=per-4c").cpu_topology()
    assert t.check_alignment(CPUSet.parse("0-3"))
    assert not t.check_alignment(CPUSet.parse("3-4"))
