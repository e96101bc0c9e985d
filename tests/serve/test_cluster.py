"""Specifications of loading the served cluster (``kubetwin.serve.cluster``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kubetwin.diagnostics import collecting
from kubetwin.errors import InputError
from kubetwin.serve.cluster import load_cluster

from .cluster_fixture import write_scenario

ROOT = Path(__file__).resolve().parents[2]


def test_running_pods_are_admitted_by_their_nodes_kubelet(tmp_path):
    c = load_cluster([str(write_scenario(tmp_path))])
    assert [p.key for p in c.bound["numa-0"]] == ["default/running"]
    assert [p.name for p in c.kubelets.kubelet("numa-0").admitted] == ["running"]


def test_pods_without_a_node_are_pending(tmp_path):
    c = load_cluster([str(write_scenario(tmp_path))])
    assert list(c.pending) == ["default/waiting"]


def test_a_folder_stands_for_its_scenario_yaml(tmp_path):
    write_scenario(tmp_path)
    assert load_cluster([str(tmp_path)]).sources == [str(tmp_path / "scenario.yaml")]


def test_a_folder_that_is_no_snapshot_is_refused(tmp_path):
    with pytest.raises(InputError, match="not a kubetwin snapshot"):
        load_cluster([str(tmp_path)])


def test_a_running_pod_its_kubelet_rejects_is_kept_and_reported(tmp_path):
    text = write_scenario(tmp_path).read_text().replace('cpu: "4", memory: 1Gi}, limits: {cpu: "4"',
                                                        'cpu: "6", memory: 1Gi}, limits: {cpu: "6"')
    (tmp_path / "scenario.yaml").write_text(text)
    c = load_cluster([str(tmp_path / "scenario.yaml")])
    assert [p.key for p in c.bound["numa-0"]] == ["default/running"]
    assert c.disagreements["numa-0"][0][:2] == ("default/running", "TopologyAffinityError")


def test_a_snapshot_gets_kubelets_from_node_kubelets(tmp_path):
    out = tmp_path / "snap"
    subprocess.run([sys.executable, "-m", "kubetwin", "snapshot", "-f", str(ROOT / "examples/snapshot"), "-o", str(out)],
                   check=True, capture_output=True)
    c = load_cluster([str(out)], kubelets_file=str(ROOT / "examples/serve/kubelets.yaml"))
    assert sorted(c.kubelets.node_names) == ["gpu-0", "node-a", "node-b"]


def test_a_machine_without_the_nodes_capacity_is_warned_about(tmp_path):
    out = tmp_path / "snap"
    subprocess.run([sys.executable, "-m", "kubetwin", "snapshot", "-f", str(ROOT / "examples/snapshot"), "-o", str(out)],
                   check=True, capture_output=True)
    kubelets = tmp_path / "k.yaml"
    kubelets.write_text("apiVersion: kubetwin.io/v1alpha1\nkind: NodeKubelets\n"
                        "spec: {nodes: [{selector: {matchLabels: {pool: gpu}}, machine: 1s1n4c}]}\n")
    with collecting() as warnings:
        load_cluster([str(out)], kubelets_file=str(kubelets))
    assert any("gpu-0: capacity differs from its machine" in str(w) for w in warnings)


def test_a_kubelet_that_cannot_start_from_its_node_kubelets_entry_names_the_entry(tmp_path):
    """A static CPU manager without reserved CPUs stops the kubelet; the error names the
    NodeKubelets file and the entry's kubeletConfig (found by the fuzzer: it named no file)."""
    out = tmp_path / "snap"
    subprocess.run([sys.executable, "-m", "kubetwin", "snapshot", "-f", str(ROOT / "examples/snapshot"), "-o", str(out)],
                   check=True, capture_output=True)
    kubelets = tmp_path / "k.yaml"
    kubelets.write_text("apiVersion: kubetwin.io/v1alpha1\nkind: NodeKubelets\n"
                        "spec: {nodes: [{selector: {}, machine: 1s1n4c, kubeletConfig: {cpuManagerPolicy: static}}]}\n")
    with pytest.raises(InputError) as e:
        load_cluster([str(out)], kubelets_file=str(kubelets))
    assert e.value.file and e.value.file.startswith(str(kubelets))
    assert e.value.path.startswith("spec.nodes[0].kubeletConfig") and "reserved CPU" in e.value.message
