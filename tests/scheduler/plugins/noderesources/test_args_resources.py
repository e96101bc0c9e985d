"""``scoringStrategy.resources``: every entry names a resource."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.scheduler.plugins.noderesources.args import parse_resources


def test_a_null_resource_entry_is_refused_as_one_without_a_name():
    with pytest.raises(InputError, match="Required value: name") as err:
        parse_resources([{"name": "cpu", "weight": 1}, None], "scoringStrategy.resources")
    assert err.value.path == "scoringStrategy.resources[1].name"
