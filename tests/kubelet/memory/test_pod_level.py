"""Pod-level Memory Manager (``AllocatePod``, ``validatePodScopeResources``), as upstream v1.36.

Machine: the pod-level example (2 NUMA nodes, 64 GiB each); NUMA 0 has 1100Mi reserved.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.admission_errors import EmptyPodSharedPoolError
from kubetwin.kubelet.checkpoint.memory_manager_state import memory_state_from_json, memory_state_to_json
from kubetwin.kubelet.memory.podlevel_memory import validate_pod_scope_memory
from kubetwin.kubelet.metrics import render_metrics
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict

EXAMPLES = Path("/work/shared/examples/pod-level")
GI = 1 << 30
KUBETWIN = [sys.executable, "-m", "kubetwin"]


def config(policy="single-numa-node", scope="pod", cpu="static", gates=True, **kw) -> KubeletConfiguration:
    base = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
            "featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": gates},
            "cpuManagerPolicy": cpu, "memoryManagerPolicy": "Static",
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1100Mi"}}],
            "kubeReserved": {"memory": "500Mi"}, "systemReserved": {"memory": "500Mi"},
            "evictionHard": {"memory.available": "100Mi"},
            "topologyManagerPolicy": policy, "topologyManagerScope": scope}
    if cpu == "static":
        base["reservedSystemCPUs"] = "0,16"
    base.update(kw)
    return KubeletConfiguration.from_dict(base)


def node(**kw) -> NodeAdmission:
    return NodeAdmission(load_machine(str(EXAMPLES / "machine.json")), config(**kw))


def res(cpu=None, mem=None):
    r = {}
    if cpu:
        r["cpu"] = cpu
    if mem:
        r["memory"] = mem
    return {"requests": dict(r), "limits": dict(r)} if r else {}


def pod(name, budget=("8", "16Gi"), init=(), apps=()):
    """``init``/``apps``: (name, cpu, memory, sidecar) tuples; cpu/memory None = no own resources."""
    def cont(spec):
        n, cpu, mem, *rest = spec
        c = {"name": n, "image": "x", "resources": res(cpu, mem)}
        if rest and rest[0]:
            c["restartPolicy"] = "Always"
        return c
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "uid": name},
                          "spec": {"resources": res(*budget), "initContainers": [cont(s) for s in init],
                                   "containers": [cont(s) for s in apps]}})


def database():
    return pod("db", init=[("metrics-exporter", None, None, True), ("backup-agent", None, None, True)],
               apps=[("database", "6", "12Gi")])


def metric(text: str, sample: str) -> float:
    for line in text.splitlines():
        if line.startswith(sample + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


# --- the bubble and its partition ----------------------------------------------------------------

def test_the_bubble_of_the_pod_budget_is_reserved_once_on_one_numa_node():
    n = node()
    assert n.admit(database()).admitted
    table = n.memory.policy.state.machine_state[0].memory_map["memory"]
    assert table.reserved == 16 * GI
    assert n.memory.policy.state.machine_state[0].number_of_assignments == 1
    assert n.memory.policy.state.machine_state[1].memory_map["memory"].reserved == 0


def test_an_exclusive_container_gets_its_own_block_and_shared_containers_the_rest_of_the_bubble():
    n = node()
    n.admit(database())
    entries = n.memory.policy.state.entries["db"]
    assert [(b.type, b.size, b.numa_affinity) for b in entries["database"]] == [("memory", 12 * GI, (0,))]
    for sidecar in ("metrics-exporter", "backup-agent"):
        assert [(b.type, b.size) for b in entries[sidecar]] == [("memory", 4 * GI)]


def test_every_container_of_the_pod_is_pinned_to_the_bubbles_numa_node():
    n = node()
    n.admit(database())
    assert all(n.memory.numa_nodes_for("db", c) == [0] for c in ("metrics-exporter", "backup-agent", "database"))


def test_a_sidecars_exclusive_memory_is_not_returned_to_the_pool_of_later_containers():
    n = node(cpu="none")
    p = pod("p", budget=("4", "10Gi"), init=[("side", "1", "2Gi", True), ("setup", None, None)],
            apps=[("app", "1", "3Gi"), ("web", None, None)])
    assert n.admit(p).admitted
    e = n.memory.policy.state.entries["p"]
    assert [b.size for b in e["setup"]] == [8 * GI]  # bubble minus the sidecar, at its turn
    assert [b.size for b in e["web"]] == [5 * GI]  # bubble minus sidecar minus app
    assert [b.size for b in e["side"]] == [2 * GI]


def test_the_pod_budget_goes_into_pod_entries_of_the_checkpoint():
    n = node()
    n.admit(database())
    doc = memory_state_to_json(n.memory.policy.state, "v2")
    assert doc["podEntries"] == {"db": [{"numaAffinity": [0], "type": "memory", "size": 16 * GI}]}
    assert set(doc["entries"]["db"]) == {"metrics-exporter", "backup-agent", "database"}


def test_a_checkpoint_with_a_bubble_is_accepted_at_start_up_and_counts_the_bubble_only():
    n = node()
    n.admit(database())
    doc = memory_state_to_json(n.memory.policy.state, "v2")
    again = NodeAdmission(load_machine(str(EXAMPLES / "machine.json")), config(),
                          memory_state=memory_state_from_json(json.loads(json.dumps(doc))))
    assert again.memory.policy.state.machine_state[0].number_of_assignments == 1
    assert again.memory.policy.state.machine_state[0].memory_map["memory"].reserved == 16 * GI


def test_removing_the_pod_gives_the_whole_bubble_back():
    n = node()
    before = memory_state_to_json(n.memory.policy.state, "v2")
    p = database()
    n.admit(p)
    n.remove(p)
    assert memory_state_to_json(n.memory.policy.state, "v2") == before


def test_with_the_gate_off_a_pod_level_pod_is_not_pinned():
    n = node(gates=False)
    assert n.admit(database()).admitted
    assert n.memory.policy.state.entries == {}
    assert n.memory.numa_nodes_for("db", "database") is None


# --- metrics ---------------------------------------------------------------------------------------

def test_allocate_pod_counts_one_pinning_request_for_the_pod_and_one_per_init_and_exclusive_container():
    n = node()
    n.admit(database())
    text = render_metrics(n)
    # the pod, both sidecars (every init container counts), the database
    assert metric(text, "kubelet_memory_manager_pinning_requests_total") == 4
    assert metric(text, 'resource_manager_allocations_total{resource="memory",source="pod"}') == 3
    assert metric(text, 'resource_manager_container_assignments{assignment_type="pod_exclusive",resource="memory"}') == 1
    assert metric(text, 'resource_manager_container_assignments{assignment_type="pod_shared",resource="memory"}') == 2


def test_a_regular_shared_init_container_counts_as_a_pod_shared_assignment_once():
    n = node(cpu="none")
    p = pod("p", budget=("4", "10Gi"), init=[("setup", None, None)], apps=[("app", "1", "3Gi"), ("web", None, None)])
    n.admit(p)
    text = render_metrics(n)
    assert metric(text, 'resource_manager_container_assignments{assignment_type="pod_shared",resource="memory"}') == 2
    assert metric(text, 'resource_manager_allocations_total{resource="memory",source="pod"}') == 3


def test_a_refused_bubble_counts_one_pinning_error_and_one_pod_allocation_error():
    n = node(cpu="none", policy="best-effort")
    p = pod("p", budget=("2", "4Gi"), apps=[("a", "1", "4Gi"), ("b", None, None)])
    d = n.admit(p)
    assert d.reason == "EmptyPodSharedPoolError"
    text = render_metrics(n)
    assert metric(text, "kubelet_memory_manager_pinning_errors_total") == 1
    assert metric(text, 'resource_manager_allocation_errors_total{resource="memory",source="pod"}') == 1


# --- validatePodScopeResources: which pod shapes are refused, and how ----------------------------

def test_exclusive_memory_equal_to_the_budget_with_a_shared_container_is_an_empty_pod_shared_pool():
    n = node(cpu="none", policy="best-effort")
    d = n.admit(pod("p", budget=("2", "4Gi"), apps=[("a", "1", "4Gi"), ("b", None, None)]))
    assert not d.admitted
    assert d.reason == "EmptyPodSharedPoolError"
    assert d.message == ("pod rejected, sum of exclusive container memory requests equals pod budget, "
                         "leaving no memory for shared containers")


def test_under_single_numa_node_an_invalid_pod_level_pod_gets_empty_hints_and_a_topology_affinity_error():
    n = node(cpu="none")
    d = n.admit(pod("p", budget=("2", "4Gi"), apps=[("a", "1", "4Gi"), ("b", None, None)]))
    assert d.reason == "TopologyAffinityError"
    assert n.memory.policy.state.entries == {}


def test_an_exclusive_init_container_larger_than_the_budget_left_by_sidecars_is_refused():
    p = pod("p", budget=("4", "4Gi"), init=[("side", "1", "3Gi", True), ("setup", "1", "2Gi")],
            apps=[("app", None, None)])
    gates = config().feature_gate_values
    with pytest.raises(EmptyPodSharedPoolError) as exc:
        validate_pod_scope_memory(p, gates)
    assert str(exc.value) == ("pod rejected, largest exclusive init container requests 2147483648 of memory, "
                              "but only 1073741824 available")


def test_a_shared_init_container_after_sidecars_that_take_the_whole_budget_is_refused():
    p = pod("p", budget=("4", "4Gi"), init=[("side", "1", "4Gi", True), ("setup", None, None)],
            apps=[("app", "1", "100Mi")])
    with pytest.raises(EmptyPodSharedPoolError) as exc:
        validate_pod_scope_memory(p, config().feature_gate_values)
    assert str(exc.value) == "pod rejected, pod has shared init containers but no memory available for them"


def test_exclusive_containers_filling_the_budget_without_shared_containers_are_valid():
    p = pod("p", budget=("2", "4Gi"), apps=[("a", "1", "2Gi"), ("b", "1", "2Gi")])
    validate_pod_scope_memory(p, config().feature_gate_values)


def test_a_container_with_request_below_limit_is_not_exclusive_and_shares_the_pool():
    p = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "p"}, "spec": {
        "resources": res("2", "4Gi"),
        "containers": [{"name": "a", "image": "x", "resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                                                                 "limits": {"cpu": "1", "memory": "2Gi"}}}]}})
    n = node(cpu="none")
    assert n.admit(p).admitted
    assert [b.size for b in n.memory.policy.state.entries["p"]["a"]] == [4 * GI]


# --- the CLI -----------------------------------------------------------------------------------------

def test_kubetwin_admit_reports_the_empty_pod_shared_pool_reason(tmp_path):
    pods = tmp_path / "pods.yaml"
    pods.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "resources": res("2", "4Gi"),
        "containers": [{"name": "a", "image": "x", "resources": res("1", "4Gi")},
                       {"name": "b", "image": "x"}]}}))
    cfg = tmp_path / "kubelet.json"
    cfg.write_text(json.dumps(_cfg_dict()))
    out = subprocess.run(KUBETWIN + ["admit", "--machine", str(EXAMPLES / "machine.json"), "--config", str(cfg),
                                     str(pods), "-o", "json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["pods"][0]
    assert (got["admitted"], got["reason"]) == (False, "EmptyPodSharedPoolError")


def _cfg_dict():
    return {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
            "featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
            "cpuManagerPolicy": "none", "memoryManagerPolicy": "Static",
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1100Mi"}}],
            "kubeReserved": {"memory": "500Mi"}, "systemReserved": {"memory": "500Mi"},
            "evictionHard": {"memory.available": "100Mi"},
            "topologyManagerPolicy": "best-effort", "topologyManagerScope": "pod"}
