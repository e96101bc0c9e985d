"""The kubelet's PodResources API v1 from the managers' state (``kubetwin.kubelet.podresources``).

Cases after ``pkg/kubelet/apis/podresources/server_v1_test.go`` (``TestListPodResourcesV1``,
``TestListPodResourcesUsesOnlyActivePodsV1``, ``TestListPodResourcesWithInitContainersV1``,
``TestAllocatableResources``, ``TestGetPodResourcesV1``, ``TestGetPodResourcesWithInitContainersV1``)
and the providers of ``cm/container_manager_linux.go``. Machine: 2 NUMA nodes x 8 cores x 2
threads, ``reservedSystemCPUs: 0,16``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kubetwin.dra.checkpoint import CheckpointDevice, ClaimInfoState, encode_checkpoint
from kubetwin.errors import InputError
from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.devices import inventory_from_dict
from kubetwin.kubelet.podresources import KnownPod, PodResourcesError, PodResourcesServer, parse_call
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict

GPU = "nvidia.com/gpu"
INVENTORY = {"resources": {GPU: [{"id": "gpu-0", "numaNodes": [0]}, {"id": "gpu-1", "numaNodes": [1]},
                                 {"id": "gpu-2"}]}}


def node(cpu="static", memory=True, gates=None, devices=True) -> NodeAdmission:
    cfg: dict = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                 "cpuManagerPolicy": cpu, "topologyManagerPolicy": "single-numa-node"}
    if cpu == "static":
        cfg["reservedSystemCPUs"] = "0,16"
    if memory:
        cfg.update({"memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
                    "kubeReserved": {"memory": "924Mi"}, "evictionHard": {"memory.available": "100Mi"}})
    if gates:
        cfg["featureGates"] = gates
    inv = inventory_from_dict(INVENTORY) if devices else None
    return NodeAdmission(load_machine("2s1n8c2t:mem=128Gi"), KubeletConfiguration.from_dict(cfg), devices=inv)


def pod(name: str, cpu: str = "2", memory: str = "1Gi", init=(), claims=(), resource_claims=(), status=None,
        **extra: str):
    r = {"cpu": cpu, "memory": memory, **extra}
    body: dict = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name},
                  "spec": {"initContainers": list(init),
                           "containers": [{"name": "app", "image": "x", "resources": {
                               "requests": dict(r), "limits": dict(r), "claims": list(claims)}}],
                           "resourceClaims": list(resource_claims)}}
    if status:
        body["status"] = status
    return pod_from_dict(body)


def serve(n: NodeAdmission, *pods, dra_state=()) -> PodResourcesServer:
    return PodResourcesServer(n, [KnownPod(p, n.admit(p).admitted) for p in pods], dra_state)


def test_no_pods_list_an_empty_response():
    assert serve(node()).list_pod_resources() == {}


def test_a_guaranteed_container_lists_its_exclusive_cpu_ids_as_strings():
    (p,) = serve(node(), pod("a", "2")).list_pod_resources()["podResources"]
    assert p["name"] == "a" and p["namespace"] == "default"
    assert p["containers"][0]["cpuIds"] == ["1", "17"]


def test_a_burstable_container_has_no_cpu_ids_nor_memory():
    n = node()
    b = pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "uid": "b"},
                       "spec": {"containers": [{"name": "app", "image": "x",
                                                "resources": {"requests": {"cpu": "1"}}}]}})
    assert serve(n, b).list_pod_resources()["podResources"][0]["containers"] == [{"name": "app"}]


def test_memory_blocks_carry_type_size_and_numa_node():
    (p,) = serve(node(), pod("a", "2", "1Gi")).list_pod_resources()["podResources"]
    assert p["containers"][0]["memory"] == [{"memoryType": "memory", "size": str(1 << 30),
                                             "topology": {"nodes": [{"ID": "0"}]}}]


def test_devices_are_listed_one_per_device_with_its_numa_node():
    (p,) = serve(node(), pod("a", "2", **{GPU: "1"})).list_pod_resources()["podResources"]
    assert p["containers"][0]["devices"] == [{"resourceName": GPU, "deviceIds": ["gpu-0"],
                                              "topology": {"nodes": [{"ID": "0"}]}}]


def test_rejected_pods_are_not_listed_when_list_uses_active_pods():
    n = node()
    big = pod("big", "64")
    listed = serve(n, pod("a"), big).list_pod_resources()["podResources"]
    assert [p["name"] for p in listed] == ["a"]


def test_without_list_use_active_pods_a_rejected_pod_is_listed_without_resources():
    n = node(gates={"KubeletPodResourcesListUseActivePods": False})
    listed = serve(n, pod("a"), pod("big", "64")).list_pod_resources()["podResources"]
    assert listed[1] == {"name": "big", "namespace": "default", "containers": [{"name": "app"}]}


def test_restartable_init_containers_are_listed_before_the_app_containers():
    side = {"name": "proxy", "image": "x", "restartPolicy": "Always",
            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}}
    plain = {"name": "setup", "image": "x"}
    (p,) = serve(node(), pod("a", init=[plain, side])).list_pod_resources()["podResources"]
    assert [c["name"] for c in p["containers"]] == ["proxy", "app"]


def test_allocatable_cpus_are_all_but_the_reserved_under_the_static_policy():
    ids = serve(node()).get_allocatable_resources()["cpuIds"]
    assert "0" not in ids and "16" not in ids and len(ids) == 30


def test_allocatable_is_capacity_not_what_is_free():
    assert serve(node(), pod("a", "4")).get_allocatable_resources() == serve(node()).get_allocatable_resources()


def test_allocatable_under_policy_none_has_no_cpus_and_no_memory():
    got = serve(node(cpu="none", memory=False)).get_allocatable_resources()
    assert "cpuIds" not in got and "memory" not in got


def test_allocatable_memory_is_one_block_per_numa_node_and_type():
    memory = serve(node()).get_allocatable_resources()["memory"]
    assert [(m["memoryType"], m["topology"]["nodes"][0]["ID"]) for m in memory] == [("memory", "0"), ("memory", "1")]


def test_allocatable_devices_include_those_without_topology():
    devices = serve(node()).get_allocatable_resources()["devices"]
    assert {"resourceName": GPU, "deviceIds": ["gpu-2"]} in devices and len(devices) == 3


def test_get_answers_one_pod():
    got = serve(node(), pod("a"), pod("b")).get_pod_resources("default", "b")
    assert got["podResources"]["name"] == "b"


def test_get_of_an_unknown_pod_is_not_found():
    with pytest.raises(PodResourcesError, match="pod nope in namespace default not found"):
        serve(node(), pod("a")).get_pod_resources("default", "nope")


def test_get_is_disabled_without_its_feature_gate():
    with pytest.raises(PodResourcesError, match="PodResources API Get method disabled"):
        serve(node(gates={"KubeletPodResourcesGet": False}), pod("a")).get_pod_resources("default", "a")


CLAIM = ClaimInfoState("uid-1", "gpus", "default", frozenset({"a"}), {
    "gpu.example.com": (CheckpointDevice("pool", "gpu-0", ("gpu",), ("gpu.example.com/device=uid-1-gpu-0",)),)})


def _claim_pod():
    return pod("a", claims=[{"name": "g"}], resource_claims=[{"name": "g", "resourceClaimName": "gpus"}])


def test_dynamic_resources_come_from_the_dra_checkpoint():
    (p,) = serve(node(), _claim_pod(), dra_state=[CLAIM]).list_pod_resources()["podResources"]
    assert p["containers"][0]["dynamicResources"] == [{
        "claimName": "gpus", "claimNamespace": "default", "claimResources": [{
            "cdiDevices": [{"name": "gpu.example.com/device=uid-1-gpu-0"}], "driverName": "gpu.example.com",
            "poolName": "pool", "deviceName": "gpu-0"}]}]


def test_dynamic_resources_need_their_feature_gate():
    n = node(gates={"KubeletPodResourcesDynamicResources": False})
    (p,) = serve(n, _claim_pod(), dra_state=[CLAIM]).list_pod_resources()["podResources"]
    assert "dynamicResources" not in p["containers"][0]


def test_a_claim_missing_from_the_checkpoint_empties_the_containers_dynamic_resources():
    (p,) = serve(node(), _claim_pod()).list_pod_resources()["podResources"]
    assert "dynamicResources" not in p["containers"][0]


@pytest.mark.parametrize("text,want", [("list", ("list", "", "")), ("allocatable", ("allocatable", "", "")),
                                       ("get=ns/p", ("get", "ns", "p")), ("get=p", ("get", "default", "p"))])
def test_podresources_calls_parse(text, want):
    assert parse_call(text) == want


@pytest.mark.parametrize("text,match", [("lst", 'did you mean "list"'), ("get=", "get needs the pod"),
                                        ("list=x", "takes no argument")])
def test_bad_podresources_calls_are_input_errors(text, match):
    with pytest.raises(InputError, match=match):
        parse_call(text)


# ---------------------------------------------------------------------------- CLI
ROOT = Path(__file__).resolve().parents[2]


def test_admit_o_podresources_reads_dra_claims_from_the_state_dir(tmp_path: Path):
    (tmp_path / "dra_manager_state").write_bytes(encode_checkpoint([CLAIM]))
    (tmp_path / "pod.json").write_text(json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "uid": "a"},
        "spec": {"resourceClaims": [{"name": "g", "resourceClaimName": "gpus"}],
                 "containers": [{"name": "app", "image": "x", "resources": {"claims": [{"name": "g"}]}}]}}))
    out = subprocess.run([sys.executable, "-m", "kubetwin", "admit", "--machine", "2s1n8c2t", "--state-dir",
                          str(tmp_path), "-o", "podresources", "--podresources", "get=default/a",
                          str(tmp_path / "pod.json")], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["podResources"]["containers"][0]["dynamicResources"][0]
    assert got["claimName"] == "gpus"
