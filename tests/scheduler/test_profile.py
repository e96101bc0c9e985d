"""KubeSchedulerConfiguration decoded strictly: unknown or misspelt fields, unknown plugin names, a
plugin configured twice and bad plugin args are errors naming the file and the field path."""

from __future__ import annotations

import pytest

from kubetwin.diagnostics import collecting
from kubetwin.errors import InputError
from kubetwin.scheduler.profile import load_profile, profile_from_config

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _error(cfg: dict) -> str:
    with pytest.raises(InputError) as exc:
        profile_from_config({**API, **cfg}, "sched.yaml")
    return str(exc.value)


def test_a_misspelt_top_level_field_is_refused_with_the_nearest_name():
    msg = _error({"percentageOfNodeToScore": 40})
    assert 'unknown field "percentageOfNodeToScore"' in msg and 'did you mean "percentageOfNodesToScore"' in msg
    assert msg.startswith("sched.yaml")


def test_a_misspelt_profile_field_names_its_path():
    msg = _error({"profiles": [{"schedulerName": "x", "plugin": {}}]})
    assert 'unknown field "profiles[0].plugin"' in msg and 'did you mean "profiles[0].plugins"' in msg


def test_an_unknown_plugin_to_disable_is_refused_with_the_nearest_name():
    msg = _error({"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "NodePort"}]}}}]})
    assert "profiles[0].plugins.multiPoint.disabled[0].name" in msg and 'did you mean "NodePorts"' in msg


def test_a_plugin_configured_twice_is_refused():
    msg = _error({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit"}, {"name": "NodeResourcesFit"}]}]})
    assert "profiles[0].pluginConfig[1].name" in msg and "Duplicate value" in msg


def test_an_unknown_plugin_in_plugin_config_is_refused():
    msg = _error({"profiles": [{"pluginConfig": [{"name": "NodeResourceFit", "args": {}}]}]})
    assert "profiles[0].pluginConfig[0].name" in msg and 'did you mean "NodeResourcesFit"' in msg


def test_a_misspelt_plugin_arg_names_file_and_path():
    msg = _error({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                                  "args": {"scoringStrategy": {"tpye": "MostAllocated"}}}]}]})
    assert msg.startswith("sched.yaml")
    assert 'unknown field "profiles[0].pluginConfig[0].args.scoringStrategy.tpye"' in msg
    assert 'did you mean "profiles[0].pluginConfig[0].args.scoringStrategy.type"' in msg


def test_plugin_args_of_another_kind_are_refused():
    msg = _error({"profiles": [{"pluginConfig": [{"name": "InterPodAffinity",
                                                  "args": {"kind": "NodeAffinityArgs"}}]}]})
    assert "were not of type InterPodAffinityArgs" in msg


def test_plugin_args_of_another_api_version_are_refused():
    msg = _error({"profiles": [{"pluginConfig": [{"name": "InterPodAffinity", "args": {
        "apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "InterPodAffinityArgs"}}]}]})
    assert "profiles[0].pluginConfig[0].args.apiVersion" in msg and "Unsupported value" in msg


@pytest.mark.parametrize("header, field", [({"apiVersion": "fuzz.example.com/v0"}, "apiVersion"),
                                           ({"kind": "NodeAffinityArgs"}, "kind")])
def test_a_plugin_args_file_of_another_type_is_refused(tmp_path, header, field):
    from kubetwin.scheduler.inputs import load_plugin_args

    (tmp_path / "args.yaml").write_text("".join(f"{k}: {v}\n" for k, v in header.items()) + "hardPodAffinityWeight: 1\n")
    with pytest.raises(InputError) as exc:
        load_plugin_args(tmp_path / "args.yaml", "InterPodAffinity")
    assert "args.yaml" in str(exc.value) and exc.value.path == field


def test_a_plugin_args_file_without_apiversion_and_kind_is_read_as_the_plugins_args(tmp_path):
    from kubetwin.scheduler.inputs import load_plugin_args

    (tmp_path / "args.yaml").write_text("hardPodAffinityWeight: 3\n")
    assert load_plugin_args(tmp_path / "args.yaml", "InterPodAffinity")[0] == {"hardPodAffinityWeight": 3}


def test_a_scoring_strategy_without_its_type_is_refused():
    msg = _error({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                                  "args": {"scoringStrategy": {"resources": [{"name": "cpu"}]}}}]}]})
    assert "scoringStrategy.type" in msg and "Unsupported value" in msg


def test_a_resource_weight_left_out_or_zero_is_one():
    prof = profile_from_config({**API, "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}, {"name": "memory"}]}}}]}]})
    from kubetwin.scheduler.plugins.noderesources.fit import NodeResourcesFit

    args = prof.args_of("NodeResourcesFit", NodeResourcesFit)
    assert [(r.name, r.weight) for r in args.resources] == [("cpu", 1), ("memory", 1)]


def test_default_preemption_args_are_read():
    from kubetwin.scheduler.plugins.defaultpreemption.default_preemption import DefaultPreemption

    prof = profile_from_config({**API, "profiles": [{"pluginConfig": [{"name": "DefaultPreemption", "args": {
        "minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": 5}}]}]})
    args = prof.args_of("DefaultPreemption", DefaultPreemption)
    assert (args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute) == (20, 5)


def test_args_for_a_plugin_without_args_are_reported():
    with collecting() as warnings:
        profile_from_config({**API, "profiles": [{"pluginConfig": [{"name": "TaintToleration", "args": {"x": 1}}]}]})
    assert any("TaintToleration takes no args" in w for w in warnings)


def test_an_extension_point_set_kubetwin_does_not_read_is_reported():
    with collecting() as warnings:
        profile_from_config({**API, "profiles": [{"plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}]})
    assert any("plugins.postFilter" in w and "not modelled" in w for w in warnings)


def test_a_configuration_file_with_wide_aliases_is_refused_without_expanding_them(tmp_path):
    anchors = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for k in range(1, 12):
        anchors.append(f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]")
    path = tmp_path / "sched.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                    "extra:\n" + "\n".join("  " + a for a in anchors) + "\n")
    with pytest.raises(InputError) as exc:
        load_profile(path)
    assert str(path) in str(exc.value)


def test_args_of_a_scheduler_plugins_plugin_take_its_config_group():
    from kubetwin.scheduler.profile import check_args_type

    check_args_type({"apiVersion": "kubescheduler.config.x-k8s.io/v1", "kind": "NodeResourceTopologyMatchArgs"},
                    "NodeResourceTopologyMatch", "", "args.yaml")
    with pytest.raises(InputError, match="Unsupported value"):
        check_args_type({"apiVersion": "kubescheduler.config.k8s.io/v1"}, "NodeResourceTopologyMatch", "", "args.yaml")
