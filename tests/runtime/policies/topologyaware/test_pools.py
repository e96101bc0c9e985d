"""The topology-aware pool tree and pool ranking, translated from nri-plugins' ``pools_test.go``
(TestPoolCreation, TestWorkloadPlacement, TestAffinities) plus the tree shapes the plugin
builds (L3 cache pools, memory-only nodes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubetwin.machine.machineinfo import machine_from_machineinfo
from kubetwin.model.cpuset import CPUSet
from kubetwin.runtime.config import decode_topology_aware
from kubetwin.runtime.nri.api import Container, LinuxPodSandbox, PodSandbox
from kubetwin.runtime.policies.topologyaware.node import MEM_DRAM, MEM_PMEM
from kubetwin.runtime.policies.topologyaware.policy import TopologyAwarePolicy
from kubetwin.runtime.policies.topologyaware.pools import sort_pools_by_score
from kubetwin.runtime.policies.topologyaware.preferences import CPU_NORMAL, CPU_RESERVED, MEMORY_ALL
from kubetwin.runtime.policies.topologyaware.resources import Request
from kubetwin.runtime.resmgr.cache import Cache
from kubetwin.runtime.sysfs import System

from ...machines import SERVER_ISOLATED, desktop, four_sockets, server

MACHINES = Path(__file__).parents[2] / "cases" / "machines"


def policy_for(machine, isolated: str = "", reserved: str = "750m") -> TopologyAwarePolicy:
    p = TopologyAwarePolicy()
    p.setup(System(machine, CPUSet.parse(isolated)), Cache(machine.memory_capacity),
            decode_topology_aware({"reservedResources": {"cpu": reserved}}))
    return p


def mock_request(p: TopologyAwarePolicy, *, full: int = 0, mem_type: int = 0, cpu_type: int = CPU_NORMAL) -> Request:
    """The unit tests' ``&request{memReq: 10000, memLim: 10000, ...}`` with a mock container."""
    p.cache.insert_pod(PodSandbox(id="p", name="pod", namespace="default", linux=LinuxPodSandbox(cgroup_parent="")))
    c = p.cache.insert_container(Container(id="c", pod_sandbox_id="p", name="ctr"))
    return Request(c, full, 0, 0, False, cpu_type, "", 3, 10000, 10000, mem_type)


def supply_cpus(node) -> int:
    s = node.get_supply()
    return (s.sharable | s.isolated | s.reserved).size()


@pytest.mark.parametrize("build, isolated, mem_type, pools, first_memory, leaf_cpus, root_cpus", [
    (desktop, "", MEMORY_ALL, [0], MEM_DRAM, 20, 20),
    (server, SERVER_ISOLATED, MEM_DRAM, list(range(7)), MEM_DRAM | MEM_PMEM, 28, 112),
    (server, SERVER_ISOLATED, MEM_DRAM | MEM_PMEM, list(range(7)), MEM_DRAM | MEM_PMEM, 28, 112),
    (four_sockets, "", MEMORY_ALL, list(range(5)), MEM_DRAM, 36, 144),
], ids=["desktop", "server", "server-pmem-request", "4-socket-server-nosnc"])
def test_pool_creation(build, isolated, mem_type, pools, first_memory, leaf_cpus, root_cpus) -> None:
    p = policy_for(build(), isolated)
    assert supply_cpus(p.root) == root_cpus
    assert all(supply_cpus(n) == leaf_cpus for n in p.pools if n.is_leaf())
    _, ranked = sort_pools_by_score(p, mock_request(p, mem_type=mem_type), {})
    assert sorted(n.id for n in ranked) == pools
    assert ranked[0].memory_type() == first_memory


@pytest.mark.parametrize("full, leaf", [(25, True), (29, False)], ids=["fits-a-leaf", "needs-more-than-a-leaf"])
def test_workload_placement_on_the_server(full: int, leaf: bool) -> None:
    p = policy_for(server(), SERVER_ISOLATED)
    _, ranked = sort_pools_by_score(p, mock_request(p, full=full), {})
    assert len(ranked) == 7
    assert ranked[0].is_leaf() is leaf


@pytest.mark.parametrize("affinities, cpu_type, expected", [
    ({}, CPU_NORMAL, "NUMA node #2"),
    ({}, CPU_RESERVED, "NUMA node #0"),
    ({"NUMA node #1": 1}, CPU_NORMAL, "NUMA node #1"),
    ({"socket #1": 1}, CPU_NORMAL, "socket #1"),
    ({"socket #1": 1, "NUMA node #1": 1}, CPU_NORMAL, "NUMA node #1"),
    ({"NUMA node #1": 1, "NUMA node #3": 1}, CPU_NORMAL, "socket #1"),
    ({"NUMA node #1": 2, "NUMA node #3": 1}, CPU_NORMAL, "socket #1"),
    ({"NUMA node #1": 3, "NUMA node #3": 1}, CPU_NORMAL, "NUMA node #1"),
    ({"NUMA node #0": 2, "NUMA node #3": 2, "socket #1": 1}, CPU_NORMAL, "root"),
    ({"NUMA node #0": 1, "NUMA node #3": 1, "socket #1": 1}, CPU_NORMAL, "root"),
    ({"NUMA node #0": 1, "NUMA node #3": 1, "socket #1": 2}, CPU_NORMAL, "socket #1"),
], ids=["no affinities", "reserved - no affinities", "affinity to NUMA node #1", "affinity to socket #1",
        "equal affinities to NUMA node #1, socket #1", "equal affinities to NUMA node #1, NUMA node #3",
        "double affinity to NUMA node #1 vs. #3", "triple affinity to NUMA node #1 vs. #3",
        "double affinity to NUMA node #0,#3 vs. socket #1", "equal affinity to NUMA node #0,#3 vs. socket #1",
        "half the affinity to NUMA node #0,#3 vs. socket #1"])
def test_pool_affinities_decide_the_best_pool(affinities, cpu_type, expected) -> None:
    p = policy_for(server(), SERVER_ISOLATED)
    aff = {p.nodes[name].id: w for name, w in affinities.items()}
    _, ranked = sort_pools_by_score(p, mock_request(p, full=0 if cpu_type == CPU_RESERVED else 3,
                                                    cpu_type=cpu_type), aff)
    assert ranked[0].name == expected


def test_pools_are_numbered_children_first() -> None:
    p = policy_for(server(), SERVER_ISOLATED)
    assert [(n.id, n.name) for n in p.pools] == [
        (0, "NUMA node #0"), (1, "NUMA node #2"), (2, "socket #0"), (3, "NUMA node #1"), (4, "NUMA node #3"),
        (5, "socket #1"), (6, "root")]


def test_memory_only_nodes_join_the_pool_of_their_closest_dram_node() -> None:
    p = policy_for(server(), SERVER_ISOLATED)
    assert (p.nodes["NUMA node #0"].mem, p.nodes["NUMA node #0"].pmem) == ({0}, {4})
    assert (p.nodes["NUMA node #2"].mem, p.nodes["NUMA node #2"].pmem) == ({2}, {5})
    assert p.nodes["NUMA node #1"].pmem == set()
    assert p.root.pmem == {4, 5}


def test_hbm_and_cxl_nodes_are_typed_by_their_size() -> None:
    m = machine_from_machineinfo(json.loads((MACHINES / "n6-hbm-cxl.json").read_text()))
    sys = System(m)
    assert [sys.node(i).memory_type for i in range(6)] == ["DRAM", "DRAM", "HBM", "HBM", "PMEM", "PMEM"]
    p = policy_for(m)
    assert (p.nodes["socket #0"].mem, p.nodes["socket #0"].hbm, p.nodes["socket #0"].pmem) == ({0}, {2}, {4})


def test_a_numa_node_split_by_l3_caches_gets_l3_pools() -> None:
    m = machine_from_machineinfo(json.loads((MACHINES / "n4c128.json").read_text()))
    p = policy_for(m)
    l3 = [n for n in p.pools if n.kind == "L3 cache"]
    assert len(l3) == 16
    assert [c.name for c in p.nodes["NUMA node #0"].children] == [
        "NUMA node #0/L3 cache #0", "NUMA node #0/L3 cache #2", "NUMA node #0/L3 cache #8",
        "NUMA node #0/L3 cache #10"]
    assert all(supply_cpus(n) == 8 for n in l3)


def test_a_single_socket_machine_has_the_socket_as_root() -> None:
    p = policy_for(desktop())
    assert p.root.name == "socket #0" and p.root.is_leaf()


def test_the_reserved_quantity_is_rounded_up_to_whole_cpus_picked_away_from_isolated_ones() -> None:
    p = policy_for(server(), SERVER_ISOLATED, reserved="1500m")
    assert p.reserved.size() == 2
    assert not p.reserved & CPUSet.parse(SERVER_ISOLATED)
