"""The terminal summary (kubetwin/report/terminal.py): which figures it shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubetwin.report.terminal import summary_rows
from kubetwin.sim import load_scenario, simulate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def autoscaled_gpus():
    """examples/autoscale/gpu-jobs.yaml: DRA devices only on nodes the Cluster Autoscaler adds and removes."""
    return simulate(load_scenario(ROOT / "examples/autoscale/gpu-jobs.yaml"))


def test_dra_devices_held_only_in_the_middle_of_the_run_are_summarised(autoscaled_gpus):
    summary = autoscaled_gpus.summary()
    assert "devices" not in summary["utilization"]   # no GPU node is left at the end
    labels = [label for label, _, _ in summary_rows([summary])]
    assert "DRA devices allocated, time average" in labels and "DRA devices allocated, at the end" in labels


def test_the_device_share_averages_twelve_of_eighteen_gpus_for_an_hour_of_four(autoscaled_gpus):
    figure = dict((label, fig) for label, fig, _ in summary_rows([autoscaled_gpus.summary()]))
    assert figure["DRA devices allocated, time average"](autoscaled_gpus.summary()) == pytest.approx(1 / 6, abs=0.01)
