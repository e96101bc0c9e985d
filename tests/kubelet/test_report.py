"""Specifications of the kubelet's admission as plain data (``kubetwin.kubelet.report``)."""

from __future__ import annotations

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.report import numa_map, pod_report
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict


def _kubelet() -> NodeAdmission:
    cfg = KubeletConfiguration.from_dict({"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                                          "cpuManagerPolicy": "static", "reservedSystemCPUs": "0"})
    return NodeAdmission(load_machine("1s2n4c1t"), cfg)


def _pod(cpu: str):
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
                          "spec": {"containers": [{"name": "c", "image": "i", "resources": {
                              "requests": {"cpu": cpu, "memory": "1Gi"}, "limits": {"cpu": cpu, "memory": "1Gi"}}}]}})


def test_an_admitted_pod_reports_its_containers_cri_resources():
    node = _kubelet()
    report = pod_report(node, node.admit(_pod("2")))
    assert report["admitted"] is True
    assert report["containers"][0]["qosClass"] == "Guaranteed"
    assert report["containers"][0]["resources"]["cpusetCpus"] == "1-2"


def test_the_numa_map_names_the_owner_of_exclusive_cpus_on_their_numa_node():
    node = _kubelet()
    node.admit(_pod("2"))
    rows = numa_map(node)["numaNodes"]
    owners = [owner for row in rows for owner in row["exclusive"]]
    assert owners == ["default/p/c"]
