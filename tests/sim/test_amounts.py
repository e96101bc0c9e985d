"""Amounts past int64 are refused when the scenario is read, naming the file and the field."""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError

HUGE_CPU = "9223372036854775807"  # cores: 9.2e21 milli-CPU


def test_a_workload_request_past_int64_milli_cpu_is_refused_with_its_field(tmp_path, kit):
    with pytest.raises(InputError) as e:
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()], "workloads": [kit.workload(cpu=HUGE_CPU)]})
    assert e.value.file and "scenario.yaml" in e.value.file
    assert "spec.workloads[0].template.spec.containers[0].resources.requests.cpu" in str(e.value)
    assert "too large to compute with" in str(e.value)


def test_a_node_group_capacity_past_int64_milli_cpu_is_refused_with_its_field(tmp_path, kit):
    with pytest.raises(InputError, match=r"spec.nodeGroups\[0\].capacity.cpu: Invalid value") as e:
        kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu=HUGE_CPU)]})
    assert e.value.file and "scenario.yaml" in e.value.file


def test_a_pod_object_with_memory_past_int64_bytes_is_refused_with_its_field(tmp_path, kit):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {"memory": "20E"}}}]}}
    with pytest.raises(InputError, match=r"spec.containers\[0\].resources.(requests|limits).memory") as e:
        kit.scenario(tmp_path, {"nodeGroups": [kit.group()]}, pod)
    assert "scenario.yaml" in str(e.value)


def test_a_node_object_with_allocatable_past_int64_is_refused_with_its_field(tmp_path, kit):
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "big"},
            "status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": HUGE_CPU}}}
    with pytest.raises(InputError, match=r"status.allocatable.cpu"):
        kit.scenario(tmp_path, {}, node)


def test_amounts_at_the_edge_of_int64_are_accepted(tmp_path, kit):
    edge = str(((1 << 63) - 1) // 1000)  # cores whose milli-CPU still fit
    sc = kit.scenario(tmp_path, {"nodeGroups": [kit.group(cpu=edge)]})
    assert sc.nodes[0].node.status.capacity["cpu"].milli_value() <= (1 << 63) - 1
