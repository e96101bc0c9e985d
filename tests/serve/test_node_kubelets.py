"""Specifications of the ``NodeKubelets`` file (machine and kubelet configuration by label)."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.serve.node_kubelets import load_node_kubelets, select

HEAD = "apiVersion: kubetwin.io/v1alpha1\nkind: NodeKubelets\n"


def _write(tmp_path, text: str):
    p = tmp_path / "kubelets.yaml"
    p.write_text(HEAD + text)
    return str(p)


def test_the_first_entry_selecting_a_nodes_labels_applies(tmp_path):
    entries = load_node_kubelets(_write(tmp_path, """spec:
  nodes:
  - {selector: {matchLabels: {pool: gpu}}, machine: 2s1n8c2t}
  - {selector: {}, machine: 1s2n4c1t, kubeletConfig: {cpuManagerPolicy: static, reservedSystemCPUs: "0"}}
"""), None)
    gpu, other = select(entries, {"pool": "gpu"}), select(entries, {"pool": "general"})
    assert gpu is not None and gpu.machine.num_cores == 32
    assert other is not None and other.config.cpu_manager_policy == "static"


def test_a_node_no_entry_selects_has_none(tmp_path):
    entries = load_node_kubelets(_write(tmp_path, "spec:\n  nodes:\n  - {selector: {matchLabels: {a: b}}, machine: 1s1n2c}\n"),
                                 None)
    assert select(entries, {"a": "c"}) is None


def test_an_unknown_field_is_refused_with_the_nearest_name(tmp_path):
    with pytest.raises(InputError) as err:
        load_node_kubelets(_write(tmp_path, "spec:\n  nodes:\n  - {selector: {}, machine: 1s1n2c, kubeletConfg: {}}\n"),
                           None)
    assert "kubeletConfig" in str(err.value)


def test_an_unknown_kubelet_field_is_refused_with_its_path(tmp_path):
    with pytest.raises(InputError) as err:
        load_node_kubelets(_write(tmp_path, "spec:\n  nodes:\n  - {selector: {}, machine: 1s1n2c, "
                                            "kubeletConfig: {cpuManagerPolcy: static}}\n"), None)
    assert "spec.nodes[0].kubeletConfig" in str(err.value)


def test_a_missing_selector_is_refused(tmp_path):
    with pytest.raises(InputError, match="selector"):
        load_node_kubelets(_write(tmp_path, "spec:\n  nodes:\n  - {machine: 1s1n2c}\n"), None)


def test_a_bad_machine_spec_is_refused_with_its_path(tmp_path):
    with pytest.raises(InputError) as err:
        load_node_kubelets(_write(tmp_path, "spec:\n  nodes:\n  - {selector: {}, machine: 1x}\n"), None)
    assert "spec.nodes[0].machine" in str(err.value)


def test_the_wrong_kind_is_refused(tmp_path):
    p = tmp_path / "k.yaml"
    p.write_text("apiVersion: kubetwin.io/v1alpha1\nkind: NodeKubelet\nspec: {nodes: [{selector: {}, machine: 1s1n2c}]}\n")
    with pytest.raises(InputError, match="NodeKubelets"):
        load_node_kubelets(str(p), None)
