"""The workload plan reads: controllers, StatefulSets, DaemonSets, HPAs, bare pods, snapshot folders."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kubetwin.errors import InputError
from kubetwin.plan.nodetype import parse_node_type
from kubetwin.plan.workload import read_workload, scenario_for

from .conftest import deployment, write

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "solo", "namespace": "default"},
       "spec": {"nodeName": "old-node", "containers": [{"name": "c", "image": "x",
                                                        "resources": {"requests": {"cpu": "1"}}}]},
       "status": {"phase": "Running"}}


def _pods(sc) -> list[str]:
    return sorted(a.pod.name for a in sc.arrivals)


def test_a_bare_pod_is_scheduled_afresh_without_its_node_name(tmp_path: Path) -> None:
    wl = read_workload([write(tmp_path, "p.yaml", POD)])
    sc = scenario_for(wl, [])
    assert [a.pod.spec.node_name for a in sc.arrivals] == [""]


def test_a_deployment_is_played_by_its_controller(folder: Path) -> None:
    sc = scenario_for(read_workload([folder / "web.yaml"]), [])
    assert [(c.key, c.replicas) for c in sc.controllers] == [("Deployment/default/web", 8)]


def test_a_statefulset_creates_its_ordinals(tmp_path: Path) -> None:
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
           "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}},
                                 "spec": {"containers": [{"name": "db", "image": "x"}]}}}}
    sc = scenario_for(read_workload([write(tmp_path, "s.yaml", sts)]), [])
    assert _pods(sc) == ["db-0", "db-1", "db-2"]


def test_a_daemonset_runs_one_pod_per_eligible_node(tmp_path: Path) -> None:
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
          "spec": {"selector": {"matchLabels": {"app": "agent"}},
                   "template": {"metadata": {"labels": {"app": "agent"}},
                                "spec": {"nodeSelector": {"pool": "a"}, "containers": [{"name": "a", "image": "x"}]}}}}
    wl = read_workload([write(tmp_path, "d.yaml", ds)])
    a = parse_node_type("a=1s1n4c2t,labels=pool=a")
    b = parse_node_type("b=1s1n4c2t")
    sc = scenario_for(wl, a.nodes(2) + b.nodes(3))
    assert len(sc.arrivals) == 2


def test_a_horizontal_pod_autoscaler_target_is_planned_at_max_replicas(tmp_path: Path) -> None:
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "minReplicas": 2, "maxReplicas": 12,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                        "type": "Utilization", "averageUtilization": 70}}}]}}
    wl = read_workload([write(tmp_path, "w.yaml", deployment(replicas=2), hpa)])
    sc = scenario_for(wl, [])
    assert [c.replicas for c in sc.controllers] == [12]
    assert any("maxReplicas" in n for n in wl.notes)


def test_node_objects_are_left_out_with_a_note(tmp_path: Path) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "4"}, "capacity": {"cpu": "4"}}}
    wl = read_workload([write(tmp_path, "n.yaml", node, POD)])
    assert any("Node object" in n for n in wl.notes)


def test_a_simulation_object_is_refused(tmp_path: Path) -> None:
    sim = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "s"},
           "spec": {"objects": ["x.yaml"]}}
    with pytest.raises(InputError, match="not a Simulation"):
        read_workload([write(tmp_path, "s.yaml", sim)])


def test_an_unknown_field_is_refused_with_file_and_path(tmp_path: Path) -> None:
    bad = deployment()
    bad["spec"]["replicaz"] = 3
    with pytest.raises(InputError) as e:
        read_workload([write(tmp_path, "bad.yaml", bad)])
    assert "bad.yaml" in str(e.value) and "spec.replicaz" in str(e.value)


def test_a_snapshot_folder_is_read_whole(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "snap"
    subprocess.run([sys.executable, "-m", "kubetwin", "snapshot", str(root / "examples" / "snapshot"), "-o", str(out)],
                   check=True, capture_output=True)
    wl = read_workload([out])
    sc = scenario_for(wl, parse_node_type("std=2s1n8c2t:mem=64Gi,labels=pool=general").nodes(1))
    assert [c.key for c in sc.controllers] == ["Deployment/default/web"]
    assert [(ds.namespace, ds.name) for ds in wl.daemon_sets] == [("monitoring", "node-exporter")]
    assert not any("rebuilt from one of its pods" in n for n in wl.notes)   # the snapshot kept the object
    assert any(a.pod.metadata.owner_references[0].kind == "DaemonSet" for a in sc.arrivals
               if a.pod.metadata.owner_references)


def test_the_scenario_yaml_of_a_snapshot_reads_the_files_it_names(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "snap"
    subprocess.run([sys.executable, "-m", "kubetwin", "snapshot", str(root / "examples" / "snapshot"), "-o", str(out)],
                   check=True, capture_output=True)
    whole = scenario_for(read_workload([out]), [])
    named = scenario_for(read_workload([out / "scenario.yaml"]), [])
    assert [c.key for c in named.controllers] == [c.key for c in whole.controllers]
    assert _pods(named) == _pods(whole)


def test_a_horizontal_pod_autoscaler_without_its_target_is_refused(tmp_path: Path) -> None:
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nope"},
                    "maxReplicas": 3}}
    wl = read_workload([write(tmp_path, "h.yaml", deployment(), hpa)])
    with pytest.raises(InputError) as e:
        scenario_for(wl, [])
    assert "h.yaml" in str(e.value) and "Deployment/default/nope" in str(e.value)


def test_a_selector_with_an_invalid_label_key_is_refused(tmp_path: Path) -> None:
    bad = deployment()
    bad["spec"]["selector"]["matchLabels"]["not a key!"] = "x"
    with pytest.raises(InputError) as e:
        read_workload([write(tmp_path, "bad.yaml", bad)])
    assert "spec.selector.matchLabels" in str(e.value) and "bad.yaml" in str(e.value)


def test_a_selector_that_does_not_match_the_template_is_refused(tmp_path: Path) -> None:
    bad = deployment()
    bad["spec"]["selector"]["matchLabels"] = {"app": "other"}
    with pytest.raises(InputError, match="does not match template"):
        read_workload([write(tmp_path, "bad.yaml", bad)])
