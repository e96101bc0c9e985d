"""The Simulation object: node groups, workloads, settings, validated with field paths."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError


def test_node_groups_expand_to_named_nodes_with_zones(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group("g", count=3, zones=["a", "b"])]})
    assert [n.node.metadata.name for n in sc.nodes] == ["g-0", "g-1", "g-2"]
    assert [n.node.metadata.labels["topology.kubernetes.io/zone"] for n in sc.nodes] == ["a", "b", "a"]


def test_a_machine_gives_the_kubelets_allocatable(tmp_path, kit):
    g = {"name": "m", "machine": "1s1n4c2t", "kubeletConfig": {"kubeReserved": {"cpu": "1"}}}
    sc = kit.scenario(tmp_path, {"nodeGroups": [g]})
    assert sc.nodes[0].node.status.allocatable["cpu"].milli_value() == 7000


def test_poisson_arrivals_are_increasing(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group()],
                                 "workloads": [kit.workload(count=20, arrival={"rate": 2})]})
    times = [a.time for a in sc.arrivals]
    assert times == sorted(times) and times[0] > 0


def test_the_replicas_of_a_workload_share_one_spec_object(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "workloads": [kit.workload(count=4, limits=True)]})
    pods = [a.pod for a in sc.arrivals]
    assert all(p.spec is pods[0].spec for p in pods)
    assert [p.metadata.name for p in pods] == ["w-0", "w-1", "w-2", "w-3"]


def test_a_replica_is_the_pod_its_template_decodes_to_with_its_own_name(tmp_path, kit):
    import copy

    from kubetwin.model.pod import pod_from_dict

    w = kit.workload(count=3, limits=True)
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "workloads": [w]})
    template = copy.deepcopy(w["template"])
    template["metadata"] = {"name": "w-2", "uid": "default/w-2", "labels": {"app": "w"}}
    assert sc.arrivals[2].pod == pod_from_dict({"apiVersion": "v1", "kind": "Pod", **template})


@pytest.mark.parametrize("spec, where", [
    ({"nodeGroups": [{"name": "g"}]}, "spec.nodeGroups[0]: Required value: machine or capacity"),
    ({"nodeGroups": [{"name": "g", "count": -1, "capacity": {"cpu": "1"}}]}, "spec.nodeGroups[0].count"),
    ({"nodeGroups": [{"name": "g", "capacity": {"cpu": "1"}, "color": "red"}]}, "spec.nodeGroups[0].color"),
    ({"workloads": [{"name": "w", "template": {"spec": {"containers": [{"name": "c", "resources": {
        "requests": {"cpu": "x"}}}]}}}]}, "spec.workloads[0].template.spec.containers[0].resources.requests"),
    ({"workloads": [{"name": "w", "duration": "soon", "template": {"spec": {}}}]}, "spec.workloads[0].duration"),
    ({"workloads": [{"name": "w", "arrival": {"rate": 0}, "template": {"spec": {}}}]}, "spec.workloads[0].arrival.rate"),
    ({"horizon": "forever"}, "spec.horizon"),
    ({"schedulerConfig": {"percentageOfNodesToScore": 200}}, "spec.schedulerConfig.percentageOfNodesToScore"),
    ({"nodeGroups": [{"name": "g", "machine": "1s1n4c2t", "kubeletConfig": {"cpuManagerPolicy": "fast"}}]},
     "spec.nodeGroups[0].kubeletConfig"),
    ({"bogus": 1}, "spec.bogus"),
])
def test_bad_fields_name_the_file_and_field(tmp_path, kit, spec, where):
    with pytest.raises(InputError) as e:
        kit.scenario(tmp_path, spec)
    msg = str(e.value)
    assert "scenario.yaml" in msg and where in msg


def test_a_pod_defined_twice_is_refused(tmp_path, kit):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    with pytest.raises(InputError, match="pod default/p is defined twice"):
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()]}, pod, pod)


def test_a_manifest_file_listed_twice_in_objects_is_refused_at_once(tmp_path, kit):
    (tmp_path / "objects.yaml").write_text("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 10\n")
    with pytest.raises(InputError, match=r'spec.objects\[1\]: Duplicate value: "objects.yaml"') as e:
        kit.scenario(tmp_path, {"objects": ["objects.yaml"] * 100_000})  # read once, not 100,000 times
    assert "scenario.yaml" in str(e.value)


def test_an_unknown_kind_is_refused(tmp_path, kit):
    with pytest.raises(InputError, match='kind "Secret" is not supported in a scenario'):
        kit.scenario(tmp_path, {}, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})


# --- strict decoding of the Simulation object ---------------------------------------------------------
def _error(tmp_path, kit, spec, *extra) -> str:
    with pytest.raises(InputError) as e:
        kit.scenario(tmp_path, spec, *extra)
    return str(e.value)


def test_misspelt_spec_field_gets_the_nearest_name(tmp_path, kit):
    msg = _error(tmp_path, kit, {"sampleIntervall": "1m"})
    assert 'unknown field "spec.sampleIntervall"' in msg and 'did you mean "spec.sampleInterval"?' in msg


def test_misspelt_node_group_field_gets_the_nearest_name(tmp_path, kit):
    msg = _error(tmp_path, kit, {"nodeGroups": [{**kit.group(), "kubeletConfg": {}}]})
    assert 'did you mean "spec.nodeGroups[0].kubeletConfig"?' in msg


def test_misspelt_field_of_the_embedded_kubelet_configuration_is_refused(tmp_path, kit):
    g = {"name": "m", "machine": "1s1n4c2t", "kubeletConfig": {"topologyManagerPolcy": "restricted"}}
    msg = _error(tmp_path, kit, {"nodeGroups": [g]})
    assert "spec.nodeGroups[0].kubeletConfig" in msg and 'did you mean "topologyManagerPolicy"?' in msg


def test_unknown_top_level_field_of_the_simulation_is_refused(tmp_path, kit):
    p = tmp_path / "scenario.yaml"
    p.write_text("apiVersion: kubetwin.io/v1alpha1\nkind: Simulation\nmetadata: {name: t}\nspec: {}\nstatus: {}\n")
    from kubetwin.sim import load_scenario

    with pytest.raises(InputError, match='unknown field "status"'):
        load_scenario(p)


def test_field_of_the_wrong_type_is_refused(tmp_path, kit):
    assert 'invalid type for field "spec.seed": expected an integer, got string' in _error(tmp_path, kit, {"seed": "7"})


def test_kubernetes_version_written_as_a_number_is_refused(tmp_path, kit):
    # 1.30 as a YAML number is 1.3: it must be quoted
    assert 'invalid type for field "spec.kubernetesVersion"' in _error(tmp_path, kit, {"kubernetesVersion": 1.30})


def test_unknown_kubernetes_version_is_refused_with_its_path(tmp_path, kit):
    assert "spec.kubernetesVersion" in _error(tmp_path, kit, {"kubernetesVersion": "1.20"})


def test_misspelt_feature_gate_is_refused_when_the_scenario_is_read(tmp_path, kit):
    msg = _error(tmp_path, kit, {"featureGates": {"PodLevelResource": True}})
    assert "unrecognized feature gate: PodLevelResource" in msg and 'did you mean "PodLevelResources"?' in msg


def test_inline_and_file_kubelet_configurations_together_are_refused(tmp_path, kit):
    g = {"name": "m", "machine": "1s1n4c2t", "kubeletConfig": {}, "kubeletConfigFile": "k.yaml"}
    assert "kubeletConfig and kubeletConfigFile are both given" in _error(tmp_path, kit, {"nodeGroups": [g]})


def test_inline_and_file_scheduler_configurations_together_are_refused(tmp_path, kit):
    spec = {"schedulerConfig": {}, "schedulerConfigFile": "s.yaml"}
    assert "schedulerConfig and schedulerConfigFile are both given" in _error(tmp_path, kit, spec)


@pytest.mark.parametrize("arrival", [{"at": "1s", "rate": 1}, {"interval": "1s", "rate": 1}, {"at": "1s", "start": "2s"}])
def test_arrival_settings_that_would_be_ignored_are_refused(tmp_path, kit, arrival):
    assert "spec.workloads[0].arrival" in _error(tmp_path, kit, {"workloads": [kit.workload(arrival=arrival)]})


def test_capacity_node_group_with_a_kubelet_configuration_gets_its_allocatable(tmp_path, kit):
    g = kit.group(kubeletConfig={"kubeReserved": {"memory": "1Gi"}})
    sc = kit.scenario(tmp_path, {"nodeGroups": [g]})
    allocatable = sc.nodes[0].node.status.allocatable["memory"].value()
    assert allocatable == 8 * 2**30 - 2**30 - 100 * 2**20  # kubeReserved and the default evictionHard


def test_capacity_node_group_without_a_kubelet_configuration_keeps_its_capacity(tmp_path, kit):
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group()]})
    assert sc.nodes[0].node.status.allocatable["memory"] == sc.nodes[0].node.status.capacity["memory"]


def test_resource_managers_without_a_machine_are_reported_as_not_modelled(tmp_path, kit):
    from kubetwin.diagnostics import collecting

    g = kit.group(kubeletConfig={"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}})
    with collecting() as warnings:
        kit.scenario(tmp_path, {"nodeGroups": [g]})
    assert any("spec.nodeGroups[0].kubeletConfig.cpuManagerPolicy: field is not modelled" in w for w in warnings)


def test_trace_options_of_another_format_are_refused(tmp_path, kit):
    spec = {"traces": [{"format": "pods", "path": "pods.csv", "limit": 10}]}
    assert "spec.traces[0].limit: limit applies to format alibaba-gpu-v2023 only" in _error(tmp_path, kit, spec)


def test_misspelt_duration_kind_gets_the_nearest_name(tmp_path, kit):
    msg = _error(tmp_path, kit, {"workloads": [kit.workload(duration={"exponentail": "10m"})]})
    assert 'unknown duration kind "exponentail"' in msg and 'did you mean "exponential"?' in msg


def test_the_command_line_version_is_the_one_the_kubelets_are_defaulted_for(tmp_path, kit):
    from kubetwin.diagnostics import collecting
    from kubetwin.sim import load_scenario

    kit.scenario(tmp_path, {"kubernetesVersion": "1.36", "nodeGroups": [{"name": "m", "machine": "1s1n4c2t"}]})
    with collecting() as warnings:
        sc = load_scenario(tmp_path / "scenario.yaml", kubernetes_version="1.37")
    assert sc.nodes[0].kubelet.kubernetes_version == "1.37"
    assert sc.nodes[0].kubelet.memory_throttling_factor is None   # the 1.37 default
    assert any("--kubernetes-version 1.37 is used" in w for w in warnings)


@pytest.mark.parametrize("text", ["", "[]\n", "---\n"])
def test_a_scenario_file_with_no_objects_is_refused(tmp_path, text):
    from kubetwin.sim import load_scenario

    (tmp_path / "scenario.yaml").write_text(text)
    with pytest.raises(InputError, match="no objects in the file") as e:
        load_scenario(tmp_path / "scenario.yaml")
    assert e.value.file and e.value.file.endswith("scenario.yaml")


@pytest.mark.parametrize("machine", ["-1", "2s2n8c2t:nonsense", "missing.json", "a" * 5000])  # the last: too long for a path
def test_a_bad_machine_source_names_the_scenario_file(tmp_path, kit, machine):
    with pytest.raises(InputError) as e:
        kit.scenario(tmp_path, {"nodeGroups": [{"name": "g", "machine": machine}]})
    assert e.value.file and "scenario.yaml" in e.value.file and "spec.nodeGroups[0].machine" in str(e.value)


# --- the controllers' selectors (one validator with `kubetwin plan`) ----------------------------------
def _deployment(match: dict[str, str]) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 1, "selector": {"matchLabels": match},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}}}}


def test_a_controller_selector_with_an_invalid_label_key_is_refused(tmp_path, kit):
    text = _error(tmp_path, kit, {}, _deployment({"app": "web", "not a key!": "x"}))
    assert "spec.selector.matchLabels" in text and "label key must be a qualified name" in text


def test_a_controller_selector_that_does_not_match_the_template_is_refused(tmp_path, kit):
    assert "does not match template" in _error(tmp_path, kit, {}, _deployment({"app": "other"}))
