"""Pods answered from the scheduler's kept verdicts get a cycle span (``traced_kept_answers``): a
batch of parked pods retried by a leftover flush is answered without running a plugin, and each
pod still has its ``scheduling cycle`` span, marked reused, with no children."""

from __future__ import annotations

from pathlib import Path

from tests.tracing.conftest import attrs
from tests.tracing.test_provider import run

SCENARIO = """\
apiVersion: kubetwin.io/v1alpha1
kind: Simulation
metadata: {name: parked}
spec:
  horizon: 30m
  nodeGroups:
  - name: worker
    count: 2
    machine: 1s1n4c2t
  workloads:
  - name: huge
    count: 3
    arrival: {start: 10s}
    template:
      spec:
        containers:
        - name: app
          resources: {requests: {cpu: "64", memory: 1Gi}}
  - name: small
    count: 3
    arrival: {start: 10m, interval: 5m}
    template:
      spec:
        containers:
        - name: app
          resources: {requests: {cpu: "100m", memory: 100Mi}}
"""


def test_parked_pods_retried_from_kept_verdicts_each_get_a_reused_cycle_span(receiver, tmp_path: Path, capsys):
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SCENARIO)
    status, out, err = run(capsys, "simulate", "-f", str(scenario), "--trace", f"otlp://{receiver.address}",
                           "-o", "json")
    assert status == 0, err
    spans = receiver.spans()
    huge = [s for s in spans if s.name == "scheduling cycle" and attrs(s)["k8s.pod.name"] == "huge-0"]
    # its first cycle, then three retries answered in batches from its kept verdict (no span on main)
    assert len(huge) == 4
    assert [attrs(s)["kubetwin.scheduler.reused"] for s in huge] == [False, True, True, True]
    parents = {s.parent_span_id for s in spans}
    assert all(s.span_id not in parents for s in huge[1:])
    assert all(attrs(s)["kubetwin.scheduler.result"] == "unschedulable" for s in huge)
