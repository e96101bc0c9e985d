"""VPA ContainerState: which samples reach the histograms, translated from upstream
vertical-pod-autoscaler-1.7.1 pkg/recommender/model/container_test.go (its mocked histogram
calls become the recorded calls below)."""

from __future__ import annotations

import calendar
import time

import pytest

from kubetwin.autoscale import vpa

T0 = float(calendar.timegm(time.strptime("2017-04-18 17:35:05", "%Y-%m-%d %H:%M:%S")))
DAY = 86400.0
MB = 1024 * 1024


class Recording(vpa.AggregateContainerState):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, float, float]] = []

    def add_cpu_sample(self, millicores: int, start: float) -> None:
        self.calls.append(("cpu", millicores / 1000.0, start))
        super().add_cpu_sample(millicores, start)

    def add_memory_peak(self, bytes_: int, start: float) -> None:
        self.calls.append(("add", float(bytes_), start))
        super().add_memory_peak(bytes_, start)

    def subtract_memory_peak(self, bytes_: int, start: float) -> None:
        self.calls.append(("sub", float(bytes_), start))
        super().subtract_memory_peak(bytes_, start)


def _container() -> tuple[vpa.ContainerState, Recording]:
    agg = Recording()
    return vpa.ContainerState(agg), agg


def test_aggregate_container_usage_samples() -> None:  # TestAggregateContainerUsageSamples
    c, agg = _container()
    step = DAY / 2
    assert c.add_cpu_sample(3140, T0) and c.add_memory_sample(5, T0)
    assert c.add_cpu_sample(6280, T0 + step) and c.add_memory_sample(10, T0 + step)
    assert c.add_cpu_sample(1570, T0 + 2 * step) and c.add_memory_sample(2, T0 + 2 * step)
    assert not c.add_cpu_sample(1000, T0 + 2 * step)  # out of order
    assert not c.add_cpu_sample(-1000, T0 + 4 * step)  # negative
    assert not c.add_memory_sample(-1000, T0 + 4 * step)
    assert agg.calls == [
        ("cpu", 3.14, T0), ("add", 5.0, T0 + DAY),
        ("cpu", 6.28, T0 + step), ("sub", 5.0, T0 + DAY), ("add", 10.0, T0 + DAY),
        ("cpu", 1.57, T0 + 2 * step), ("add", 2.0, T0 + 2 * DAY)]


def test_record_oom_increased_by_bump_up() -> None:  # TestRecordOOMIncreasedByBumpUp
    c, agg = _container()
    c.record_oom(T0, 1000 * MB)
    assert agg.calls == [("add", 1200.0 * MB, T0 + DAY)]


def test_record_oom_dont_run_away() -> None:  # TestRecordOOMDontRunAway
    c, agg = _container()
    c.record_oom(T0, 1000 * MB)
    c.record_oom(T0, 999 * MB)
    c.record_oom(T0, 999 * MB)
    c.record_oom(T0, 2000 * MB)
    assert agg.calls == [("add", 1200.0 * MB, T0 + DAY), ("sub", 1200.0 * MB, T0 + DAY), ("add", 2400.0 * MB, T0 + DAY)]


def test_record_oom_increased_by_min() -> None:  # TestRecordOOMIncreasedByMin
    c, agg = _container()
    c.record_oom(T0, 1 * MB)
    assert agg.calls == [("add", 101.0 * MB, T0 + DAY)]


def test_record_oom_maxed_with_known_sample() -> None:  # TestRecordOOMMaxedWithKnownSample
    c, agg = _container()
    assert c.add_memory_sample(3000 * MB, T0)
    c.record_oom(T0, 1000 * MB)
    assert agg.calls == [("add", 3000.0 * MB, T0 + DAY), ("sub", 3000.0 * MB, T0 + DAY), ("add", 3600.0 * MB, T0 + DAY)]


def test_record_oom_discards_old_sample() -> None:  # TestRecordOOMDiscardsOldSample
    c, agg = _container()
    assert c.add_memory_sample(1000 * MB, T0)
    with pytest.raises(ValueError, match="too old"):
        c.record_oom(T0 - 30 * 3600, 1000 * MB)
    assert agg.calls == [("add", 1000.0 * MB, T0 + DAY)]
