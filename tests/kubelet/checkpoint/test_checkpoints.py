"""The kubelet's state files: checksums as the kubelet computes them, round trips, refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kubetwin.errors import InputError
from kubetwin.kubelet.checkpoint.cpu_manager_state import cpu_state_from_json, cpu_state_to_json
from kubetwin.kubelet.checkpoint.gohash import (
    checksum,
    cpu_checkpoint_struct,
    memory_checkpoint_struct,
    string_checksum,
)
from kubetwin.kubelet.checkpoint.memory_manager_state import memory_state_from_json, memory_state_to_json
from kubetwin.kubelet.cpu.state import CPUState
from kubetwin.model.cpuset import CPUSet

KUBETWIN = [sys.executable, "-m", "kubetwin"]
MEM_MACHINE = "/work/shared/conformance/machines/mem-1numa-5gi-2x1gi-hugepages.json"


# --- checksums against upstream's own test vectors ---------------------------------------------------
@pytest.mark.parametrize("policy,default,entries,want", [
    ("none", "4-6", {}, 354655845),
    ("none", "1-3", {"pod": {"container1": "4-6", "container2": "1-3"}}, 3610638499),
    ("other", "1-3", {}, 1394507217),
    ("none", "1.3", {}, 3021697696),
    ("none", "1-3", {"pod": {"container1": "4-6", "container2": "asd"}}, 962272150),
])
def test_v2_cpu_checksums_match_the_kubelets(policy, default, entries, want):
    assert checksum(cpu_checkpoint_struct("CPUManagerCheckpoint", policy, default, entries)) == want


def test_v1_cpu_checksum_matches_the_kubelets():
    got = checksum(cpu_checkpoint_struct("CPUManagerCheckpoint", "none", "1-3",
                                         {"containerID1": "4-6", "containerID2": "1-3"}, v1=True))
    assert got == 3680390589


def test_v3_cpu_checksum_with_pod_entries_matches_the_kubelets():
    got = checksum(cpu_checkpoint_struct("CPUManagerCheckpointV3", "static", "1-2",
                                         {"pod1": {"container1": "5-6", "container2": "3-4"}}, {"pod2": [7, 8, 9]}))
    assert got == 2284712151


def test_string_payload_checksum_matches_the_kubelets():
    assert string_checksum('{"policyName":"none","defaultCPUSet":"4-6"}') == 657950972


def test_memory_checksum_matches_the_kubelets():
    ms = {0: {"numberOfAssignments": 0, "cells": [],
              "memoryMap": {"memory": {"total": 2048, "systemReserved": 512, "allocatable": 1536,
                                       "reserved": 512, "free": 1024}}}}
    entries = {"pod": {"container1": [{"numaAffinity": [0], "type": "memory", "size": 512}]}}
    assert checksum(memory_checkpoint_struct("static", ms, entries)) == 4215593881


def test_an_upstream_v2_file_is_accepted():
    doc = {"policyName": "none", "defaultCPUSet": "1-3", "entries": {"pod": {"container1": "4-6",
                                                                             "container2": "1-3"}},
           "checksum": 3610638499}
    st = cpu_state_from_json(doc)
    assert st.get("pod", "container1") == CPUSet.parse("4-6")


def test_an_upstream_file_with_a_wrong_checksum_is_refused_with_the_kubelets_message():
    doc = {"policyName": "none", "defaultCPUSet": "4-6", "entries": {}, "checksum": 1337}
    with pytest.raises(InputError, match='could not restore state from checkpoint: checkpoint is corrupted, please '
                                         'drain this node and delete the CPU manager checkpoint file'):
        cpu_state_from_json(doc, "cpu_manager_state")


# --- round trips ---------------------------------------------------------------------------------
def _cpu_state() -> CPUState:
    st = CPUState("static", CPUSet.parse("0-1,6-7"))
    st.set("pod-a", "c1", CPUSet.parse("2-3"))
    st.set("pod-b", "c1", CPUSet.parse("4"))
    st.pod_entries["pod-b"] = CPUSet.parse("4-5")
    st.set("pod-b", "side", CPUSet.parse("5"))
    return st


@pytest.mark.parametrize("version", ["v3", "v4"])
def test_cpu_checkpoint_write_then_read_is_the_identity(version):
    st = _cpu_state()
    back = cpu_state_from_json(json.loads(json.dumps(cpu_state_to_json(st, version))))
    assert back.snapshot() == st.snapshot()


def test_v2_cpu_checkpoint_keeps_container_entries():
    st = _cpu_state()
    st.pod_entries.clear()
    back = cpu_state_from_json(cpu_state_to_json(st, "v2"))
    assert back.snapshot() == st.snapshot()


def test_v4_keeps_the_v3_fields_inline_for_older_readers():
    doc = cpu_state_to_json(_cpu_state(), "v4")
    assert doc["checksum"] == 0 and doc["podEntries"] == {"pod-b": {"cpuSet": "4-5"}}
    assert doc["dataChecksum"] == string_checksum(doc["data"])


@pytest.mark.parametrize("version", ["v2", "v3", "v4"])
def test_a_changed_byte_in_a_written_cpu_checkpoint_is_refused(version):
    st = _cpu_state()
    if version == "v2":
        st.pod_entries.clear()
    text = json.dumps(cpu_state_to_json(st, version))
    bad = text.replace("2-3", "2-4")
    with pytest.raises(InputError, match="checkpoint is corrupted"):
        cpu_state_from_json(json.loads(bad), "cpu_manager_state")


def test_memory_checkpoint_write_then_read_is_the_identity_and_a_changed_byte_is_refused(tmp_path):
    out = _admit(tmp_path, write=True)
    assert out.returncode == 0, out.stderr
    path = tmp_path / "state" / "memory_manager_state"
    doc = json.loads(path.read_text())
    st = memory_state_from_json(doc)
    again = memory_state_to_json(st)
    assert again == doc
    doc["entries"]["p1"]["c"][0]["size"] += 1
    with pytest.raises(InputError, match="could not restore state from checkpoint: checkpoint is corrupted, please "
                                         "drain this node and delete the memory manager checkpoint file"):
        memory_state_from_json(doc, str(path))


# --- the CLI: start from state, refuse corrupt state ------------------------------------------------
KUBELET = """apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
memoryManagerPolicy: Static
topologyManagerPolicy: single-numa-node
reservedSystemCPUs: "0"
kubeReserved: {memory: 500Mi}
evictionHard: {memory.available: 100Mi}
reservedMemory: [{numaNode: 0, limits: {memory: 600Mi}}]
"""
PODS = """apiVersion: v1
kind: Pod
metadata: {name: p1, uid: p1}
spec:
  containers:
  - name: c
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits: {cpu: "1", memory: 1Gi}
"""


def _admit(tmp: Path, write: bool = False, state: bool = False, pods: str = PODS):
    (tmp / "kubelet.yaml").write_text(KUBELET)
    (tmp / "pods.yaml").write_text(pods)
    args = KUBETWIN + ["admit", "--machine", MEM_MACHINE, "--config", str(tmp / "kubelet.yaml"),
                       str(tmp / "pods.yaml"), "-o", "json"]
    if write:
        args += ["--write-state", str(tmp / "state")]
    if state:
        args += ["--state-dir", str(tmp / "state")]
    return subprocess.run(args, capture_output=True, text=True)


def test_written_state_is_read_back_and_continued(tmp_path):
    assert _admit(tmp_path, write=True).returncode == 0
    out = _admit(tmp_path, state=True, pods=PODS.replace("p1", "p2"))
    assert out.returncode == 0, out.stderr
    c = json.loads(out.stdout)["pods"][0]["containers"][0]["resources"]
    assert c["cpusetCpus"] != json.loads(_admit(tmp_path).stdout)["pods"][0]["containers"][0]["resources"]["cpusetCpus"]


def test_a_corrupt_cpu_checkpoint_stops_admission_with_the_kubelets_reason(tmp_path):
    assert _admit(tmp_path, write=True).returncode == 0
    p = tmp_path / "state" / "cpu_manager_state"
    p.write_text(p.read_text().replace('"p1"', '"p9"'))
    out = _admit(tmp_path, state=True)
    assert out.returncode == 1
    assert "cpu_manager_state: checksum: could not restore state from checkpoint: checkpoint is corrupted" in out.stderr


def test_a_memory_checkpoint_that_does_not_match_the_machine_is_refused(tmp_path):
    assert _admit(tmp_path, write=True).returncode == 0
    p = tmp_path / "state" / "memory_manager_state"
    doc = json.loads(p.read_text())
    doc["machineState"]["0"]["memoryMap"]["memory"]["free"] -= 1024
    doc["machineState"]["0"]["memoryMap"]["memory"]["reserved"] += 1024
    del doc["checksum"]  # hand-edited: no checksum, so only the start-up validation can catch it
    p.write_text(json.dumps(doc))
    out = _admit(tmp_path, state=True)
    assert out.returncode == 1
    assert "state/memory_manager_state: machineState: [memorymanager] the expected machine state is different" \
        in out.stderr


def test_a_corrupt_device_checkpoint_is_skipped_with_a_warning_as_the_kubelet_does(tmp_path):
    assert _admit(tmp_path, write=True).returncode == 0
    p = tmp_path / "state" / "device-plugins" / "kubelet_internal_checkpoint"
    p.write_text(p.read_text().replace('"Checksum":', '"Checksum":1'))
    out = _admit(tmp_path, state=True)
    assert out.returncode == 0
    assert "Continue after failing to read checkpoint file" in out.stderr


# --- strict decoding and impossible states -----------------------------------------------------------
def test_unknown_cpu_checkpoint_field_is_refused_with_the_nearest_name():
    with pytest.raises(InputError) as info:
        cpu_state_from_json({"policyName": "static", "defaultCpuSet": "0-3", "entires": {}}, "cpu_manager_state")
    assert 'cpu_manager_state: strict decoding error: unknown field "entires"' in str(info.value)
    assert 'did you mean "entries"?' in str(info.value)


def test_cpu_checkpoint_field_names_match_case_insensitively_as_in_go():
    st = cpu_state_from_json({"PolicyName": "none", "defaultCPUSet": "1-3"})
    assert (st.policy_name, st.default_cpuset) == ("none", CPUSet.parse("1-3"))


def test_unknown_field_inside_the_v4_payload_is_refused_with_its_path():
    data = json.dumps({"policyName": "static", "defaultCpuSet": "0-3", "podEntires": {}})
    with pytest.raises(InputError, match='data: strict decoding error: unknown field "podEntires"'):
        cpu_state_from_json({"policyName": "static", "defaultCpuSet": "0-3", "checksum": 0,
                             "data": data, "dataChecksum": string_checksum(data)})


def test_a_cpu_of_two_pods_is_refused():
    doc = {"policyName": "static", "defaultCpuSet": "0,3", "entries": {"a": {"c": "1-2"}, "b": {"c": "2"}}}
    with pytest.raises(InputError, match="entries.b.c: CPU 2 is assigned to pods a"):
        cpu_state_from_json(doc, "cpu_manager_state")


def test_containers_of_one_pod_may_share_cpus_as_init_containers_reuse_them():
    doc = {"policyName": "static", "defaultCpuSet": "0,3", "entries": {"a": {"init": "1-2", "app": "2"}}}
    assert cpu_state_from_json(doc).get("a", "app") == CPUSet.parse("2")


def test_a_cpu_range_past_the_largest_cpu_id_is_refused_at_once():
    doc = {"policyName": "static", "defaultCpuSet": "0-99999999999"}
    with pytest.raises(InputError, match="beyond the largest CPU id"):
        cpu_state_from_json(doc, "cpu_manager_state")


def test_negative_memory_block_size_is_refused():
    doc = {"policyName": "Static", "machineState": {}, "entries": {"p": {"c": [{"numaAffinity": [0],
                                                                                "type": "memory", "size": -1}]}}}
    with pytest.raises(InputError, match=r"entries.p.c\[0\].size: must be a whole number"):
        memory_state_from_json(doc, "memory_manager_state")


def test_unknown_memory_checkpoint_field_is_refused_with_its_path():
    doc = {"policyName": "Static", "machineState": {"0": {"memoryMap": {"memory": {"totl": 1}}}}}
    with pytest.raises(InputError) as info:
        memory_state_from_json(doc, "memory_manager_state")
    assert 'unknown field "machineState.0.memoryMap.memory.totl"' in str(info.value)
    assert 'did you mean "machineState.0.memoryMap.memory.total"?' in str(info.value)


def test_memory_checkpoint_with_a_numa_id_that_is_not_a_number_is_refused():
    with pytest.raises(InputError, match='machineState.x: NUMA node id "x" is not a number'):
        memory_state_from_json({"policyName": "Static", "machineState": {"x": {}}}, "memory_manager_state")


def test_over_assigned_memory_is_refused_naming_the_entry(tmp_path):
    assert _admit(tmp_path, write=True).returncode == 0
    path = tmp_path / "state" / "memory_manager_state"
    doc = json.loads(path.read_text())
    del doc["checksum"]
    doc["entries"]["p1"]["c"][0]["size"] = 64 * 2**30
    path.write_text(json.dumps(doc))
    out = _admit(tmp_path, state=True, pods=PODS.replace("p1", "p2"))
    assert out.returncode == 1
    assert "state/memory_manager_state: entries.p1.c[0].size: memory over-assigned" in out.stderr


def test_a_checkpoint_entry_with_a_cpu_the_machine_lacks_is_named(tmp_path):
    assert _admit(tmp_path, write=True).returncode == 0
    path = tmp_path / "state" / "cpu_manager_state"
    doc = json.loads(path.read_text())
    del doc["checksum"]
    uid, conts = next(iter(doc["entries"].items()))
    name = next(iter(conts))
    conts[name] += ",200"
    path.write_text(json.dumps(doc))
    out = _admit(tmp_path, state=True, pods=PODS.replace("p1", "p2"))
    assert out.returncode == 1
    assert f"state/cpu_manager_state: entries.{uid}.{name}: current set of available CPUs" in out.stderr
    assert "CPUs 200 are not on this machine" in out.stderr


def test_unknown_device_checkpoint_field_is_refused(tmp_path):
    from kubetwin.kubelet.checkpoint.device_manager_state import read_device_manager_state

    p = tmp_path / "kubelet_internal_checkpoint"
    p.write_text(json.dumps({"Data": {"PodDeviceEntries": [], "RegisteredDevice": {}}, "Checksum": 0}))
    with pytest.raises(InputError, match='did you mean "Data.RegisteredDevices"'):
        read_device_manager_state(p, warn=lambda m: None)


def test_a_device_checkpoint_that_is_not_utf8_is_skipped_as_the_kubelet_does(tmp_path):
    from kubetwin.kubelet.checkpoint.device_manager_state import read_device_manager_state

    p = tmp_path / "kubelet_internal_checkpoint"
    p.write_bytes(b"\xff\xfe")
    warnings: list[str] = []
    assert read_device_manager_state(p, warn=warnings.append) is None
    assert "Continue after failing to read checkpoint file" in warnings[0]
