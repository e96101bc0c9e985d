"""The README's node-feedback example runs as written: CPU throttling and pressure, disk and PID
pressure, and the PSI-aware what-if beside the upstream eviction manager."""

from __future__ import annotations

from pathlib import Path

from kubetwin.sim import load_scenario, simulate
from kubetwin.sim.sweep import apply_variant, parse_variant

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "simulate" / "node-feedback.yaml"


def test_the_example_throttles_fills_the_disk_and_reaches_pids_max():
    r = simulate(load_scenario(EXAMPLE))
    s = r.summary()
    assert s["cpu"]["throttledPods"] == 4
    assert r.counters.evicted_by_signal == {"imagefs.available": 2}
    assert any(e["type"] == "PIDLimitReached" for e in r.events)


def test_the_psi_aware_variant_evicts_the_cpu_hogs_first():
    sc = load_scenario(EXAMPLE)
    apply_variant(sc, parse_variant("psi:whatif.evictionPolicy=psi-aware"))
    assert simulate(sc).counters.evicted_by_signal == {"psi-aware": 2}
