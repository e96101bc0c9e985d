"""Kubernetes objects inside a scenario are strictly decoded, and errors name their place in it."""

from __future__ import annotations

import pytest

from kubetwin.diagnostics import collecting
from kubetwin.errors import InputError


def test_a_misspelt_workload_template_field_names_its_place_in_the_scenario(tmp_path, kit):
    w = kit.workload()
    w["template"]["spec"]["containers"][0]["resorces"] = {}
    with pytest.raises(InputError) as err:
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "workloads": [w]})
    assert 'unknown field "spec.workloads[0].template.spec.containers[0].resorces"' in str(err.value)
    assert "scenario.yaml" in str(err.value)


def test_a_misspelt_node_group_taint_field_is_refused(tmp_path, kit):
    g = kit.group(taints=[{"key": "a", "efect": "NoSchedule"}])
    with pytest.raises(InputError, match='unknown field "spec.nodeGroups\\[0\\].taints\\[0\\].efect"'):
        kit.scenario(tmp_path, {"nodeGroups": [g]})


def test_a_misspelt_kind_in_a_scenario_is_refused_with_the_nearest_kind(tmp_path, kit):
    deploy = {"apiVersion": "apps/v1", "kind": "Deploymnet", "metadata": {"name": "d"}}
    with pytest.raises(InputError, match='kind "Deploymnet" is not supported in a scenario .fix: did you mean "Deployment"'):
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()]}, deploy)


def test_a_statefulsets_volume_claim_templates_are_reported_as_not_modelled(tmp_path, kit):
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
           "spec": {"selector": {"matchLabels": {"app": "db"}}, "serviceName": "db",
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
                    "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c"}]}}}}
    with collecting() as warnings:
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()]}, sts)
    assert any("StatefulSet db): spec.volumeClaimTemplates: field is not modelled by kubetwin" in w for w in warnings)


def test_a_workload_templates_deadline_is_reported_once_for_all_replicas(tmp_path, kit):
    w = kit.workload(count=5)
    w["template"]["spec"]["activeDeadlineSeconds"] = 60
    with collecting() as warnings:
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "workloads": [w]})
    assert [x for x in warnings if "spec.workloads[0].template.spec.activeDeadlineSeconds" in x] and len(warnings) == 1


def test_a_bad_limit_range_in_a_scenario_is_refused_when_read_naming_its_file(tmp_path, kit):
    lr = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l"},
          "spec": {"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}}
    with pytest.raises(InputError) as err:
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()]}, lr)
    assert "scenario.yaml: document 2 (LimitRange l)" in str(err.value)
