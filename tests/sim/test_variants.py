"""``--variant NAME:KEY=VALUE``: every key checked before a run starts, and every key changes the run."""

from __future__ import annotations

import pytest

from kubetwin.diagnostics import collecting
from kubetwin.errors import InputError
from kubetwin.sim.sweep import RunSpec, parse_variant, run_all


def _refusal(text: str) -> str:
    with pytest.raises(InputError) as info:
        parse_variant(text)
    return str(info.value)


# --- keys ------------------------------------------------------------------------------------------
def test_misspelt_kubelet_field_is_refused_with_the_nearest_key():
    msg = _refusal("x:kubelet.topologyManagerPolcy=none")
    assert 'unknown variant setting "kubelet.topologyManagerPolcy"' in msg
    assert 'did you mean "kubelet.topologyManagerPolicy"?' in msg


def test_misspelt_scope_is_refused_with_the_nearest_scope():
    assert 'did you mean "kubelet.cpuManagerPolicy"?' in _refusal("x:kublet.cpuManagerPolicy=static")


def test_misspelt_feature_gate_is_refused_with_the_nearest_gate():
    msg = _refusal("x:gates.PodLevelResourceManager=true")
    assert "unrecognized feature gate: PodLevelResourceManager" in msg
    assert 'did you mean "PodLevelResourceManagers"?' in msg


def test_unknown_scheduler_setting_is_refused_with_the_nearest_key():
    assert 'did you mean "scheduler.scoringStrategy"?' in _refusal("x:scheduler.scoringStrategie=MostAllocated")


def test_unknown_scoring_strategy_is_refused():
    assert 'Unsupported value: "MostAlocated"' in _refusal("x:scheduler.scoringStrategy=MostAlocated")


def test_percentage_of_nodes_to_score_must_be_in_range():
    assert "not in valid range [0-100]" in _refusal("x:scheduler.percentageOfNodesToScore=101")


def test_misspelt_field_of_a_nested_kubelet_object_is_refused_with_the_nearest_key():
    assert 'did you mean "kubelet.memorySwap.swapBehavior"?' in _refusal("x:kubelet.memorySwap.swapBehaviour=NoSwap")


def test_a_gate_kubetwin_does_not_act_on_is_refused_as_a_variant_that_changes_nothing():
    assert "is not modelled by kubetwin" in _refusal("x:gates.ImageVolume=true")


def test_a_setting_without_a_value_is_refused():
    assert "the setting has no value" in _refusal("x:kubelet.cpuManagerPolicy=")


def test_a_setting_given_twice_is_refused():
    assert "duplicate variant setting" in _refusal("x:kubelet.maxPods=10,kubelet.maxPods=20")


def test_values_take_the_fields_json_type():
    v = parse_variant("x:kubelet.reservedSystemCPUs=0-1,kubelet.maxPods=20,kubelet.cpuCFSQuota=false,"
                      "kubelet.enforceNodeAllocatable=[pods,kube-reserved],kubelet.evictionHard.memory.available=1Gi")
    assert dict(v.kubelet) == {("reservedSystemCPUs",): "0-1", ("maxPods",): 20, ("cpuCFSQuota",): False,
                               ("enforceNodeAllocatable",): ["pods", "kube-reserved"],
                               ("evictionHard", "memory.available"): "1Gi"}


def test_a_value_of_the_wrong_type_is_refused():
    assert "Invalid value: 'many': must be a number" in _refusal("x:kubelet.maxPods=many")


# --- each key changes the run ----------------------------------------------------------------------
def _runs(tmp_path, kit, spec, variant):
    kit.scenario(tmp_path, spec)
    src = ("file", str(tmp_path / "scenario.yaml"))
    return run_all([RunSpec(src), RunSpec(src, parse_variant(variant))], jobs=1)


def _machine_group(**kubelet):
    return {"name": "n", "count": 1, "machine": "1s2n4c2t",
            "kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}, **kubelet}}


def test_a_kubelet_field_variant_changes_admission(tmp_path, kit):
    spec = {"nodeGroups": [_machine_group(topologyManagerPolicy="single-numa-node")],
            "workloads": [kit.workload(count=5, cpu="3", limits=True)]}   # 15 CPUs: 7 + 8 on the NUMA nodes
    base, variant = _runs(tmp_path, kit, spec, "v:kubelet.topologyManagerPolicy=none")
    assert base.summary()["rejectedByKubelet"] == {"TopologyAffinityError": 1}
    assert variant.summary()["rejectedByKubelet"] == {}


def test_a_nested_kubelet_field_variant_changes_allocatable(tmp_path, kit):
    spec = {"nodeGroups": [_machine_group()], "workloads": [kit.workload(count=8, cpu="2")]}
    base, variant = _runs(tmp_path, kit, spec, "v:kubelet.kubeReserved.cpu=3")
    assert base.summary()["scheduled"] == 7 and variant.summary()["scheduled"] == 6   # 15 and 13 CPUs


def test_a_kubelet_variant_changes_capacity_only_nodes_with_a_kubelet_configuration(tmp_path, kit):
    spec = {"nodeGroups": [kit.group(cpu="4", kubeletConfig={})], "workloads": [kit.workload(count=4, cpu="1")]}
    base, variant = _runs(tmp_path, kit, spec, "v:kubelet.systemReserved.cpu=2")
    assert base.summary()["scheduled"] == 4 and variant.summary()["scheduled"] == 2


def test_a_gate_variant_changes_the_kubelets(tmp_path, kit):
    template = {"spec": {"resources": {"requests": {"cpu": "2", "memory": "2Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}},
                         "containers": [{"name": "c"}]}}
    spec = {"nodeGroups": [_machine_group(topologyManagerPolicy="single-numa-node", topologyManagerScope="pod")],
            "workloads": [{"name": "w", "count": 2, "template": template}]}
    base, variant = _runs(tmp_path, kit, spec, "v:gates.PodLevelResourceManagers=true")
    assert base.summary()["exclusiveCpuPods"] == 0 and variant.summary()["exclusiveCpuPods"] == 2


def test_a_scoring_strategy_variant_changes_placement(tmp_path, kit):
    spec = {"nodeGroups": [kit.group(count=2)], "workloads": [kit.workload(count=2, cpu="1")]}
    base, variant = _runs(tmp_path, kit, spec, "v:scheduler.scoringStrategy=MostAllocated")
    assert len({p.node for p in base.pods}) == 2 and len({p.node for p in variant.pods}) == 1


def test_a_percentage_of_nodes_to_score_variant_changes_placement_on_a_large_cluster(tmp_path, kit):
    spec = {"nodeGroups": [kit.group(count=150)], "workloads": [kit.workload(count=10, cpu="1")]}
    base, variant = _runs(tmp_path, kit, spec, "v:scheduler.percentageOfNodesToScore=100")
    assert [p.node for p in base.pods] != [p.node for p in variant.pods]


def test_a_percentage_of_nodes_to_score_variant_on_a_small_cluster_is_reported(tmp_path, kit):
    spec = {"nodeGroups": [kit.group(count=2)], "workloads": [kit.workload()]}
    kit.scenario(tmp_path, spec)
    from kubetwin.sim.sweep import load_run

    with collecting() as warnings:
        load_run(RunSpec(("file", str(tmp_path / "scenario.yaml")), parse_variant("v:scheduler.percentageOfNodesToScore=10")))
    assert any("changes nothing here" in w for w in warnings)


def test_a_kubelet_variant_on_a_scenario_without_kubelets_is_refused(tmp_path, kit):
    kit.scenario(tmp_path, {"nodeGroups": [kit.group()]})
    from kubetwin.sim.sweep import load_run

    with pytest.raises(InputError, match="no node of the scenario has a kubelet to change"):
        load_run(RunSpec(("file", str(tmp_path / "scenario.yaml")), parse_variant("v:kubelet.maxPods=10")))


def test_a_kubelet_variant_on_a_scenario_without_kubelets_names_the_scenario_file(tmp_path, kit):
    kit.scenario(tmp_path, {"nodeGroups": [kit.group()]})
    from kubetwin.sim.sweep import load_run

    with pytest.raises(InputError) as info:
        load_run(RunSpec(("file", str(tmp_path / "scenario.yaml")), parse_variant("v:kubelet.maxPods=10")))
    assert info.value.file and info.value.file.endswith("scenario.yaml")


def test_an_invalid_kubelet_value_is_refused_naming_the_variant(tmp_path, kit):
    kit.scenario(tmp_path, {"nodeGroups": [_machine_group()]})
    from kubetwin.sim.sweep import load_run

    with pytest.raises(InputError) as info:
        load_run(RunSpec(("file", str(tmp_path / "scenario.yaml")), parse_variant("v:kubelet.topologyManagerPolicy=strict")))
    assert "--variant v" in str(info.value) and "topologyManagerPolicy" in str(info.value)


def test_a_misspelt_scoring_strategy_is_refused_with_the_nearest_one():
    with pytest.raises(InputError) as info:
        parse_variant("x:scheduler.scoringStrategy=MostAlocated")
    assert info.value.fix == 'did you mean "MostAllocated"?'


def test_a_kubelet_variant_changes_the_nodes_the_cluster_autoscaler_adds(tmp_path, kit):
    # the group starts empty: its template node is the only place the setting can go
    group = {**_machine_group(topologyManagerPolicy="single-numa-node"), "count": 0, "minSize": 0, "maxSize": 3}
    spec = {"nodeGroups": [kit.group(cpu="1"), group],   # 15 CPUs a node: 7 + 8 on the NUMA nodes
            "workloads": [kit.workload(count=5, cpu="3", limits=True)],
            "horizon": "30m", "autoscaling": {"clusterAutoscaler": {}}}
    with collecting():   # the capacity-only group has no kubelet to change: reported
        base, variant = _runs(tmp_path, kit, spec, "v:kubelet.topologyManagerPolicy=none")
    assert base.summary()["rejectedByKubelet"] == {"TopologyAffinityError": 1}
    assert variant.summary()["rejectedByKubelet"] == {}
