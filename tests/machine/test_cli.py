"""kubetwin discover / kubetwin topology: formats, and exit status 1 with file-named errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import HWLOC, MACHINES


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubetwin", *args], capture_output=True, text=True, input=stdin)


def test_topology_table_fits_80_columns_for_a_two_socket_machine():
    r = run("topology", str(MACHINES / "dual-socket-multi-numa-per-socket-ht.json"))
    assert r.returncode == 0
    assert "Socket 1" in r.stdout and "NUMA node 3" in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 80


def test_huge_machines_are_summarised():
    r = run("topology", str(HWLOC / "xml/192em64t-24n8c2t.xml"))
    assert r.returncode == 0 and len(r.stdout.splitlines()) < 35


def test_topology_machineinfo_round_trips_through_stdin():
    path = MACHINES / "dual-socket-ht.json"
    first = run("topology", str(path), "-o", "machineinfo")
    again = run("topology", "-", "-o", "machineinfo", stdin=first.stdout)
    assert first.returncode == again.returncode == 0
    assert json.loads(first.stdout) == json.loads(again.stdout)


def test_topology_nrt_has_node_zones_with_costs():
    r = run("topology", "2s1n4c2t:hugepages-1Gi=1", "-o", "nrt", "--node-name", "worker-1")
    nrt = yaml.safe_load(r.stdout)
    assert nrt["apiVersion"] == "topology.node.k8s.io/v1alpha2" and nrt["metadata"]["name"] == "worker-1"
    zone = nrt["zones"][1]
    assert (zone["name"], zone["type"]) == ("node-1", "Node")
    assert zone["costs"] == [{"name": "node-0", "value": 21}, {"name": "node-1", "value": 10}]
    res = {x["name"]: x["capacity"] for x in zone["resources"]}
    assert res["cpu"] == "8" and res["hugepages-1Gi"] == str(1024 ** 3)


def test_yaml_output_lists_pci_devices():
    r = run("topology", "1s2c:nics=1", "-o", "yaml")
    doc = yaml.safe_load(r.stdout)
    assert doc["pci_devices"][0]["kind"] == "nic" and doc["num_cores"] == 2


@pytest.mark.skipif(not Path("/sys/devices/system/cpu").is_dir(), reason="no live sysfs")
@pytest.mark.parametrize("fmt", ["table", "machineinfo", "nrt", "yaml"])
def test_discover_describes_this_machine(fmt):
    r = run("discover", "-o", fmt)
    assert r.returncode == 0, r.stderr
    assert r.stdout


def test_missing_source_is_exit_1_naming_it():
    r = run("topology", "nope.json")
    assert r.returncode == 1
    assert r.stderr.startswith("error: nope.json: no such file or directory")


def test_bad_spec_is_exit_1_naming_the_part():
    r = run("topology", "2s4c:bogus=1")
    assert r.returncode == 1 and 'unknown option "bogus"' in r.stderr


def test_malformed_machineinfo_is_exit_1(tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text('{"num_cores": 4, "topology": [{"node_id": "zero"}]}')
    r = run("topology", str(bad))
    assert r.returncode == 1
    assert f'{bad}: cannot decode MachineInfo: invalid type for field "topology[0].node_id": expected an integer' \
        in r.stderr


def test_unknown_output_format_is_a_usage_error():
    assert run("topology", "1s1c", "-o", "svg").returncode == 2


def test_nrt_allocatable_overrides_per_zone():
    from kubetwin.machine import parse_spec
    from kubetwin.machine.nrt import to_nrt

    nrt = to_nrt(parse_spec("2s1n4c"), allocatable={0: {"cpu": "3"}})
    cpu0 = next(r for r in nrt["zones"][0]["resources"] if r["name"] == "cpu")
    assert (cpu0["capacity"], cpu0["allocatable"], cpu0["available"]) == ("4", "3", "3")


def test_nrt_memory_excludes_hugepages():
    from kubetwin.machine import parse_spec
    from kubetwin.machine.nrt import to_nrt

    nrt = to_nrt(parse_spec("1s1n2c:mem=4Gi:hugepages-1Gi=1"))
    res = {r["name"]: r["capacity"] for r in nrt["zones"][0]["resources"]}
    assert res["memory"] == str(3 * 1024 ** 3)


def test_public_api_is_exported():
    import kubetwin.machine as machine

    assert all(hasattr(machine, name) for name in machine.__all__)


def test_every_output_format_of_a_spec_describes_the_same_machine():
    docs = {fmt: run("topology", "2s2n4c2t:gpus=2", "-o", fmt).stdout for fmt in ("machineinfo", "json", "yaml")}
    info, full, again = json.loads(docs["machineinfo"]), json.loads(docs["json"]), yaml.safe_load(docs["yaml"])
    assert again == full
    assert {k: v for k, v in full.items() if k != "pci_devices"} == info
    assert len(full["pci_devices"]) == 2
