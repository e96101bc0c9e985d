"""Bad input the fuzzer found: each is refused with exit status 1 and a message naming the file,
never a traceback, a hang or an out-of-memory. One test per failure class (tests/fuzz)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from kubetwin.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        main(list(argv))
        status = 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return status, out, err


def refused(capsys, file: str, *argv: str) -> str:
    status, _, err = run(capsys, *argv)
    assert status == 1, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("error: ") and file in line, line
    return line


def test_a_dra_object_whose_kind_is_not_a_string_is_refused(tmp_path, capsys):
    objects = tmp_path / "objects.yaml"
    objects.write_text(yaml.safe_dump({"apiVersion": "resource.k8s.io/v1", "kind": ["DeviceClass"], "metadata": {}}))
    refused(capsys, "objects.yaml", "dra", "allocate", "-f", str(objects), "--node", str(EXAMPLES / "dra/node.yaml"),
            str(EXAMPLES / "dra/claims.yaml"))


def test_a_checkpoint_that_is_not_utf8_is_refused_naming_it(tmp_path, capsys):
    state = tmp_path / "state"
    state.mkdir()
    (state / "cpu_manager_state").write_bytes(b"\xff\xfe\x00garbage")
    pl = EXAMPLES / "pod-level"
    line = refused(capsys, "cpu_manager_state", "admit", "--machine", str(pl / "machine.json"), "--config",
                   str(pl / "kubelet-pod-scope.yaml"), "--state-dir", str(state), str(pl / "ml-workload.yaml"))
    assert "not UTF-8" in line


def test_a_number_of_thousands_of_digits_is_refused_naming_the_file(tmp_path, capsys):
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priority: " + "9" * 5000 + "\n")
    refused(capsys, "pod.yaml", "explain", str(pod), "--node", str(EXAMPLES / "explain/node.yaml"))


def test_a_deeply_nested_json_document_is_refused_naming_the_file(tmp_path, capsys):
    pod = tmp_path / "pod.json"
    pod.write_text('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": ' + '{"a":' * 500 + "1"
                   + "}" * 500 + "}}")
    refused(capsys, "pod.json", "explain", str(pod), "--node", str(EXAMPLES / "explain/node.yaml"))


def test_a_cpu_range_past_the_cpu_id_limit_is_refused_quickly(tmp_path, capsys):
    pl = EXAMPLES / "pod-level"
    config = yaml.safe_load((pl / "kubelet-pod-scope.yaml").read_text())
    config["reservedSystemCPUs"] = "0-99999999999"
    cfg = tmp_path / "kubelet.yaml"
    cfg.write_text(yaml.safe_dump(config))
    began = time.monotonic()
    line = refused(capsys, "kubelet.yaml", "admit", "--machine", str(pl / "machine.json"), "--config", str(cfg),
                   str(pl / "ml-workload.yaml"))
    assert "KUBETWIN_MAX_CPU_ID" in line
    assert time.monotonic() - began < 30  # not a timing target: "not out of memory, not minutes"


def _scenario(tmp_path: Path, spec: dict) -> str:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation",
                                    "metadata": {"name": "s"}, "spec": spec}))
    return str(path)


_GROUP = {"name": "n", "count": 1, "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
_WORKLOAD = {"name": "w", "count": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}


@pytest.mark.parametrize("field,value,variable", [
    ("nodeGroups", [dict(_GROUP, count=9007199254740993)], "KUBETWIN_MAX_SIM_NODES"),
    ("workloads", [dict(_WORKLOAD, count=10 ** 7)], "KUBETWIN_MAX_SIM_PODS"),
    ("horizon", "2000000h", "KUBETWIN_MAX_SIM_SECONDS"),
    ("workloads", [dict(_WORKLOAD, count=3, arrival={"rate": 1e-12})], "KUBETWIN_MAX_SIM_SECONDS"),
])
def test_a_scenario_past_a_size_limit_is_refused_before_it_runs(tmp_path, capsys, field, value, variable):
    spec = {"nodeGroups": [_GROUP], "workloads": [_WORKLOAD], field: value}
    line = refused(capsys, "scenario.yaml", "simulate", _scenario(tmp_path, spec), "--report", "-", "--no-progress",
                   "-o", "json")
    assert variable in line


def test_a_run_without_horizon_stops_at_the_sample_limit(tmp_path, capsys, monkeypatch):
    # No horizon: the clock runs until the last pod ends, here an hour of one-second samples.
    monkeypatch.setenv("KUBETWIN_MAX_SIM_SAMPLES", "50")
    spec = {"nodeGroups": [_GROUP], "workloads": [dict(_WORKLOAD, duration="1h")], "sampleInterval": "1s"}
    line = refused(capsys, "scenario.yaml", "simulate", _scenario(tmp_path, spec), "--report", "-", "--no-progress",
                   "-j", "1", "-o", "json")
    assert "KUBETWIN_MAX_SIM_SAMPLES" in line


def test_an_allocation_error_names_the_claims_file(tmp_path, capsys):
    claims = yaml.safe_load((EXAMPLES / "dra/claims.yaml").read_text())
    claims["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2 ** 64
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(claims))
    refused(capsys, "claims.yaml", "dra", "allocate", "-f", str(EXAMPLES / "dra/objects.yaml"), "--node",
            str(EXAMPLES / "dra/node.yaml"), str(path))


def test_a_timeline_past_the_step_limit_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KUBETWIN_MAX_TIMELINE_STEPS", "3")
    timeline = tmp_path / "timeline.yaml"
    timeline.write_text(yaml.safe_dump([{"after": "1s"}] * 4))
    kubelet = tmp_path / "kubelet.yaml"
    kubelet.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")
    line = refused(capsys, "timeline.yaml", "evict", "--config", str(kubelet), "--timeline", str(timeline), "-o", "json",
                   str(EXAMPLES / "evict/pods.yaml"))
    assert "KUBETWIN_MAX_TIMELINE_STEPS" in line


def test_a_deployment_with_more_replicas_than_the_pod_limit_is_refused(tmp_path, capsys):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"replicas": 10 ** 7, "selector": {"matchLabels": {"app": "d"}},
                           "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c"}]}}}}
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all([{"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation",
                                         "metadata": {"name": "s"}, "spec": {"nodeGroups": [_GROUP]}}, deployment]))
    line = refused(capsys, "scenario.yaml", "simulate", str(path), "--report", "-", "--no-progress", "-o", "json")
    assert "KUBETWIN_MAX_SIM_PODS" in line


def test_a_workload_template_spec_that_is_not_a_mapping_is_refused(tmp_path, capsys):
    spec = {"nodeGroups": [_GROUP], "workloads": [dict(_WORKLOAD, template={"spec": -1})]}
    line = refused(capsys, "scenario.yaml", "simulate", _scenario(tmp_path, spec), "--report", "-", "--no-progress")
    assert "spec.workloads[0].template.spec" in line


def test_a_machine_whose_cache_id_is_past_the_cpu_id_limit_is_refused(tmp_path, capsys):
    machine = json.loads((EXAMPLES / "pod-level/machine.json").read_text())
    machine["topology"][0]["cores"][0]["caches"][0]["id"] = 2 ** 31
    path = tmp_path / "machine.json"
    path.write_text(json.dumps(machine))
    line = refused(capsys, "machine.json", "topology", str(path), "-o", "json")
    assert "KUBETWIN_MAX_CPU_ID" in line
