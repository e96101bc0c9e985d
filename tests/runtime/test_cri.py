"""The CRI messages the kubelet sends: sandbox config, sandbox resources and overhead, container config.

Facts from kubernetes ``pkg/kubelet/kuberuntime/kuberuntime_sandbox_linux_test.go``
(``TestApplySandboxResources``, v1.36: cgroup v1 and v2, DRA node-allocatable claims, pod-level
resources), ``kuberuntime_sandbox.go`` (``generatePodSandboxLinuxConfig``, ``namespacesForPod``),
``labels.go`` (``newPodLabels``, ``newContainerLabels``), ``kuberuntime_container_linux.go``
(``calculateLinuxResources``) and ``subtractOverheadFromResourceConfig``.
"""

from __future__ import annotations

import pytest

from kubetwin.kubelet.cgroups import CgroupSettings, resource_config_for_pod
from kubetwin.model.features import gates_for
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime import cri

MI = 1 << 20


def settings(v2: bool = True, **gates: bool) -> CgroupSettings:
    return CgroupSettings(gates=gates_for("1.36", gates), cgroup_version=2 if v2 else 1,
                          single_process_oom_kill=not v2)


def pod(spec: dict, status: dict | None = None, meta: dict | None = None):
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod",
                          "metadata": meta or {"name": "bar", "namespace": "new", "uid": "12345678"},
                          "spec": spec, **({"status": status} if status else {})})


def container(req: dict | None = None, lim: dict | None = None, name: str = "c1") -> dict:
    return {"name": name, "resources": {"requests": req or {}, "limits": lim or {}}}


WITH_OVERHEAD = {"containers": [container({"memory": "128Mi", "cpu": "2"}, {"memory": "256Mi", "cpu": "4"})],
                 "overhead": {"memory": "128Mi", "cpu": "1"}}
WITHOUT_OVERHEAD = {"containers": [container({"memory": "128Mi"}, {"memory": "256Mi"})]}
DRA_STATUS = {"nodeAllocatableResourceClaimStatuses": [{
    "resourceClaimName": "direct-claim", "containers": ["c1"],
    "mapping": [{"name": "cpu", "quantity": "200m"}, {"name": "memory", "quantity": "128Mi"}]}]}
OOM_GROUP = {"unified": {"memory.oom.group": "1"}}


@pytest.mark.parametrize("v2", [False, True])
def test_pod_with_overhead(v2: bool) -> None:
    s = settings(v2)
    p = pod(WITH_OVERHEAD)
    extra = OOM_GROUP if v2 else {}
    assert cri.sandbox_resources(p, s) == {"memoryLimitInBytes": 256 * MI, "cpuPeriod": 100000, "cpuQuota": 400000,
                                           "cpuShares": 2048, **extra}
    assert cri.overhead_resources(p, s) == {"memoryLimitInBytes": 128 * MI, "cpuPeriod": 100000, "cpuQuota": 100000,
                                            "cpuShares": 1024, **extra}


@pytest.mark.parametrize("v2", [False, True])
def test_pod_without_overhead(v2: bool) -> None:
    s = settings(v2)
    p = pod(WITHOUT_OVERHEAD)
    assert cri.sandbox_resources(p, s) == {"memoryLimitInBytes": 256 * MI, "cpuPeriod": 100000, "cpuQuota": 0,
                                           "cpuShares": 2, **(OOM_GROUP if v2 else {})}
    assert cri.overhead_resources(p, s) == {}


def test_dra_direct_claims_add_to_requests_and_limits() -> None:
    p = pod({"containers": [container({"memory": "128Mi", "cpu": "2"}, {"memory": "256Mi", "cpu": "4"})]}, DRA_STATUS)
    assert cri.sandbox_resources(p, settings(DRANodeAllocatableResources=True)) == {
        "memoryLimitInBytes": 384 * MI, "cpuPeriod": 100000, "cpuQuota": 420000, "cpuShares": 2252, **OOM_GROUP}


def test_dra_claims_without_container_limits_leave_the_sandbox_unlimited() -> None:
    p = pod({"containers": [container({"memory": "128Mi", "cpu": "2"})]}, DRA_STATUS)
    assert cri.sandbox_resources(p, settings(DRANodeAllocatableResources=True)) == {
        "cpuPeriod": 100000, "cpuQuota": 0, "cpuShares": 2252, **OOM_GROUP}


def test_dra_claims_are_ignored_without_the_gate() -> None:
    p = pod({"containers": [container({"memory": "128Mi", "cpu": "2"}, {"memory": "256Mi", "cpu": "4"})]}, DRA_STATUS)
    assert cri.sandbox_resources(p, settings(DRANodeAllocatableResources=False)) == {
        "memoryLimitInBytes": 256 * MI, "cpuPeriod": 100000, "cpuQuota": 400000, "cpuShares": 2048, **OOM_GROUP}


def test_pod_level_resources_override_containers_and_dra() -> None:
    p = pod({"resources": {"requests": {"cpu": "4", "memory": "512Mi"}, "limits": {"cpu": "8", "memory": "1Gi"}},
             "containers": [container({"cpu": "1", "memory": "128Mi"}, {"cpu": "2", "memory": "256Mi"})]}, DRA_STATUS)
    assert cri.sandbox_resources(p, settings(DRANodeAllocatableResources=True, PodLevelResources=True)) == {
        "memoryLimitInBytes": 1 << 30, "cpuPeriod": 100000, "cpuQuota": 800000, "cpuShares": 4096, **OOM_GROUP}


def test_dra_combined_mapping_and_overhead_claims() -> None:
    status = {"nodeAllocatableResourceClaimStatuses": [{
        "resourceClaimName": "combined-claim", "containers": ["c1"],
        "mapping": [{"name": "cpu", "quantity": "200m"}, {"name": "memory", "quantity": "128Mi"}],
        "overhead": [{"name": "cpu", "perPod": "100m", "perContainer": "50m"},
                     {"name": "memory", "perPod": "100Mi", "perContainer": "50Mi"}]}]}
    p = pod({"containers": [container({"memory": "128Mi", "cpu": "2"}, {"memory": "256Mi", "cpu": "4"})]}, status)
    assert cri.sandbox_resources(p, settings(DRANodeAllocatableResources=True)) == {
        "memoryLimitInBytes": (256 + 128 + 100 + 50) * MI, "cpuPeriod": 100000, "cpuQuota": 435000, "cpuShares": 2406,
        **OOM_GROUP}


def test_exclusive_cpus_lift_the_sandbox_quota() -> None:
    p = pod({"containers": [container({"cpu": "2", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"})]})
    assert cri.sandbox_resources(p, settings(), pod_has_exclusive_cpus=True)["cpuQuota"] == -1


def test_without_cfs_quota_no_period_or_quota() -> None:
    s = CgroupSettings(gates=gates_for("1.36"), cpu_cfs_quota=False)
    assert cri.calculate_linux_resources(500, 1000, 0, s) == {"cpuShares": 512, **OOM_GROUP}


def test_limit_stands_in_for_a_missing_request() -> None:
    assert cri.calculate_linux_resources(None, 1500, 0, settings())["cpuShares"] == 1536


def test_sandbox_config_carries_cgroup_parent_labels_annotations_and_sysctls() -> None:
    p = pod({"hostNetwork": True, "securityContext": {"sysctls": [{"name": "net.core.somaxconn", "value": "1024"}]},
             "containers": [{"name": "c", "securityContext": {"privileged": True}}]},
            meta={"name": "bar", "namespace": "new", "uid": "u1", "labels": {"app": "x"},
                  "annotations": {"blockio.resources.beta.kubernetes.io/pod": "slow"}})
    config = cri.pod_sandbox_config(p, settings(), cgroup_parent="/kubepods/besteffort/podu1")
    assert config["metadata"] == {"name": "bar", "uid": "u1", "namespace": "new"}
    assert config["labels"] == {"app": "x", "io.kubernetes.pod.name": "bar", "io.kubernetes.pod.namespace": "new",
                                "io.kubernetes.pod.uid": "u1"}
    assert config["annotations"] == {"blockio.resources.beta.kubernetes.io/pod": "slow"}
    assert config["logDirectory"] == "/var/log/pods/new_bar_u1"
    linux = config["linux"]
    assert linux["cgroupParent"] == "/kubepods/besteffort/podu1"
    assert linux["sysctls"] == {"net.core.somaxconn": "1024"}
    assert linux["securityContext"] == {"namespaceOptions": {"network": "NODE", "pid": "CONTAINER"}, "privileged": True}
    assert linux["overhead"] == {}


@pytest.mark.parametrize("spec,want", [({}, {"pid": "CONTAINER"}), ({"shareProcessNamespace": True}, {}),
                                       ({"hostPID": True, "hostIPC": True}, {"pid": "NODE", "ipc": "NODE"})])
def test_namespaces_for_pod(spec: dict, want: dict) -> None:
    assert cri.namespaces_for_pod(pod({**spec, "containers": [{"name": "c"}]})) == want


def test_container_config_carries_its_resources_and_labels() -> None:
    p = pod({"containers": [{"name": "c"}]})
    config = cri.container_config(p, p.spec.containers[0], {"cpuShares": 2, "cpuQuota": 0, "cpusetCpus": ""})
    assert config == {"metadata": {"name": "c"},
                      "labels": {"io.kubernetes.container.name": "c", "io.kubernetes.pod.name": "bar",
                                 "io.kubernetes.pod.namespace": "new", "io.kubernetes.pod.uid": "12345678"},
                      "linux": {"resources": {"cpuShares": 2},
                                "securityContext": {"namespaceOptions": {"pid": "CONTAINER"}}}}


def test_zero_values_are_left_out_as_protobuf_json_does() -> None:
    assert cri.prune({"a": 0, "b": "", "c": False, "d": [], "unified": {}, "e": {}, "f": [{"pageSize": "2MB",
                                                                                            "limit": 0}]}) == \
        {"e": {}, "f": [{"pageSize": "2MB"}]}


def test_ids_are_stable_64_hex() -> None:
    p = pod({"containers": [{"name": "c"}]})
    assert cri.sandbox_id(p) == cri.sandbox_id(p) and len(cri.sandbox_id(p)) == 64
    assert cri.container_id(p, "c") != cri.container_id(p, "d")


def test_grace_period_defaults_to_30_and_is_at_least_2() -> None:
    assert cri.grace_period(pod({"containers": [{"name": "c"}]})) == 30
    assert cri.grace_period(pod({"terminationGracePeriodSeconds": 0, "containers": [{"name": "c"}]})) == 2


def test_sandbox_update_subtracts_the_overhead() -> None:
    p = pod(WITH_OVERHEAD)
    rc = resource_config_for_pod(p, settings())
    assert cri.pod_resources_without_overhead(rc, p) == {"cpuPeriod": 100000, "cpuQuota": 400000, "cpuShares": 2048,
                                                         "memoryLimitInBytes": 256 * MI}
