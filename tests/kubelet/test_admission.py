"""Specifications of the kubelet resource managers, through the library and `kubetwin admit`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.checkpoint.cpu_manager_state import cpu_state_from_json, cpu_state_to_json
from kubetwin.kubelet.cpu.assignment import TakeStrategy
from kubetwin.kubelet.topology.hint import TopologyHint
from kubetwin.kubelet.topology.numa_info import NUMAInfo
from kubetwin.kubelet.topology.policy import new_policy
from kubetwin.machine import load_machine
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict

MACHINES = Path("/work/shared/conformance/machines")
KUBETWIN = [sys.executable, "-m", "kubetwin"]


def machine(name: str):
    return load_machine(str(MACHINES / name))


def config(**kw) -> KubeletConfiguration:
    base = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
            "cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}
    base.update(kw)
    return KubeletConfiguration.from_dict(base)


def gu_pod(name: str, cpu: str = "1", mem: str = "100Mi", init: list[str] | None = None):
    res = {"requests": {"cpu": cpu, "memory": mem}, "limits": {"cpu": cpu, "memory": mem}}
    spec = {"containers": [{"name": "c", "resources": res}]}
    if init:
        spec["initContainers"] = [{"name": f"init-{i}", "resources": {"requests": {"cpu": x, "memory": mem},
                                                                      "limits": {"cpu": x, "memory": mem}}}
                                  for i, x in enumerate(init)]
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                                          "uid": name}, "spec": spec})


def test_take_by_topology_prefers_the_sibling_of_a_partly_used_core():
    topo = machine("single-socket-ht.json").cpu_topology()
    got = TakeStrategy().take(topo, CPUSet.parse("1-7"), 1)
    assert str(got) == "4"


def test_merge_requires_identical_masks_to_be_preferred():
    numa = NUMAInfo((0, 1))
    pol = new_policy("restricted", numa)
    best, admit = pol.merge([{"cpu": [TopologyHint(0b01, True)]}, {"memory": [TopologyHint(0b11, True)]}])
    assert best.affinity == 0b01 and not best.preferred and not admit


def test_single_numa_node_turns_all_nodes_into_no_affinity_on_one_node_machines():
    pol = new_policy("single-numa-node", NUMAInfo((0,)))
    best, admit = pol.merge([{"cpu": [TopologyHint(0b1, True)]}])
    assert best.affinity is None and admit


def test_guaranteed_integer_pod_gets_exclusive_cpus_and_no_cfs_quota():
    node = NodeAdmission(machine("dual-socket-ht.json"), config())
    d = node.admit(gu_pod("p", "2"))
    assert d.admitted
    assert node.cpu.exclusive_cpus("p", "c").size() == 2


def test_not_enough_cpus_is_unexpected_admission_error():
    node = NodeAdmission(machine("single-socket-ht.json"), config())
    d = node.admit(gu_pod("p", "8"))
    assert not d.admitted and d.reason == "UnexpectedAdmissionError"
    assert d.message.startswith("Allocate failed due to not enough cpus available")


def test_full_pcpus_only_rejects_odd_requests_with_smt_alignment_error():
    node = NodeAdmission(machine("single-socket-ht.json"),
                         config(cpuManagerPolicyOptions={"full-pcpus-only": "true"}))
    d = node.admit(gu_pod("p", "3"))
    assert (d.admitted, d.reason) == (False, "SMTAlignmentError")


def test_out_of_cpu_after_node_allocatable_is_used_up():
    node = NodeAdmission(machine("single-socket-ht.json"), config(cpuManagerPolicy="none", reservedSystemCPUs=""))
    assert node.admit(gu_pod("a", "6")).admitted
    d = node.admit(gu_pod("b", "3"))
    assert d.reason == "OutOfcpu"
    assert d.message == "Node didn't have enough resource: cpu, requested: 3000, used: 6000, capacity: 8000"


def test_init_container_cpus_are_reused_by_the_app_container():
    node = NodeAdmission(machine("single-socket-ht.json"), config(reservedSystemCPUs="3,7"))
    assert node.admit(gu_pod("p", "2", init=["4"])).admitted
    assert str(node.cpu.exclusive_cpus("p", "init-0")) == "0-1,4-5"
    assert str(node.cpu.exclusive_cpus("p", "c")) == "0,4"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=8))
def test_exclusive_cpus_never_overlap_nor_include_reserved_and_removal_restores_state(sizes):
    node = NodeAdmission(machine("dual-socket-ht.json"), config(topologyManagerPolicy="best-effort"))
    before = node.cpu.state.snapshot()
    admitted = []
    for i, n in enumerate(sizes):
        pod = gu_pod(f"p{i}", str(n))
        if node.admit(pod).admitted:
            admitted.append(pod)
    seen = 0
    for conts in node.cpu.state.entries.values():
        for cs in conts.values():
            assert cs.mask & seen == 0
            assert not (cs & node.cpu.reserved)
            seen |= cs.mask
    for pod in admitted:
        node.remove(pod)
    assert node.cpu.state.snapshot() == before


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=6))
def test_cpu_checkpoint_write_then_read_is_the_identity(sizes):
    node = NodeAdmission(machine("dual-socket-ht.json"), config())
    for i, n in enumerate(sizes):
        node.admit(gu_pod(f"p{i}", str(n)))
    doc = json.loads(json.dumps(cpu_state_to_json(node.cpu.state)))
    assert cpu_state_from_json(doc).snapshot() == node.cpu.state.snapshot()


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(KUBETWIN + list(args), cwd=tmp_path, capture_output=True, text=True)


def test_cli_rejects_an_unknown_cpu_manager_option_naming_file_and_field(tmp_path: Path):
    (tmp_path / "k.yaml").write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                                     "cpuManagerPolicy: static\nreservedSystemCPUs: '0'\n"
                                     "cpuManagerPolicyOptions: {bogus: 'true'}\n")
    (tmp_path / "p.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n")
    proc = _run(tmp_path, "admit", "--machine", str(MACHINES / "single-socket-ht.json"), "--config", "k.yaml", "p.yaml")
    assert proc.returncode == 1
    assert "k.yaml" in proc.stderr and "cpuManagerPolicyOptions.bogus" in proc.stderr


def test_cli_refuses_a_corrupt_cpu_manager_state(tmp_path: Path):
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "cpu_manager_state").write_text("{not json")
    (tmp_path / "k.yaml").write_text("cpuManagerPolicy: static\nreservedSystemCPUs: '0'\n")
    (tmp_path / "p.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n")
    proc = _run(tmp_path, "admit", "--machine", str(MACHINES / "single-socket-ht.json"), "--config", "k.yaml",
                "--state-dir", "state", "p.yaml", "-o", "json")
    assert proc.returncode == 1
    assert "state/cpu_manager_state: could not restore state from checkpoint: not valid JSON" in proc.stderr


def test_cli_refuses_state_written_by_another_policy(tmp_path: Path):
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "cpu_manager_state").write_text('{"policyName": "none", "defaultCpuSet": ""}')
    (tmp_path / "k.yaml").write_text("cpuManagerPolicy: static\nreservedSystemCPUs: '0'\n")
    (tmp_path / "p.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n")
    proc = _run(tmp_path, "admit", "--machine", str(MACHINES / "single-socket-ht.json"), "--config", "k.yaml",
                "--state-dir", "state", "p.yaml")
    assert proc.returncode == 1 and "policyName" in proc.stderr and "differs" in proc.stderr


# --- node-level settings checked against the machine -----------------------------------------------
def test_reserved_system_cpus_the_machine_lacks_are_refused_as_the_kubelet_refuses_them():
    from kubetwin.errors import InputError

    with pytest.raises(InputError) as info:
        NodeAdmission(load_machine("1s1n4c2t"), KubeletConfiguration.from_dict({"reservedSystemCPUs": "0,8"}))
    assert "reservedSystemCPUs: reserved-cpus: 0,8 is not a subset of online-cpus: 0-7" in str(info.value)


def test_pods_per_core_caps_the_pods_capacity():
    from kubetwin.kubelet.admission import node_capacity

    m = load_machine("1s1n4c2t")   # 8 CPUs
    assert node_capacity(m, KubeletConfiguration.from_dict({"podsPerCore": 2}))["pods"].value() == 16
    assert node_capacity(m, KubeletConfiguration.from_dict({"podsPerCore": 20}))["pods"].value() == 110
    assert node_capacity(m, KubeletConfiguration.from_dict({}))["pods"].value() == 110
