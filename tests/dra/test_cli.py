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
