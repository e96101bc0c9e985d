"""``/metrics`` of ``kubetwin serve`` in Prometheus text format: the service's own (requests,
latency, jobs, extender verdicts) and the simulated kubelets' resource-manager metrics.

The service's metrics come from ``prometheus_client`` in a registry of the app's own (several
apps in one process, as in tests, never share counters). The kubelets' are
:func:`kubetwin.kubelet.metrics.render_metrics` (the kubelet's own names, ``pkg/kubelet/metrics``),
one set per modelled node with a ``node`` label added — what scraping every node's kubelet gives.

Not an upstream module: kubetwin's own service metrics.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest

if TYPE_CHECKING:
    from .cluster import ServedCluster

#: request latency buckets (seconds): the extender's answers are milliseconds
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class ServiceMetrics:
    def __init__(self) -> None:
        disable_created_metrics()  # no ``*_created`` series (a process-wide switch of prometheus_client)
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("kubetwin_serve_requests_total", "HTTP requests answered, by route and status code.",
                                ("method", "route", "code"), registry=self.registry)
        self.latency = Histogram("kubetwin_serve_request_duration_seconds", "Time to answer a request, by route.",
                                 ("method", "route"), buckets=LATENCY_BUCKETS, registry=self.registry)
        self.jobs = Gauge("kubetwin_serve_jobs", "Simulation jobs by state.", ("state",), registry=self.registry)
        self.extender_nodes = Counter("kubetwin_serve_extender_nodes_total",
                                      "Nodes judged by the extender's filter verb, by outcome.",
                                      ("outcome",), registry=self.registry)

    def observe(self, method: str, route: str, code: int, seconds: float) -> None:
        self.requests.labels(method, route, str(code)).inc()
        self.latency.labels(method, route).observe(seconds)

    def render(self, cluster: ServedCluster | None = None) -> str:
        text = generate_latest(self.registry).decode()
        if cluster is not None:
            text += kubelet_metrics(cluster)
        return text


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (.*)$")


def _with_node(sample: str, node: str) -> str:
    m = _SAMPLE.match(sample)
    if m is None:
        return sample
    name, labels, value = m.groups()
    inner = f'node="{node}"' + ("," + labels[1:-1] if labels and labels != "{}" else "")
    return f"{name}{{{inner}}} {value}"


def kubelet_metrics(cluster: ServedCluster) -> str:
    """Every modelled node's resource-manager metrics, labelled by node (one HELP/TYPE per family)."""
    from ..kubelet.metrics import render_metrics

    models = cluster.kubelets
    by_class: dict[int, list[str]] = {}
    families: dict[str, list[str]] = {}
    headers: dict[str, list[str]] = {}
    order: list[str] = []
    for node in sorted(models.node_names):
        kubelet = models.kubelet(node)
        key = id(kubelet)
        lines = by_class.get(key)
        if lines is None:
            lines = by_class[key] = render_metrics(kubelet).splitlines()
        family = ""
        for line in lines:
            if line.startswith("# HELP "):
                family = line.split(" ", 3)[2]
                if family not in headers:
                    headers[family] = [line]
                    order.append(family)
                    families[family] = []
            elif line.startswith("# TYPE "):
                if len(headers[family]) == 1:
                    headers[family].append(line)
            elif line:
                families[family].append(_with_node(line, node))
    out: list[str] = []
    for f in order:
        out.extend(headers[f])
        out.extend(families[f])
    return "\n".join(out) + ("\n" if out else "")
