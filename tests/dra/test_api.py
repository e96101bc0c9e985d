"""Decoding resource.k8s.io objects: devices written alike in several slices are one value."""

from __future__ import annotations

import random

import pytest

from kubetwin.dra import api
from kubetwin.dra.allocator import AllocationError, Allocator
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


def test_device_lists_written_alike_in_two_slices_are_decoded_once():
    a = parse_resource_slice(slice_("a", devices=[dict(GPU), {"name": "gpu-1"}], nodeName="node-1"))
    b = parse_resource_slice(slice_("b", devices=[dict(GPU), {"name": "gpu-1"}], nodeName="node-2"))
    assert a.devices is b.devices and a.node_name == "node-1" and b.node_name == "node-2"


def test_a_device_list_that_differs_shares_only_the_devices_written_alike():
    a = parse_resource_slice(slice_("a", devices=[dict(GPU), {"name": "gpu-1"}]))
    b = parse_resource_slice(slice_("b", devices=[dict(GPU), {"name": "gpu-2"}]))
    assert a.devices is not b.devices and a.devices[0] is b.devices[0]
    assert [d.name for d in b.devices] == ["gpu-0", "gpu-2"]


def test_a_device_list_over_the_limit_is_refused_every_time():
    devices = [{"name": f"gpu-{i}"} for i in range(api.DEVICES_PER_SLICE_MAX + 1)]
    for _ in range(2):
        with pytest.raises(InputError) as err:
            parse_resource_slice(slice_("a", devices=devices))
        assert err.value.path == "spec.devices"


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


# ---------------------------------------------------------------------------- property
def _random_cluster(rng):
    """Slices of two drivers on three nodes and a shared pool; many devices written alike."""
    drivers = ("gpu.example.com", "nic.example.com")
    slices = []
    for n in range(3):
        for driver in drivers:
            devices = []
            for j in range(rng.randint(0, 4)):
                attrs = {"model": {"string": rng.choice(("a100", "h100"))}}
                if rng.random() < 0.5:
                    attrs["index"] = {"int": rng.randint(0, 1)}
                if rng.random() < 0.3:
                    attrs[f"{driver}/numa"] = {"int": rng.randint(0, 1)}
                devices.append({"name": f"dev-{j}", "attributes": attrs,
                                "capacity": {"memory": {"value": rng.choice(("40Gi", "80Gi"))}}})
            slices.append(slice_(f"n{n}-{driver}", devices=devices, driver=driver, nodeName=f"node-{n}",
                                 pool={"name": f"n{n}", "generation": 1, "resourceSliceCount": 1}))
    return slices


SELECTORS = ('device.driver == "gpu.example.com"', 'device.driver == "nic.example.com"',
             'device.attributes["gpu.example.com"].model == "h100"',
             '"index" in device.attributes[device.driver] && device.attributes[device.driver].index == 0',
             'device.capacity[device.driver].memory.compareTo(quantity("64Gi")) > 0',
             '"numa" in device.attributes[device.driver]')


def _random_claims(rng):
    claims = []
    for c in range(rng.randint(1, 2)):
        requests = []
        for r in range(rng.randint(1, 2)):
            exactly = {"deviceClassName": rng.choice(("any", "gpu", "nic")), "count": rng.randint(1, 2)}
            if rng.random() < 0.6:
                exactly["selectors"] = [{"cel": {"expression": rng.choice(SELECTORS)}}]
            requests.append({"name": f"r{r}", "exactly": exactly})
        claims.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                       "metadata": {"name": f"c{c}", "namespace": "default"},
                       "spec": {"devices": {"requests": requests}}})
    return claims


CLASSES = {"any": [], "gpu": [SELECTORS[0]], "nic": [SELECTORS[1]]}


def _outcome(slices, claims, node):
    from kubetwin.model.features import gates_for

    classes = {name: parse_device_class({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                         "metadata": {"name": name},
                                         "spec": {"selectors": [{"cel": {"expression": e}} for e in sel]}})
               for name, sel in CLASSES.items()}
    alloc = Allocator(AllocatorFeatures.from_gates(gates_for()), classes, slices)
    try:
        out = alloc.allocate(node, [parse_resource_claim(c) for c in claims])
    except AllocationError as exc:   # a CEL runtime error: the same one, on the same device
        return str(exc)
    return out.allocated, out.reason, [[r.to_api() for r in res.results] for res in out.results]


@pytest.mark.parametrize("seed", range(40))
def test_allocations_are_the_same_with_shared_devices_as_with_a_device_object_per_slice(seed, monkeypatch):
    import kubetwin.dra.api as api

    rng = random.Random(seed)
    raw = _random_cluster(rng)
    claims = _random_claims(rng)
    node = Node(f"node-{rng.randint(0, 2)}", {})
    shared = [parse_resource_slice(s) for s in raw]
    monkeypatch.setattr(api, "_shared_device", api._device)   # the plain decoder: one object per device
    monkeypatch.setattr(api, "_device_list_key", lambda devices, per_device: None)   # no list kept either
    plain = [parse_resource_slice(s) for s in raw]
    monkeypatch.undo()
    assert _outcome(shared, claims, node) == _outcome(plain, claims, node)


def test_a_value_json_would_write_like_a_string_is_not_taken_for_the_string():
    """A YAML date where a string belongs is refused even after the string was decoded."""
    import datetime

    good = {"name": "gpu-0", "attributes": {"since": {"string": "2024-01-01"}}}
    bad = {"name": "gpu-0", "attributes": {"since": {"string": datetime.date(2024, 1, 1)}}}
    parse_resource_slice(slice_("a", devices=[good]))
    with pytest.raises(InputError, match="must be a string"):
        parse_resource_slice(slice_("b", devices=[bad]))
