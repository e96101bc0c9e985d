"""A v1beta1 slice with devices and shared counters becomes two v1 slices of one pool."""

from __future__ import annotations

from kubetwin.dra.allocator import Allocator
from kubetwin.dra.api import Node, parse_device_class, parse_resource_claim
from kubetwin.dra.convert import split_counter_slices
from kubetwin.dra.features import AllocatorFeatures
from kubetwin.dra.objects import collect
from kubetwin.model.loader import Document

OLD = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice", "metadata": {"name": "s"},
       "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 2},
                "nodeName": "node-1",
                "sharedCounters": [{"name": "cs", "counters": {"memory": {"value": "8Gi"}}}],
                "devices": [{"name": "gpu-0", "basic": {"consumesCounters": [
                    {"counterSet": "cs", "counters": {"memory": {"value": "8Gi"}}}]}},
                    {"name": "gpu-0-half", "basic": {"consumesCounters": [
                        {"counterSet": "cs", "counters": {"memory": {"value": "4Gi"}}}]}}]}}
SECOND = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "t"},
          "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 2},
                   "nodeName": "node-1", "devices": [{"name": "other"}]}}


def docs(*objs):
    return [Document(o, "objects.yaml", i) for i, o in enumerate(objs)]


def test_split_gives_a_device_slice_and_a_counter_slice():
    out = collect(docs(OLD))
    assert sorted(s.name for s in out.slices) == ["s", "s-counters"]
    by = {s.name: s for s in out.slices}
    assert [d.name for d in by["s"].devices] == ["gpu-0", "gpu-0-half"] and by["s"].shared_counters == ()
    assert by["s-counters"].devices == () and by["s-counters"].shared_counters[0].name == "cs"


def test_split_raises_the_slice_count_of_every_slice_of_the_pool():
    out = collect(docs(OLD, SECOND))
    assert {s.name: s.resource_slice_count for s in out.slices} == {"s": 3, "s-counters": 3, "t": 3}


def test_slices_without_both_pass_through_unchanged():
    assert split_counter_slices([SECOND]) == [SECOND]


def test_devices_of_a_split_slice_are_allocatable_against_its_counters():
    alone = {**OLD, "spec": {**OLD["spec"], "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}}}
    out = collect(docs(alone))
    alloc = Allocator(AllocatorFeatures(), {"gpu": parse_device_class({"metadata": {"name": "gpu"}})}, out.slices)
    one = parse_resource_claim({"metadata": {"name": "c"}, "spec": {"devices": {"requests": [
        {"name": "a", "exactly": {"deviceClassName": "gpu"}}]}}})
    two = parse_resource_claim({"metadata": {"name": "c"}, "spec": {"devices": {"requests": [
        {"name": "a", "exactly": {"deviceClassName": "gpu", "count": 2}}]}}})
    assert alloc.allocate(Node("node-1"), [one]).allocated
    assert not alloc.allocate(Node("node-1"), [two]).allocated   # 8Gi + 4Gi > 8Gi
