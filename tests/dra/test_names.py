"""The node a claim is allocated on, and the drivers of an allocation: names the API server would store."""

from __future__ import annotations

import pytest

from kubetwin.dra.api import parse_node
from kubetwin.errors import InputError


def test_a_node_label_key_that_is_not_a_qualified_name_is_refused():
    with pytest.raises(InputError, match="label key") as err:
        parse_node({"metadata": {"name": "n", "labels": {"fuzz unknown field!": "x"}}})
    assert err.value.path == "metadata.labels.fuzz unknown field!"


def test_node_labels_are_read():
    assert parse_node({"metadata": {"name": "n", "labels": {"gpu.example.com/model": "a100"}}}).labels == {
        "gpu.example.com/model": "a100"}


def test_an_allocation_result_driver_that_is_not_a_driver_name_is_refused():
    from kubetwin.dra.api import parse_resource_claim

    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "d"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "x"}}]}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "r", "driver": "a" * 300, "pool": "p", "device": "d"}]}}}}
    with pytest.raises(InputError, match="a driver name must be a lowercase DNS subdomain") as err:
        parse_resource_claim(claim)
    assert err.value.path == "status.allocation.devices.results[0].driver"
