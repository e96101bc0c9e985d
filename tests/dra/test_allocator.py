"""The allocator picks the devices Kubernetes picks, and says unsatisfiable or error when it does."""

from __future__ import annotations

import pytest

from kubetwin.dra.allocator import AllocatedDevice, AllocatedState, AllocationError, Allocator
from kubetwin.dra.api import Node, parse_device_class, parse_resource_claim, parse_resource_slice
from kubetwin.dra.features import AllocatorFeatures

from .conftest import CLASS, claim, slice_

NODE = Node("node-1", {"zone": "a"})


def allocator(*slices, state=None, features=AllocatorFeatures(), classes=(CLASS,)):
    return Allocator(features, {c["metadata"]["name"]: parse_device_class(c) for c in classes},
                     [parse_resource_slice(s) for s in slices], allocated_state=state)


def devices_of(outcome, i=0):
    return [r.device for r in outcome.results[i].results]


def test_first_device_in_search_order_wins():
    out = allocator(slice_()).allocate(NODE, [parse_resource_claim(claim())])
    assert devices_of(out) == ["gpu-0"]


def test_pools_are_searched_by_driver_then_pool_name_not_input_order():
    b = slice_("b", [{"name": "x"}], pool={"name": "pool-b", "generation": 1, "resourceSliceCount": 1})
    a = slice_("a", [{"name": "y"}], pool={"name": "pool-a", "generation": 1, "resourceSliceCount": 1})
    out = allocator(b, a).allocate(NODE, [parse_resource_claim(claim())])
    assert out.results[0].results[0].pool == "pool-a"


def test_devices_in_use_are_skipped():
    state = AllocatedState()
    state.add(AllocatedDevice("r", "gpu.example.com", "pool-1", "gpu-0"), AllocatorFeatures())
    out = allocator(slice_(), state=state).allocate(NODE, [parse_resource_claim(claim())])
    assert devices_of(out) == ["gpu-1"]


def test_too_few_devices_is_unsatisfiable_not_an_error():
    out = allocator(slice_()).allocate(NODE, [parse_resource_claim(claim(count=3))])
    assert not out.allocated


def test_claims_of_a_pod_are_allocated_together_with_backtracking():
    devices = [{"name": "small", "capacity": {"memory": {"value": "1Gi"}}},
               {"name": "large", "capacity": {"memory": {"value": "2Gi"}}}]
    c0 = claim("c0", selectors=['device.capacity["gpu.example.com"].memory.compareTo(quantity("1Gi")) >= 0'])
    c1 = claim("c1", selectors=['device.capacity["gpu.example.com"].memory.compareTo(quantity("2Gi")) >= 0'])
    out = allocator(slice_(devices=devices)).allocate(NODE, [parse_resource_claim(c0), parse_resource_claim(c1)])
    assert devices_of(out, 0) == ["small"] and devices_of(out, 1) == ["large"]


def test_node_local_device_pins_the_claim_to_the_node():
    out = allocator(slice_()).allocate(NODE, [parse_resource_claim(claim())])
    sel = out.results[0].node_selector
    assert sel["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["node-1"]


def test_all_nodes_slice_gives_no_node_selector():
    s = slice_(allNodes=True)
    del s["spec"]["nodeName"]
    out = allocator(s).allocate(NODE, [parse_resource_claim(claim())])
    assert out.results[0].node_selector is None


def test_unknown_class_is_an_error():
    with pytest.raises(AllocationError, match="could not retrieve device class nope"):
        allocator(slice_()).allocate(NODE, [parse_resource_claim(claim(deviceClassName="nope"))])


def test_cel_runtime_error_on_missing_attribute_is_an_error():
    c = claim(selectors=['device.attributes["gpu.example.com"].model == "x"'])
    with pytest.raises(AllocationError, match="no such key: model"):
        allocator(slice_()).allocate(NODE, [parse_resource_claim(c)])


def test_unknown_attribute_domain_is_an_empty_map():
    c = claim(selectors=['device.attributes["other.example.com"].size() == 0'])
    out = allocator(slice_()).allocate(NODE, [parse_resource_claim(c)])
    assert out.allocated


def test_untolerated_noschedule_taint_blocks_the_device():
    devices = [{"name": "gpu-0", "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}, {"name": "gpu-1"}]
    out = allocator(slice_(devices=devices)).allocate(NODE, [parse_resource_claim(claim())])
    assert devices_of(out) == ["gpu-1"]


def test_tolerated_taint_lets_the_device_be_used():
    devices = [{"name": "gpu-0", "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}]
    c = claim(tolerations=[{"key": "k", "operator": "Exists"}])
    out = allocator(slice_(devices=devices)).allocate(NODE, [parse_resource_claim(c)])
    assert devices_of(out) == ["gpu-0"]


def test_match_attribute_constraint_keeps_devices_on_one_numa_node():
    devices = [{"name": f"gpu-{i}", "attributes": {"numa": {"int": n}}} for i, n in enumerate([0, 1, 1])]
    c = claim(count=2)
    c["spec"]["devices"]["constraints"] = [{"matchAttribute": "gpu.example.com/numa"}]
    out = allocator(slice_(devices=devices)).allocate(NODE, [parse_resource_claim(c)])
    assert devices_of(out) == ["gpu-1", "gpu-2"]


def test_first_available_falls_back_to_the_next_subrequest():
    c = {"metadata": {"name": "c"}, "spec": {"devices": {"requests": [{"name": "r", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu", "count": 3},
        {"name": "small", "deviceClassName": "gpu", "count": 1}]}]}}}
    out = allocator(slice_()).allocate(NODE, [parse_resource_claim(c)])
    assert [r.request for r in out.results[0].results] == ["r/small"]


def test_subrequests_with_the_gate_off_are_an_error():
    c = {"metadata": {"name": "c"}, "spec": {"devices": {"requests": [{"name": "r", "firstAvailable": [
        {"name": "a", "deviceClassName": "gpu"}]}]}}}
    with pytest.raises(AllocationError, match="DRAPrioritizedList feature is disabled"):
        allocator(slice_(), features=AllocatorFeatures(prioritized_list=False)).allocate(
            NODE, [parse_resource_claim(c)])


def test_all_mode_takes_every_matching_device():
    out = allocator(slice_()).allocate(NODE, [parse_resource_claim(claim(allocationMode="All", count=None))])
    assert devices_of(out) == ["gpu-0", "gpu-1"]


def test_partitions_share_counters_of_the_pool():
    counters = slice_("counters", devices=None, sharedCounters=[{"name": "gpu-0-cs", "counters": {
        "memory": {"value": "8Gi"}}}])
    del counters["spec"]["devices"]
    del counters["spec"]["nodeName"]
    counters["spec"]["allNodes"] = True
    counters["spec"]["pool"]["resourceSliceCount"] = 2
    parts = slice_("parts", devices=[{"name": f"part-{i}", "consumesCounters": [
        {"counterSet": "gpu-0-cs", "counters": {"memory": {"value": "4Gi"}}}]} for i in range(3)])
    parts["spec"]["pool"]["resourceSliceCount"] = 2
    a = allocator(counters, parts)
    assert devices_of(a.allocate(NODE, [parse_resource_claim(claim(count=2))])) == ["part-0", "part-1"]
    assert not a.allocate(NODE, [parse_resource_claim(claim(count=3))]).allocated


def test_consumable_capacity_rounds_up_to_valid_values():
    devices = [{"name": "nic", "allowMultipleAllocations": True, "capacity": {"bw": {"value": "10", "requestPolicy": {
        "default": "1", "validValues": ["1", "5", "10"]}}}}]
    c = claim(capacity={"requests": {"bw": "3"}})
    out = allocator(slice_(devices=devices)).allocate(NODE, [parse_resource_claim(c)])
    r = out.results[0].results[0]
    assert str(r.consumed_capacity["bw"]) == "5" and r.share_id


def test_the_same_node_object_finds_its_pools_without_reading_its_labels_again():
    a = allocator(slice_())
    node = Node("node-1", {"zone": "a"})
    first = a.pools_for(node)
    assert a.pools_for(node) is first
    assert a.pools_for(Node("node-1", {"zone": "a"})) is first   # equal labels: the same pools


def test_another_node_object_with_other_labels_gets_its_own_pools():
    selected = slice_(nodeName=None, nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["a"]}]}]})
    a = allocator(selected)
    assert a.pools_for(Node("node-1", {"zone": "a"}))
    assert not a.pools_for(Node("node-1", {"zone": "b"}))
