"""Feature gates and versioned defaults: the upstream history, picked per Kubernetes version."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kubetwin.errors import InputError
from kubetwin.model.features import (
    ALPHA,
    BETA,
    DEFAULT_VERSION,
    FEATURE_GATES,
    GA,
    KNOWN_VERSIONS,
    default_for,
    gates_for,
    parse_feature_gates_flag,
)


def test_default_version_is_1_36():
    assert DEFAULT_VERSION == "1.36" and gates_for().version == "1.36"


def test_every_gate_history_is_in_ascending_version_order():
    for name, specs in FEATURE_GATES.items():
        versions = [tuple(int(p) for p in s.version.split(".")) for s in specs]
        assert versions == sorted(versions), name


def test_every_stage_is_a_known_maturity():
    assert {s.prerelease for specs in FEATURE_GATES.values() for s in specs} <= {ALPHA, BETA, GA, "DEPRECATED"}


def test_locked_gates_are_ga_or_deprecated():
    for name, specs in FEATURE_GATES.items():
        for s in specs:
            if s.locked:
                assert s.prerelease in (GA, "DEPRECATED"), name


@pytest.mark.parametrize("version", KNOWN_VERSIONS)
def test_every_known_version_resolves(version):
    assert gates_for(version).values


@pytest.mark.parametrize("gate, version, default, stage", [
    ("MemoryQoS", "1.36", False, ALPHA), ("MemoryQoS", "1.37", True, BETA),
    ("PodLevelResources", "1.36", True, BETA),
    ("PodLevelResourceManagers", "1.36", False, ALPHA), ("PodLevelResourceManagers", "1.37", False, BETA),
    ("NodeSwap", "1.36", True, GA), ("KubeletPSI", "1.35", True, BETA), ("KubeletPSI", "1.36", True, GA),
    ("DRAAdminAccess", "1.35", True, BETA), ("DRAAdminAccess", "1.36", True, GA),
    ("DRAPrioritizedList", "1.36", True, GA), ("DRAPartitionableDevices", "1.35", False, ALPHA),
    ("DRAPartitionableDevices", "1.36", True, BETA), ("DRADeviceTaintRules", "1.36", False, BETA),
    ("DRAExtendedResource", "1.37", True, GA), ("DRAConsumableCapacity", "1.36", True, BETA),
    ("SchedulerQueueingHints", "1.36", True, GA), ("InPlacePodVerticalScaling", "1.36", True, GA),
    ("CPUManagerPolicyAlphaOptions", "1.36", False, ALPHA), ("CPUManagerPolicyBetaOptions", "1.36", True, BETA),
    ("KubeletSeparateDiskGC", "1.36", True, BETA), ("SidecarContainers", "1.36", True, GA),
])
def test_gate_history_matches_upstream(gate, version, default, stage):
    from kubetwin.model.features import _spec_at

    spec = _spec_at(gate, version)
    assert (spec.default, spec.prerelease) == (default, stage)
    assert gates_for(version).enabled(gate) is default


def test_gate_introduced_later_is_off_at_an_earlier_version():
    assert "KubeletOOMScoreAdjTieBreak" not in gates_for("1.36").values
    assert gates_for("1.36").enabled("KubeletOOMScoreAdjTieBreak") is False


def test_gate_introduced_later_is_honoured_with_a_warning_when_set(capsys):
    assert gates_for("1.36", {"KubeletOOMScoreAdjTieBreak": True}).enabled("KubeletOOMScoreAdjTieBreak") is True
    assert "first appears in Kubernetes 1.37" in capsys.readouterr().err


def test_a_gate_no_release_has_is_refused():
    with pytest.raises(InputError, match="unrecognized feature gate: NoSuchGate"):
        gates_for("1.36", {"NoSuchGate": True})


def test_override_changes_an_unlocked_gate():
    assert gates_for("1.36", {"MemoryQoS": True}).enabled("MemoryQoS") is True


def test_override_of_a_locked_gate_is_ignored_unless_strict():
    assert gates_for("1.36", {"DRAAdminAccess": False}).enabled("DRAAdminAccess") is True
    with pytest.raises(InputError, match="locked to true"):
        gates_for("1.36").with_overrides({"DRAAdminAccess": False}, strict_locks=True)


def test_override_must_be_a_boolean():
    with pytest.raises(InputError) as info:
        gates_for("1.36", {"MemoryQoS": "yes"})  # type: ignore[dict-item]  # a wrong value type on purpose
    assert info.value.path == "featureGates.MemoryQoS"


def test_memory_throttling_factor_default_dropped_in_1_37():
    assert default_for("memoryThrottlingFactor", "1.36") == 0.9
    assert default_for("memoryThrottlingFactor", "1.37") is None


def test_fail_cgroup_v1_defaults_to_true_from_1_35():
    assert default_for("failCgroupV1", "1.34") is False
    assert default_for("failCgroupV1", "1.35") is True


def test_checkpoint_versions_per_release():
    assert default_for("cpuManagerCheckpointVersion", "1.36") == "v2"
    assert default_for("cpuManagerCheckpointVersionPodLevel", "1.36") == "v3"
    assert default_for("cpuManagerCheckpointVersion", "1.37") == "v4"
    assert default_for("draManagerCheckpointAPIVersion", "1.36") == "checkpoint.dra.kubelet.k8s.io/v1"


def test_feature_gates_flag_parses_name_equals_bool():
    assert parse_feature_gates_flag("A=true, B=False") == {"A": True, "B": False}
    with pytest.raises(InputError):
        parse_feature_gates_flag("A=yes")


# --- kubetwin gates ------------------------------------------------------------------------------
def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubetwin", *args], capture_output=True, text=True, timeout=60)


def test_gates_command_lists_gates_of_a_version_as_json():
    proc = run("--kubernetes-version", "1.37", "gates", "-o", "json", "MemoryQoS", "PodLevelResources")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["kubernetesVersion"] == "1.37"
    assert {g["name"]: (g["default"], g["prerelease"]) for g in data["gates"]} == {
        "MemoryQoS": (True, BETA), "PodLevelResources": (True, BETA)}


def test_gates_command_shows_overrides_in_value():
    proc = run("gates", "--feature-gates", "MemoryQoS=true", "-o", "json", "MemoryQoS")
    (gate,) = json.loads(proc.stdout)["gates"]
    assert (gate["default"], gate["value"]) == (False, True)


def test_gates_command_changed_lists_only_this_versions_changes():
    proc = run("--kubernetes-version", "1.36", "gates", "--changed", "-o", "json")
    assert {g["stageSince"] for g in json.loads(proc.stdout)["gates"]} == {"1.36"}


def test_gates_command_refuses_unknown_gate():
    proc = run("gates", "NoSuchGate")
    assert proc.returncode == 1 and "unknown feature gate NoSuchGate" in proc.stderr


def test_gates_command_refuses_unknown_version():
    proc = run("--kubernetes-version", "1.99", "gates")
    assert proc.returncode == 1 and "--kubernetes-version: Kubernetes version 1.99 is not modelled" in proc.stderr


def test_gates_command_refuses_unknown_override():
    proc = run("gates", "--feature-gates", "Foo=true")
    assert proc.returncode == 1 and "--feature-gates.Foo: unrecognized feature gate: Foo" in proc.stderr


def test_setting_a_locked_gate_to_the_other_value_is_ignored_with_a_warning():
    from kubetwin.diagnostics import collecting

    with collecting() as warnings:
        gates = gates_for("1.36", {"SidecarContainers": False})
    assert gates.enabled("SidecarContainers") is True
    assert any("cannot set feature gate SidecarContainers to false, feature is locked to true" in w for w in warnings)


def test_misspelt_gate_gets_the_nearest_known_gate():
    with pytest.raises(InputError) as info:
        gates_for("1.36", {"MemoryQos": True})
    assert "unrecognized feature gate: MemoryQos" in str(info.value) and 'did you mean "MemoryQoS"?' in str(info.value)


def test_feature_gates_flag_takes_go_booleans():
    assert parse_feature_gates_flag("A=true,B=F, C = 1") == {"A": True, "B": False, "C": True}


# --- gates kubetwin does not act on (model/upstream_gates.py) ---------------------------------------------------------
def test_a_real_gate_kubetwin_does_not_act_on_is_accepted_with_a_not_modelled_warning():
    from kubetwin.diagnostics import collecting

    with collecting() as warnings:
        gates_for("1.36", {"ImageVolume": True})
    assert any("feature gate ImageVolume (BETA, default true) is not modelled by kubetwin" in w for w in warnings)


def test_a_real_gate_kubetwin_does_not_act_on_is_refused_under_strict():
    from kubetwin.diagnostics import set_strict

    set_strict(True)
    try:
        with pytest.raises(InputError, match="ImageVolume .* is not modelled"):
            gates_for("1.36", {"ImageVolume": True})
    finally:
        set_strict(False)


def test_a_locked_gate_kubetwin_does_not_act_on_set_to_the_other_value_is_refused():
    with pytest.raises(InputError, match="cannot set feature gate JobManagedBy to false, feature is locked to true"):
        gates_for("1.35", {"JobManagedBy": False})


def test_a_locked_gate_set_to_its_default_is_accepted():
    from kubetwin.diagnostics import collecting

    with collecting():
        gates_for("1.35", {"JobManagedBy": True})


def test_a_misspelt_gate_gets_the_nearest_of_every_known_gate():
    with pytest.raises(InputError, match='did you mean "ImageVolume"'):
        gates_for("1.36", {"ImageVolum": True})


def test_the_upstream_table_and_kubetwins_table_do_not_overlap():
    from kubetwin.model.upstream_gates import UPSTREAM_GATES

    assert not set(UPSTREAM_GATES) & set(FEATURE_GATES)


def test_every_upstream_gate_history_is_ascending_with_known_stages():
    from kubetwin.model.features import _v
    from kubetwin.model.upstream_gates import UPSTREAM_GATES

    for name, specs in UPSTREAM_GATES.items():
        versions = [_v(s[0]) for s in specs]
        assert versions == sorted(versions), name
        assert all(s[2] in ("ALPHA", "BETA", "GA", "DEPRECATED") for s in specs), name
        assert all(s[2] in ("GA", "DEPRECATED") for s in specs if s[3]), name
