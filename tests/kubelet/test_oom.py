"""oom_score_adj follows pkg/kubelet/qos/policy.go, including its clamps and the tie-break gate."""

import pytest

from kubetwin.kubelet.oom import (
    get_container_oom_score_adjust,
    go_div,
    log2_floor,
    possible_container_oom_score_adjusts,
)
from kubetwin.model.features import gates_for

from .podspec import c, make_pod, sidecar

Mi, Gi, Ti = 1 << 20, 1 << 30, 1 << 40
GATES = gates_for("1.37", {"PodLevelResources": True, "DRANodeAllocatableResources": True})


def oom(p, name=None, capacity=4_000_000_000, gates=GATES):
    ctr = next(x for x, _ in p.all_containers() if name is None or x.name == name)
    return get_container_oom_score_adjust(p, ctr, capacity, gates)


def mem(request, limit=0):
    return c("c", {"memory": str(request)}, {"memory": str(limit)} if limit else None)


def test_go_division_truncates_toward_zero():
    assert go_div(-7, 2) == -3 and go_div(7, 2) == 3


def test_log2_floor_is_zero_below_one():
    assert log2_floor(0) == 0 and log2_floor(1) == 0 and log2_floor(64) == 6


def test_guaranteed_is_minus_997():
    g = {"cpu": "5m", "memory": "10G"}
    assert oom(make_pod([c("c", g, g)]), capacity=123456789) == -997


def test_best_effort_is_1000():
    assert oom(make_pod([c("c")])) == 1000


def test_burstable_at_1000_becomes_999():
    assert oom(make_pod([c("c", None, {"cpu": "10"})])) == 999


def test_burstable_never_below_3():
    assert oom(make_pod([c("c", {"memory": "3999000000"}, None)])) == 3


def test_node_critical_needs_the_class_name():
    crit = make_pod([c("c")], priority=2000001000, priorityClassName="system-node-critical")
    cluster = make_pod([c("c")], priority=2000000000, priorityClassName="system-cluster-critical")
    assert oom(crit) == -997 and oom(cluster) == 1000


def test_pod_level_leftover_request_is_split_over_all_containers():
    p = make_pod([c("a"), c("b")], resources={"requests": {"cpu": "5m", "memory": "2000000000"},
                                             "limits": {"cpu": "5m", "memory": "2000001000"}})
    assert oom(p, "a") == 750


def test_sidecar_capped_at_smallest_regular_container():
    p = make_pod([c("a", {"cpu": "5m", "memory": "1000000000"}, {"cpu": "5m", "memory": "2000001000"}),
                  c("b", {"cpu": "5m", "memory": "500000000"}, {"cpu": "5m", "memory": "2000001000"})],
                 init=[sidecar("s", {"cpu": "5m", "memory": "200000000"}, {"cpu": "5m", "memory": "2000001000"})],
                 resources={"requests": {"cpu": "5m", "memory": "2000000000"},
                            "limits": {"cpu": "5m", "memory": "2000001000"}})
    assert (oom(p, "a"), oom(p, "b"), oom(p, "s")) == (725, 850, 850)


def test_dra_memory_share_and_pod_level_leftover():
    status = {"nodeAllocatableResourceClaimStatuses": [{"resourceClaimName": "x", "containers": ["c"],
                                                        "overhead": [{"name": "memory", "perContainer": "2Gi"}]}]}
    p = make_pod([c("c", {"memory": "1Gi"})], resources={"requests": {"memory": "5Gi"}}, status=status)
    assert oom(p, capacity=8_000_000_000) == 329


@pytest.mark.parametrize("capacity,req,limit,off,on", [
    (16 * Gi, 500 * Mi, 0, 970, 970),
    (16 * Gi, 500 * Mi, 500 * Mi, 970, 969),
    (Ti, 50 * Mi, 0, 999, 999),
    (Ti, 500 * Mi, 0, 999, 998),
    (Ti, 4 * Gi, 0, 997, 993),
    (Ti, 16 * Gi, 0, 985, 981),
    (Ti, 500 * Mi, 500 * Mi, 999, 993),
    (4 * Ti, 500 * Mi, 0, 999, 998),
    (4 * Ti, 64 * Gi, 0, 985, 979),
])
def test_tie_break_nudges_by_request_size_and_bounded_limit(capacity, req, limit, off, on):
    p = make_pod([mem(req, limit)])
    assert possible_container_oom_score_adjusts(p, p.spec.containers[0], capacity, GATES) == (off, on)


def test_tie_break_shared_dra_claim_loses_the_bonus():
    status = {"nodeAllocatableResourceClaimStatuses": [{"resourceClaimName": "claim", "containers": ["c", "o"],
                                                        "mapping": [{"name": "memory", "quantity": str(500 * Mi)}]}]}
    p = make_pod([mem(500 * Mi, 500 * Mi), c("o", {"memory": str(500 * Mi)})], status=status)
    assert possible_container_oom_score_adjusts(p, p.spec.containers[0], Ti, GATES) == (999, 997)


def test_tie_break_sidecar_capped_at_highest_regular_container():
    p = make_pod([c("small", {"memory": str(50 * Mi)}, {"memory": str(50 * Mi)}), c("large", {"memory": str(16 * Gi)})],
                 init=[sidecar("s", {"memory": str(50 * Mi)})])
    assert possible_container_oom_score_adjusts(p, p.spec.init_containers[0], Ti, GATES) == (999, 995)


@pytest.mark.parametrize("limit,on", [("4Gi", 995), ("2Gi", 990)])
def test_tie_break_pod_level_limit(limit, on):
    p = make_pod([c("c", {"cpu": "100m"})], resources={"requests": {"memory": "2Gi"}, "limits": {"memory": limit}})
    assert possible_container_oom_score_adjusts(p, p.spec.containers[0], Ti, GATES) == (999, on)
