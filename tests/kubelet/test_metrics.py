"""Resource-manager metrics as upstream counts them per admission (``kubelet.metrics``)."""

from __future__ import annotations

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.metrics import render_metrics
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict

MEM_MACHINE = "/work/shared/conformance/machines/mem-1numa-5gi-2x1gi-hugepages.json"


def node(policy="single-numa-node"):
    cfg = KubeletConfiguration.from_dict({
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "static", "memoryManagerPolicy": "Static", "reservedSystemCPUs": "0",
        "topologyManagerPolicy": policy, "kubeReserved": {"memory": "500Mi"},
        "evictionHard": {"memory.available": "100Mi"},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "600Mi"}}]})
    return NodeAdmission(load_machine(MEM_MACHINE), cfg)


def gu(name, mem="1Gi", cpu="1", hugepages=None):
    res = {"cpu": cpu, "memory": mem}
    if hugepages:
        res["hugepages-1Gi"] = hugepages
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "uid": name},
                          "spec": {"containers": [{"name": "c", "resources": {"requests": res, "limits": res}}]}})


def metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_each_guaranteed_container_is_one_memory_pinning_request():
    n = node()
    n.admit(gu("a"))
    n.admit(gu("b"))
    assert metric(render_metrics(n), "kubelet_memory_manager_pinning_requests_total") == 2


def test_a_failed_memory_allocation_counts_as_a_pinning_error():
    n = node("none")
    assert n.admit(gu("a", mem="1500Mi")).admitted
    d = n.admit(gu("b", mem="1500Mi"))
    assert d.reason == "UnexpectedAdmissionError"
    text = render_metrics(n)
    assert metric(text, "kubelet_memory_manager_pinning_requests_total") == 2
    assert metric(text, "kubelet_memory_manager_pinning_errors_total") == 1
    assert 'resource_manager_allocation_errors_total{resource="memory",source="node"} 1' in text


def test_a_topology_rejection_counts_as_an_admission_error_not_a_pinning_error():
    n = node()
    assert n.admit(gu("a", mem="1500Mi")).admitted
    assert n.admit(gu("b", mem="1500Mi")).reason == "TopologyAffinityError"
    text = render_metrics(n)
    assert metric(text, "kubelet_topology_manager_admission_errors_total") == 1
    assert metric(text, "kubelet_memory_manager_pinning_errors_total") == 0


def test_memory_allocations_count_one_per_memory_type():
    n = node()
    n.admit(gu("a", hugepages="1Gi"))
    text = render_metrics(n)
    assert 'resource_manager_allocations_total{resource="memory",source="node"} 2' in text
    assert 'resource_manager_container_assignments{assignment_type="node_exclusive",resource="memory"} 1' in text


def test_exclusive_cpu_count_follows_admissions():
    n = node()
    n.admit(gu("a", cpu="2"))
    assert metric(render_metrics(n), "kubelet_cpu_manager_exclusive_cpu_allocation_count") == 2
