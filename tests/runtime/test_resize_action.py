"""Actuating an allocated in-place resize: the CRI calls and pod cgroup writes, in the kubelet's order.

Behaviour from ``pkg/kubelet/kuberuntime/kuberuntime_manager.go``: ``computePodResizeAction``
(min shares / min limit equality, ``RestartContainer`` restarts, decreases queued before
increases), ``doPodResizeAction`` (memory then cpu; the pod cgroup raised before and lowered
after the containers, limits before requests when growing and after them when shrinking),
``updatePodContainerResources`` (the pass's resource new, the other as last actuated) and
``SyncPod`` (kill at step 3, resize at step 7, start at step 8); upstream unit test
``TestUpdatePodContainerResources`` / ``TestComputePodActionsForPodResize`` cases.
"""

from __future__ import annotations

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import Pod, pod_from_dict
from kubetwin.runtime.containerd import RuntimeConfig
from kubetwin.runtime.kubelet_sequence import KubeletSequence
from kubetwin.runtime.resize_action import compute_pod_resize_actions
from kubetwin.runtime.runtime_state import RuntimeState


def pod(*containers: dict) -> Pod:
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "uid": "p"},
                          "spec": {"containers": list(containers)}})


def c(name: str, cpu_req: str, cpu_lim: str, mem_lim: str, policy: dict | None = None) -> dict:
    out: dict = {"name": name, "image": "i", "resources": {"requests": {"cpu": cpu_req, "memory": "64Mi"},
                                                           "limits": {"cpu": cpu_lim, "memory": mem_lim}}}
    if policy:
        out["resizePolicy"] = [{"resourceName": r, "restartPolicy": p} for r, p in policy.items()]
    return out


def started(p: Pod) -> KubeletSequence:
    cfg = KubeletConfiguration.from_dict({"apiVersion": "kubelet.config.k8s.io/v1beta1",
                                          "kind": "KubeletConfiguration"})
    node = NodeAdmission(load_machine("1s1n8c1t:mem=16Gi"), cfg)
    assert node.admit(p).admitted
    seq = KubeletSequence(node, RuntimeState(node.machine, RuntimeConfig()))
    seq.start_pod(p)
    return seq


def actions_of(old: Pod, new: Pod) -> list[tuple]:
    seq = started(old)
    return [(s["action"], s.get("resource", ""), s.get("container", "")) for s in seq.resize_pod(new)]


def test_growing_sets_the_pod_cgroup_before_the_container():
    old, new = pod(c("a", "500m", "1", "256Mi")), pod(c("a", "1", "2", "512Mi"))
    assert actions_of(old, new) == [
        ("SetPodCgroupConfig", "memory", ""), ("UpdateContainerResources", "memory", "a"),
        ("SetPodCgroupConfig", "cpu", ""), ("SetPodCgroupConfig", "cpu", ""), ("UpdateContainerResources", "cpu", "a"),
        ("UpdatePodSandboxResources", "", "")]


def test_shrinking_sets_the_pod_cgroup_after_the_container_requests_before_limits():
    old, new = pod(c("a", "1", "2", "512Mi")), pod(c("a", "500m", "1", "256Mi"))
    seq = started(old)
    steps = seq.resize_pod(new)
    assert [(s["action"], s["resource"]) for s in steps[:-1]] == [
        ("UpdateContainerResources", "memory"), ("SetPodCgroupConfig", "memory"),
        ("UpdateContainerResources", "cpu"), ("SetPodCgroupConfig", "cpu"), ("SetPodCgroupConfig", "cpu")]
    assert [s["files"] for s in steps if s["action"] == "SetPodCgroupConfig"] == [
        {"memory.max": str(256 << 20)}, {"cpu.weight": "20"}, {"cpu.max": "100000 100000"}]


def test_each_pass_sends_the_other_resource_as_last_actuated():
    old, new = pod(c("a", "500m", "1", "256Mi")), pod(c("a", "1", "2", "512Mi"))
    seq = started(old)
    seq.resize_pod(new)
    mem, cpu = [x.request["linux"] for x in seq.calls if x.rpc == "UpdateContainerResources"]
    assert (mem["memoryLimitInBytes"], mem["cpuQuota"]) == (512 << 20, 100000)
    assert (cpu["memoryLimitInBytes"], cpu["cpuQuota"], cpu["cpuShares"]) == (512 << 20, 200000, 1024)
    assert "cpusetCpus" not in cpu  # the resize sends no cpuset


def test_decreases_are_updated_before_increases():
    old = pod(c("up", "500m", "1", "256Mi"), c("down", "1", "2", "512Mi"))
    new = pod(c("up", "1", "2", "512Mi"), c("down", "500m", "1", "256Mi"))
    actions = compute_pod_resize_actions(old, new, {"up", "down"})
    assert [u.name for u in actions.to_update["memory"]] == ["down", "up"]
    assert [u.name for u in actions.to_update["cpu"]] == ["down", "up"]


def test_values_at_the_minimum_cpu_request_and_limit_count_as_equal():
    old, new = pod(c("a", "1m", "5m", "256Mi")), pod(c("a", "2m", "10m", "256Mi"))
    actions = compute_pod_resize_actions(old, new, {"a"})
    assert actions.to_update == {"memory": [], "cpu": []} and not actions.to_restart


def test_a_cpu_request_change_alone_updates_the_cpu():
    old, new = pod(c("a", "500m", "1", "256Mi")), pod(c("a", "700m", "1", "256Mi"))
    assert actions_of(old, new) == [("SetPodCgroupConfig", "cpu", ""), ("UpdateContainerResources", "cpu", "a"),
                                    ("UpdatePodSandboxResources", "", "")]


def test_restart_container_policy_stops_and_starts_the_container_with_a_new_id():
    old = pod(c("a", "500m", "1", "256Mi", {"memory": "RestartContainer"}))
    new = pod(c("a", "500m", "1", "512Mi", {"memory": "RestartContainer"}))
    seq = started(old)
    before = seq.container_ids[("p", "a")]
    steps = seq.resize_pod(new)
    assert [(s["action"], s.get("resource", "")) for s in steps] == [
        ("StopContainer", ""), ("SetPodCgroupConfig", "memory"), ("UpdatePodSandboxResources", ""),
        ("StartContainer", "")]
    rpcs = [x.rpc for x in seq.calls if "RestartContainer" in x.why]
    assert rpcs == ["StopContainer", "CreateContainer", "StartContainer"]
    assert seq.container_ids[("p", "a")] != before
    created = [x for x in seq.calls if x.rpc == "CreateContainer"][-1]
    assert created.request["config"]["linux"]["resources"]["memoryLimitInBytes"] == 512 << 20


def test_a_container_whose_policy_is_not_required_is_updated_not_restarted():
    old = pod(c("a", "500m", "1", "256Mi", {"cpu": "RestartContainer"}))
    new = pod(c("a", "500m", "1", "512Mi", {"cpu": "RestartContainer"}))  # only memory changes
    actions = compute_pod_resize_actions(old, new, {"a"})
    assert not actions.to_restart and [u.name for u in actions.to_update["memory"]] == ["a"]


def test_a_pod_level_resize_updates_the_pod_cgroup_alone():
    """InPlacePodLevelResourcesVerticalScaling: pod-level limits change, the containers' do not."""
    def pod_level(cpu: str) -> Pod:
        return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns",
                                                                              "uid": "p"},
                              "spec": {"resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                                                     "limits": {"cpu": cpu, "memory": "1Gi"}},
                                       "containers": [{"name": "a", "image": "i"}]}})
    seq = started(pod_level("2"))
    steps = seq.resize_pod(pod_level("3"))
    assert [(s["action"], s.get("resource", "")) for s in steps] == [
        ("SetPodCgroupConfig", "cpu"), ("UpdatePodSandboxResources", "")]
    assert steps[0]["files"] == {"cpu.max": "300000 100000"}
