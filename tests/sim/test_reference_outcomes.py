"""Every pod of the eight reference scenarios ends as it did at the recorded commit.

The scenarios (the Alibaba GPU trace four ways, the end-to-end, GPU-share and DRA runs of
``benchmarks/bench_sim.py`` scaled down, and ``kubetwin simulate``'s default scenario) and the
canonical dump are in ``reference_scenarios.py``; the digests in ``reference_outcomes.json``.
When a digest differs, ``scripts/reference-outcomes --check NAME`` shows the first differing
pods; a change meant to alter outcomes records new digests with ``--update``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("reference_scenarios",
                                               Path(__file__).resolve().with_name("reference_scenarios.py"))
assert _spec is not None and _spec.loader is not None
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)


def test_every_reference_scenario_has_a_recorded_digest():
    assert set(ref.recorded()["scenarios"]) == set(ref.SCENARIOS)


@pytest.mark.parametrize("name", list(ref.SCENARIOS))
def test_reference_scenario_outcomes_are_as_recorded(name):
    if ref.needs_trace(name) and not ref.TRACE.is_dir():
        pytest.skip(f"Alibaba GPU trace not at {ref.TRACE}")
    data = ref.recorded()
    want = data["scenarios"][name]
    lines = ref.run(name)
    assert sum(1 for ln in lines if ln.startswith('["pod"')) == want["pods"]
    assert ref.digest(lines) == want["sha256"], (
        f"{name}: per-pod outcomes differ from those recorded at {data['commit'][:12]}; "
        f"scripts/reference-outcomes --check {name} shows the first differing pods")
