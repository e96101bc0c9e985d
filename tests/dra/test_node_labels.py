"""The node a claim is allocated on: its labels are ones the API server would store."""

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
