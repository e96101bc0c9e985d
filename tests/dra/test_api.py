"""Decoding resource.k8s.io objects: devices written alike in several slices are one value."""

from __future__ import annotations

import pytest

from kubetwin.dra.allocator import Allocator
from kubetwin.dra.api import Node, parse_device_class, parse_resource_claim, parse_resource_slice
from kubetwin.dra.features import AllocatorFeatures
from kubetwin.errors import InputError

from .conftest import slice_

GPU = {"name": "gpu-0", "attributes": {"model": {"string": "a100"}, "index": {"int": 0}},
       "capacity": {"memory": {"value": "40Gi"}}}


def test_devices_written_alike_in_two_slices_are_one_object():
    a = parse_resource_slice(slice_("a", devices=[dict(GPU)], nodeName="node-1"))
    b = parse_resource_slice(slice_("b", devices=[dict(GPU)], nodeName="node-2"))
    assert a.devices[0] is b.devices[0]


def test_devices_that_differ_in_any_field_are_separate_objects():
    other = {**GPU, "attributes": {"model": {"string": "a100"}, "index": {"int": 1}}}
    a = parse_resource_slice(slice_("a", devices=[dict(GPU)]))
    b = parse_resource_slice(slice_("b", devices=[other]))
    assert a.devices[0] is not b.devices[0]
    assert b.devices[0].attributes["index"].value == 1


def test_a_device_that_does_not_decode_reports_its_own_path_every_time():
    bad = {"name": "gpu-0", "attributes": {"index": {"int": "zero"}}}
    for _ in range(2):
        with pytest.raises(InputError) as err:
            parse_resource_slice(slice_("a", devices=[dict(GPU), bad]))
        assert err.value.path == "spec.devices[1].attributes.index.int"


def test_a_shared_device_is_judged_by_cel_with_the_driver_of_each_slice():
    """``device.driver`` comes from the slice, not the device: one device object published by
    two drivers matches a driver selector in one pool only."""
    cls = parse_device_class({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                              "spec": {"selectors": [{"cel": {"expression": 'device.driver == "b.example.com"'}}]}})
    a = parse_resource_slice(slice_("a", devices=[dict(GPU)], driver="a.example.com",
                                    pool={"name": "pa", "generation": 1, "resourceSliceCount": 1}))
    b = parse_resource_slice(slice_("b", devices=[dict(GPU)], driver="b.example.com",
                                    pool={"name": "pb", "generation": 1, "resourceSliceCount": 1}))
    assert a.devices[0] is b.devices[0]
    claim = parse_resource_claim({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                  "metadata": {"name": "c", "namespace": "default"},
                                  "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                                      "deviceClassName": "gpu"}}]}}})
    out = Allocator(AllocatorFeatures(), {"gpu": cls}, [a, b]).allocate(Node("node-1", {}), [claim])
    assert out.allocated
    assert [(r.driver, r.pool) for r in out.results[0].results] == [("b.example.com", "pb")]
