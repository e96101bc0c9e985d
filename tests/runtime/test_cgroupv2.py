"""The cgroup v2 files runc writes from a container's OCI resources.

Facts from opencontainers/cgroups (``utils.go`` / ``utils_test.go``:
``TestConvertCPUSharesToCgroupV2Value``, ``TestConvertMemorySwapToCgroupV2Value``; ``fs2/fs2.go``
``Manager.Set`` order; ``fs2/cpu.go``, ``memory.go``, ``hugetlb.go``, ``pids.go``) and runc v1.5
``libcontainer/specconv``.
"""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.runtime.cgroupv2 import cgroup_writes, cpu_weight, memory_swap_v2, num_to_str


@pytest.mark.parametrize("shares,weight", [(0, 0), (1, 1), (2, 1), (3, 2), (1024, 100), (262143, 10000),
                                           (262144, 10000), (262145, 10000)])
def test_shares_to_weight_quadratic(shares: int, weight: int) -> None:
    assert cpu_weight(shares, "quadratic") == weight


def test_shares_to_weight_linear_before_runc_1_3_2() -> None:
    assert cpu_weight(1024, "linear") == 39 and cpu_weight(2, "linear") == 1


@pytest.mark.parametrize("swap,memory,want", [(0, 0, 0), (-1, 0, -1), (300, -1, 300), (-1, -1, -1), (-1, 1000, -1),
                                              (1000, 1000, 0), (500, 200, 300)])
def test_memory_swap_conversion(swap: int, memory: int, want: int) -> None:
    assert memory_swap_v2(swap, memory) == want


@pytest.mark.parametrize("swap,memory", [(-2, 0), (300, 400), (300, 0), (300, -300)])
def test_memory_swap_conversion_refuses_nonsense(swap: int, memory: int) -> None:
    with pytest.raises(InputError):
        memory_swap_v2(swap, memory)


def test_num_to_str() -> None:
    assert (num_to_str(0), num_to_str(-1), num_to_str(5)) == ("", "max", "5")


def test_writes_follow_the_manager_order_and_unified_comes_last() -> None:
    state = cgroup_writes({"pids": {"limit": 100}, "memory": {"limit": 1000, "swap": 1000},
                           "cpu": {"shares": 1024, "quota": 50000, "period": 100000, "cpus": "0-3", "mems": "0"},
                           "hugepageLimits": [{"pageSize": "2MB", "limit": 0}],
                           "unified": {"memory.oom.group": "1", "memory.swap.max": "0"}})
    assert [w.file for w in state.writes] == ["pids.max", "memory.swap.max", "memory.max", "cpu.weight", "cpu.max",
                                              "cpuset.cpus", "cpuset.mems", "hugetlb.2MB.max", "hugetlb.2MB.rsvd.max",
                                              "memory.oom.group", "memory.swap.max"]
    assert state.files == {"pids.max": "100", "memory.swap.max": "0", "memory.max": "1000", "cpu.weight": "100",
                           "cpu.max": "50000 100000", "cpuset.cpus": "0-3", "cpuset.mems": "0",
                           "hugetlb.2MB.max": "0", "hugetlb.2MB.rsvd.max": "0", "memory.oom.group": "1"}


def test_unified_overrides_an_earlier_write() -> None:
    state = cgroup_writes({"cpu": {"shares": 1024}, "unified": {"cpu.weight": "500"}})
    assert state.files["cpu.weight"] == "500"


@pytest.mark.parametrize("cpu,want", [({"quota": -1, "period": 100000}, "max 100000"),
                                      ({"period": 100000}, "max 100000"),
                                      ({"quota": 20000}, "20000 100000")])
def test_cpu_max(cpu: dict, want: str) -> None:
    assert cgroup_writes({"cpu": cpu}).files["cpu.max"] == want


def test_no_quota_and_no_period_leaves_cpu_max_alone() -> None:
    assert "cpu.max" not in cgroup_writes({"cpu": {"shares": 2}}).files


def test_pids_zero_is_written_as_one() -> None:
    assert cgroup_writes({"pids": {"limit": 0}}).files["pids.max"] == "1"
    assert cgroup_writes({"pids": {"limit": -1}}).files["pids.max"] == "max"


def test_hugetlb_reservations_only_where_the_kernel_has_them() -> None:
    state = cgroup_writes({"hugepageLimits": [{"pageSize": "1GB", "limit": 1 << 30}]}, hugetlb_rsvd=False)
    assert state.files == {"hugetlb.1GB.max": str(1 << 30)}


def test_memory_reservation_is_memory_low() -> None:
    assert cgroup_writes({"memory": {"reservation": 4096}}).files == {"memory.low": "4096"}


def test_without_a_swap_controller_no_swap_file_is_written() -> None:
    state = cgroup_writes({"memory": {"limit": 1000, "swap": 1000}}, swap_controller=False)
    assert state.files == {"memory.max": "1000"}


def test_unified_key_with_a_slash_is_refused() -> None:
    with pytest.raises(InputError, match="must be a file name"):
        cgroup_writes({"unified": {"../cpu.max": "1"}})


def test_block_io_lines_are_written() -> None:
    state = cgroup_writes({"blockIO": {"weight": 100}}, bfq=True)
    assert state.files == {"io.bfq.weight": "default 100"}
