"""A Job read with ``status.succeeded`` (a snapshot of a live cluster, or ``simulate
--write-end-state``'s end state) runs only its remaining completions, as the Job controller does:
the pods it counts as succeeded are not created again (``kubetwin.sim.scenario._job_counts``)."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.sim.loop import simulate
from kubetwin.sim.scenario import load_scenario

SCENARIO = """\
apiVersion: kubetwin.io/v1alpha1
kind: Simulation
metadata: {name: jobs}
spec:
  nodeGroups:
  - name: worker
    count: 1
    capacity: {cpu: "8", memory: 16Gi, pods: "110"}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: batch
  namespace: default
  annotations: {kubetwin.io/duration: 10m}
spec:
  completions: 4
  parallelism: 4
  template:
    spec:
      containers:
      - name: w
        image: x
        resources: {requests: {cpu: "1", memory: 1Gi}}
"""


def run(tmp_path, status: str = ""):
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO + status)
    return simulate(load_scenario([str(path)])).summary()


def test_a_job_without_status_runs_all_its_completions(tmp_path):
    assert run(tmp_path)["pods"] == 4


def test_a_job_with_succeeded_pods_runs_only_the_remaining_completions(tmp_path):
    assert run(tmp_path, "status: {succeeded: 3}\n")["pods"] == 1


def test_a_job_whose_completions_all_succeeded_runs_nothing(tmp_path):
    assert run(tmp_path, "status: {succeeded: 4, failed: 1}\n")["pods"] == 0


def test_a_malformed_status_count_names_the_field(tmp_path):
    with pytest.raises(InputError) as err:
        run(tmp_path, "status: {succeeded: -1}\n")
    assert "status.succeeded" in str(err.value) or "succeeded" in (err.value.path or "")
