"""The policies' configuration resources and Helm values, decoded as the API server and the
plugin decode them: strict, with the CRD's enums, minimums, required fields and defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubetwin.errors import InputError
from kubetwin.runtime.config import decode_policy, helm_merge, load_policy, policy_from_helm


def ta(**spec):
    return {"apiVersion": "config.nri/v1alpha1", "kind": "TopologyAwarePolicy", "metadata": {"name": "default"},
            "spec": {"reservedResources": {"cpu": "750m"}, **spec}}


def balloons(**spec):
    return {"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy", "metadata": {"name": "default"},
            "spec": {"reservedResources": {"cpu": "1"}, **spec}}


def test_crd_defaults_are_filled_in() -> None:
    cfg = decode_policy(ta()).config
    assert (cfg.pin_cpu, cfg.pin_memory, cfg.prefer_isolated, cfg.prefer_shared) == (True, True, True, None)
    assert (cfg.default_cpu_priority, cfg.unlimited_burstable) == ("none", "package")


def test_an_unknown_field_is_refused_with_its_path_and_the_nearest_name() -> None:
    with pytest.raises(InputError) as err:
        decode_policy(ta(preferIsolatedCPU=True), "policy.yaml")
    assert 'unknown field "spec.preferIsolatedCPU"' in str(err.value)
    assert 'did you mean "spec.preferIsolatedCPUs"' in str(err.value)
    assert str(err.value).startswith("policy.yaml: ")


def test_a_mistyped_field_is_refused() -> None:
    with pytest.raises(InputError, match='invalid type for field "spec.colocatePods"'):
        decode_policy(ta(colocatePods="yes"))


@pytest.mark.parametrize("spec, path", [
    ({"unlimitedBurstable": "socket"}, "spec.unlimitedBurstable"),
    ({"defaultCPUPriority": "urgent"}, "spec.defaultCPUPriority"),
    ({"schedulingClasses": [{"name": "rt", "policy": "realtime"}]}, "spec.schedulingClasses[0].policy"),
    ({"cpuClasses": [{"name": "c", "energyPerformancePreference": -1}]},
     "spec.cpuClasses[0].energyPerformancePreference"),
])
def test_crd_enums_and_minimums_are_enforced(spec, path) -> None:
    with pytest.raises(InputError) as err:
        decode_policy(ta(**spec))
    assert err.value.path == path


def test_reserved_resources_are_required() -> None:
    doc = ta()
    del doc["spec"]["reservedResources"]
    with pytest.raises(InputError, match="Required value") as err:
        decode_policy(doc)
    assert err.value.path == "spec.reservedResources"


def test_an_unknown_resource_domain_is_refused() -> None:
    with pytest.raises(InputError, match='unknown resource "cpus"'):
        decode_policy(ta(reservedResources={"cpus": "1"}))


def test_scheduling_class_references_must_resolve() -> None:
    with pytest.raises(InputError, match='unknown scheduling class "nope" for namespace "ns"'):
        decode_policy(ta(namespaceSchedulingClasses={"ns": "nope"}))
    with pytest.raises(InputError, match='invalid QoS class "Gold"'):
        decode_policy(ta(schedulingClasses=[{"name": "x"}], podQoSSchedulingClasses={"Gold": "x"}))


def test_cpu_classes_need_a_shared_class() -> None:
    with pytest.raises(InputError, match="shared CPU class not specified"):
        decode_policy(ta(cpuClasses=[{"name": "turbo"}]))


def test_sst_cpu_classes_are_refused_as_not_modelled() -> None:
    with pytest.raises(InputError, match="SST"):
        decode_policy(ta(cpuClasses=[{"name": "t", "pctPriority": "high"}], sharedPoolCPUClass="t"))


def test_wrong_kind_and_api_version_are_refused() -> None:
    with pytest.raises(InputError, match='unknown policy kind "TopologyAware"'):
        decode_policy({**ta(), "kind": "TopologyAware"})
    with pytest.raises(InputError, match="unknown apiVersion"):
        decode_policy({**ta(), "apiVersion": "config.nri/v1"})


def test_balloons_policy_is_decoded_strictly_with_its_defaults() -> None:
    res = decode_policy(balloons(balloonTypes=[{"name": "full-core", "minCPUs": 2, "maxCPUs": 2}]))
    assert res.policy == "balloons"
    assert res.config.spec["balloonTypes"][0]["allocatorPriority"] == "high"
    with pytest.raises(InputError) as err:
        decode_policy(balloons(balloonTypes=[{"name": "x", "preferNewBalloon": True}]))
    assert 'did you mean "spec.balloonTypes[0].preferNewBalloons"' in str(err.value)
    with pytest.raises(InputError) as err:
        decode_policy(balloons(balloonTypes=[{"name": "x", "shareIdleCPUsInSame": "socket"}]))
    assert err.value.path == "spec.balloonTypes[0].shareIdleCPUsInSame"


def test_helm_values_merge_over_the_chart_defaults() -> None:
    res = policy_from_helm("topology-aware", {"config": {"colocatePods": True}, "nri": {"plugin": {"index": 5}}})
    assert res.config.colocate_pods and res.config.reserved_resources == {"cpu": "750m"}
    assert res.plugin_index == "05"
    assert res.control["rdt"]["enable"] is False


def test_helm_null_removes_a_default_and_lists_replace() -> None:
    assert helm_merge({"a": {"b": 1, "c": 2}, "l": [1, 2]}, {"a": {"b": None}, "l": [3]}) == {"a": {"c": 2}, "l": [3]}


def test_helm_config_errors_name_the_values_path() -> None:
    with pytest.raises(InputError) as err:
        policy_from_helm("topology-aware", {"config": {"pinCPUs": True}}, "values.yaml")
    assert "config.pinCPUs" in str(err.value) and err.value.file == "values.yaml"


def test_an_unknown_chart_value_is_refused() -> None:
    with pytest.raises(InputError, match='unknown chart value "confg"'):
        policy_from_helm("balloons", {"confg": {}})


def test_load_policy_reads_a_file_or_a_chart(tmp_path: Path) -> None:
    p = tmp_path / "policy.yaml"
    p.write_text(yaml.safe_dump(ta(colocateNamespaces=True)))
    assert load_policy(str(p)).config.colocate_namespaces
    assert load_policy("balloons").policy == "balloons"
