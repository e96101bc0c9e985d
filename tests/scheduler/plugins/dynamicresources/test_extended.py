"""``preFilterExtendedResources``: which pods need a claim for DRA-backed extended resources.
The quick look at the resource names a pod writes must never miss one ``PodRequests`` returns."""

from __future__ import annotations

from types import SimpleNamespace

from kubetwin.model.meta import convert
from kubetwin.model.pod import Pod
from kubetwin.scheduler.plugins.dynamicresources.extended import pod_extended_resources

CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"extendedResourceName": "example.com/gpu"}}
IMPLICIT = "deviceclass.resource.kubernetes.io/gpu"


def handle():
    return SimpleNamespace(objects={"DeviceClass": [CLASS]}, seed=0)


def pod(spec: dict) -> Pod:
    return convert({"metadata": {"name": "p", "namespace": "default", "uid": "uid-p"}, "spec": spec}, Pod)


def container(name: str, resources: dict) -> dict:
    return {"name": name, "resources": {"requests": resources, "limits": resources}}


def test_a_pod_naming_no_class_resource_needs_no_claim():
    p = pod({"containers": [container("c", {"cpu": "1", "example.com/other": "1"})]})
    assert pod_extended_resources(handle(), p) is None


def test_an_app_container_request_for_the_class_resource_needs_a_claim():
    p = pod({"containers": [container("c", {"example.com/gpu": "1"})]})
    got = pod_extended_resources(handle(), p)
    assert got is not None and got.scalar == {"example.com/gpu": 1}


def test_an_init_container_request_for_the_implicit_class_name_needs_a_claim():
    p = pod({"initContainers": [container("i", {IMPLICIT: "2"})], "containers": [container("c", {"cpu": "1"})]})
    got = pod_extended_resources(handle(), p)
    assert got is not None and got.scalar == {IMPLICIT: 2}


def test_a_zero_request_for_the_class_resource_needs_no_claim():
    p = pod({"containers": [container("c", {"example.com/gpu": "0"})]})
    assert pod_extended_resources(handle(), p) is None


def test_without_device_classes_no_pod_needs_a_claim():
    p = pod({"containers": [container("c", {"example.com/gpu": "1"})]})
    assert pod_extended_resources(SimpleNamespace(objects={}, seed=0), p) is None
