"""Pod cgroup values (ResourceConfigForPod) and container CRI resources, with the kubelet's formulas."""

import pytest

from kubetwin.kubelet.cgroups import (
    CgroupSettings,
    container_resources,
    cpu_max,
    cpu_shares_to_weight,
    cpu_shares_to_weight_quadratic,
    cpu_weight_to_shares,
    hugepage_limits,
    hugepage_unit_size,
    memory_high,
    milli_cpu_to_quota,
    milli_cpu_to_shares,
    pod_cgroup_files,
    quota_to_milli_cpu,
    resource_config_for_pod,
    shares_to_milli_cpu,
    sysfs_order,
)
from kubetwin.model.features import gates_for
from kubetwin.model.quantity import Quantity

from .podspec import c, make_pod

GATES = gates_for("1.36", {"PodLevelResources": True})
V2 = CgroupSettings(gates=GATES, memory_capacity=32 << 30, node_allocatable_memory=32 << 30)
V1 = CgroupSettings(gates=GATES, cgroup_version=1, memory_capacity=32 << 30, single_process_oom_kill=True)


def files(p, settings=V2):
    return {f.file: f.content for f in pod_cgroup_files(resource_config_for_pod(p, settings), settings)}


@pytest.mark.parametrize("milli,shares", [(0, 2), (1, 2), (2, 2), (3, 3), (100, 102), (500, 512), (1000, 1024),
                                          (255999, 262142), (256000, 262144), (1000000, 262144), (-1, 2)])
def test_milli_cpu_to_shares(milli, shares):
    assert milli_cpu_to_shares(milli) == shares


@pytest.mark.parametrize("milli,quota", [(0, 0), (5, 1000), (9, 1000), (10, 1000), (200, 20000), (1500, 150000)])
def test_milli_cpu_to_quota_has_a_1ms_floor(milli, quota):
    assert milli_cpu_to_quota(milli, 100000) == quota


def test_custom_period_is_ignored_without_the_gate():
    assert milli_cpu_to_quota(200, 5000, custom_period=False) == 20000
    assert milli_cpu_to_quota(200, 5000, custom_period=True) == 1000


def test_inverse_conversions():
    assert [shares_to_milli_cpu(s) for s in (0, 1, 2, 102, 1024, 262144)] == [0, 0, 2, 100, 1000, 256000]
    assert quota_to_milli_cpu(-1, 100000) == 0 and quota_to_milli_cpu(5000, 5000) == 1000


def test_linear_weight_round_trip_is_lossy():
    assert cpu_shares_to_weight(51) == 2 and cpu_weight_to_shares(2) == 28
    assert cpu_shares_to_weight(102) == 4 and cpu_weight_to_shares(4) == 80
    assert cpu_shares_to_weight(2) == 1 and cpu_shares_to_weight(262144) == 10000


@pytest.mark.parametrize("shares,weight", [(0, 0), (2, 1), (102, 17), (1024, 100), (2048, 174), (262144, 10000)])
def test_quadratic_runtime_weight(shares, weight):
    assert cpu_shares_to_weight_quadratic(shares) == weight


def test_cpu_max_defaults():
    assert cpu_max(None, None) == "max 100000"
    assert cpu_max(-1, 5000) == "max 5000"
    assert cpu_max(20000, 100000) == "20000 100000"


def test_memory_high_rounds_down_to_pages():
    assert memory_high(128 << 20, 256 << 20, 0.9) == 255012864


def test_hugepage_names_and_order():
    assert hugepage_unit_size(2 << 20) == "2MB" and hugepage_unit_size(1 << 30) == "1GB"
    assert sysfs_order([2 << 20, 1 << 30]) == [1 << 30, 2 << 20]
    rl = {"hugepages-2Mi": Quantity.parse("128"), "hugepages-2097152": Quantity.parse("256"),
          "4Mi": Quantity.parse("1")}
    assert hugepage_limits(rl) == {2 << 20: 384}


def test_guaranteed_pod_gets_shares_quota_and_memory():
    g = {"cpu": "100m", "memory": "100Mi"}
    assert files(make_pod([c("c", g, g)])) == {"cpu.weight": 4, "cpu.max": "10000 100000", "memory.max": "104857600"}


def test_burstable_without_all_limits_gets_no_quota_or_memory_limit():
    p = make_pod([c("a", {"cpu": "100m", "memory": "100Mi"}, {"cpu": "200m", "memory": "200Mi"}),
                  c("b", {"cpu": "100m", "memory": "100Mi"})])
    assert files(p, V1) == {"cpu.shares": 204}


def test_best_effort_pod_gets_minimum_shares():
    assert files(make_pod([c("a")]), V1) == {"cpu.shares": 2}


def test_pod_shares_come_from_requests_only():
    assert files(make_pod([c("a", None, {"cpu": "1500m"})]), V1) == {
        "cpu.shares": 2, "cpu.cfs_quota_us": 150000, "cpu.cfs_period_us": 100000}


def test_cfs_quota_disabled_gives_minus_one_at_pod_level_and_zero_on_containers():
    s = CgroupSettings(gates=GATES, cgroup_version=1, cpu_cfs_quota=False, memory_capacity=1 << 30)
    p = make_pod([c("a", {"cpu": "100m", "memory": "1Mi"}, {"cpu": "200m", "memory": "2Mi"})])
    assert files(p, s)["cpu.cfs_quota_us"] == -1
    res = container_resources(p, p.spec.containers[0], s).resources
    assert (res["cpuQuota"], res["cpuPeriod"]) == (0, 0)


def test_pod_level_limit_declares_limits_for_all_containers():
    p = make_pod([c("a")], resources={"requests": {"cpu": "4", "memory": "600Mi"},
                                      "limits": {"cpu": "8", "memory": "900Mi"}})
    assert files(p) == {"cpu.weight": 157, "cpu.max": "800000 100000", "memory.max": "943718400"}


def test_unrequested_supported_hugepage_sizes_are_limited_to_zero():
    s = CgroupSettings(gates=GATES, hugepage_sizes=(2 << 20, 1 << 30))
    p = make_pod([c("a", {"hugepages-2Mi": "4Mi"}, {"hugepages-2Mi": "4Mi"})])
    got = files(p, s)
    assert got["hugetlb.2MB.max"] == 4 << 20 and got["hugetlb.1GB.max"] == 0
    assert list(got)[-2:] == ["hugetlb.1GB.max", "hugetlb.2MB.max"]


def test_memory_qos_tiered_reservation_protects_requests():
    s = CgroupSettings(gates=gates_for("1.37", {"MemoryQoS": True}), memory_reservation_policy="TieredReservation")
    g = {"cpu": "100m", "memory": "100Mi"}
    assert files(make_pod([c("a", g, g)]), s)["memory.min"] == 104857600
    assert files(make_pod([c("a", g)]), s)["memory.low"] == 104857600


def test_container_shares_fall_back_to_the_limit_but_explicit_zero_stays():
    p = make_pod([c("a", None, {"cpu": "200m"}), c("b", {"cpu": "0"}, {"cpu": "2"})])
    assert container_resources(p, p.spec.containers[0], V1).resources["cpuShares"] == 204
    assert container_resources(p, p.spec.containers[1], V1).resources["cpuShares"] == 2


def test_v2_container_gets_oom_group_unless_single_process_oom_kill():
    p = make_pod([c("a")])
    assert container_resources(p, p.spec.containers[0], V2).resources["unified"]["memory.oom.group"] == "1"
    assert "memory.oom.group" not in container_resources(p, p.spec.containers[0], V1).resources["unified"]


def test_container_hugepage_limits_list_every_supported_size():
    s = CgroupSettings(gates=GATES, hugepage_sizes=(2 << 20, 1 << 30))
    p = make_pod([c("a", None, {"hugepages-1Gi": "2Gi", "hugepages-2MB": "2Mi"})])
    assert container_resources(p, p.spec.containers[0], s).resources["hugepageLimits"] == [
        {"pageSize": "1GB", "limit": 2 << 30}, {"pageSize": "2MB", "limit": 0}]


def test_limited_swap_is_proportional_to_the_request_for_burstable_pods():
    s = CgroupSettings(gates=GATES, swap_behavior="LimitedSwap", memory_capacity=40 << 30, swap_capacity=5 << 30)
    p = make_pod([c("a", {"memory": "1Gi"})])
    assert container_resources(p, p.spec.containers[0], s).resources["unified"]["memory.swap.max"] == str(128 << 20)
    g = {"cpu": "1", "memory": "1Gi"}
    q = make_pod([c("a", g, g)])
    assert container_resources(q, q.spec.containers[0], s).resources["unified"]["memory.swap.max"] == "0"


def test_memory_qos_container_memory_high_uses_allocatable_without_limit():
    s = CgroupSettings(gates=gates_for("1.37", {"MemoryQoS": True}), memory_throttling_factor=0.9,
                       node_allocatable_memory=1 << 30, memory_capacity=1 << 30)
    p = make_pod([c("a", {"memory": "128Mi"}, {"memory": "256Mi"}), c("b")])
    assert container_resources(p, p.spec.containers[0], s).resources["unified"]["memory.high"] == "255012864"
    assert container_resources(p, p.spec.containers[1], s).resources["unified"]["memory.high"] == str(
        memory_high(0, 1 << 30, 0.9))


def _pod_level_memory_high_at(version):
    s = CgroupSettings(gates=gates_for(version, {"MemoryQoS": True}), memory_throttling_factor=0.9)
    p = make_pod([c("a", {"memory": "512Mi"})], resources={"requests": {"memory": "1Gi"}, "limits": {"memory": "2Gi"}})
    return resource_config_for_pod(p, s).unified.get("memory.high")


def test_the_pod_cgroup_gets_memory_high_from_v1_37_on():
    # ApplyPodLevelMemoryHigh: floor((1Gi + 0.9 * (2Gi - 1Gi)) / 4096) * 4096
    assert _pod_level_memory_high_at("1.37") == "2040107008"


def test_v1_36_writes_no_memory_high_on_the_pod_cgroup():
    assert _pod_level_memory_high_at("1.36") is None
