"""Effective pod requests and limits follow component-helpers ``PodRequests``/``PodLimits``."""

from kubetwin.model.quantity import Quantity
from kubetwin.model.resources import (
    PodResourcesOptions,
    aggregate_container_requests,
    pod_limits,
    pod_requests,
    scoring_non_missing_requests,
)

from .podspec import c, make_pod, sidecar

Q = Quantity.parse
DRA = PodResourcesOptions(use_dra_node_allocatable_resource_claim_status=True)


def values(rl):
    return {k: str(v) for k, v in rl.items()}


def test_app_containers_are_summed():
    p = make_pod([c("a", {"cpu": "1", "memory": "1Gi"}), c("b", {"cpu": "500m"})])
    assert pod_requests(p) == {"cpu": Q("1500m"), "memory": Q("1Gi")}


def test_regular_init_container_peak_wins_when_larger_than_apps():
    p = make_pod([c("a", {"cpu": "1"})], init=[c("i", {"cpu": "3"})])
    assert pod_requests(p)["cpu"] == Q("3")


def test_sidecars_run_with_apps_and_with_later_init_containers():
    p = make_pod([c("a", {"cpu": "1"})],
                 init=[sidecar("s", {"cpu": "1"}), c("i", {"cpu": "2"})])
    # apps+sidecar = 2; init peak = 2 (own) + 1 (sidecar started before) = 3
    assert pod_requests(p)["cpu"] == Q("3")


def test_init_container_before_a_sidecar_does_not_count_it():
    p = make_pod([c("a", {"cpu": "1"})],
                 init=[c("i", {"cpu": "2"}), sidecar("s", {"cpu": "1"})])
    assert pod_requests(p)["cpu"] == Q("2")


def test_pod_level_requests_replace_container_sum():
    p = make_pod([c("a", {"cpu": "1", "memory": "1Gi"})], resources={"requests": {"cpu": "4"}})
    assert pod_requests(p) == {"cpu": Q("4"), "memory": Q("1Gi")}


def test_pod_level_requests_ignored_when_skipped():
    p = make_pod([c("a", {"cpu": "1"})], resources={"requests": {"cpu": "4"}})
    assert pod_requests(p, PodResourcesOptions(skip_pod_level_resources=True))["cpu"] == Q("1")


def test_overhead_added_to_requests_unless_excluded():
    p = make_pod([c("a", {"cpu": "1"})], overhead={"cpu": "250m"})
    assert pod_requests(p)["cpu"] == Q("1250m")
    assert pod_requests(p, PodResourcesOptions(exclude_overhead=True))["cpu"] == Q("1")


def test_overhead_added_only_to_non_zero_limits():
    p = make_pod([c("a", {"cpu": "1"}, {"cpu": "2"})], overhead={"cpu": "250m", "memory": "10Mi"})
    assert pod_limits(p) == {"cpu": Q("2250m")}


def test_non_missing_requests_fill_only_absent_values():
    p = make_pod([c("a", {"cpu": "0"}), c("b")])
    got = aggregate_container_requests(p, PodResourcesOptions(non_missing_container_requests=scoring_non_missing_requests()))
    assert got["cpu"] == Q("100m")
    assert got["memory"] == Q("400Mi")


def test_dra_mapping_and_per_pod_overhead_charged_once():
    status = {"nodeAllocatableResourceClaimStatuses": [{
        "resourceClaimName": "x", "containers": ["a", "b"],
        "mapping": [{"name": "memory", "quantity": "400Mi"}],
        "overhead": [{"name": "memory", "perPod": "100Mi", "perContainer": "10Mi"}]}]}
    p = make_pod([c("a", {"memory": "1Gi"}, {"memory": "2Gi"}), c("b", {"memory": "1Gi"}, {"memory": "2Gi"})],
                 status=status)
    assert pod_requests(p, DRA)["memory"] == Q("2Gi") + Q("400Mi") + Q("100Mi") + Q("20Mi")
    assert pod_requests(p)["memory"] == Q("2Gi")


def test_dra_dropped_from_limits_nobody_declares():
    status = {"nodeAllocatableResourceClaimStatuses": [{
        "resourceClaimName": "x", "containers": ["a"], "mapping": [{"name": "cpu", "quantity": "2"}]}]}
    p = make_pod([c("a", {"cpu": "1", "memory": "1Gi"}, {"memory": "2Gi"})], status=status)
    assert "cpu" not in pod_limits(p, DRA)
    assert pod_requests(p, DRA)["cpu"] == Q("3")


def test_dra_per_container_overhead_for_unknown_container_is_pod_fixed():
    status = {"nodeAllocatableResourceClaimStatuses": [{
        "resourceClaimName": "x", "containers": ["ghost"],
        "overhead": [{"name": "cpu", "perContainer": "1"}]}]}
    p = make_pod([c("a", {"cpu": "1"})], status=status)
    assert pod_requests(p, DRA)["cpu"] == Q("2")


def test_status_resources_take_the_larger_of_spec_and_allocated():
    status = {"containerStatuses": [{"name": "a", "allocatedResources": {"cpu": "3"}}]}
    p = make_pod([c("a", {"cpu": "1"})], status=status)
    assert pod_requests(p, PodResourcesOptions(use_status_resources=True))["cpu"] == Q("3")
    assert pod_requests(p)["cpu"] == Q("1")


def test_infeasible_resize_ignores_spec():
    status = {"conditions": [{"type": "PodResizePending", "reason": "Infeasible"}],
              "containerStatuses": [{"name": "a", "allocatedResources": {"cpu": "1"}}]}
    p = make_pod([c("a", {"cpu": "8"})], status=status)
    assert pod_requests(p, PodResourcesOptions(use_status_resources=True))["cpu"] == Q("1")
