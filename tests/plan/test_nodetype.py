"""``--node-type NAME=MACHINE[,key=value...]``: what it makes, and every bad value refused by path."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubetwin.errors import InputError
from kubetwin.plan.nodetype import parse_node_type


def test_a_node_type_has_the_allocatable_its_kubelet_reports(folder: Path) -> None:
    t = parse_node_type("numa=1s2n4c2t:mem=64Gi,kubelet=kubelet-numa.yaml", root=folder)
    assert t.allocatable()["cpu"] == 15000   # 16 CPUs, one reserved


def test_nodes_of_a_type_are_named_after_it_and_carry_its_labels_and_taints() -> None:
    t = parse_node_type("gpu=1s1n4c2t,labels=pool=gpu,taints=gpu=true:NoSchedule")
    nodes = t.nodes(2)
    assert [n.node.metadata.name for n in nodes] == ["gpu-0", "gpu-1"]
    assert nodes[1].node.metadata.labels["pool"] == "gpu"
    assert nodes[1].node.metadata.labels["kubernetes.io/hostname"] == "gpu-1"
    assert [(x.key, x.value, x.effect) for x in nodes[0].node.spec.taints] == [("gpu", "true", "NoSchedule")]


def test_price_and_max_are_read() -> None:
    t = parse_node_type("a=1s1n4c2t,price=2.5,max=7")
    assert (t.price, t.max, t.priced) == (2.5, 7, True)


def test_without_a_price_a_node_costs_one_and_is_not_priced() -> None:
    t = parse_node_type("a=1s1n4c2t")
    assert (t.price, t.priced) == (1.0, False)


def test_a_dra_driver_publishes_slices_for_each_node() -> None:
    t = parse_node_type("g=1s2n4c2t:gpus=2,dra=gpu.example.com")
    node = t.nodes(1, start=3)[0]
    assert node.slices and all(s["spec"]["nodeName"] == "g-3" for s in node.slices)


@pytest.mark.parametrize(("text", "path", "words"), [
    ("a=1s1n4c2t,prize=2", "--node-type[0].prize", 'did you mean "price"'),
    ("a=nosuchmachine", "--node-type[0].machine", "machine spec"),
    ("a=1s1n4c2t,price=-1", "--node-type[0].price", "positive"),
    ("a=1s1n4c2t,price=0", "--node-type[0].price", "positive"),
    ("a=1s1n4c2t,price=abc", "--node-type[0].price", "must be a number"),
    ("a=1s1n4c2t,max=0", "--node-type[0].max", "at least 1"),
    ("a=1s1n4c2t,max=2.5", "--node-type[0].max", "whole number"),
    ("a=1s1n4c2t,kubelet=missing.yaml", "--node-type[0].kubelet", "no such file"),
    ("a=1s1n4c2t,taints=k=v:Sometimes", "--node-type[0].taints", "NoSchedule"),
    ("a=1s1n4c2t,price=1,price=2", "--node-type[0].price", "twice"),
    ("Big=1s1n4c2t", "--node-type[0].name", "lower-case"),
    ("just-a-name", "--node-type[0]", "NAME=MACHINE"),
    ("a=1s1n4c2t,novalue", "--node-type[0]", "KEY=VALUE"),
])
def test_a_bad_node_type_is_refused_with_its_path(text: str, path: str, words: str) -> None:
    with pytest.raises(InputError) as e:
        parse_node_type(text)
    assert e.value.path == path
    assert words in str(e.value)


def test_a_kubelet_configuration_with_an_unknown_field_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                                     "cpuManagerPolicyy: static\n")
    with pytest.raises(InputError) as e:
        parse_node_type("a=1s1n4c2t,kubelet=k.yaml", root=tmp_path)
    assert "k.yaml" in str(e.value) and "cpuManagerPolicy" in str(e.value)


def test_a_kubelet_configuration_its_managers_refuse_names_the_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "k.yaml").write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                                     "cpuManagerPolicy: static\n")
    with pytest.raises(InputError) as e:
        parse_node_type("a=1s1n4c2t,kubelet=k.yaml", root=tmp_path)
    assert e.value.file == str(tmp_path / "k.yaml") and e.value.path == "kubeReserved.cpu"


def test_devices_from_the_machine_give_the_node_type_its_gpus() -> None:
    t = parse_node_type("gpu=2s2n16c2t:gpus=8,devices=machine")
    assert t.allocatable()["nvidia.com/gpu"] == 8
    assert t.nodes(1)[0].devices is not None


def test_devices_on_a_machine_without_gpus_are_refused() -> None:
    with pytest.raises(InputError, match=r"--node-type\[0\]\.devices"):
        parse_node_type("cpu=1s2n4c2t,devices=machine")
