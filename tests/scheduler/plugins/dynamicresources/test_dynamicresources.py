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
    assert r.message.startswith('0/1 nodes are available: pod default/a: resource claim template "one-gpu": '
                                'resourceclaimtemplates.resource.k8s.io "one-gpu" not found.')


def test_pods_without_claims_skip_the_plugin():
    p = convert({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}, Pod)
    assert Scheduler(None, [node("n1")], GATES, objects=objects({})).schedule(p).node == "n1"


# --- one claim-resolution path ---------------------------------------------------------------


def plugin_of(s: Scheduler):
    return next(p for p, _ in s.plugins if p.name == "DynamicResources")


def test_template_claim_is_named_as_dra_allocate_names_it():
    from kubetwin.dra.api import parse_resource_claim_template
    from kubetwin.dra.podclaims import claims_for_pod

    objs = objects({"n1": 1})
    s = Scheduler(None, [node("n1")], GATES, objects=objs, seed=3)
    pod = gpu_pod("a")
    s.bind(pod, s.schedule(pod).node)
    expected = claims_for_pod(pod, [], [parse_resource_claim_template(objs["ResourceClaimTemplate"][0])], seed=3)
    (claim,) = plugin_of(s).claims_of(pod)
    assert claim["metadata"]["name"] == expected.claims[0].claim.name
    assert claim["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] == "gpu"
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "a", "uid": pod.uid}]
    assert claim["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-0"


def shared_claim() -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "shared", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}


def shared_pod(name: str) -> Pod:
    return convert({"metadata": {"name": name, "namespace": "default"},
                    "spec": {"containers": [{"name": "c"}],
                             "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}]}}, Pod)


def test_shared_claim_is_allocated_once_and_reserved_for_each_pod():
    objs = objects({"n1": 1, "n2": 1})
    objs["ResourceClaim"] = [shared_claim()]
    s = Scheduler(None, [node("n1"), node("n2")], GATES, objects=objs)
    a, b = shared_pod("a"), shared_pod("b")
    first = s.schedule(a).node
    s.bind(a, first)
    assert s.schedule(b).node == first  # the allocation pins the claim to that node
    s.bind(b, first)
    (claim,) = plugin_of(s).claims_of(b)
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["a", "b"]


def test_shared_claim_is_deallocated_when_its_last_pod_goes():
    objs = objects({"n1": 1})
    objs["ResourceClaim"] = [shared_claim()]
    s = Scheduler(None, [node("n1")], GATES, objects=objs)
    a, b = shared_pod("a"), shared_pod("b")
    s.bind(a, "n1")
    s.bind(b, "n1")
    s.remove(a)
    assert "default/shared" in plugin_of(s).allocations()
    s.remove(b)
    assert "default/shared" not in plugin_of(s).allocations()
    assert s.schedule(gpu_pod("c")).node == "n1"  # the device is free again


def test_claim_reserved_for_the_maximum_number_of_pods_is_in_use():
    objs = objects({"n1": 1})
    claim = shared_claim()
    claim["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}},
        "reservedFor": [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(256)]}
    objs["ResourceClaim"] = [claim]
    r = Scheduler(None, [node("n1")], GATES, objects=objs).schedule(shared_pod("x"))
    assert r.node is None and "resourceclaim in use" in r.message


# --- extended resources backed by DRA --------------------------------------------------------


def ext_objects(gpus: dict[str, int], **class_spec) -> dict:
    objs = objects(gpus)
    objs["DeviceClass"][0]["spec"]["extendedResourceName"] = "example.com/gpu"
    objs["DeviceClass"][0]["spec"].update(class_spec)
    return objs


def ext_pod(name: str, count: int = 1, init: int | None = None) -> Pod:
    spec: dict = {"containers": [{"name": "app", "resources": {"requests": {"example.com/gpu": str(count)},
                                                                "limits": {"example.com/gpu": str(count)}}}]}
    if init is not None:
        spec["initContainers"] = [{"name": "setup", "resources": {"requests": {"example.com/gpu": str(init)},
                                                                   "limits": {"example.com/gpu": str(init)}}}]
    return convert({"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}, Pod)


def test_extended_resource_is_allocated_from_the_device_class():
    s = Scheduler(None, [node("cpu-only"), node("gpu-node")], GATES, objects=ext_objects({"gpu-node": 2}))
    pod = ext_pod("a", 2)
    r = s.schedule(pod)
    assert r.node == "gpu-node"
    s.bind(pod, r.node)
    (claim,) = plugin_of(s).claims_of(pod)
    assert claim["metadata"]["name"].startswith("a-extended-resources-")
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert claim["spec"]["devices"]["requests"] == [{"name": "container-0-request-0", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}}]
    assert [d["device"] for d in claim["status"]["allocation"]["devices"]["results"]] == ["gpu-0", "gpu-1"]
    status = plugin_of(s).extended_resource_claim_status(pod)
    assert status.resource_claim_name == claim["metadata"]["name"]
    assert [(m.container_name, m.resource_name, m.request_name) for m in status.request_mappings] == [
        ("app", "example.com/gpu", "container-0-request-0")]
    assert plugin_of(s).pod_status(pod)["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": "app", "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-0"}],
        "resourceClaimName": claim["metadata"]["name"]}


def test_extended_resource_devices_are_held_until_the_pod_goes():
    s = Scheduler(None, [node("n1")], GATES, objects=ext_objects({"n1": 1}))
    a = ext_pod("a")
    s.bind(a, s.schedule(a).node)
    assert s.schedule(ext_pod("b")).node is None
    s.remove(a)
    assert s.schedule(ext_pod("b")).node == "n1"


def test_device_plugin_node_needs_no_claim():
    dp = convert({"metadata": {"name": "dp", "labels": {"kubernetes.io/hostname": "dp"}},
                  "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10", "example.com/gpu": "4"}}},
                 Node)
    s = Scheduler(None, [dp], GATES, objects=ext_objects({}))
    pod = ext_pod("a")
    s.bind(pod, s.schedule(pod).node)
    assert plugin_of(s).claims_of(pod) == []
    assert plugin_of(s).extended_resource_claim_status(pod) is None


def test_init_container_reuses_the_app_containers_devices():
    from kubetwin.scheduler.plugins.dynamicresources.extended import requests_and_mappings

    objs = ext_objects({})
    reqs, maps = requests_and_mappings(ext_pod("a", 2, init=1), ["example.com/gpu"],
                                       {"example.com/gpu": objs["DeviceClass"][0]})
    assert [r["name"] for r in reqs] == ["container-1-request-0"]
    assert maps[-1] == {"containerName": "setup", "resourceName": "example.com/gpu",
                        "requestName": "container-1-request-0"}


def test_newest_device_class_wins_an_extended_resource_name():
    from kubetwin.scheduler.plugins.dynamicresources.extended import device_class_for

    class Handle:
        objects = {"DeviceClass": [
            {"metadata": {"name": "old", "creationTimestamp": "2025-01-01T00:00:00Z"},
             "spec": {"extendedResourceName": "example.com/gpu"}},
            {"metadata": {"name": "new", "creationTimestamp": "2025-06-01T00:00:00Z"},
             "spec": {"extendedResourceName": "example.com/gpu"}}]}

    assert device_class_for(Handle(), "example.com/gpu")["metadata"]["name"] == "new"
    assert device_class_for(Handle(), "deviceclass.resource.kubernetes.io/old")["metadata"]["name"] == "old"


def test_extended_resources_are_left_alone_without_the_gate():
    from kubetwin.model.features import gates_for as gf

    s = Scheduler(None, [node("gpu-node")], gf(None, {"DRAExtendedResource": False}),
                  objects=ext_objects({"gpu-node": 1}))
    assert s.schedule(ext_pod("a")).node is None


def test_running_pods_extended_resource_claim_is_released_with_the_pod():
    objs = ext_objects({"n1": 1})
    objs["ResourceClaim"] = [{
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "a-extended-resources-abcde", "namespace": "default",
                     "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "a", "uid": "uid-a",
                                          "controller": True}]},
        "spec": {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
            "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}},
        "status": {"allocation": {"devices": {"results": [
            {"request": "container-0-request-0", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}}}}]
    running = convert({
        "metadata": {"name": "a", "namespace": "default", "uid": "uid-a"},
        "spec": {"nodeName": "n1", "containers": [{"name": "app", "resources": {
            "requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}}]},
        "status": {"extendedResourceClaimStatus": {"resourceClaimName": "a-extended-resources-abcde",
                                                   "requestMappings": [{"containerName": "app",
                                                                        "resourceName": "example.com/gpu",
                                                                        "requestName": "container-0-request-0"}]}}},
        Pod)
    s = Scheduler(None, [node("n1")], GATES, objects=objs, pods=[running])
    assert plugin_of(s).extended_resource_claim_status(running).resource_claim_name == "a-extended-resources-abcde"
    assert s.schedule(ext_pod("b")).node is None
    s.remove(running)
    assert s.schedule(ext_pod("b")).node == "n1"


def test_allocated_devices_and_results_count_what_the_allocations_list():
    s = Scheduler(None, [node("n1"), node("n2")], GATES, objects=objects({"n1": 2, "n2": 1}))
    for name in ("a", "b", "c"):
        p = gpu_pod(name)
        s.bind(p, s.schedule(p).node)
    plugin = plugin_of(s)
    listed = [r for a in plugin.allocations().values() for r in a["devices"]["results"]]
    assert plugin.allocated_devices() == len(listed) == 3
    assert [(r.driver, r.pool, r.device) for r in plugin.allocated_results()] == \
        [(r["driver"], r["pool"], r["device"]) for r in listed]


def test_one_claim_is_allocated_exactly_when_the_allocations_list_it():
    objs = objects({"n1": 1})
    objs["ResourceClaim"] = [shared_claim()]
    s = Scheduler(None, [node("n1")], GATES, objects=objs)
    plugin = plugin_of(s)
    a = shared_pod("a")
    assert not plugin.is_allocated("default/shared") and not plugin.is_allocated("default/missing")
    s.bind(a, "n1")
    assert plugin.is_allocated("default/shared") and "default/shared" in plugin.allocations()
    s.remove(a)
    assert not plugin.is_allocated("default/shared") and "default/shared" not in plugin.allocations()


def test_the_allocators_node_is_kept_while_the_nodes_labels_stay_the_same_object():
    s = Scheduler(None, [node("n1")], GATES, objects=objects({"n1": 1}))
    plugin = plugin_of(s)
    first = plugin._node(plugin.handle.snapshot.get("n1"))
    assert plugin._node(plugin.handle.snapshot.get("n1")) is first
    assert first.labels == {"kubernetes.io/hostname": "n1"}
    s.update_node(convert({"metadata": {"name": "n1", "labels": {"zone": "b"}},
                           "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}}, Node))
    again = plugin._node(plugin.handle.snapshot.get("n1"))
    assert again is not first and again.labels == {"zone": "b"}


def test_a_node_whose_labels_changed_is_read_again_by_the_vector_filter():
    objs = objects({"n1": 1})
    objs["ResourceSlice"][0]["spec"].pop("nodeName")
    objs["ResourceSlice"][0]["spec"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "gpu", "operator": "In", "values": ["yes"]}]}]}
    s = Scheduler(None, [node("n1")], GATES, objects=objs)
    assert s.schedule(gpu_pod("a")).node is None
    labelled = convert({"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1", "gpu": "yes"}},
                        "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}}, Node)
    s.update_node(labelled)
    assert s.schedule(gpu_pod("b")).node == "n1"
