"""The report's autoscaling section: node counts over time and each scale-up with its node group and why."""

from __future__ import annotations

import yaml

from kubetwin.report.autoscaling import autoscaling_section
from kubetwin.report.html import render_html
from kubetwin.sim import load_scenario
from kubetwin.sim.loop import simulate


def _result(tmp_path):
    sim = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "ca"},
           "spec": {"horizon": "30m", "autoscaling": {"clusterAutoscaler": {"expander": "least-waste"}},
                    "nodeGroups": [{"name": "pool", "count": 1, "minSize": 1, "maxSize": 5,
                                    "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}]}}
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1500m"}}}]}}}}
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump_all([sim, dep]))
    return simulate(load_scenario(p))


def test_the_section_lists_each_scale_up_with_its_node_group_and_reasons(tmp_path):
    html = autoscaling_section([_result(tmp_path)])
    assert "<h2>Autoscaling</h2>" in html and "nodes in autoscaled groups" in html
    assert "<td class=l>pool</td>" in html and "2× Insufficient cpu" in html


def test_the_full_report_carries_the_section(tmp_path):
    assert "<h2>Autoscaling</h2>" in render_html([_result(tmp_path)])


def test_no_section_without_autoscalers():
    assert autoscaling_section([]) == ""


def test_the_section_lists_each_vpa_with_its_in_place_resizes(tmp_path):
    sim = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "vpa"},
           "spec": {"horizon": "1h", "nodeGroups": [{"name": "n", "count": 1,
                                                     "capacity": {"cpu": "64", "memory": "64Gi", "pods": "110"}}]}}
    dep = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "annotations": {"kubetwin.io/load": "{cpu: 1}"}},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]}}}}
    vpa = {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": "web"},
           "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "updatePolicy": {"updateMode": "InPlaceOrRecreate"}}}
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump_all([sim, dep, vpa]))
    r = simulate(load_scenario(p))
    html = autoscaling_section([r])
    assert "<td class=l>default/web</td><td class=l>InPlaceOrRecreate</td><td>0</td><td>2</td><td>0</td>" in html
    assert r.summary()["autoscaling"]["vpaInPlaceUpdates"] == 2
