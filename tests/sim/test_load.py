"""``kubetwin.io/load``: a controller's load over the simulated clock, strictly read."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.sim.load import parse_load


def test_a_daily_curve_interpolates_and_repeats():
    load = parse_load("{cpu: [[0h, 2], [12h, 26], [24h, 2]], repeat: 24h}", "load")
    assert load.cpu_milli(6 * 3600) == 14000
    assert load.cpu_milli(30 * 3600) == 14000


def test_a_constant_load_and_metric_totals():
    load = parse_load({"cpu": "500m", "metrics": {"rps": "2k"}}, "load")
    assert load.cpu_milli(99) == 500
    assert load.metric_milli("rps", 0) == 2_000_000
    assert load.metric_milli("other", 0) is None


def test_a_misspelt_key_is_refused_with_the_nearest_name():
    with pytest.raises(InputError, match='did you mean "metrics"'):
        parse_load("{cpu: 1, metric: {rps: 1}}", "load")


def test_times_must_increase():
    with pytest.raises(InputError, match="times must increase"):
        parse_load("{cpu: [[1h, 1], [1h, 2]]}", "load")


def test_a_load_needs_cpu_or_metrics():
    with pytest.raises(InputError, match="Required value: cpu or metrics"):
        parse_load("{repeat: 24h}", "load")
