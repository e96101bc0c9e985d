"""Scheduling-cycle spans, received over OTLP from ``kubetwin simulate --trace``: one trace per cycle,
a span per extension point with a span per plugin under it, verdicts and scores as attributes, and
the scenario's clock as the span times."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from kubetwin.sim.loop import EPOCH
from tests.tracing.conftest import attrs
from tests.tracing.test_provider import run

SCENARIO = """\
apiVersion: kubetwin.io/v1alpha1
kind: Simulation
metadata: {name: traced}
spec:
  nodeGroups:
  - name: worker
    count: 2
    machine: 1s1n4c2t
  workloads:
  - name: web
    count: 3
    arrival: {start: 10s, interval: 7s}
    template:
      spec:
        containers:
        - name: app
          resources: {requests: {cpu: "1", memory: 1Gi}}
  - name: huge
    count: 1
    arrival: {start: 30s}
    template:
      spec:
        containers:
        - name: app
          resources: {requests: {cpu: "64", memory: 1Gi}}
"""
EPOCH_NS = int(EPOCH.timestamp()) * 1_000_000_000


@pytest.fixture
def spans(receiver, tmp_path: Path, capsys) -> list[Any]:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    status, _, err = run(capsys, "simulate", "-f", str(scenario), "--trace", f"otlp://{receiver.address}",
                         "-o", "json")
    assert status == 0, err
    return receiver.spans()


def _children(spans: list[Any]) -> dict[bytes, list[Any]]:
    out: dict[bytes, list[Any]] = defaultdict(list)
    for s in spans:
        out[s.parent_span_id].append(s)
    return out


def _cycles(spans: list[Any], pod: str) -> list[Any]:
    return [s for s in spans if s.name == "scheduling cycle" and attrs(s)["k8s.pod.name"] == pod]


def test_each_decision_is_the_root_of_its_own_trace(spans):
    roots = [s for s in spans if not s.parent_span_id]
    assert {s.name for s in roots} == {"scheduling cycle", "kubelet admission"}
    assert len({s.trace_id for s in roots}) == len(roots)


def test_a_cycle_has_a_span_per_extension_point_in_order(spans):
    cycle = _cycles(spans, "web-0")[0]
    kids = sorted(_children(spans)[cycle.span_id], key=lambda s: s.start_time_unix_nano)
    assert [s.name for s in kids] == ["PreFilter", "Filter", "PreScore", "Score", "NormalizeScore",
                                      "Reserve", "Permit", "Bind"]


def test_filter_has_a_span_per_plugin_with_nodes_passed_and_rejected(spans):
    tree = _children(spans)
    cycle = _cycles(spans, "web-0")[0]
    filt = next(s for s in tree[cycle.span_id] if s.name == "Filter")
    fit = next(s for s in tree[filt.span_id] if s.name == "Filter NodeResourcesFit")
    a = attrs(fit)
    assert a["kubetwin.scheduler.plugin"] == "NodeResourcesFit"
    assert a["kubetwin.scheduler.nodes_passed"] == 2 and a["kubetwin.scheduler.nodes_rejected"] == 0


def test_score_spans_carry_each_nodes_raw_and_normalized_score(spans):
    tree = _children(spans)
    cycle = _cycles(spans, "web-0")[0]
    score = next(s for s in tree[cycle.span_id] if s.name == "Score")
    fit = attrs(next(s for s in tree[score.span_id] if s.name == "Score NodeResourcesFit"))
    assert sorted(fit["kubetwin.scheduler.score.nodes"]) == ["worker-0", "worker-1"]
    assert len(fit["kubetwin.scheduler.score.raw"]) == 2
    norm = next(s for s in tree[cycle.span_id] if s.name == "NormalizeScore")
    assert {s.name for s in tree[norm.span_id]} >= {"NormalizeScore NodeResourcesFit"}


def test_the_cycle_names_the_pod_and_the_node_it_chose(spans):
    a = attrs(_cycles(spans, "web-0")[0])
    assert a["k8s.namespace.name"] == "default"
    assert a["kubetwin.scheduler.result"] == "scheduled"
    assert a["k8s.node.name"] in ("worker-0", "worker-1")
    assert a["kubetwin.scenario"] == "traced"


def test_an_unschedulable_pod_has_the_filter_rejections_and_postfilter(spans):
    tree = _children(spans)
    cycle = _cycles(spans, "huge-0")[0]
    a = attrs(cycle)
    assert a["kubetwin.scheduler.result"] == "unschedulable"
    assert "Insufficient cpu" in a["kubetwin.scheduler.message"]
    names = [s.name for s in tree[cycle.span_id]]
    assert "PostFilter" in names and "Score" not in names and "Bind" not in names
    filt = next(s for s in tree[cycle.span_id] if s.name == "Filter")
    fit = next(s for s in tree[filt.span_id] if s.name == "Filter NodeResourcesFit")
    events = [attrs(e) for e in fit.events]
    assert {e["k8s.node.name"] for e in events} == {"worker-0", "worker-1"}
    assert all(e["kubetwin.status.reasons"] == ["Insufficient cpu"] for e in events)


def test_span_times_are_the_scenarios_clock(spans):
    # web-0 arrives at 10s, web-1 at 17s, web-2 at 24s of simulated time: their cycles start there
    for pod, at in (("web-0", 10), ("web-1", 17), ("web-2", 24)):
        assert _cycles(spans, pod)[0].start_time_unix_nano == EPOCH_NS + at * 1_000_000_000


def test_children_lie_within_their_parent(spans):
    by_id = {s.span_id: s for s in spans}
    for s in spans:
        if s.parent_span_id:
            p = by_id[s.parent_span_id]
            assert p.start_time_unix_nano <= s.start_time_unix_nano <= s.end_time_unix_nano <= p.end_time_unix_nano, \
                (p.name, s.name)


def test_the_one_shot_cycle_of_kubetwin_schedule_is_traced(receiver, capsys):
    from tests.tracing.test_provider import EX

    status, _, err = run(capsys, "schedule", "--nodes", str(EX / "schedule/nodes.yaml"), str(EX / "schedule/pod.yaml"),
                         "--trace", f"otlp://{receiver.address}")
    assert status == 0, err
    spans = receiver.spans()
    cycle = next(s for s in spans if s.name == "scheduling cycle")
    assert attrs(cycle)["k8s.node.name"] == "big-1"
    tree = _children(spans)
    filt = next(s for s in tree[cycle.span_id] if s.name == "Filter")
    first = attrs(min(tree[filt.span_id], key=lambda s: s.start_time_unix_nano))   # runs on every node
    assert first["kubetwin.scheduler.nodes_passed"] + first["kubetwin.scheduler.nodes_rejected"] == 3


def test_tracing_changes_no_outcome_of_a_reference_scenario(tmp_path):
    from kubetwin import tracing
    from tests.sim import reference_scenarios as rs

    tracing.start(f"file:{tmp_path / 'trace.json'}", "simulate")
    try:
        lines = rs.run("default")
    finally:
        tracing.stop()
    assert rs.digest(lines) == rs.recorded()["scenarios"]["default"]["sha256"]
    assert (tmp_path / "trace.json").stat().st_size > 0
