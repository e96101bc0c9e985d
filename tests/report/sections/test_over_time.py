"""The report's charts over time (kubetwin/report/sections/over_time.py) and its headline cards
(glance.py): a figure held at some time of the run is charted, not only one held at the start."""

from __future__ import annotations

from pathlib import Path

from kubetwin.report.sections.glance import glance_section
from kubetwin.report.sections.over_time import over_time_section
from kubetwin.sim import load_scenario, simulate

ROOT = Path(__file__).resolve().parents[3]


def test_dra_devices_of_nodes_the_autoscaler_added_are_charted_and_carded():
    # examples/autoscale/gpu-jobs.yaml: no device at the first sample nor at the last
    r = simulate(load_scenario(ROOT / "examples/autoscale/gpu-jobs.yaml"))
    assert "devices" not in r.samples[0].utilization and "devices" not in r.samples[-1].utilization
    assert "DRA devices allocated" in over_time_section([r])
    assert "DRA devices allocated, time average" in glance_section([r], [r.summary()])
