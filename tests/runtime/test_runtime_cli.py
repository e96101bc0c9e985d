"""``kubetwin runtime`` on the command line: the JSON contract, the state folder, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
MACHINE = str(Path(__file__).parent / "cases" / "machines" / "n4c16.json")
EXAMPLE = str(ROOT / "examples" / "nri" / "numa_spread.py")


def kubetwin(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubetwin", "runtime", *args], capture_output=True, text=True,
                          cwd=cwd)


def write_pods(path: Path, *specs: tuple[str, str]) -> str:
    docs = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
             "spec": {"containers": [{"name": "c", "image": "busybox",
                                      "resources": {"requests": {"cpu": cpu, "memory": "100M"},
                                                    "limits": {"cpu": cpu, "memory": "100M"}}}]}}
            for name, cpu in specs]
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_help_works() -> None:
    out = kubetwin("--help")
    assert out.returncode == 0 and "--write-state" in out.stdout


def test_json_output_is_the_conformance_contract(tmp_path: Path) -> None:
    pods = write_pods(tmp_path / "p.yaml", ("a", "2"))
    out = kubetwin("--machine", MACHINE, "--policy", "topology-aware", pods, "-o", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    c = data["containers"][0]
    assert {"pod", "namespace", "name", "cpus", "mems", "rdtClass", "blockioClass"} <= set(c)
    assert data["rejected"] == [] and data["plugins"][0]["name"] == "90-resource-manager"
    assert c["adjustments"][0]["plugin"] == "90-resource-manager"


def test_the_state_folder_carries_the_node_to_the_next_call(tmp_path: Path) -> None:
    one = write_pods(tmp_path / "1.yaml", ("a", "8"))
    two = write_pods(tmp_path / "2.yaml", ("b", "8"))
    first = kubetwin("--machine", MACHINE, "--policy", "topology-aware", one, "--write-state", "st", "-o", "json",
                     cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "st" / "node.json").exists()
    second = kubetwin("--machine", MACHINE, "--policy", "topology-aware", two, "--state-dir", "st", "-o", "json",
                      cwd=tmp_path)
    data = json.loads(second.stdout)
    assert [r["pod"] for r in data["rejected"]] == ["b"]
    third = kubetwin("--machine", MACHINE, "--policy", "topology-aware", two, "--state-dir", "st", "--delete", "a",
                     "-o", "json", cwd=tmp_path)
    data = json.loads(third.stdout)
    assert [c["pod"] for c in data["containers"]] == ["b"] and data["rejected"] == []


def test_a_state_folder_of_another_node_is_refused(tmp_path: Path) -> None:
    kubetwin("--machine", MACHINE, "--policy", "topology-aware", "--write-state", "st", cwd=tmp_path)
    out = kubetwin("--machine", "2s2n8c2t", "--policy", "topology-aware", "--state-dir", "st", cwd=tmp_path)
    assert out.returncode == 1 and "another machine" in out.stderr and "Traceback" not in out.stderr


def test_deleting_a_pod_that_is_not_there_is_refused(tmp_path: Path) -> None:
    out = kubetwin("--machine", MACHINE, "--policy", "topology-aware", "--delete", "ghost")
    assert out.returncode == 1 and 'no pod "ghost"' in out.stderr


def test_a_bad_policy_file_names_the_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "policy.yaml"
    bad.write_text(yaml.safe_dump({"apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy",
                                   "metadata": {"name": "x"}, "spec": {"reservedResources": {"cpu": "1"},
                                                                       "pinCpu": True}}))
    out = kubetwin("--machine", MACHINE, "--policy", str(bad))
    assert out.returncode == 1 and str(bad) in out.stderr and 'did you mean "spec.pinCPU"' in out.stderr


def test_table_output_has_the_numa_map(tmp_path: Path) -> None:
    out = kubetwin("--machine", MACHINE, "--policy", "topology-aware", write_pods(tmp_path / "p.yaml", ("a", "2")))
    assert out.returncode == 0 and "NUMA map" in out.stdout and "topology-aware pools" in out.stdout


def test_explain_shows_the_pool_scores_and_the_nri_events(tmp_path: Path) -> None:
    out = kubetwin("--machine", MACHINE, "--policy", "topology-aware", write_pods(tmp_path / "p.yaml", ("a", "2")),
                   "--explain", "-o", "json")
    data = json.loads(out.stdout)
    pools = data["containers"][0]["explain"]["pools"]
    assert pools[0]["rank"] == 1 and pools[0]["pool"] == data["containers"][0]["grant"]["pool"]
    assert [e["event"] for e in data["events"]][:2] == ["RUN_POD_SANDBOX", "CREATE_CONTAINER"]
    assert "pool scores" in kubetwin("--machine", MACHINE, "--policy", "topology-aware",
                                     str(tmp_path / "p.yaml"), "--explain").stdout


def test_helm_values_configure_the_chart(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text("config:\n  reservedResources:\n    cpu: cpuset:15\nnri:\n  plugin:\n    index: 42\n")
    out = kubetwin("--machine", MACHINE, "--policy", "topology-aware", "--helm-values", str(values), "-o", "json")
    data = json.loads(out.stdout)
    assert data["node"]["policy"]["reserved"] == "15" and data["plugins"][0]["name"] == "42-resource-manager"


def test_the_example_plugin_runs_alone(tmp_path: Path) -> None:
    out = kubetwin("--machine", MACHINE, "--policy", "none", "--plugin", EXAMPLE,
                   str(ROOT / "examples" / "nri" / "pods.yaml"), "-o", "json")
    assert out.returncode == 0, out.stderr
    mems = {c["pod"] + "/" + c["name"]: c["mems"] for c in json.loads(out.stdout)["containers"]}
    assert mems == {"web/nginx": "0", "web/exporter": "1", "db/postgres": "2", "batch/job": "3"}


def test_the_example_plugin_conflicts_with_the_resource_policy(tmp_path: Path) -> None:
    out = kubetwin("--machine", MACHINE, "--policy", "topology-aware", "--plugin", EXAMPLE,
                   str(ROOT / "examples" / "nri" / "pods.yaml"), "-o", "json")
    rejected = json.loads(out.stdout)["rejected"]
    assert rejected[0]["message"] == 'plugins "90-resource-manager" and "50-numa-spread" both tried to set CPUSetCPUs '


def test_a_plugin_file_that_does_not_load_is_refused_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from kubetwin.runtime.nri.stub import Plugin\nclass P(Plugin:\n    pass\n")
    out = kubetwin("--machine", MACHINE, "--policy", "none", "--plugin", str(bad))
    assert out.returncode == 1 and "syntax error" in out.stderr and "line 2" in out.stderr
    assert "Traceback" not in out.stderr


def test_balloons_chart_default_starts_with_its_reserved_and_default_balloons(tmp_path: Path) -> None:
    out = kubetwin("--machine", MACHINE, "--policy", "balloons", "-o", "json")
    assert out.returncode == 0, out.stderr
    pools = [p["name"] for p in json.loads(out.stdout)["node"]["policy"]["pools"]]
    assert pools[0] == "reserved[0]" and "default[0]" in pools


def test_a_bad_value_in_the_helm_values_is_refused_naming_the_values_file(tmp_path: Path) -> None:
    # found by the fuzzer: the error named --policy (a chart name) and no file
    pods = write_pods(tmp_path / "p.yaml", ("a", "1"))
    (tmp_path / "values.yaml").write_text(yaml.safe_dump({"config": {"reservedResources": {"cpu": "1Gi "}}}))
    out = kubetwin("--machine", MACHINE, "--policy", "topology-aware", "--helm-values", "values.yaml", pods,
                   cwd=tmp_path)
    assert out.returncode == 1
    assert out.stderr.startswith("error: values.yaml: config: ") and "reservedResources.cpu" in out.stderr
