"""KubeletConfiguration: the kubelet's defaults, its validation messages, thresholds and node allocatable."""

from __future__ import annotations

import pytest

from kubetwin.diagnostics import collecting, strict_mode
from kubetwin.errors import InputError
from kubetwin.model.cpuset import CPUSet
from kubetwin.model.duration import Duration
from kubetwin.model.kubelet_config import (
    DEFAULT_EVICTION_HARD,
    KubeletConfiguration,
    load_kubelet_config,
)
from kubetwin.model.quantity import parse_quantity


def cfg(version: str | None = None, **fields) -> KubeletConfiguration:
    return KubeletConfiguration.from_dict(fields, version)


def error(version: str | None = None, **fields) -> InputError:
    with pytest.raises(InputError) as info:
        KubeletConfiguration.from_dict(fields, version, file="kubelet.yaml")
    return info.value


# --- defaults -----------------------------------------------------------------------------------
def test_empty_configuration_takes_the_kubelet_defaults():
    c = cfg()
    assert (c.cpu_manager_policy, c.memory_manager_policy) == ("none", "None")
    assert (c.topology_manager_policy, c.topology_manager_scope) == ("none", "container")
    assert c.cpu_cfs_quota is True and c.cpu_cfs_quota_period == Duration.parse("100ms")
    assert c.cpu_manager_reconcile_period == Duration.parse("10s")
    assert c.eviction_pressure_transition_period == Duration.parse("5m")
    assert c.enforce_node_allocatable == ("pods",)
    assert (c.max_pods, c.pod_pids_limit, c.cgroup_driver, c.cgroups_per_qos) == (110, -1, "cgroupfs", True)
    assert (c.image_gc_high_threshold_percent, c.image_gc_low_threshold_percent) == (85, 80)
    assert c.fail_swap_on is True and c.local_storage_capacity_isolation is True
    assert c.memory_reservation_policy == "None"
    assert c.reserved_system_cpus == CPUSet()


def test_load_without_a_file_is_all_defaults():
    assert load_kubelet_config(None) == cfg()


def test_zero_values_of_non_pointer_fields_are_defaulted_like_go():
    c = cfg(maxPods=0, evictionPressureTransitionPeriod="0s", cpuManagerPolicy="", cpuManagerReconcilePeriod="0s")
    assert c.max_pods == 110
    assert c.eviction_pressure_transition_period == Duration.parse("5m")
    assert c.cpu_manager_policy == "none"
    assert c.cpu_manager_reconcile_period == Duration.parse("10s")


def test_explicit_false_of_pointer_fields_is_kept():
    c = cfg(cpuCFSQuota=False, failSwapOn=False, localStorageCapacityIsolation=False)
    assert (c.cpu_cfs_quota, c.fail_swap_on, c.local_storage_capacity_isolation) == (False, False, False)


def test_explicit_empty_enforce_node_allocatable_stays_empty():
    assert cfg(enforceNodeAllocatable=[]).enforce_node_allocatable == ()


def test_negative_pod_pids_limit_defaults_to_minus_one():
    assert cfg(podPidsLimit=-5).pod_pids_limit == -1


def test_memory_throttling_factor_defaults_to_0_9_up_to_1_36():
    assert cfg("1.36").memory_throttling_factor == 0.9


def test_memory_throttling_factor_has_no_default_from_1_37():
    assert cfg("1.37").memory_throttling_factor is None


def test_explicit_memory_throttling_factor_is_kept_on_1_37():
    assert cfg("1.37", memoryThrottlingFactor=0.8).memory_throttling_factor == 0.8


def test_known_fields_irrelevant_to_resource_management_are_accepted_silently():
    with collecting() as warnings:
        assert cfg(staticPodPath="/etc/kubernetes/manifests", address="0.0.0.0",
                   authentication={"webhook": {"enabled": True, "cacheTTL": "2m"}},
                   logging={"format": "text", "flushFrequency": 5000000000}) == cfg()
    assert warnings == []


def test_single_process_oom_kill_unset_depends_on_cgroup_version():
    c = cfg()
    assert c.single_process_oom_kill is None
    assert c.single_process_oom_kill_for(cgroup_v2=False) is True
    assert c.single_process_oom_kill_for(cgroup_v2=True) is False
    assert cfg(singleProcessOOMKill=True).single_process_oom_kill_for(cgroup_v2=True) is True


def test_typed_fields_are_parsed():
    c = cfg(reservedSystemCPUs="0-1,8", kubeReserved={"cpu": "500m", "memory": "1Gi"},
            reservedMemory=[{"numaNode": 1, "limits": {"memory": "1Gi", "hugepages-2Mi": "2Mi"}}],
            memorySwap={"swapBehavior": "LimitedSwap"}, cpuManagerPolicyOptions={"full-pcpus-only": "true"})
    assert c.reserved_system_cpus == CPUSet([0, 1, 8])
    assert c.kube_reserved["cpu"] == parse_quantity("500m")
    assert c.reserved_memory[0].numa_node == 1
    assert c.reserved_memory[0].limits["hugepages-2Mi"] == parse_quantity("2Mi")
    assert c.memory_swap.swap_behavior == "LimitedSwap"
    assert c.cpu_manager_policy_options == {"full-pcpus-only": "true"}


def test_configuration_is_immutable():
    c = cfg()
    with pytest.raises(AttributeError):
        c.max_pods = 5  # type: ignore[misc]  # assigning a frozen field on purpose


# --- feature gates --------------------------------------------------------------------------------
def test_feature_gates_apply_over_the_version_defaults():
    c = cfg(featureGates={"MemoryQoS": True})
    assert c.enabled("MemoryQoS") is True
    assert c.enabled("PodLevelResources") is True
    assert c.kubernetes_version == "1.36"


def test_unknown_feature_gate_is_refused_with_its_path():
    e = error(featureGates={"NoSuchGate": True})
    assert "unrecognized feature gate: NoSuchGate" in str(e)
    assert "kubelet.yaml: featureGates.NoSuchGate" in str(e)


# --- header and value errors ----------------------------------------------------------------------
def test_wrong_api_version_is_refused():
    e = error(apiVersion="kubelet.config.k8s.io/v1alpha1")
    assert str(e).startswith("kubelet.yaml: apiVersion: ")


def test_wrong_kind_is_refused():
    assert "kubelet.yaml: kind: " in str(error(kind="Pod"))


def test_unknown_cpu_manager_policy_is_refused():
    assert str(error(cpuManagerPolicy="dynamic")).startswith('kubelet.yaml: cpuManagerPolicy: unknown policy: "dynamic"')


def test_memory_manager_policy_is_case_sensitive():
    assert "memoryManagerPolicy: unknown policy" in str(error(memoryManagerPolicy="static"))


def test_unknown_topology_manager_policy_gets_the_kubelet_message():
    e = error(topologyManagerPolicy="best")
    assert ('topologyManagerPolicy: invalid configuration: topologyManagerPolicy (--topology-manager-policy) "best" '
            'must be one of: ["none" "best-effort" "restricted" "single-numa-node"]') in str(e)


def test_unknown_topology_manager_scope_is_refused():
    assert 'topologyManagerScope (--topology-manager-scope) "node" must be one of: "container", or "pod"' in str(
        error(topologyManagerScope="node"))


def test_bad_quantity_names_the_resource_field():
    e = error(kubeReserved={"memory": "1Gb"})
    assert "kubelet.yaml: kubeReserved.memory: " in str(e)


def test_unreservable_resource_is_refused():
    assert 'systemReserved.nvidia.com/gpu: cannot reserve "nvidia.com/gpu" resource' in str(
        error(systemReserved={"nvidia.com/gpu": "1"}))


def test_negative_reservation_is_refused():
    assert 'resource quantity for "cpu" cannot be negative' in str(error(kubeReserved={"cpu": "-1"}))


def test_unparsable_reserved_system_cpus_is_refused():
    e = error(reservedSystemCPUs="0-x")
    assert "kubelet.yaml: reservedSystemCPUs: invalid configuration: unable to parse reservedSystemCPUs" in str(e)


def test_reserved_cpus_with_reserved_cgroups_are_refused():
    assert "can't use reservedSystemCPUs" in str(error(reservedSystemCPUs="0", systemReservedCgroup="/system"))


def test_bad_duration_names_the_field():
    e = error(evictionPressureTransitionPeriod="5 minutes")
    assert 'kubelet.yaml: evictionPressureTransitionPeriod: time: unknown unit " minutes"' in str(e)


def test_duration_must_be_a_string():
    assert 'kubelet.yaml: failed to decode: invalid type for field "cpuManagerReconcilePeriod": expected a string' \
        in str(error(cpuManagerReconcilePeriod=10))


def test_wrong_scalar_type_names_the_field():
    assert 'kubelet.yaml: failed to decode: invalid type for field "maxPods": expected an integer, got string' \
        in str(error(maxPods="many"))


def test_custom_cfs_period_needs_its_gate():
    e = error(cpuCFSQuotaPeriod="5ms")
    assert "cpuCFSQuotaPeriod: invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) 5ms requires " \
           "feature gate CustomCPUCFSQuotaPeriod" in str(e)


def test_custom_cfs_period_with_its_gate_is_accepted():
    c = cfg(cpuCFSQuotaPeriod="5ms", featureGates={"CustomCPUCFSQuotaPeriod": True})
    assert c.cpu_cfs_quota_period == Duration.parse("5ms")


def test_custom_cfs_period_must_be_between_1ms_and_1s():
    assert "must be between 1ms and 1sec, inclusive" in str(
        error(cpuCFSQuotaPeriod="2s", featureGates={"CustomCPUCFSQuotaPeriod": True}))


def test_image_gc_low_must_be_below_high():
    assert "imageGCLowThresholdPercent (--image-gc-low-threshold) 90 must be less than" in str(
        error(imageGCLowThresholdPercent=90))


def test_memory_throttling_factor_must_be_in_0_1():
    assert "memoryThrottlingFactor 1.5 must be greater than 0 and less than or equal to 1.0" in str(
        error(memoryThrottlingFactor=1.5))


def test_unknown_swap_behavior_is_refused():
    assert 'memorySwap.swapBehavior: invalid configuration: memorySwap.swapBehavior "Unlimited"' in str(
        error(memorySwap={"swapBehavior": "Unlimited"}))


def test_unknown_memory_reservation_policy_is_refused():
    assert "memoryReservationPolicy" in str(error(memoryReservationPolicy="Tiered"))


def test_enforce_node_allocatable_system_reserved_needs_its_cgroup():
    e = error(enforceNodeAllocatable=["pods", "system-reserved"])
    assert "kubelet.yaml: enforceNodeAllocatable[1]: invalid configuration: systemReservedCgroup" in str(e)


def test_enforce_node_allocatable_unknown_option_is_refused():
    assert 'option "all" specified for enforceNodeAllocatable' in str(error(enforceNodeAllocatable=["all"]))


def test_enforce_node_allocatable_needs_cgroups_per_qos():
    assert "not supported unless cgroupsPerQOS" in str(error(cgroupsPerQOS=False))


def test_reserved_memory_duplicate_is_refused():
    e = error(reservedMemory=[{"numaNode": 0, "limits": {"memory": "1Gi"}}, {"numaNode": 0, "limits": {"memory": "1Gi"}}])
    assert 'reservedMemory[1].limits.memory: invalid configuration: the reserved memory has a duplicate value for ' \
           'NUMA node 0 and resource "memory"' in str(e)


def test_reserved_memory_zero_is_refused():
    assert "reserved memory may not be zero for NUMA node 0" in str(
        error(reservedMemory=[{"numaNode": 0, "limits": {"memory": "0"}}]))


def test_reserved_memory_of_cpu_is_refused():
    assert 'the limit type "cpu" for NUMA node 0 is not supported' in str(
        error(reservedMemory=[{"numaNode": 0, "limits": {"cpu": "1"}}]))


# --- eviction thresholds --------------------------------------------------------------------------
def signals(thresholds) -> set[tuple[str, str]]:
    return {(t.signal, str(t.value)) for t in thresholds}


def test_absent_eviction_hard_means_the_default_thresholds_and_the_allocatable_copy():
    c = cfg()
    assert not c.eviction_hard_given
    assert signals(c.eviction_thresholds()) == set(DEFAULT_EVICTION_HARD.items()) | {
        ("allocatableMemory.available", "100Mi")}


def test_given_eviction_hard_replaces_the_defaults():
    c = cfg(evictionHard={"memory.available": "1Gi"}, enforceNodeAllocatable=[])
    assert c.eviction_hard_given
    assert signals(c.eviction_thresholds()) == {("memory.available", "1Gi")}


def test_empty_eviction_hard_means_no_hard_thresholds():
    assert cfg(evictionHard={}).eviction_thresholds() == ()


def test_merge_default_eviction_settings_fills_missing_signals():
    c = cfg(evictionHard={"memory.available": "1Gi"}, mergeDefaultEvictionSettings=True, enforceNodeAllocatable=[])
    assert signals(c.eviction_thresholds()) == {**DEFAULT_EVICTION_HARD, "memory.available": "1Gi"}.items()


def test_zero_and_hundred_percent_drop_the_threshold():
    c = cfg(evictionHard={"memory.available": "0%", "nodefs.available": "100%"})
    assert c.eviction_thresholds() == ()


def test_percentage_is_float32():
    (t,) = cfg(evictionHard={"memory.available": "20%"}, enforceNodeAllocatable=[]).eviction_thresholds()
    # float32(20)/100 = 0.200000003; 1048576000 * 0.200000003 = 209715203.1, truncated
    assert t.value.amount(parse_quantity("1000Mi")).value() == 209715203


def test_soft_threshold_takes_its_grace_period_and_min_reclaim():
    c = cfg(evictionHard={}, evictionSoft={"memory.available": "300Mi"},
            evictionSoftGracePeriod={"memory.available": "30s"}, evictionMinimumReclaim={"memory.available": "500Mi"})
    (t,) = c.eviction_thresholds()
    assert t.grace_period == Duration.parse("30s") and not t.is_hard
    assert str(t.min_reclaim) == "500Mi"


def test_min_reclaim_applies_to_the_allocatable_copy():
    c = cfg(evictionHard={"memory.available": "100Mi"}, evictionMinimumReclaim={"memory.available": "1Gi"})
    assert {str(t.min_reclaim) for t in c.eviction_thresholds()} == {"1Gi"}


def test_unsupported_signal_is_refused():
    e = error(evictionHard={"memory.available": "150Mi", "invalid.foo": "150Mi"})
    assert "kubelet.yaml: evictionHard[invalid.foo]: unsupported eviction signal invalid.foo" in str(e)


def test_negative_threshold_is_refused():
    assert "eviction threshold memory.available must be positive: -150Mi" in str(
        error(evictionSoft={"memory.available": "-150Mi"}, evictionSoftGracePeriod={"memory.available": "30s"}))


def test_percentage_above_hundred_is_refused():
    assert "eviction percentage threshold nodefs.available must be <= 100%: 150%" in str(
        error(evictionHard={"nodefs.available": "150%"}))


def test_negative_percentage_is_refused():
    assert "eviction percentage threshold nodefs.available must be >= 0%: -15%" in str(
        error(evictionHard={"nodefs.available": "-15%"}))


def test_soft_threshold_without_grace_period_is_refused():
    assert "grace period must be specified for the soft eviction threshold memory.available" in str(
        error(evictionSoft={"memory.available": "150Mi"}))


def test_negative_grace_period_is_refused():
    assert "invalid eviction grace period specified: -30s, must be a positive value" in str(
        error(evictionSoft={"memory.available": "150Mi"}, evictionSoftGracePeriod={"memory.available": "-30s"}))


def test_negative_min_reclaim_is_refused():
    assert "negative eviction minimum reclaim specified for memory.available" in str(
        error(evictionMinimumReclaim={"memory.available": "-300Mi"}))


def test_zero_percent_min_reclaim_is_refused():
    assert "eviction percentage minimum reclaim memory.available must be positive: 0%" in str(
        error(evictionMinimumReclaim={"memory.available": "0%"}))


# --- node allocatable ---------------------------------------------------------------------------
CAPACITY = {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "100Gi", "pods": "110"}


def test_allocatable_subtracts_reservations_and_hard_eviction():
    c = cfg(kubeReserved={"cpu": "500m", "memory": "1Gi"}, systemReserved={"cpu": "500m", "memory": "1Gi"})
    alloc = c.node_allocatable(CAPACITY)
    assert alloc["cpu"] == parse_quantity("7")
    assert alloc["memory"] == parse_quantity("32Gi") - parse_quantity("2Gi") - parse_quantity("100Mi")
    assert alloc["ephemeral-storage"].value() == 107374182400 - int(107374182400 * 0.10000000149011612)
    assert alloc["pods"] == parse_quantity("110")


def test_allocatable_ignores_soft_thresholds():
    c = cfg(evictionHard={}, evictionSoft={"memory.available": "1Gi"}, evictionSoftGracePeriod={"memory.available": "1m"})
    assert c.node_allocatable(CAPACITY)["memory"] == parse_quantity("32Gi")


def test_allocatable_subtracts_hugepages_from_memory():
    c = cfg(evictionHard={})
    alloc = c.node_allocatable({**CAPACITY, "hugepages-1Gi": "4Gi", "hugepages-2Mi": "512Mi"})
    assert alloc["memory"] == parse_quantity("28160Mi")  # 32Gi - 4Gi - 512Mi
    assert alloc["hugepages-1Gi"] == parse_quantity("4Gi")


def test_allocatable_is_never_negative():
    c = cfg(kubeReserved={"cpu": "16"})
    assert c.node_allocatable(CAPACITY)["cpu"].is_zero()


# --- files ----------------------------------------------------------------------------------------
def test_load_from_file_names_the_file_in_errors(tmp_path):
    path = tmp_path / "kubelet.yaml"
    path.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: -1\n")
    with pytest.raises(InputError) as info:
        load_kubelet_config(path)
    assert str(info.value).startswith(f"{path}: maxPods: invalid configuration: maxPods (--max-pods) -1")


def test_load_from_file_reads_the_version(tmp_path):
    path = tmp_path / "kubelet.yaml"
    path.write_text("kind: KubeletConfiguration\ncpuManagerPolicy: static\n")
    c = load_kubelet_config(path, "1.37")
    assert (c.cpu_manager_policy, c.kubernetes_version, c.memory_throttling_factor) == ("static", "1.37", None)


# --- strict decoding (k8s.io/kubelet/config/v1beta1 types.go) -----------------------------------------
def test_misspelt_field_is_refused_with_the_strict_decoders_words_and_the_nearest_name():
    e = error(cpuManagerPolcy="static")
    assert str(e).startswith('kubelet.yaml: strict decoding error: unknown field "cpuManagerPolcy"')
    assert 'did you mean "cpuManagerPolicy"?' in str(e)


def test_refusal_says_that_a_real_kubelet_would_ignore_the_field():
    assert "Using lenient decoding as strict decoding failed" in str(error(topologyManagerPolcy="none"))


def test_every_unknown_field_is_listed_in_one_error():
    e = error(cpuManagerPolcy="static", memoryManagerPolcy="Static")
    assert 'unknown field "cpuManagerPolcy"' in str(e) and 'unknown field "memoryManagerPolcy"' in str(e)


def test_unknown_nested_field_is_refused_with_its_path():
    e = error(memorySwap={"swapBehaviour": "LimitedSwap"})
    assert 'unknown field "memorySwap.swapBehaviour"' in str(e)
    assert 'did you mean "memorySwap.swapBehavior"?' in str(e)


def test_unknown_field_of_a_reserved_memory_entry_is_refused():
    e = error(reservedMemory=[{"numaNode": 0, "limit": {"memory": "1Gi"}}])
    assert 'unknown field "reservedMemory[0].limit"' in str(e)


def test_string_map_values_must_be_strings_as_in_go():
    e = error(kubeReserved={"cpu": 1})
    assert 'invalid type for field "kubeReserved.cpu"' in str(e)


def test_reserved_memory_limits_take_quantities_as_numbers_too():
    c = cfg(reservedMemory=[{"numaNode": 0, "limits": {"memory": 1073741824}}])
    assert c.reserved_memory[0].limits["memory"] == parse_quantity("1Gi")


def test_internal_field_names_are_not_accepted_from_a_file():
    assert 'unknown field "x-kubetwin-gates"' in str(error(**{"x-kubetwin-gates": {}}))


def test_field_of_a_later_release_is_read_with_a_warning_naming_it():
    with collecting() as warnings:
        c = cfg("1.35", memoryReservationPolicy="TieredReservation")
    assert c.memory_reservation_policy == "TieredReservation"
    assert any("memoryReservationPolicy" in w and "Kubernetes 1.36" in w for w in warnings)


def test_field_of_a_later_release_is_known_at_that_release():
    with collecting() as warnings:
        cfg("1.37", defaultPodSysctls={"net.ipv4.ip_forward": "1"})
    assert warnings == []


def test_field_of_a_later_release_is_an_error_under_strict():
    with strict_mode(), pytest.raises(InputError):
        cfg("1.34", tlsCurvePreferences=[23])


# --- known fields kubetwin does not model ------------------------------------------------------------
def test_image_garbage_collection_thresholds_are_reported_as_not_modelled():
    with collecting() as warnings:
        cfg(imageGCHighThresholdPercent=90)
    assert any("imageGCHighThresholdPercent" in w and "not modelled by kubetwin" in w for w in warnings)


def test_kernel_memcg_notification_is_reported_only_when_turned_on():
    with collecting() as warnings:
        cfg(kernelMemcgNotification=False)
    assert warnings == []
    with collecting() as warnings:
        cfg(kernelMemcgNotification=True)
    assert any("kernelMemcgNotification" in w for w in warnings)


def test_enforcing_system_reserved_cgroups_is_reported_as_not_modelled():
    with collecting() as warnings:
        cfg(enforceNodeAllocatable=["pods", "system-reserved"], systemReservedCgroup="/system.slice")
    assert any("enforceNodeAllocatable" in w for w in warnings)


def test_not_modelled_field_is_an_error_under_strict():
    with strict_mode(), pytest.raises(InputError) as info:
        KubeletConfiguration.from_dict({"registerWithTaints": [{"key": "a", "effect": "NoSchedule"}]},
                                       file="kubelet.yaml")
    assert "kubelet.yaml: registerWithTaints: field is not modelled by kubetwin" in str(info.value)
