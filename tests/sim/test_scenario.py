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


def test_an_unknown_kind_is_refused(tmp_path, kit):
    with pytest.raises(InputError, match='kind "Secret" is not supported in a scenario'):
        kit.scenario(tmp_path, {}, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
