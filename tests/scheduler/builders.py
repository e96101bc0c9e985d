"""Small node and pod builders for the scheduler tests."""

from __future__ import annotations

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.node import Node
from kubetwin.model.pod import Pod

GATES = gates_for()


def node(name: str, cpu: str = "4", pods: int = 110, zone: str | None = None, **extra) -> Node:
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels["topology.kubernetes.io/zone"] = zone
    return convert({"metadata": {"name": name, "labels": labels}, "spec": extra,
                    "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": str(pods)}}}, Node)


def pod(name: str, cpu: str = "1", priority: int | None = None, node_name: str = "", labels=None,
        start: str | None = None, created: str | None = None, namespace: str = "default", **spec) -> Pod:
    s = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec}
    if priority is not None:
        s["priority"] = priority
    if node_name:
        s["nodeName"] = node_name
    meta = {"name": name, "namespace": namespace, "labels": labels or {}}
    if created:
        meta["creationTimestamp"] = created
    status = {"startTime": start} if start else {}
    return convert({"metadata": meta, "spec": s, "status": status}, Pod)
