"""QoS-tier and node-allocatable cgroups (qos_container_manager_linux.go, node_container_manager_linux.go).

Vectors from the upstream tests: ``TestQoSContainerCgroup`` (guaranteed 128Mi, burstable 128Mi and
256Mi pods) and ``TestNodeAllocatableForEnforcement`` (10 CPUs / 10Gi minus 150m / 150Mi).
"""

import pytest

from kubetwin.errors import InputError
from kubetwin.kubelet.cgroup_paths import CgroupLayout
from kubetwin.kubelet.qos_cgroups import (
    HUGETLB_UNBOUNDED,
    QOSCgroupSettings,
    active_pods,
    node_allocatable_absolute,
    parse_qos_reserved,
    qos_cgroups,
    qos_sums,
)
from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.pod import Pod
from kubetwin.model.quantity import Quantity

from .podspec import c

GATES = gates_for("1.36", {"MemoryQoS": True})


def q(text):
    return Quantity.parse(text)


def rl(**values):
    return {k.replace("_", "-"): q(v) for k, v in values.items()}


def pod(name, containers, phase="", uid="", status=None, **spec):
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "test", "uid": uid},
           "spec": {"containers": containers, **spec}, "status": {"phase": phase, **(status or {})}}
    return convert(obj, Pod)


DRA_128MI = {"nodeAllocatableResourceClaimStatuses": [
    {"resourceClaimName": "direct-claim", "containers": ["foo"], "mapping": [{"name": "memory", "quantity": "128Mi"}]}]}


def upstream_pods():
    """activeTestPods() of qos_container_manager_linux_test.go."""
    return [pod("guaranteed-pod", [c("foo", {"memory": "128Mi", "cpu": "1"}, {"memory": "128Mi", "cpu": "1"})]),
            pod("burstable-pod-1", [c("foo", {"memory": "128Mi", "cpu": "1"}, {"memory": "256Mi", "cpu": "2"})]),
            pod("burstable-pod-2", [c("foo", {"memory": "256Mi", "cpu": "2"})])]


def settings(**kw):
    base = dict(gates=GATES, capacity=rl(cpu="10", memory="10Gi"))
    base.update(kw)
    return QOSCgroupSettings(**base)


def files(level):
    return {f.file: f.content for f in level.files}


def test_tiered_reservation_protects_guaranteed_plus_burstable_at_kubepods_and_burstable_at_the_tier():
    r = qos_cgroups(upstream_pods(), settings(memory_reservation_policy="TieredReservation"))
    assert files(r.node)["memory.min"] == (128 + 384) << 20
    assert files(r.burstable)["memory.low"] == 384 << 20
    assert "memory.min" not in files(r.burstable)


@pytest.mark.parametrize("pods", [
    [pod("besteffort-pod", [c("foo")])],
    [pod("burstable-pod-no-memory-request", [c("foo", {"cpu": "1"})])],
    [],
    [pod("besteffort-pod-with-dra", [c("foo")], status=DRA_128MI)],
], ids=["best-effort", "no-memory-request", "no-pods", "best-effort-with-dra"])
def test_tiered_reservation_writes_zero_when_nothing_is_protected(pods):
    s = settings(gates=gates_for("1.36", {"MemoryQoS": True, "DRANodeAllocatableResources": True}),
                 memory_reservation_policy="TieredReservation")
    r = qos_cgroups(pods, s)
    assert files(r.node)["memory.min"] == 0 and files(r.burstable)["memory.low"] == 0


def test_tiered_reservation_counts_dra_node_allocatable_memory():
    g = {"memory": "128Mi", "cpu": "1"}
    pods = [pod("guaranteed-pod", [c("foo", g, g)]),
            pod("burstable-pod", [c("foo", g, {"memory": "256Mi", "cpu": "2"})], status=DRA_128MI)]
    s = settings(gates=gates_for("1.36", {"MemoryQoS": True, "DRANodeAllocatableResources": True}),
                 memory_reservation_policy="TieredReservation")
    r = qos_cgroups(pods, s)
    assert files(r.node)["memory.min"] == 384 << 20 and files(r.burstable)["memory.low"] == 256 << 20


def test_tiered_reservation_counts_pod_level_requests():
    g = {"memory": "128Mi", "cpu": "1"}
    pods = [pod("guaranteed-pod", [c("foo", g, g)]),
            pod("burstable-pod-pod-level", [c("foo", g, {"memory": "256Mi", "cpu": "2"})],
                resources={"requests": {"memory": "512Mi"}})]
    r = qos_cgroups(pods, settings(memory_reservation_policy="TieredReservation"))
    assert files(r.node)["memory.min"] == 640 << 20 and files(r.burstable)["memory.low"] == 512 << 20


@pytest.mark.parametrize("kinds,shares", [(["g"], 2), (["b"], 1024), (["be"], 2), (["g", "b"], 1024),
                                          (["be", "b"], 1024)])
def test_qos_cpu_config_update(kinds, shares):
    """TestQOSCPUConfigUpdate: only Burstable requests move the burstable tier; besteffort stays at 2."""
    make = {"g": lambda: pod("g", [c("foo", {"cpu": "1", "memory": "128Mi"}, {"cpu": "1", "memory": "128Mi"})]),
            "b": lambda: pod("b", [c("foo", {"cpu": "1", "memory": "128Mi"}, {"cpu": "2", "memory": "256Mi"})]),
            "be": lambda: pod("be", [c("foo")])}
    r = qos_cgroups([make[k]() for k in kinds], settings(cgroup_version=1))
    assert files(r.burstable)["cpu.shares"] == shares and files(r.besteffort)["cpu.shares"] == 2
    assert "cpu.shares" in files(r.node)  # kubepods' shares come from node allocatable, not from the QoS manager


def test_reservation_policy_none_writes_zero_protection():
    r = qos_cgroups(upstream_pods(), settings())
    assert files(r.node)["memory.min"] == 0 and files(r.burstable)["memory.low"] == 0
    assert all(f.written for f in r.node.files if f.file == "memory.min")


def test_memory_qos_off_resets_protection_only_from_v1_37():
    old = qos_cgroups(upstream_pods(), settings(gates=gates_for("1.36")))
    new = qos_cgroups(upstream_pods(), settings(gates=gates_for("1.37", {"MemoryQoS": False})))
    assert files(old.node)["memory.min"] == files(new.node)["memory.low"] == 0
    assert [f.written for f in old.node.files if f.file == "memory.min"] == [False]
    assert [f.written for f in new.node.files if f.file == "memory.min"] == [True]


def test_cgroup_v1_has_no_memory_protection_files():
    r = qos_cgroups(upstream_pods(), settings(cgroup_version=1, memory_reservation_policy="TieredReservation"))
    assert not {"memory.min", "memory.low"} & (set(files(r.node)) | set(files(r.burstable)))


def test_burstable_shares_follow_summed_burstable_cpu_requests():
    r = qos_cgroups(upstream_pods(), settings(cgroup_version=1))
    assert files(r.burstable)["cpu.shares"] == 3072  # 1 + 2 CPUs; the Guaranteed pod does not count
    assert files(r.besteffort)["cpu.shares"] == 2


def test_v2_tier_weights_use_the_linear_formula():
    r = qos_cgroups(upstream_pods(), settings())
    assert files(r.burstable)["cpu.weight"] == 1 + (3072 - 2) * 9999 // 262142
    assert files(r.besteffort)["cpu.weight"] == 1


def test_burstable_shares_without_burstable_pods_are_the_minimum():
    r = qos_cgroups([], settings(cgroup_version=1))
    assert files(r.burstable)["cpu.shares"] == 2


def test_qos_sums_use_pod_requests_with_pod_level_resources_and_overhead():
    p = pod("pl", [c("a", {"cpu": "100m"})], resources={"requests": {"cpu": "2", "memory": "1Gi"}},
            overhead={"cpu": "250m", "memory": "64Mi"})
    sums = qos_sums([p], gates_for("1.36"))
    assert sums.burstable_cpu_milli == 2250 and sums.memory["Burstable"] == (1 << 30) + (64 << 20)


def test_terminal_pods_are_not_active_and_duplicates_count_once():
    done = pod("done", [c("a", {"cpu": "1"})], phase="Succeeded")
    twice = pod("b", [c("a", {"cpu": "1"})], uid="u1")
    assert [p.name for p in active_pods([done, twice, twice])] == ["b"]
    r = qos_cgroups([done, twice, twice], settings(cgroup_version=1))
    assert files(r.burstable)["cpu.shares"] == 1024


@pytest.mark.parametrize("kube,system,want_cpu,want_mem", [
    (rl(cpu="100m", memory="100Mi"), rl(cpu="50m", memory="50Mi"), "9850m", "10090Mi"),
    ({}, {}, "10", "10Gi"),
    (rl(memory="100Mi"), rl(cpu="50m", memory="50Mi"), "9950m", "10090Mi"),
    (rl(cpu="50m", memory="100Mi"), rl(memory="50Mi"), "9950m", "10090Mi"),
])
def test_node_allocatable_for_enforcement(kube, system, want_cpu, want_mem):
    got = node_allocatable_absolute(rl(cpu="10", memory="10Gi"), kube, system)
    assert got["cpu"].cmp(q(want_cpu)) == 0 and got["memory"].cmp(q(want_mem)) == 0


def test_node_allocatable_for_enforcement_only_covers_capacity_resources_and_floors_at_zero():
    got = node_allocatable_absolute(rl(cpu="10"), rl(memory="100Mi"), rl(cpu="20"))
    assert set(got) == {"cpu"} and got["cpu"].is_zero()


def test_kubepods_is_sized_from_allocatable_when_pods_are_enforced():
    s = settings(cgroup_version=1, kube_reserved={**rl(cpu="100m", memory="100Mi"), "pid": q("1000")},
                 system_reserved=rl(cpu="50m", memory="50Mi"), pid_max=4194304)
    got = files(qos_cgroups([], s).node)
    assert got["cpu.shares"] == 9850 * 1024 // 1000
    assert got["memory.limit_in_bytes"] == 10090 << 20
    assert got["pids.max"] == 4194304 - 1000


def test_kubepods_is_sized_from_capacity_without_pods_enforcement():
    s = settings(cgroup_version=1, kube_reserved=rl(cpu="100m", memory="100Mi"), enforce_node_allocatable=(),
                 pid_max=32768)
    got = files(qos_cgroups([], s).node)
    assert got["cpu.shares"] == 10240 and got["memory.limit_in_bytes"] == 10 << 30 and got["pids.max"] == 32768


def test_unknown_pid_max_is_reported_not_guessed():
    got = files(qos_cgroups([], settings()).node)
    assert got["pids.max"] is None


def test_every_tier_has_unbounded_hugetlb_even_kubepods():
    s = settings(capacity=rl(cpu="4", memory="8Gi", hugepages_2Mi="1Gi"), hugepage_sizes=(2 << 20, 1 << 30))
    r = qos_cgroups([], s)
    for level in (r.node, r.burstable, r.besteffort):
        assert [f for f in files(level) if f.startswith("hugetlb")] == ["hugetlb.1GB.max", "hugetlb.2MB.max"]
        assert files(level)["hugetlb.2MB.max"] == HUGETLB_UNBOUNDED
    how = [f.formula for f in r.node.files if f.file == "hugetlb.2MB.max"][0]
    assert "1073741824" in how


def test_qos_reserved_limits_lower_tiers_when_the_gate_is_on():
    s = settings(gates=gates_for("1.36", {"QOSReserved": True}), cgroup_version=1, qos_reserved={"memory": 50},
                 kube_reserved=rl(memory="1Gi"))
    r = qos_cgroups(upstream_pods(), s)
    allocatable = 9 << 30
    burstable = allocatable - (128 << 20) * 50 // 100
    assert files(r.burstable)["memory.limit_in_bytes"] == burstable
    assert files(r.besteffort)["memory.limit_in_bytes"] == burstable - (384 << 20) * 50 // 100


def test_qos_reserved_is_ignored_without_the_gate():
    r = qos_cgroups(upstream_pods(), settings(cgroup_version=1, qos_reserved={"memory": 50}))
    assert "memory.limit_in_bytes" not in files(r.burstable)


def test_qos_reserved_needs_allocatable_memory():
    s = settings(gates=gates_for("1.36", {"QOSReserved": True}), cgroup_version=1, qos_reserved={"memory": 50},
                 capacity=rl(cpu="4"))
    assert "memory.limit_in_bytes" not in files(qos_cgroups(upstream_pods(), s).burstable)


def test_without_cgroups_per_qos_there_are_no_tiers():
    r = qos_cgroups(upstream_pods(), settings(layout=CgroupLayout(cgroups_per_qos=False)))
    assert r.node is None and r.burstable is None and r.parent_of("Burstable") is None


def test_without_cgroups_per_qos_a_custom_root_still_gets_capacity_values():
    r = qos_cgroups([], settings(cgroup_version=1, layout=CgroupLayout(cgroup_root="/custom", cgroups_per_qos=False),
                                 enforce_node_allocatable=()))
    assert r.node.path == "/custom" and files(r.node)["cpu.shares"] == 10240


def test_guaranteed_pods_sit_in_kubepods():
    r = qos_cgroups([], settings())
    assert r.parent_of("Guaranteed") is r.node and r.parent_of("BestEffort") is r.besteffort


@pytest.mark.parametrize("raw,value", [({"memory": "50%"}, 50), ({"memory": "0%"}, 0), ({"memory": "100%"}, 100),
                                       ({}, None)])
def test_parse_qos_reserved(raw, value):
    assert parse_qos_reserved(raw).get("memory") == value


@pytest.mark.parametrize("raw,message", [
    ({"cpu": "10%"}, 'cannot reserve "cpu" resource'),
    ({"memory": "50"}, "percentage expected, got '50'"),
    ({"memory": "x%"}, "invalid number in percentage 'x%'"),
    ({"memory": "1.5%"}, "invalid number in percentage"),
    ({"memory": "101%"}, "percentage must be between 0 and 100"),
    ({"memory": "-1%"}, "percentage must be between 0 and 100"),
])
def test_bad_qos_reserved_names_the_field(raw, message):
    with pytest.raises(InputError) as exc:
        parse_qos_reserved(raw)
    assert message in str(exc.value) and f"qosReserved.{next(iter(raw))}" in str(exc.value)
