"""NodeResourcesFit scores an extended resource backed by DRA by the devices of its
DeviceClass on the node — CEL selectors evaluated as the allocator evaluates them — and
how many of those devices claims hold."""

from __future__ import annotations

import numpy as np

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod
from kubetwin.scheduler.framework.interface import CycleState
from kubetwin.scheduler.plugins.dynamicresources.extended import dra_extended_allocatable
from kubetwin.scheduler.profile import Profile
from kubetwin.scheduler.scheduler import Scheduler

GATES = gates_for(overrides={"DRAExtendedResource": True})
GPU = "example.com/gpu"


def node(name: str, **labels: str) -> Node:
    return convert({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
                    "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}}, Node)


def gpu_slice(name: str, models: list[str], **where) -> dict:
    spec = {"driver": "gpu.example.com", "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": m}}} for i, m in enumerate(models)],
            **where}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def objects(expression: str = 'device.attributes["gpu.example.com"].model == "A100"', slices=None) -> dict:
    return {
        "DeviceClass": [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "a100"},
                         "spec": {"extendedResourceName": GPU, "selectors": [{"cel": {"expression": expression}}]}}],
        "ResourceSlice": slices if slices is not None else [
            gpu_slice("n1", ["A100"] * 4 + ["T4"] * 4, nodeName="n1"),
            gpu_slice("n2", ["A100", "A100", "T4"], nodeName="n2")],
    }


def gpu_pod(name: str, n: int = 1) -> Pod:
    return convert({"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                    "spec": {"containers": [{"name": "c", "resources": {"requests": {GPU: str(n)},
                                                                          "limits": {GPU: str(n)}}}]}}, Pod)


def fit_profile(strategy: str = "LeastAllocated") -> Profile:
    return Profile(plugin_args={"NodeResourcesFit": {"scoringStrategy": {
        "type": strategy, "resources": [{"name": GPU, "weight": 1}]}}})


def fit_scores(s: Scheduler, pod: Pod) -> dict[str, int]:
    plugin = next(p for p, _ in s.plugins if p.name == "NodeResourcesFit")
    state = CycleState()
    plugin.pre_score(state, pod, s.cluster.infos)
    return {ni.name: plugin.score(state, pod, ni)[0] for ni in s.cluster.infos}


def test_only_devices_matching_the_class_selectors_count():
    s = Scheduler(None, [node("n1"), node("n2")], GATES, objects=objects())
    infos = {ni.name: ni for ni in s.cluster.infos}
    assert dra_extended_allocatable(s.handle, infos["n1"], GPU) == (4, 0)
    assert dra_extended_allocatable(s.handle, infos["n2"], GPU) == (2, 0)


def test_least_allocated_scores_the_matching_devices():
    s = Scheduler(fit_profile(), [node("n1"), node("n2")], GATES, objects=objects())
    # n1: (4 - 1) * 100 / 4, n2: (2 - 1) * 100 / 2
    assert fit_scores(s, gpu_pod("p")) == {"n1": 75, "n2": 50}


def test_most_allocated_prefers_the_fuller_node():
    s = Scheduler(fit_profile("MostAllocated"), [node("n1"), node("n2")], GATES, objects=objects())
    assert fit_scores(s, gpu_pod("p")) == {"n1": 25, "n2": 50}


def test_devices_taken_by_bound_pods_count_as_requested():
    s = Scheduler(fit_profile(), [node("n1"), node("n2")], GATES, objects=objects())
    first = gpu_pod("first", 2)
    s.bind(first, "n1")
    n1 = s.cluster.infos[s.cluster.index["n1"]]
    assert dra_extended_allocatable(s.handle, n1, GPU) == (4, 2)
    assert fit_scores(s, gpu_pod("p"))["n1"] == 25  # (4 - 3) * 100 / 4
    s.remove(first)
    assert dra_extended_allocatable(s.handle, n1, GPU) == (4, 0)


def test_slices_for_other_nodes_and_node_selectors_are_matched_per_node():
    slices = [gpu_slice("rack", ["A100"] * 3, nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [
                  {"key": "rack", "operator": "In", "values": ["r1"]}]}]}),
              gpu_slice("everywhere", ["A100"], allNodes=True),
              gpu_slice("n2", ["A100"] * 5, nodeName="n2")]
    s = Scheduler(None, [node("n1", rack="r1"), node("n2", rack="r2")], GATES, objects=objects(slices=slices))
    infos = {ni.name: ni for ni in s.cluster.infos}
    assert dra_extended_allocatable(s.handle, infos["n1"], GPU) == (4, 0)
    assert dra_extended_allocatable(s.handle, infos["n2"], GPU) == (6, 0)


def test_selector_that_fails_to_evaluate_leaves_the_resource_unscored():
    s = Scheduler(fit_profile(), [node("n1")], GATES,
                  objects=objects('device.attributes["gpu.example.com"].memory == "x"'))
    assert dra_extended_allocatable(s.handle, s.cluster.infos[0], GPU) == (0, 0)
    assert fit_scores(s, gpu_pod("p")) == {"n1": 0}


def test_resource_without_a_device_class_is_not_dra_backed():
    s = Scheduler(None, [node("n1")], GATES, objects=objects())
    assert dra_extended_allocatable(s.handle, s.cluster.infos[0], "example.com/fpga") is None


def test_scheduler_places_by_the_dra_backed_score():
    fast = Scheduler(fit_profile("MostAllocated"), [node("n1"), node("n2")], GATES, objects=objects())
    slow = Scheduler(fit_profile("MostAllocated"), [node("n1"), node("n2")], GATES, objects=objects(),
                     vectorised=False)
    for k in range(5):
        p = gpu_pod(f"p{k}")
        a, b = fast.schedule(p), slow.schedule(p)
        assert a.node == b.node
        if a.node is None:
            break
        fast.bind(p, a.node)
        slow.bind(p, b.node)
    assert np.array_equal(fast.cluster.npods, slow.cluster.npods)
