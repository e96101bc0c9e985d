"""Specifications of ``/metrics`` (``kubetwin.serve.metrics``)."""

from __future__ import annotations

from kubetwin.serve.cluster import load_cluster
from kubetwin.serve.metrics import ServiceMetrics, kubelet_metrics

from .cluster_fixture import write_scenario


def test_each_request_is_counted_by_route_and_code():
    m = ServiceMetrics()
    m.observe("POST", "/extender/filter", 200, 0.003)
    text = m.render()
    assert 'kubetwin_serve_requests_total{code="200",method="POST",route="/extender/filter"} 1.0' in text
    assert 'kubetwin_serve_request_duration_seconds_bucket{le="0.005",method="POST",route="/extender/filter"} 1.0' in text


def test_each_modelled_nodes_kubelet_metrics_carry_its_name(tmp_path):
    text = kubelet_metrics(load_cluster([str(write_scenario(tmp_path))]))
    assert 'kubelet_cpu_manager_exclusive_cpu_allocation_count{node="numa-0"} 4' in text
    assert 'kubelet_cpu_manager_exclusive_cpu_allocation_count{node="numa-1"} 0' in text
    assert 'node="plain-0"' not in text


def test_a_family_is_described_once(tmp_path):
    text = kubelet_metrics(load_cluster([str(write_scenario(tmp_path))]))
    assert text.count("# TYPE kubelet_cpu_manager_pinning_requests_total counter") == 1
