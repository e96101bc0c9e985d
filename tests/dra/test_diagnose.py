"""Why claims cannot be allocated: per claim, the request and the reason (dra.diagnose)."""

from __future__ import annotations

import copy

from kubetwin.dra.api import Node, parse_resource_claim
from kubetwin.dra.diagnose import diagnose, missing_classes

from .conftest import CLASS, claim, slice_
from .test_allocator import allocator

NODE = Node("node-1", {"zone": "a"})


def numa_devices(*numa):
    return [{"name": f"gpu-{i}", "attributes": {"numa": {"int": n}}} for i, n in enumerate(numa)]


def with_constraint(c, **constraint):
    c = copy.deepcopy(c)
    c["spec"]["devices"]["constraints"] = [{"requests": ["req-0"], **constraint}]
    return c


def test_a_request_with_too_few_eligible_devices_says_how_many_and_which_check_failed():
    c = parse_resource_claim(claim(count=2, selectors=['device.attributes["gpu.example.com"].numa == 1']))
    d = diagnose(allocator(slice_(devices=numa_devices(0, 1, 0))), NODE, [c])
    assert not d.allocatable
    problem = d.claims[0].problems[0]
    assert problem.startswith("request req-0: needs 2 devices of class gpu; 1 of 3 devices on the node eligible")
    assert "2 fail request selector #0" in problem


def test_devices_in_use_are_counted_as_such():
    from kubetwin.dra.allocator import AllocatedDevice, AllocatedState
    from kubetwin.dra.features import AllocatorFeatures

    state = AllocatedState()
    state.add(AllocatedDevice("r", "gpu.example.com", "pool-1", "gpu-0"), AllocatorFeatures())
    d = diagnose(allocator(slice_(), state=state), NODE, [parse_resource_claim(claim(count=2))])
    assert "1 fails not in use (allocated to another claim)" in d.claims[0].problems[0]


def test_a_missing_device_class_is_reported_for_its_claim_and_the_others_are_still_diagnosed():
    missing = claim("lost", deviceClassName="nope")
    fine = claim("fine")
    too_many = claim("greedy", count=5)
    a = allocator(slice_())
    claims = [parse_resource_claim(x) for x in (missing, fine, too_many)]
    d = diagnose(a, NODE, claims)
    by = {c.claim: c for c in d.claims}
    assert by["lost"].problems == ("request req-0: device class nope does not exist",)
    assert by["fine"].allocatable and not by["fine"].problems
    assert "needs 5 devices" in by["greedy"].problems[0]
    assert [m for _, m in missing_classes(a, claims)] == ["request req-0: device class nope does not exist"]


def test_a_constraint_no_devices_meet_is_named_with_the_values_the_devices_offer():
    c = parse_resource_claim(with_constraint(claim(count=3), matchAttribute="gpu.example.com/numa"))
    d = diagnose(allocator(slice_(devices=numa_devices(0, 1, 1, 0))), NODE, [c])
    problem = d.claims[0].problems[0]
    assert problem.startswith("constraint #0 (matchAttribute gpu.example.com/numa over req-0) cannot be met")
    assert "needs 3 devices with one common value; at most 2 eligible devices share one" in problem


def test_a_distinct_attribute_constraint_counts_the_distinct_values():
    two = claim()
    two["spec"]["devices"]["requests"].append({"name": "req-1", "exactly": {"deviceClassName": "gpu"}})
    two["spec"]["devices"]["constraints"] = [{"requests": ["req-0", "req-1"], "distinctAttribute": "gpu.example.com/numa"}]
    d = diagnose(allocator(slice_(devices=numa_devices(0, 0))), NODE, [parse_resource_claim(two)])
    problem = d.claims[0].problems[0]
    assert problem.startswith("constraint #0 (distinctAttribute gpu.example.com/numa over req-0, req-1)")
    assert "needs 2 devices with a different value each; the eligible devices have 1 distinct value" in problem


def test_claims_that_fit_alone_but_not_together_are_named_together():
    a = allocator(slice_(devices=numa_devices(0, 0, 0)))
    claims = [parse_resource_claim(claim("one", count=2)), parse_resource_claim(claim("two", count=2))]
    d = diagnose(a, NODE, claims)
    assert all(c.allocatable for c in d.claims)
    assert d.together.startswith("claims one, two can each be allocated alone, but not together")
    assert not d.allocatable


def test_shared_counters_are_named_when_the_devices_draw_on_them():
    counters = slice_("counters", devices=None, sharedCounters=[{"name": "cs", "counters": {
        "memory": {"value": "8Gi"}}}])
    del counters["spec"]["devices"]
    del counters["spec"]["nodeName"]
    counters["spec"]["allNodes"] = True
    counters["spec"]["pool"]["resourceSliceCount"] = 2
    parts = slice_("parts", devices=[{"name": f"part-{i}", "consumesCounters": [
        {"counterSet": "cs", "counters": {"memory": {"value": "4Gi"}}}]} for i in range(3)])
    parts["spec"]["pool"]["resourceSliceCount"] = 2
    d = diagnose(allocator(counters, parts), NODE, [parse_resource_claim(claim(count=3))])
    assert d.claims[0].problems[0].startswith("shared counters: the eligible devices of req-0")


def test_a_claim_diagnosed_allocatable_is_one_the_allocator_allocates():
    a = allocator(slice_(devices=numa_devices(0, 1, 1)))
    for count in (1, 2, 3, 4):
        c = parse_resource_claim(with_constraint(claim(count=count), matchAttribute="gpu.example.com/numa"))
        d = diagnose(a, NODE, [c])
        assert d.claims[0].allocatable == a.allocate(NODE, [c]).allocated, count


def test_first_available_alternatives_are_each_explained_when_none_can_be_met():
    c = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "alt"},
         "spec": {"devices": {"requests": [{"name": "r", "firstAvailable": [
             {"name": "big", "deviceClassName": "gpu", "count": 4},
             {"name": "small", "deviceClassName": "gpu", "count": 3}]}]}}}
    d = diagnose(allocator(slice_()), NODE, [parse_resource_claim(c)])
    problem = d.claims[0].problems[0]
    assert problem.startswith("request r: none of its 2 alternatives can be met")
    assert "request r/big: needs 4 devices" in problem and "request r/small: needs 3 devices" in problem


def test_class_selectors_count_as_checks_of_their_own():
    other = dict(CLASS, spec={"selectors": [{"cel": {"expression": 'device.driver == "other.example.com"'}}]})
    d = diagnose(allocator(slice_(), classes=(other,)), NODE, [parse_resource_claim(claim())])
    assert "2 fail class gpu selector #0" in d.claims[0].problems[0]
