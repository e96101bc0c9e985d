"""Nodes are decoded strictly; their resource names are ones a kubelet could publish."""

import pytest

from kubetwin.errors import InputError
from kubetwin.model.node import node_from_dict


def node(capacity):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"capacity": capacity, "allocatable": dict(capacity)}}


@pytest.mark.parametrize("name", ["fuzz unknown field!", "memory:", "example.com/"])
def test_a_capacity_resource_name_that_is_not_a_qualified_name_is_refused(name):
    with pytest.raises(InputError, match="must be a qualified name") as err:
        node_from_dict(node({"cpu": "4", name: "1"}))
    assert err.value.path == f"status.capacity.{name}"


def test_extended_and_hugepage_capacity_names_are_accepted():
    n = node_from_dict(node({"cpu": "4", "example.com/gpu": "2", "hugepages-2Mi": "1Gi"}))
    assert n.status.capacity["example.com/gpu"].value() == 2


def test_a_node_label_key_that_is_not_a_qualified_name_is_refused():
    obj = node({"cpu": "4"})
    obj["metadata"]["labels"] = {"topology.kubernetes.io/zone ": "a"}
    with pytest.raises(InputError, match="label key") as err:
        node_from_dict(obj)
    assert err.value.path == "metadata.labels.topology.kubernetes.io/zone "
