"""The VPA's recommendation capped to LimitRanges (vertical-pod-autoscaler 1.7.1
``pkg/utils/vpa/capping.go``, ``limit_and_request_scaling.go``, ``pkg/utils/limitrange``).

Cases translated from upstream's unit tests, named in each test."""

from __future__ import annotations

import pytest

from kubetwin.autoscale.vpa import RecommendedContainerResources, Resources, parse_vpa
from kubetwin.autoscale.vpa_limitrange import (
    MAX_INT64,
    cap_to_limit_ranges,
    limit_range_item,
    proportional_limit,
)
from kubetwin.model.pod import pod_from_dict
from kubetwin.model.policy import limit_range_from_dict

G = 10**9


def pod(*containers: tuple[str, dict, dict]):
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                          "spec": {"containers": [{"name": n, "resources": {"requests": req, "limits": lim}}
                                                  for n, req, lim in containers]}})


def limit_range(*items: dict, name: str = "lr"):
    return limit_range_from_dict({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name},
                                  "spec": {"limits": list(items)}})


def vpa(**policy):
    spec: dict = {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}
    if policy:
        spec["resourcePolicy"] = {"containerPolicies": [{"containerName": "*", **policy}]}
    return parse_vpa({"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
                      "metadata": {"name": "web"}, "spec": spec})


def rec(cpu=None, memory=None):
    r = Resources(cpu, memory)
    return RecommendedContainerResources(r, r, r)


# --- getProportionalResourceLimit: limit_and_request_scaling_test.go TestGetProportionalResourceLimitCPU
@pytest.mark.parametrize(("case", "limit", "req", "recommended", "default", "want"), [
    ("scale proportionally", 2000, 1000, 10000, 0, 20000),
    ("scale proportionally with default", 0, 1000, 10000, 2000, 20000),
    ("no original limit", 0, 1000, 10000, 0, None),
    ("no original request", 2000, 0, 10000, 0, 10000),
    ("no recommendation", 0, 1000, 0, 2000, None),
    ("limit equal to request", 1000, 1000, 10000, 0, 10000),
    ("handle non-integer ratios", 2000, 1500, 1000, 0, 1333),
    ("go over milli cap", 10 * G * 1000, 1, 10 * G * 1000, 0, MAX_INT64),
])
def test_proportional_cpu_limit_matches_upstreams_cases(case, limit, req, recommended, default, want):
    assert proportional_limit("cpu", limit, req, recommended, default) == want, case


# --- TestApplyCapsToLimitRange
def test_the_container_limit_range_caps_cpu_to_max_and_raises_memory_to_min():
    p = pod(("container", {"cpu": "1", "memory": "1G"}, {"cpu": "1", "memory": "1G"}))
    lr = limit_range({"type": "Container", "max": {"cpu": "1"}, "min": {"memory": "500M"}})
    got = cap_to_limit_ranges(p, vpa(), {"container": rec(cpu=2000, memory=200 * 10**6)}, [lr])
    assert got["container"].target == Resources(1000, 500 * 10**6)


# --- TestApplyPodLimitRange ("cap target cpu to max", "cap mem to min")
def test_the_pod_limit_range_scales_every_containers_cpu_to_fit_max():
    p = pod(("container1", {"cpu": "1"}, {"cpu": "1"}), ("container2", {"cpu": "1"}, {"cpu": "1"}))
    lr = limit_range({"type": "Pod", "max": {"cpu": "1"}})
    got = cap_to_limit_ranges(p, vpa(), {"container1": rec(cpu=1000), "container2": rec(cpu=1000)}, [lr])
    assert [got[n].target.cpu for n in ("container1", "container2")] == [500, 500]


def test_the_pod_limit_range_scales_every_containers_memory_up_to_min():
    p = pod(("container1", {"memory": "1"}, {"memory": "1"}), ("container2", {"memory": "1"}, {"memory": "1"}))
    lr = limit_range({"type": "Pod", "min": {"memory": "4G"}})
    got = cap_to_limit_ranges(p, vpa(), {"container1": rec(memory=G), "container2": rec(memory=G)}, [lr])
    assert [got[n].target.memory for n in ("container1", "container2")] == [2 * G, 2 * G]


# --- the ratio: a bound on the limit bounds the request by the container's limit/request ratio
def test_a_max_on_the_limit_caps_the_request_by_the_limit_to_request_ratio():
    p = pod(("c", {"cpu": "500m"}, {"cpu": "1"}))   # limit twice the request
    lr = limit_range({"type": "Container", "max": {"cpu": "2"}})
    got = cap_to_limit_ranges(p, vpa(), {"c": rec(cpu=3000)}, [lr])
    assert got["c"].target.cpu == 1000   # its limit would be 2 (the max)


def test_the_policy_is_applied_after_the_limit_range():
    p = pod(("c", {"cpu": "1"}, {"cpu": "1"}))
    lr = limit_range({"type": "Container", "max": {"cpu": "2"}})
    got = cap_to_limit_ranges(p, vpa(minAllowed={"cpu": "3"}), {"c": rec(cpu=4000)}, [lr])
    assert got["c"].target.cpu == 3000


def test_requests_only_caps_the_recommendation_to_the_containers_limit():
    p = pod(("c", {"cpu": "1"}, {"cpu": "2"}))
    got = cap_to_limit_ranges(p, vpa(controlledValues="RequestsOnly"), {"c": rec(cpu=5000)},
                              [limit_range({"type": "Container", "min": {"cpu": "100m"}})])
    assert got["c"].target.cpu == 2000


# --- limit_range_calculator.go: several LimitRanges merged
def test_limit_ranges_merge_to_the_lowest_max_and_the_highest_min():
    a = limit_range({"type": "Container", "max": {"cpu": "4"}, "min": {"memory": "1Mi"}}, name="a")
    b = limit_range({"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "min": {"memory": "2Mi"}}, name="b")
    item = limit_range_item([a, b], "Container")
    assert item is not None
    assert item.max == {"cpu": 2000, "memory": 1 << 30} and item.min == {"memory": 2 << 20}


def test_no_limit_range_item_of_the_type_gives_none():
    assert limit_range_item([limit_range({"type": "Container", "max": {"cpu": "1"}})], "Pod") is None
