"""A TopologyAffinityError explained: what was asked and what each NUMA node could give.

Machine: 2 NUMA nodes (one per socket) x 8 cores x 2 threads = 16 CPUs per NUMA node;
``reservedSystemCPUs: 0,16`` leaves 14 on NUMA node 0 and 16 on NUMA node 1.
"""

from __future__ import annotations

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict

GPU = "nvidia.com/gpu"


def node(policy="single-numa-node", scope="container", memory=True, devices=None) -> NodeAdmission:
    cfg = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
           "cpuManagerPolicy": "static", "reservedSystemCPUs": "0,16",
           "topologyManagerPolicy": policy, "topologyManagerScope": scope}
    if memory:
        cfg.update({"memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
                    "kubeReserved": {"memory": "924Mi"}, "evictionHard": {"memory.available": "100Mi"}})
    return NodeAdmission(load_machine("2s1n8c2t:mem=128Gi"), KubeletConfiguration.from_dict(cfg),
                         devices=devices, explain_rejections=True)


def guaranteed(name: str, cpu: str, memory: str = "1Gi", **extra: str):
    r = {"cpu": cpu, "memory": memory, **extra}
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                                           "uid": name},
                          "spec": {"containers": [{"name": "app", "image": "x",
                                                   "resources": {"requests": dict(r), "limits": dict(r)}}]}})


def test_the_kubelets_reason_and_message_are_kept():
    d = node().admit(guaranteed("big", "20"))
    assert (d.admitted, d.reason, d.message) == (False, "TopologyAffinityError",
                                                 "Resources cannot be allocated with Topology locality")


def test_too_many_cpus_for_one_numa_node_names_the_request_and_each_nodes_free_cpus():
    d = node().admit(guaranteed("big", "20"))
    assert d.explanation == (
        "container app (topology manager policy single-numa-node, scope container): cpu: needs 20 CPUs aligned to "
        "one NUMA node; the largest NUMA node has 16 free (NUMA 0: 14, NUMA 1: 16); no NUMA node can ever hold it "
        "(the largest has 16 when empty)")


def test_free_cpus_are_counted_after_the_pods_already_admitted():
    n = node()
    assert n.admit(guaranteed("a", "10")).admitted   # NUMA 0: 14 -> 4
    assert n.admit(guaranteed("b", "10")).admitted   # NUMA 1: 16 -> 6
    d = n.admit(guaranteed("c", "8"))
    assert "cpu: needs 8 CPUs aligned to one NUMA node; the largest NUMA node has 6 free (NUMA 0: 4, NUMA 1: 6)" \
        in d.explanation
    assert "can ever hold it" not in d.explanation


def test_resources_that_fit_on_different_numa_nodes_are_named_with_where_each_fits():
    n = node()
    assert n.admit(guaranteed("cache", "2", "60Gi")).admitted     # NUMA 0: 12 CPUs, ~2Gi memory left
    assert n.admit(guaranteed("batch", "14", "1Gi")).admitted     # NUMA 1: 2 CPUs, 63Gi memory left
    d = n.admit(guaranteed("api", "10", "10Gi"))
    assert not d.admitted
    assert "each resource fits on a NUMA node, but not on the same one: cpu (10 CPUs) fits on NUMA node 0" \
        in d.explanation
    assert "memory (10Gi) fits on NUMA node 1" in d.explanation


def test_pod_scope_explains_the_whole_pod():
    d = node(scope="pod").admit(guaranteed("big", "20"))
    assert d.explanation.startswith("pod (topology manager policy single-numa-node, scope pod): cpu: needs 20 CPUs")


def test_restricted_policy_asks_for_the_fewest_numa_nodes_that_can_hold_the_request():
    n = node(policy="restricted", memory=False)
    assert n.admit(guaranteed("a", "10")).admitted
    assert n.admit(guaranteed("b", "10")).admitted
    d = n.admit(guaranteed("c", "8"))
    assert d.reason == "TopologyAffinityError"
    assert "cpu: needs 8 CPUs aligned to one NUMA node; the largest NUMA node has 6 free" in d.explanation


def test_devices_are_explained_per_numa_node():
    from kubetwin.kubelet.devices import inventory_from_dict

    inv = inventory_from_dict({"resources": {GPU: [{"id": "gpu-0", "numaNodes": [0]},
                                                   {"id": "gpu-1", "numaNodes": [1]}]}})
    d = node(memory=False, devices=inv).admit(guaranteed("g", "2", **{GPU: "2"}))
    assert d.reason == "TopologyAffinityError"
    assert f"{GPU}: needs 2 {GPU} devices aligned to one NUMA node; the largest NUMA node has 1 free " \
           "(NUMA 0: 1, NUMA 1: 1)" in d.explanation


def test_without_explain_rejections_the_decision_carries_no_explanation():
    n = node()
    n.explain_rejections = False
    assert n.admit(guaranteed("big", "20")).explanation == ""
