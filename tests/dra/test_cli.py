"""``kubetwin dra allocate``: output as FORMAT.md describes, bad input as exit 1 naming file and field."""

from __future__ import annotations

import json

from .conftest import CLASS, claim, slice_


def test_allocate_prints_claims_with_allocation_as_json(run_allocate):
    proc = run_allocate([CLASS, slice_()], [claim()], "-o", "json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["outcome"] == "allocated"
    assert out["claims"][0]["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"


def test_unsatisfiable_is_exit_zero_with_outcome(run_allocate):
    proc = run_allocate([CLASS, slice_()], [claim(count=5)], "-o", "json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["outcome"] == "unsatisfiable"


def test_table_output_explains_passed_over_devices(run_allocate):
    proc = run_allocate([CLASS, slice_()], [claim(selectors=['device.attributes["gpu.example.com"].size() == 0'])])
    assert proc.returncode == 0, proc.stderr
    assert "gpu-0" in proc.stdout and "passed over" in proc.stdout


def test_v1beta1_manifests_are_converted(run_allocate):
    s = slice_(devices=[{"name": "gpu-0", "basic": {"attributes": {"model": {"string": "A100"}}}}])
    s["apiVersion"] = "resource.k8s.io/v1beta1"
    c = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c"},
         "spec": {"devices": {"requests": [{"name": "r", "deviceClassName": "gpu", "selectors": [
             {"cel": {"expression": 'device.attributes["gpu.example.com"].model == "A100"'}}]}]}}}
    proc = run_allocate([CLASS, s], [c], "-o", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["outcome"] == "allocated"


def test_v1alpha3_bare_capacity_is_read(run_allocate):
    s = slice_(devices=[{"name": "gpu-0", "basic": {"capacity": {"memory": "40Gi"}}}])
    s["apiVersion"] = "resource.k8s.io/v1alpha3"
    c = claim(selectors=['device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) == 0'])
    proc = run_allocate([CLASS, s], [c], "-o", "json")
    assert json.loads(proc.stdout)["outcome"] == "allocated", proc.stderr


def test_bad_quantity_names_file_and_field(run_allocate):
    s = slice_(devices=[{"name": "gpu-0", "capacity": {"memory": {"value": "lots"}}}])
    proc = run_allocate([CLASS, s], [claim()])
    assert proc.returncode == 1
    assert "objects.yaml" in proc.stderr and "spec.devices[0].capacity.memory.value" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_request_shape_names_the_field(run_allocate):
    c = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
         "spec": {"devices": {"requests": [{"name": "r"}]}}}
    proc = run_allocate([CLASS, slice_()], [c])
    assert proc.returncode == 1
    assert "claims.yaml" in proc.stderr and "spec.devices.requests[0]" in proc.stderr


def test_wrong_api_version_is_rejected(run_allocate):
    s = slice_()
    s["apiVersion"] = "resource.k8s.io/v9"
    proc = run_allocate([CLASS, s], [claim()])
    assert proc.returncode == 1 and "apiVersion" in proc.stderr


def test_invalid_cel_is_refused_when_read_naming_file_object_and_field(run_allocate):
    proc = run_allocate([CLASS, slice_()], [claim(selectors=["device.driver =="])])
    assert proc.returncode == 1
    assert ("claims.yaml: document 1 (ResourceClaim claim-0): spec.devices.requests[0].exactly.selectors[0]"
            ".cel.expression: Invalid value: \"device.driver ==\": compilation failed:") in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cost_bomb_is_exit_one_quickly(run_allocate):
    big = "[" + ",".join(str(i) for i in range(1000)) + "]"
    proc = run_allocate([CLASS, slice_()], [claim(selectors=[f"{big}.all(a, {big}.all(b, a != b || a == b))"])])
    assert proc.returncode == 1 and "cost limit" in proc.stderr


def test_huge_slice_is_refused_with_the_limit(run_allocate):
    s = slice_(devices=[{"name": f"gpu-{i}"} for i in range(129)])
    proc = run_allocate([CLASS, s], [claim()])
    assert proc.returncode == 1
    assert "spec.devices" in proc.stderr and "at most 128" in proc.stderr


def test_unknown_feature_gate_is_rejected(run_allocate):
    proc = run_allocate([CLASS, slice_()], [claim()], "--feature-gates", "NoSuchGate=true")
    assert proc.returncode == 1 and "NoSuchGate" in proc.stderr


def test_garbage_yaml_is_exit_one(run_allocate, tmp_path):
    proc = run_allocate([CLASS, slice_()], [claim()])
    (tmp_path / "claims.yaml").write_text("{{{ not yaml")
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "kubetwin", "dra", "allocate", "-f", "objects.yaml", "--node",
                           "node.yaml", "claims.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1 and "claims.yaml" in proc.stderr and "Traceback" not in proc.stderr


def test_an_unsatisfiable_claim_names_its_request_and_why(run_allocate):
    proc = run_allocate([CLASS, slice_()], [claim(count=5)], "-o", "json")
    diagnosis = json.loads(proc.stdout)["diagnosis"]
    assert diagnosis["claims"][0]["problems"] == [
        "request req-0: needs 5 devices of class gpu; 2 of 2 devices on the node eligible"]


def test_a_missing_device_class_is_unsatisfiable_per_claim_not_an_error(run_allocate):
    lost = claim("lost", deviceClassName="nope")
    proc = run_allocate([CLASS, slice_()], [lost, claim("fine")], "-o", "json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["outcome"] == "unsatisfiable"
    assert out["reason"] == "request req-0: device class nope does not exist"
    verdicts = {c["claim"]: c for c in out["diagnosis"]["claims"]}
    assert verdicts["lost"]["problems"] == ["request req-0: device class nope does not exist"]
    assert verdicts["fine"]["allocatable"] is True


def test_the_table_says_why_each_claim_cannot_be_allocated(run_allocate):
    proc = run_allocate([CLASS, slice_()], [claim(count=5)])
    assert "  claim claim-0: cannot be allocated: request req-0: needs 5 devices" in proc.stdout
    assert "search chose other devices" not in proc.stdout


def test_fail_on_reject_turns_an_unsatisfiable_claim_into_exit_3(run_allocate):
    proc = run_allocate([CLASS, slice_()], [claim(count=5)], "--fail-on-reject", "-o", "json")
    assert proc.returncode == 3
    assert json.loads(proc.stdout)["outcome"] == "unsatisfiable"
    assert "claim claim-0: request req-0: needs 5 devices" in proc.stderr


def test_dra_explain_never_marks_a_device_ok_for_a_claim_that_cannot_be_allocated(tmp_path):
    import subprocess

    import yaml

    from .conftest import KUBETWIN, NODE

    (tmp_path / "objects.yaml").write_text(yaml.safe_dump_all([CLASS, slice_()]))
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(claim(count=3)))
    (tmp_path / "node.yaml").write_text(yaml.safe_dump(NODE))
    proc = subprocess.run(KUBETWIN + ["dra", "explain", "-f", "objects.yaml", "--node", "node.yaml", "claims.yaml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("claim claim-0: CANNOT be allocated: request req-0: needs 3 devices")
    assert not any(line.split()[:1] == ["ok"] for line in lines)
    assert "    eligible gpu.example.com/pool-1/gpu-0" in lines
    data = json.loads(subprocess.run(KUBETWIN + ["dra", "explain", "-f", "objects.yaml", "--node", "node.yaml",
                                                 "claims.yaml", "-o", "json"], cwd=tmp_path, capture_output=True,
                                     text=True, timeout=60).stdout)
    assert data["claims"][0]["allocatable"] is False and data["outcome"] == "unsatisfiable"
