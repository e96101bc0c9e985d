"""DynamicResources in the scheduling cycle: claims allocated per node, devices held once bound."""

from __future__ import annotations

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.scheduler import Scheduler

GATES = gates_for()


def node(name: str) -> Node:
    return convert({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                    "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}}, Node)


def objects(gpus: dict[str, int]) -> dict:
    slices = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{n}-gpus"},
               "spec": {"driver": "gpu.example.com", "nodeName": n,
                        "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                        "devices": [{"name": f"gpu-{i}"} for i in range(k)]}} for n, k in gpus.items()]
    return {
        "DeviceClass": [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}],
        "ResourceSlice": slices,
        "ResourceClaimTemplate": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                                   "metadata": {"name": "one-gpu", "namespace": "default"},
                                   "spec": {"spec": {"devices": {"requests": [
                                       {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}],
    }


def gpu_pod(name: str) -> Pod:
    return convert({"metadata": {"name": name, "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
                             "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}}, Pod)


def test_pod_goes_where_its_claim_can_be_allocated():
    s = Scheduler(None, [node("cpu-only"), node("gpu-node")], GATES, objects=objects({"gpu-node": 1}))
    assert s.schedule(gpu_pod("a")).node == "gpu-node"


def test_devices_of_a_bound_pod_are_not_allocated_again():
    s = Scheduler(None, [node("n1")], GATES, objects=objects({"n1": 1}))
    first = gpu_pod("a")
    s.bind(first, s.schedule(first).node)
    r = s.schedule(gpu_pod("b"))
    assert r.node is None
    assert r.message == ("0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
                         "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_removing_the_pod_frees_its_devices():
    s = Scheduler(None, [node("n1")], GATES, objects=objects({"n1": 1}))
    first = gpu_pod("a")
    s.bind(first, "n1")
    s.remove(first)
    assert s.schedule(gpu_pod("b")).node == "n1"


def test_missing_template_is_unresolvable_for_every_node():
    objs = objects({"n1": 1})
    objs["ResourceClaimTemplate"] = []
    r = Scheduler(None, [node("n1")], GATES, objects=objs).schedule(gpu_pod("a"))
    assert r.message.startswith('0/1 nodes are available: resourceclaimtemplate "one-gpu" not found.')


def test_pods_without_claims_skip_the_plugin():
    p = convert({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}, Pod)
    assert Scheduler(None, [node("n1")], GATES, objects=objects({})).schedule(p).node == "n1"
