"""Released claims give their devices back: dedicated devices, shares of consumable
capacity and the shared counters partitions draw from (Unreserve, pod removal)."""

from __future__ import annotations

import pytest

from kubetwin.dra.allocator import AllocatedDevice, AllocatedState, Allocator
from kubetwin.dra.api import Node, parse_device_class, parse_resource_claim, parse_resource_slice
from kubetwin.dra.features import AllocatorFeatures
from kubetwin.errors import InputError

from .conftest import CLASS, claim, slice_

NODE = Node("node-1", {"zone": "a"})
CONSUMABLE = AllocatorFeatures(consumable_capacity=True)


def allocator(*slices, features=AllocatorFeatures()):
    return Allocator(features, {"gpu": parse_device_class(CLASS)}, [parse_resource_slice(s) for s in slices])


def test_released_dedicated_device_can_be_allocated_again():
    a = allocator(slice_(devices=[{"name": "gpu-0"}]))
    first = a.allocate(NODE, [parse_resource_claim(claim())])
    a.state.add_all(first.results[0].devices(), a.features)
    assert not a.allocate(NODE, [parse_resource_claim(claim())]).allocated
    a.state.release_all(first.results[0].devices(), a.features)
    assert a.allocate(NODE, [parse_resource_claim(claim())]).allocated


def test_released_partition_gives_its_shared_counters_back():
    counters = slice_("counters", sharedCounters=[{"name": "cs", "counters": {"memory": {"value": "8Gi"}}}])
    del counters["spec"]["devices"]
    counters["spec"]["pool"]["resourceSliceCount"] = 2
    parts = slice_("parts", devices=[{"name": f"part-{i}", "consumesCounters": [
        {"counterSet": "cs", "counters": {"memory": {"value": "8Gi"}}}]} for i in range(2)])
    parts["spec"]["pool"]["resourceSliceCount"] = 2
    a = allocator(counters, parts)
    first = a.allocate(NODE, [parse_resource_claim(claim())])
    a.state.add_all(first.results[0].devices(), a.features)
    assert not a.allocate(NODE, [parse_resource_claim(claim())]).allocated  # counters exhausted
    a.state.release_all(first.results[0].devices(), a.features)
    assert a.allocate(NODE, [parse_resource_claim(claim())]).allocated


def nic_claim(bw: str):
    return parse_resource_claim(claim(capacity={"requests": {"bw": bw}}))


NIC = [{"name": "nic", "allowMultipleAllocations": True, "capacity": {"bw": {"value": "10"}}}]


def test_released_share_returns_its_consumed_capacity():
    a = allocator(slice_(devices=NIC), features=CONSUMABLE)
    first = a.allocate(NODE, [nic_claim("6")])
    a.state.add_all(first.results[0].devices(), a.features)
    assert not a.allocate(NODE, [nic_claim("6")]).allocated
    a.state.release_all(first.results[0].devices(), a.features)
    assert a.allocate(NODE, [nic_claim("6")]).allocated


def test_device_stays_in_use_while_another_share_is_left():
    a = allocator(slice_(devices=NIC), features=CONSUMABLE)
    first = a.allocate(NODE, [nic_claim("4")]).results[0].devices()
    a.state.add_all(first, a.features)
    second = a.allocate(NODE, [nic_claim("4")]).results[0].devices()
    a.state.add_all(second, a.features)
    a.state.release_all(first, a.features)
    assert a.state.is_allocated(("gpu.example.com", "pool-1", "nic"))
    assert str(a.state.aggregated_capacity[("gpu.example.com", "pool-1", "nic")]["bw"]) == "4"
    a.state.release_all(second, a.features)
    assert not a.state.is_allocated(("gpu.example.com", "pool-1", "nic"))


def test_releasing_admin_access_changes_nothing():
    state = AllocatedState()
    state.add(AllocatedDevice("r", "d", "p", "x"), AllocatorFeatures())
    state.release(AllocatedDevice("r", "d", "p", "x", admin_access=True), AllocatorFeatures())
    assert state.is_allocated(("d", "p", "x"))


def allocated_claim(node_selector=None):
    obj = claim()
    alloc = {"devices": {"results": [{"request": "req-0", "driver": "gpu.example.com", "pool": "pool-1",
                                      "device": "gpu-0"}]}}
    if node_selector is not None:
        alloc["nodeSelector"] = node_selector
    obj["status"] = {"allocation": alloc}
    return obj


def test_claim_exposes_its_allocation_node_selector():
    sel = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    assert parse_resource_claim(allocated_claim(sel)).node_selector == sel


def test_claim_without_allocation_or_selector_has_none():
    assert parse_resource_claim(claim()).node_selector is None
    assert parse_resource_claim(allocated_claim()).node_selector is None


def test_malformed_allocation_node_selector_names_the_field():
    with pytest.raises(InputError) as exc:
        parse_resource_claim(allocated_claim({"nodeSelectorTerms": [{"matchFields": [{"operator": "In"}]}]}))
    assert "status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].key" in str(exc.value)
