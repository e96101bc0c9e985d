"""containerd's CRI plugin: CRI resources into the OCI spec, cgroup paths, the sandbox's spec.

Facts from containerd v2.3.4 ``internal/cri/opts/spec_linux_opts.go`` (``WithResources``),
``internal/cri/opts/spec_opts.go`` (``WithDefaultSandboxShares``),
``internal/cri/server/podsandbox/helpers_linux.go`` (``getCgroupsPath``, ``defaultSandboxOOMAdj``),
``sandbox_run_linux.go`` (sandbox resources as annotations), ``pkg/rdt`` (``ResctrlPrefix`` "").
"""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.runtime.containerd import (
    RuntimeConfig,
    cgroup_dir,
    cgroups_path,
    container_spec,
    resctrl_group,
    sandbox_spec,
    with_resources,
)

RT = RuntimeConfig()


def test_zero_values_are_not_set() -> None:
    assert with_resources({"cpuShares": 2, "cpuQuota": 0, "cpuPeriod": 0, "memoryLimitInBytes": 0}, RT) == \
        {"cpu": {"shares": 2}}


def test_memory_limit_sets_swap_equal_to_it() -> None:
    assert with_resources({"memoryLimitInBytes": 1000}, RT)["memory"] == {"limit": 1000, "swap": 1000}


def test_kubelet_swap_limit_wins() -> None:
    assert with_resources({"memoryLimitInBytes": 1000, "memorySwapLimitInBytes": 3000}, RT)["memory"] == \
        {"limit": 1000, "swap": 3000}


def test_without_swap_controller_no_swap() -> None:
    assert with_resources({"memoryLimitInBytes": 1000}, RuntimeConfig(swap_controller=False))["memory"] == \
        {"limit": 1000}


def test_update_keeps_fields_it_leaves_at_zero() -> None:
    base = with_resources({"cpuShares": 512, "cpusetCpus": "0-63", "memoryLimitInBytes": 1000}, RT)
    assert with_resources({"cpusetCpus": "2-63"}, RT, base) == {"cpu": {"shares": 512, "cpus": "2-63"},
                                                                 "memory": {"limit": 1000, "swap": 1000}}


def test_hugepages_without_the_hugetlb_controller_are_refused() -> None:
    with pytest.raises(InputError, match="hugetlb cgroup controller is missing"):
        with_resources({"hugepageLimits": [{"pageSize": "2MB", "limit": 0}]}, RuntimeConfig(hugetlb_controller=False))


def test_cgroupfs_path_is_parent_and_id() -> None:
    assert cgroups_path("/kubepods/burstable/podu", "abc") == "/kubepods/burstable/podu/abc"
    assert cgroup_dir("/kubepods/burstable/podu/abc") == "/sys/fs/cgroup/kubepods/burstable/podu/abc"


def test_systemd_path_is_a_scope_in_the_pod_slice() -> None:
    parent = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podu.slice"
    assert cgroups_path(parent, "abc") == "kubepods-burstable-podu.slice:cri-containerd:abc"
    assert cgroup_dir(cgroups_path(parent, "abc")) == f"/sys/fs/cgroup{parent}/cri-containerd-abc.scope"


def test_sandbox_gets_two_shares_and_oom_score_adj_minus_998() -> None:
    spec = sandbox_spec({"linux": {"cgroupParent": "/kubepods/podu", "resources": {"cpuShares": 512}}}, "s1")
    assert spec["linux"]["resources"] == {"cpu": {"shares": 2}}
    assert spec["process"]["oomScoreAdj"] == -998
    assert spec["annotations"]["io.kubernetes.cri.sandbox-cpu-shares"] == "512"
    assert spec["linux"]["cgroupsPath"] == "/kubepods/podu/s1"


def test_container_spec_carries_classes_and_oom_score_adj() -> None:
    request = {"config": {"linux": {"resources": {"cpuShares": 2, "oomScoreAdj": 1000}}},
               "sandboxConfig": {"linux": {"cgroupParent": "/kubepods/besteffort/podu"}}}
    spec = container_spec(request, "c1", RT, block_io={"weight": 10}, rdt_class="gold")
    assert spec == {"process": {"oomScoreAdj": 1000},
                    "linux": {"resources": {"cpu": {"shares": 2}, "blockIO": {"weight": 10}},
                              "cgroupsPath": "/kubepods/besteffort/podu/c1", "intelRdt": {"closID": "gold"}}}


def test_resctrl_group_is_the_class_directory() -> None:
    assert resctrl_group("gold") == "/sys/fs/resctrl/gold"
    assert resctrl_group("") == resctrl_group("system/default") == "/sys/fs/resctrl"
    assert resctrl_group(None) is None


def test_only_containerd_is_modelled() -> None:
    with pytest.raises(InputError, match="not modelled"):
        RuntimeConfig(runtime="cri-o")


def test_crun_is_modelled_like_runc_and_others_are_refused() -> None:
    assert RuntimeConfig(oci_runtime="crun").to_dict()["ociRuntime"] == "crun"
    with pytest.raises(InputError, match="not modelled"):
        RuntimeConfig(oci_runtime="youki")


def test_unknown_weight_curve_is_refused() -> None:
    with pytest.raises(InputError, match="cpu.weight curve"):
        RuntimeConfig(cpu_weight_curve="cubic")
