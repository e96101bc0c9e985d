"""The examples of docs/runtime.md give the output the page shows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kubetwin.machine import load_machine
from kubetwin.runtime.blockio import load_blockio_config
from kubetwin.runtime.rdt import load_rdt_config

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples" / "runtime"


def test_rdt_example() -> None:
    machine = load_machine(str(EX / "machine-rdt.json"))
    rdt = load_rdt_config(EX / "rdt.yaml")
    assert rdt.schemata("gold", machine) == {"L3": "0=7f0;1=7f0", "MB": "0=100;1=100"}
    assert rdt.schemata("bronze", machine) == {"L3": "0=3;1=3", "MB": "0=20;1=20"}


def test_blockio_example() -> None:
    machine = load_machine(str(EX / "machine-rdt.json"))
    assert load_blockio_config(EX / "blockio.yaml").cgroup_v2("slow", machine) == {
        "io.bfq.weight": "default 80",
        "io.max": "8:0 rbps=50000000 wbps=10000000 riops=max wiops=max\n"
                  "259:0 rbps=50000000 wbps=10000000 riops=max wiops=max"}


def test_admit_cri_example() -> None:
    out = subprocess.run([sys.executable, "-m", "kubetwin", "admit", "--machine", "1s1n4c2t", "--config",
                          "examples/runtime/kubelet.yaml", "examples/runtime/pods.yaml", "-o", "cri"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [c["rpc"] for c in data["calls"]] == ["RunPodSandbox", "CreateContainer", "StartContainer",
                                                 "CreateContainer", "StartContainer", "RunPodSandbox",
                                                 "CreateContainer", "StartContainer", "UpdateContainerResources"]
    assert data["calls"][-1]["request"]["linux"] == {"cpusetCpus": "0,2-4,6-7"}
    postgres = data["pods"][1]["containers"][0]
    assert postgres["files"] == {"memory.swap.max": "0", "memory.max": "1073741824", "cpu.weight": "174",
                                 "cpu.max": "max 100000", "cpuset.cpus": "1,5", "hugetlb.1GB.max": "0",
                                 "hugetlb.1GB.rsvd.max": "0", "hugetlb.2MB.max": "0", "hugetlb.2MB.rsvd.max": "0",
                                 "memory.oom.group": "1"}
    assert postgres["oomScoreAdj"] == -997
